//! Issue 33 item 16: its environment names work as ours do: `SERVICE_URL` (its client's tool server)
//! for `--tool-server`, `OPENAI_API_BASE` for `--base-url`; ours win when both are set. Issue 42 item 2:
//! `OPENAI_KEY` and `GPT_MODEL` (its inference scripts') too, the key never shown or written, and
//! `run.json` names the model the endpoint served.

use crate::common;

use super::SUBSET;

fn batch(out: &std::path::Path) -> common::Test {
    common::Test::new()
        .batch_mock()
        .args(["--subsets", SUBSET, "--limit", "1", "--out"])
        .arg(out)
}

#[test]
fn its_environment_names_are_read_as_aliases() {
    let model = common::Model::start(0);
    let tmp = tempfile::tempdir().unwrap();
    batch(&tmp.path().join("a"))
        .env("OPENAI_API_BASE", &model.url)
        .run()
        .success()
        .stdout_has("1 new");
    // Its tool server name: nothing listens there, which the check before the run says.
    batch(&tmp.path().join("b"))
        .env("OPENAI_API_BASE", &model.url)
        .env("SERVICE_URL", "http://127.0.0.1:1/virtual")
        .run()
        .failure(2)
        .stderr_has("http://127.0.0.1:1/virtual");
    // Ours win.
    batch(&tmp.path().join("c"))
        .env("OPENAI_BASE_URL", &model.url)
        .env("OPENAI_API_BASE", "http://127.0.0.1:1/v1")
        .run()
        .success();
}

const KEY: &str = "sk-its-OPENAI_KEY-4711";
/// The model the endpoint says it served (a dated version of what was asked for).
const SERVED: &str = "gpt-served-2024-08-06";

/// What the endpoint saw of each chat request: its `Authorization` header and `model`.
type Seen = std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>;

/// An OpenAI-compatible endpoint that records what it is sent and answers as the scripted model,
/// naming [`SERVED`] as the model of every reply (a dated version, as OpenAI does for an alias).
fn recording_endpoint() -> (String, Seen, tokio::sync::oneshot::Sender<()>) {
    use axum::http::HeaderMap;
    use axum::{Json, extract::State, routing::get, routing::post};
    use serde_json::{Value, json};
    let seen: Seen = Default::default();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let state = seen.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            async fn chat(
                State(seen): State<Seen>,
                headers: HeaderMap,
                Json(body): Json<Value>,
            ) -> Json<Value> {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                let model = body["model"].as_str().unwrap_or_default().to_string();
                seen.lock().unwrap().push((auth, model));
                let mut reply = common::mock_openai::reply(&body);
                reply["model"] = json!(SERVED);
                Json(reply)
            }
            let app = axum::Router::new()
                .route("/v1/chat/completions", post(chat))
                .route(
                    "/v1/models",
                    get(|| async { Json(json!({"data": [{"id": "listed-first"}]})) }),
                )
                .with_state(state);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let _ = addr_tx.send(format!("http://{}/v1", listener.local_addr().unwrap()));
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
    });
    (addr_rx.recv().expect("endpoint started"), seen, stop)
}

/// `batch` of one query without `--model`: the model comes from the environment or the endpoint.
fn batch_without_model(url: &str, out: &std::path::Path) -> common::Test {
    common::Test::new()
        .env("OPENAI_API_BASE", url)
        .args(["-vv", "batch", "--progress", "plain", "--subsets", SUBSET])
        .args(["--limit", "1", "--out"])
        .arg(out)
}

fn manifest(out: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap()
}

#[test]
fn its_key_and_model_names_are_read_and_the_served_model_is_recorded() {
    let (url, seen, _stop) = recording_endpoint();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("a");
    let shown = batch_without_model(&url, &out)
        .env("OPENAI_KEY", KEY)
        .env("GPT_MODEL", "gpt-asked")
        .run()
        .success();
    let calls = seen.lock().unwrap().clone();
    assert!(!calls.is_empty());
    for (auth, model) in &calls {
        assert_eq!(auth, &format!("Bearer {KEY}"));
        assert_eq!(model, "gpt-asked");
    }
    let m = manifest(&out);
    assert_eq!(m["model"], SERVED, "{m}");
    assert_eq!(m["requested_model"], "gpt-asked", "{m}");
    // The key is never shown (even at -vv) nor written.
    let printed = format!("{}{}", shown.stdout(), shown.stderr());
    assert!(!printed.contains(KEY), "{printed}");
    let written = std::process::Command::new("grep")
        .args(["-rl", KEY])
        .arg(&out)
        .output()
        .unwrap();
    assert!(written.stdout.is_empty(), "{written:?}");
    // Ours win over its names; resuming with the same ask keeps the served model.
    let seen_before = seen.lock().unwrap().len();
    batch_without_model(&url, &out)
        .env("OPENAI_KEY", KEY)
        .env("OPENAI_API_KEY", "sk-ours")
        .env("GPT_MODEL", "gpt-other")
        .env("SUM2ACT_MODEL", "gpt-asked")
        .run()
        .success()
        .stdout_has("1 resumed");
    assert_eq!(seen.lock().unwrap().len(), seen_before);
    assert_eq!(manifest(&out)["model"], SERVED);
}

#[test]
fn without_a_model_name_run_json_records_the_one_the_endpoint_served() {
    let (url, _seen, _stop) = recording_endpoint();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("a");
    batch_without_model(&url, &out).run().success();
    let m = manifest(&out);
    assert_eq!(m["model"], SERVED, "{m}");
    let asked = m["requested_model"].as_str().unwrap_or_default();
    assert!(asked.ends_with("(default model)"), "{m}");
}
