//! Issue 17 end to end: exit codes that tell a broken setup (2) from a failed run (1), error episodes
//! that are not answers, a write failure that is not blamed on the user, warnings for queries naming
//! tools the catalogue lacks, and terminal output that model text cannot take over.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use common::{Model, Test, run_files as files};
use serde_json::{Value, json};

type Handler = dyn Fn(&Value) -> (u16, Value) + Send + Sync;
type Delay = dyn Fn(&Value) -> std::time::Duration + Send + Sync;

/// An OpenAI-compatible endpoint answering every chat request with `handler(request)`, on its own
/// thread; stopped when the returned guard drops.
pub(crate) struct Endpoint {
    pub(crate) url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

pub(crate) fn endpoint(
    handler: impl Fn(&Value) -> (u16, Value) + Send + Sync + 'static,
) -> Endpoint {
    slow_endpoint(handler, |_| std::time::Duration::ZERO)
}

/// As [`endpoint`], each reply sent `delay(request)` later (a slow model; other requests go on meanwhile).
pub(crate) fn slow_endpoint(
    handler: impl Fn(&Value) -> (u16, Value) + Send + Sync + 'static,
    delay: impl Fn(&Value) -> std::time::Duration + Send + Sync + 'static,
) -> Endpoint {
    let handler: (Arc<Handler>, Arc<Delay>) = (Arc::new(handler), Arc::new(delay));
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            async fn chat(
                State((h, delay)): State<(Arc<Handler>, Arc<Delay>)>,
                Json(body): Json<Value>,
            ) -> (StatusCode, Json<Value>) {
                tokio::time::sleep(delay(&body)).await;
                let (status, reply) = h(&body);
                (
                    StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
                    Json(reply),
                )
            }
            let app = axum::Router::new()
                .route("/v1/chat/completions", post(chat))
                .route(
                    "/v1/models",
                    get(|| async { Json(json!({"data": [{"id": "mock"}]})) }),
                )
                .with_state(handler);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let _ = addr_tx.send(format!(
                "http://{}/v1",
                listener.local_addr().expect("addr")
            ));
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
    });
    Endpoint {
        url: addr_rx.recv().expect("endpoint started"),
        stop: Some(stop),
    }
}

fn rejecting() -> Endpoint {
    endpoint(|_| {
        (
            401,
            json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}),
        )
    })
}

fn batch(url: &str, out: &Path) -> Test {
    Test::new()
        .env("OPENAI_BASE_URL", url)
        .batch_mock()
        .args(["--subsets", "G1_instruction", "--concurrency", "2", "--out"])
        .arg(out)
}

#[test]
fn a_rejected_key_stops_the_batch_with_exit_2_and_writes_no_answers() {
    let model = rejecting();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // Every subset of the sample (36 queries): the batch must stop after the first few.
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .args(["--concurrency", "2", "--out"])
        .arg(&out)
        .run()
        .failure(2)
        .stderr_has("rejected the API key")
        .stderr_has("batch stopped")
        .no_panic();
    let written: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .flat_map(|d| files(&out, &d.file_name().to_string_lossy()))
        .collect();
    assert!(written.iter().all(|f| f.ends_with(".error")), "{written:?}");
    assert!(written.len() <= 8, "{written:?}");
}

#[test]
fn run_agrees_with_batch_on_a_rejected_key() {
    let model = rejecting();
    let dir = tempfile::tempdir().unwrap();
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .run_query("101", "G1_instruction")
        .arg("--out")
        .arg(dir.path())
        .run()
        .failure(2)
        .stderr_has("never answered")
        .no_panic();
    assert!(!dir.path().join("G1_instruction/101_sum2act.json").exists());
}

#[test]
fn an_error_episode_exits_1_with_the_count_and_a_plain_rerun_retries_it() {
    // The model fails (HTTP 400, not retried) on its second turn of query 101 only.
    let model = endpoint(|req| {
        let text = req.to_string();
        if text.contains("Lisbon right now") && common::mock_openai::later_turn(req) {
            return (400, json!({"error": {"message": "model overloaded"}}));
        }
        (200, common::mock_openai::reply(req))
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    batch(&model.url, &out)
        .run()
        .failure(1)
        .stderr_has("1 episode(s) ended in error")
        .no_panic();
    let written = files(&out, "G1_instruction");
    assert!(
        written.contains(&"101_sum2act.error".to_string()),
        "{written:?}"
    );
    assert!(
        !written.contains(&"101_sum2act.json".to_string()),
        "{written:?}"
    );
    drop(model);
    let healthy = Model::start(0);
    batch(&healthy.url, &out)
        .run()
        .success()
        .stdout_has("1 new, ");
    let written = files(&out, "G1_instruction");
    assert!(
        written.contains(&"101_sum2act.json".to_string()),
        "{written:?}"
    );
    assert!(
        !written.iter().any(|f| f.ends_with(".error")),
        "{written:?}"
    );
}

#[test]
fn a_result_that_cannot_be_written_is_a_run_failure_not_bad_input() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-folder");
    std::fs::write(&blocker, "x").unwrap();
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .run_query("101", "G1_instruction")
        .arg("--out")
        .arg(blocker.join("out"))
        .run()
        .failure(1)
        .stderr_has("cannot write")
        .no_panic();
}

#[test]
fn request_fields_cannot_forge_server_log_lines() {
    use std::io::Read;
    let mut served = Test::new()
        .args(["-v", "serve", "--port", "0", "--fault-rate", "0"])
        .env_remove("RUST_LOG")
        .serve_logged();
    let url = served.url.clone();
    let reply = common::tools::call_unknown(&url, "Nowhere\nERROR forged entry", "t", "a");
    assert!(reply.is_ok(), "{reply:?}");
    // Let the server write its log line before it is stopped.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let _ = served.child.kill();
    let _ = served.child.wait();
    let mut log = String::new();
    served
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    assert!(log.contains("Nowhere\\nERROR_forged_entry"), "{log}");
    assert!(!log.lines().any(|l| l.starts_with("ERROR forged")), "{log}");
}

#[test]
fn model_text_cannot_drive_the_terminal() {
    let hostile = "\u{1b}]0;pwned\u{7}\u{1b}[2J 21 C\rOVERWRITTEN \u{9b}31m";
    let model = endpoint(move |req| {
        if req
            .pointer("/response_format/json_schema/schema/properties/facts")
            .is_some()
        {
            // Sum2Act in rounds writes its answer in the JSON of its round's reply.
            let content = json!({"facts": [], "answer": hostile}).to_string();
            return (
                200,
                json!({"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 10}}),
            );
        }
        if !req["tools"].is_array() {
            return (200, common::mock_openai::reply(req));
        }
        let args = json!({"return_type": "give_answer", "final_answer": hostile}).to_string();
        (
            200,
            json!({"choices": [{"message": {"role": "assistant", "content": hostile,
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "Finish", "arguments": args}}]},
                "finish_reason": "tool_calls"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10}}),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let out = Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .run_query("101", "G1_instruction")
        .arg("--out")
        .arg(dir.path())
        .run()
        .success();
    let shown = format!("{}{}", out.stdout(), out.stderr());
    assert!(shown.contains("OVERWRITTEN"), "{shown}");
    for bad in ['\u{1b}', '\r', '\u{7}', '\u{9b}'] {
        assert!(
            !shown.contains(bad),
            "{bad:?} reached the terminal: {shown:?}"
        );
    }
}

/// A copy of the shipped sample with one more subset whose query names a tool the catalogue lacks.
fn sample_with_ghost_tool() -> tempfile::TempDir {
    let dir = common::sample_copy(&["queries", "tools"]);
    let sample = common::sample_queries("G1_instruction");
    let mut query = sample[0].clone();
    query["query_id"] = json!(999);
    let mut ghost = query["api_list"][0].clone();
    ghost["tool_name"] = json!("Ghost Tool");
    query["api_list"]
        .as_array_mut()
        .unwrap()
        .push(ghost.clone());
    let mut second = query.clone();
    second["query_id"] = json!(1000);
    std::fs::write(
        dir.path().join("queries/G9_ghost.json"),
        json!([query, second]).to_string(),
    )
    .unwrap();
    dir
}

#[test]
fn a_query_naming_a_missing_tool_is_warned_about_once() {
    let data = sample_with_ghost_tool();
    let out = Test::new()
        .arg("--data")
        .arg(data.path())
        .args(["data", "stats"])
        .run()
        .success()
        .stderr_has("G9_ghost: tool `Ghost Tool` (category `Weather`) named by query 999 and 1 more is not in the tools catalogue");
    assert_eq!(
        out.stderr().matches("Ghost Tool").count(),
        1,
        "{}",
        out.stderr()
    );
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .arg("--data")
        .arg(data.path())
        .run_query("1000", "G9_ghost")
        .arg("--out")
        .arg(dir.path())
        .run()
        .success()
        .stderr_has("tool `Ghost Tool` (category `Weather`) named by query 1000 is not in the tools catalogue");
}

#[test]
fn data_stats_exits_2_for_broken_or_missing_data() {
    let data = sample_with_ghost_tool();
    let tools = data.path().join("tools/Weather");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(tools.join("broken.json"), "{ not json").unwrap();
    Test::new()
        .arg("--data")
        .arg(data.path())
        .args(["data", "stats"])
        .run()
        .failure(2)
        .stderr_has("broken.json")
        .stdout_has("catalogue:");
    let empty = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(empty.path().join("queries")).unwrap();
    std::fs::create_dir_all(empty.path().join("tools")).unwrap();
    Test::new()
        .arg("--data")
        .arg(empty.path())
        .args(["data", "stats"])
        .run()
        .failure(2)
        .stderr_has("no query files");
}

#[test]
fn a_negative_limit_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    Test::new()
        .args(["batch", "--limit", "-1", "--out"])
        .arg(dir.path())
        .run()
        .failure(2)
        .stderr_has("'--limit <N>'");
}

#[test]
fn soak_an_endpoint_that_ignores_tool_choice_ends_every_episode() {
    // Whatever `tool_choice` says, the endpoint calls the first tool with the same arguments (the
    // scripted model's first step, every time).
    let model = endpoint(|req| {
        let mut first = req.clone();
        if let Some(m) = first["messages"].as_array_mut() {
            m.truncate(2);
            for msg in m.iter_mut() {
                if let Some(c) = msg["content"].as_str() {
                    msg["content"] = json!(c.replace("STATE after ", "STATE before "));
                }
            }
        }
        (200, common::mock_openai::reply(&first))
    });
    for method in ["sum2act", "react", "dfsdt"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("run");
        batch(&model.url, &out)
            .args(["--method", method])
            .run()
            .success()
            .no_panic();
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        for f in files(&out, "G1_instruction") {
            let file: Value = serde_json::from_str(
                &std::fs::read_to_string(out.join("G1_instruction").join(&f)).unwrap(),
            )
            .unwrap();
            let record = &file["sum2act"];
            let finish = record["finish"].as_str().unwrap_or_default();
            assert!(
                finish == "give_up" || finish == "give_answer",
                "{method} {f}: ended {finish} after {} steps; summary {summary}",
                record["counters"]["steps"]
            );
            assert!(
                record["counters"]["steps"].as_u64().unwrap_or(99) <= 30,
                "{method} {f}"
            );
        }
    }
}

#[test]
fn serve_disconnects_a_client_that_never_sends_its_headers() {
    use std::io::{Read, Write};
    let served = Test::new()
        .args([
            "serve",
            "--port",
            "0",
            "--header-timeout",
            "1",
            "--max-connections",
            "8",
        ])
        .serve();
    let addr = served
        .url
        .strip_prefix("http://")
        .and_then(|u| u.strip_suffix("/virtual"))
        .unwrap_or_default()
        .to_string();
    let mut slow = std::net::TcpStream::connect(&addr).unwrap();
    slow.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    slow.write_all(b"POST /virtual HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let started = std::time::Instant::now();
    let mut buf = Vec::new();
    let closed = slow.read_to_end(&mut buf).is_ok();
    drop(served);
    assert!(closed, "still connected after {:?}", started.elapsed());
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
