//! `sum2act serve --simulation mirrorapi|mirrorapi-cot`: a stand-in for MirrorAPI on vLLM (an
//! OpenAI-compatible server on loopback that records each request and answers with recorded-style
//! MirrorAPI outputs) behind the real binary, driven over `/virtual` as StableToolBench clients do.

use crate::common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

/// Requests seen, and the replies still to give (in order).
#[derive(Default)]
struct Script {
    seen: Vec<Value>,
    replies: Vec<String>,
}

type Shared = Arc<Mutex<Script>>;

async fn complete(State(s): State<Shared>, Json(request): Json<Value>) -> Json<Value> {
    let content = {
        let mut s = s.lock().unwrap();
        s.seen.push(request);
        if s.replies.is_empty() {
            "out of script".to_string()
        } else {
            s.replies.remove(0)
        }
    };
    Json(json!({
        "id": "chatcmpl-stand-in", "object": "chat.completion", "created": 0, "model": "MirrorAPI",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 40, "total_tokens": 140}
    }))
}

/// The stand-in on its own thread and runtime; its base URL.
fn stand_in(shared: Shared) -> String {
    let app = Router::new()
        .route("/v1/chat/completions", post(complete))
        .route(
            "/v1/models",
            get(|| async { Json(json!({"object": "list", "data": [{"id": "MirrorAPI"}]})) }),
        )
        .with_state(shared);
    format!("http://{}/v1", common::http::serve_on_thread(app))
}

/// A data folder with one tool: an API without a template and one with a data template.
fn data(root: &Path) {
    std::fs::create_dir_all(root.join("queries")).unwrap();
    common::tools::write_record_desk(root);
}

/// `sum2act serve` as a child process, killed when dropped.
struct Served(common::Served);

impl Served {
    fn start(data: &Path, model_url: &str, mode: &str, save: bool) -> Served {
        Self::start_with(data, model_url, mode, save, None)
    }

    fn start_with(
        data: &Path,
        model_url: &str,
        mode: &str,
        save: bool,
        prompts: Option<&Path>,
    ) -> Served {
        let mut cmd = common::Test::new()
            .arg("--data")
            .arg(data)
            .args(["serve", "--port", "0", "--simulation", mode])
            .args([
                "--base-url",
                model_url,
                "--model",
                "stabletoolbench/MirrorAPI",
            ]);
        if save {
            cmd = cmd.arg("--save");
        }
        if let Some(dir) = prompts {
            cmd = cmd.env("SUM2ACT_PROMPTS", dir);
        }
        let served = cmd.serve();
        assert!(served.url.ends_with("/virtual"), "{}", served.line);
        Served(served)
    }

    /// One `/virtual` call: the `x-sum2act-source` header and the body.
    async fn call(&self, api: &str, input: Value) -> (String, Value) {
        let body = json!({"category": "Data", "tool_name": "record_desk", "api_name": api,
                          "tool_input": input.to_string(), "strip": "", "toolbench_key": ""});
        let resp = reqwest::Client::new()
            .post(&self.0.url)
            .json(&body)
            .send()
            .await
            .unwrap();
        let source = resp
            .headers()
            .get("x-sum2act-source")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        (source, resp.json().await.unwrap())
    }
}

fn messages(request: &Value) -> (String, String) {
    let text = |i: usize| {
        request["messages"][i]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    (text(0), text(1))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_speaks_mirrorapi_and_falls_back_and_caches() {
    let tmp = tempfile::tempdir().unwrap();
    data(tmp.path());
    let shared: Shared = Arc::default();
    shared.lock().unwrap().replies = vec![
        // What MirrorAPI emits: the response as Python's str() of the real body, inside a JSON string.
        "{\n    \"error\": \"\",\n    \"response\": \"{'record_id': 'rec-42', 'status': 'open', 'tags': ['a'], 'archived': False}\"\n}".into(),
        // Not a reply at all: the schema simulator answers instead.
        "I am sorry, I cannot simulate this API.".into(),
        // CoT mode, not valid JSON outside (the inner quotes are left unescaped).
        "{\"mechanism_of_the_api\": \"It reads the record \"rec-7\" from a table.\", \"error\": \"\", \"response\": \"{\"record_id\": \"rec-7\", \"status\": \"closed\"}\"}".into(),
        "{\"error\": \"\", \"response\": {\"record_id\": \"rec-9\"}}".into(),
    ];
    let model = stand_in(shared.clone());

    let served = Served::start(tmp.path(), &model, "mirrorapi", true);
    let (source, body) = served
        .call("lookup_record", json!({"record_id": "rec-42"}))
        .await;
    assert_eq!(source, "llm", "{body}");
    assert_eq!(
        body,
        json!({"error": "", "response": {"record_id": "rec-42", "status": "open", "tags": ["a"], "archived": false}})
    );
    let body_42 = body.clone();
    let first = shared.lock().unwrap().seen[0].clone();
    let (system, user) = messages(&first);
    assert!(
        system.contains("\"error\": \"\",\n    \"response\": \"\""),
        "{system}"
    );
    assert!(!system.starts_with("[CHAIN_OF_THOUGHT]"));
    assert_eq!(
        user,
        "API doc:\n{'api_name': 'Lookup record', 'api_description': 'Details of one record by its id.', \
         'required_parameters': [{'name': 'record_id', 'type': 'STRING', 'description': 'The record id', 'default': ''}], \
         'optional_parameters': [], 'tool_description': 'Looks up records and their statistics.', \
         'tool_name': 'Record Desk', 'tool_category': 'Data'}\n\nRequest:\n{'category': 'Data', \
         'tool_name': 'Record Desk', 'api_name': 'Lookup record', 'tool_input': '{\"record_id\":\"rec-42\"}', \
         'strip': 'filter'}"
    );
    assert_eq!(first["model"], "stabletoolbench/MirrorAPI");
    assert_eq!(first["seed"], 42);
    assert_eq!(first["max_tokens"], 2048);

    // A malformed reply: the schema simulator's answer, shaped by the template, says so.
    let (source, body) = served.call("record_stats", json!({})).await;
    assert_eq!(source, "simulated", "{body}");
    assert!(body["response"]["total"].is_number(), "{body}");

    // The rerun is answered from the saved world, without asking the model again; the reply still
    // says the model made it.
    let (source, again) = served
        .call("lookup_record", json!({"record_id": "rec-42"}))
        .await;
    assert_eq!(source, "llm");
    assert_eq!(again, body_42);
    assert_eq!(shared.lock().unwrap().seen.len(), 2);
    drop(served);
    let saved: Vec<String> = std::fs::read_dir(
        tmp.path()
            .join("response_cache/Data/record_desk/lookup_record"),
    )
    .unwrap()
    .flatten()
    .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
    .collect();
    assert_eq!(saved.len(), 1);
    assert!(saved[0].contains("rec-42"), "{saved:?}");

    // The chain-of-thought mode: its own system prompt; the explanation is dropped from the reply.
    let served = Served::start(tmp.path(), &model, "mirrorapi-cot", false);
    let (source, body) = served
        .call("lookup_record", json!({"record_id": "rec-7"}))
        .await;
    assert_eq!(source, "llm", "{body}");
    assert_eq!(
        body,
        json!({"error": "", "response": {"record_id": "rec-7", "status": "closed"}})
    );
    let (system, _) = messages(&shared.lock().unwrap().seen[2]);
    assert!(system.starts_with("[CHAIN_OF_THOUGHT]\n"), "{system}");
    drop(served);

    // StableToolBench's own system prompt text can be dropped in: it is sent as written.
    let prompts = tmp.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    let own = "Exact training system prompt {\"error\": \"\", \"response\": \"\"} with {braces}.";
    std::fs::write(prompts.join("mirrorapi_system.md"), format!("{own}\n")).unwrap();
    let served = Served::start_with(tmp.path(), &model, "mirrorapi", false, Some(&prompts));
    let (source, _) = served
        .call("lookup_record", json!({"record_id": "rec-9"}))
        .await;
    assert_eq!(source, "llm");
    let (system, _) = messages(&shared.lock().unwrap().seen[3]);
    assert_eq!(system, own);
}

#[test]
fn mirrorapi_is_a_tool_simulation_of_run_batch_and_chat_too() {
    for cmd in ["run", "batch", "chat"] {
        common::Test::new()
            .args([cmd, "--help"])
            .run()
            .success()
            .stdout_has("mirrorapi");
    }
}
