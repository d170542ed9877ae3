//! The OpenAI-compatible client against a mock server on loopback: retries honouring Retry-After,
//! token accounting, typed errors, failover, and `sum2act llm check` / record / replay end to end.

use crate::common;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use sum2act_core::llm::openai::OpenAiClient;
use sum2act_core::llm::{
    self, CompletionRequest, EndpointSpec, LlmClient, LlmError, LlmOptions, Message, ToolChoice,
};

/// One scripted reply of the mock server.
#[derive(Clone)]
struct Canned {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
}

fn ok(body: Value) -> Canned {
    Canned {
        status: 200,
        headers: vec![],
        body: body.to_string(),
    }
}

fn status(code: u16, body: &str) -> Canned {
    Canned {
        status: code,
        headers: vec![],
        body: body.to_string(),
    }
}

fn chat_reply(content: &str, usage: Option<(u64, u64)>) -> Value {
    let mut v = json!({
        "id": "x", "object": "chat.completion", "model": "mock-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    });
    if let Some((p, c)) = usage {
        v["usage"] = json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c});
    }
    v
}

#[derive(Default)]
struct Mock {
    replies: Mutex<VecDeque<Canned>>,
    hits: Mutex<Vec<(Instant, Value, Option<String>)>>,
}

async fn chat(State(m): State<Arc<Mock>>, headers: HeaderMap, body: Bytes) -> Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    m.hits.lock().unwrap().push((Instant::now(), parsed, auth));
    let canned = m
        .replies
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| status(500, "script exhausted"));
    let mut resp = (StatusCode::from_u16(canned.status).unwrap(), canned.body).into_response();
    for (k, v) in canned.headers {
        resp.headers_mut().insert(k, v.parse().unwrap());
    }
    resp.headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    resp
}

async fn start(replies: Vec<Canned>) -> (String, Arc<Mock>) {
    let mock = Arc::new(Mock {
        replies: Mutex::new(replies.into()),
        ..Mock::default()
    });
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        .route(
            "/v1/models",
            get(|| async { axum::Json(json!({"data": [{"id": "mock-model"}]})) }),
        )
        .with_state(mock.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/v1"), mock)
}

fn endpoint(base_url: String) -> EndpointSpec {
    EndpointSpec {
        base_url,
        api_key: None,
        model: Some("mock-model".into()),
    }
}

fn args(url: &str) -> LlmOptions {
    LlmOptions {
        endpoints: vec![endpoint(url.to_string())],
        retries: 3,
        timeout: Duration::from_secs(10),
        ..LlmOptions::default()
    }
}

fn ask(text: &str) -> CompletionRequest {
    CompletionRequest::new("router", vec![Message::user(text)])
}

#[tokio::test]
async fn retries_429_after_retry_after_and_counts_server_tokens() {
    let mut limited = status(429, r#"{"error":{"message":"slow down"}}"#);
    limited.headers.push(("retry-after", "1".into()));
    let (url, mock) = start(vec![limited, ok(chat_reply("hello", Some((42, 7))))]).await;
    let client = sum2act_local::build(&args(&url)).await.unwrap();
    let started = Instant::now();
    let c = client.complete(&ask("hi")).await.unwrap();
    assert_eq!(c.content, "hello");
    assert_eq!((c.usage.prompt_tokens, c.usage.completion_tokens), (42, 7));
    let hits = mock.hits.lock().unwrap().clone();
    assert_eq!(hits.len(), 2, "one 429 then one success");
    let gap = hits[1].0 - hits[0].0;
    assert!(
        gap >= Duration::from_millis(950),
        "Retry-After: 1 was not honoured (gap {gap:?})"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(hits[1].1["model"], "mock-model");
    assert_eq!(hits[1].1["messages"][0]["content"], "hi");
    let totals = client.meter().unwrap().snapshot();
    assert_eq!((totals.calls, totals.retries, totals.failures), (1, 1, 0));
    assert_eq!((totals.prompt_tokens, totals.completion_tokens), (42, 7));
    assert_eq!(totals.by_purpose["router"].calls, 1);
}

#[tokio::test]
async fn counts_tokens_locally_when_the_server_reports_none_and_prices_them() {
    let (url, _mock) = start(vec![ok(chat_reply("hello world", None))]).await;
    let mut options = args(&url);
    options.prices.insert(
        "mock-model".into(),
        sum2act::config::Price {
            prompt: 1.0,
            completion: 1.0,
        },
    );
    let client = sum2act_local::build(&options).await.unwrap();
    let c = client.complete(&ask("hello world")).await.unwrap();
    assert_eq!(
        c.usage.completion_tokens, 2,
        "tiktoken count of `hello world`"
    );
    assert_eq!(
        c.usage.prompt_tokens,
        llm::count_prompt_tokens(&ask("hello world"))
    );
    assert!((c.cost_usd - c.usage.total() as f64 / 1e6).abs() < 1e-12);
}

#[tokio::test]
async fn server_errors_are_retried_with_backoff() {
    let (url, mock) = start(vec![
        status(503, "busy"),
        ok(chat_reply("fine", Some((1, 1)))),
    ])
    .await;
    let client = sum2act_local::build(&args(&url)).await.unwrap();
    assert_eq!(client.complete(&ask("x")).await.unwrap().content, "fine");
    assert_eq!(mock.hits.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn wrong_key_is_not_retried_and_never_echoed() {
    let key = "sk-test-very-secret-key";
    let body = format!(r#"{{"error":{{"message":"Incorrect API key provided: {key}"}}}}"#);
    let (url, mock) = start(vec![status(401, &body), status(401, &body)]).await;
    let client = OpenAiClient::new(
        &url,
        Some(key.into()),
        Some("m".into()),
        Duration::from_secs(5),
    )
    .unwrap();
    let err = client.complete(&ask("x")).await.unwrap_err();
    assert!(
        matches!(err, LlmError::Unauthorized { status: 401, .. }),
        "{err:?}"
    );
    assert!(!err.is_retriable());
    assert!(!format!("{err} {err:?} {client:?}").contains(key));
    let hits = mock.hits.lock().unwrap().clone();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].2.as_deref(), Some(format!("Bearer {key}").as_str()));
}

#[tokio::test]
async fn unknown_model_is_a_typed_error() {
    let (url, _mock) = start(vec![status(
        404,
        r#"{"error":{"message":"The model `nope` does not exist","code":"model_not_found"}}"#,
    )])
    .await;
    let client = sum2act_local::build(&args(&url)).await.unwrap();
    let err = client.complete(&ask("x")).await.unwrap_err();
    assert!(matches!(err, LlmError::ModelNotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("does not exist"));
    assert!(err.is_bad_input());
}

#[tokio::test]
async fn context_overflow_is_a_typed_error() {
    let (url, _mock) = start(vec![status(
        400,
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#,
    )])
    .await;
    let client = sum2act_local::build(&args(&url)).await.unwrap();
    let err = client.complete(&ask("x")).await.unwrap_err();
    assert!(
        matches!(err, LlmError::RemoteContextOverflow { .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn unreachable_endpoint_is_retried_then_reported() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let mut a = args(&url);
    a.retries = 1;
    let client = sum2act_local::build(&a).await.unwrap();
    let err = client.complete(&ask("x")).await.unwrap_err();
    assert!(matches!(err, LlmError::Unreachable { .. }), "{err:?}");
    assert!(err.to_string().contains(&format!("127.0.0.1:{port}")));
    assert_eq!(client.meter().unwrap().snapshot().retries, 1);
}

#[tokio::test]
async fn invalid_json_replies_are_typed_errors() {
    let (url, _mock) = start(vec![
        status(200, "<html>not json</html>"),
        ok(chat_reply("sure! {broken", Some((3, 3)))),
        ok(
            json!({"choices": [{"message": {"content": null, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "rm_rf", "arguments": "{}"}}
            ]}}]}),
        ),
    ])
    .await;
    let client = sum2act_local::build(&args(&url)).await.unwrap();
    let err = client.complete(&ask("x")).await.unwrap_err();
    assert!(matches!(err, LlmError::InvalidResponse(_)), "{err:?}");
    let json_req = ask("x").with_json_schema("answer", json!({"type": "object"}));
    let err = client.complete(&json_req).await.unwrap_err();
    assert!(err.to_string().contains("not JSON"), "{err}");
    let tool_req = ask("x").with_tools(
        vec![json!({"name": "lookup", "parameters": {}})],
        ToolChoice::Auto,
    );
    // A call to a function that was not offered is passed on: the agent's tool caller answers it with
    // ToolBench's code 1 and counts it as hallucinated (issue 17), instead of the episode failing.
    let call = client.complete(&tool_req).await.unwrap();
    assert_eq!(call.tool_calls[0].name, "rm_rf");
}

#[tokio::test]
async fn tools_and_json_schema_reach_the_server_and_calls_come_back() {
    let (url, mock) = start(vec![ok(json!({
        "model": "mock-model",
        "choices": [{"message": {"content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"x\"}"}}
        ]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 6}
    }))])
    .await;
    let client = sum2act_local::build(&args(&url)).await.unwrap();
    let req = ask("x").with_tools(
        vec![json!({"name": "lookup", "parameters": {}})],
        ToolChoice::Required,
    );
    let c = client.complete(&req).await.unwrap();
    assert_eq!(c.tool_calls[0].name, "lookup");
    assert_eq!(c.tool_calls[0].arguments, "{\"q\":\"x\"}");
    let sent = mock.hits.lock().unwrap()[0].1.clone();
    assert_eq!(sent["tools"][0]["type"], "function");
    assert_eq!(sent["tool_choice"], "required");
}

#[tokio::test]
async fn fails_over_to_a_second_endpoint() {
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (url, mock) = start(vec![
        ok(chat_reply("a", Some((1, 1)))),
        ok(chat_reply("b", Some((1, 1)))),
    ])
    .await;
    let options = LlmOptions {
        endpoints: [format!("http://127.0.0.1:{dead_port}/v1"), url]
            .into_iter()
            .map(endpoint)
            .collect(),
        retries: 0,
        ..LlmOptions::default()
    };
    let client = sum2act_local::build(&options).await.unwrap();
    assert_eq!(client.complete(&ask("1")).await.unwrap().content, "a");
    assert_eq!(client.complete(&ask("2")).await.unwrap().content, "b");
    assert_eq!(mock.hits.lock().unwrap().len(), 2);
}

/// Runs a blocking closure (the binary) while the mock server keeps serving on this runtime.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(f).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_check_records_and_replays() {
    let (url, _mock) = start(vec![ok(chat_reply(
        "An API lets programs talk.",
        Some((12, 6)),
    ))])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec");
    let rec2 = rec.clone();
    blocking(move || {
        common::Test::new()
            .args([
                "llm",
                "check",
                "--no-tools",
                "--base-url",
                &url,
                "--model",
                "mock-model",
                "--record",
            ])
            .arg(&rec2)
            .run()
            .success()
            .stdout_has("An API lets programs talk.")
            .stdout_has("12 prompt + 6 completion")
    })
    .await;
    // One recorded reply, beside the file naming the model the run asked for.
    let replies = std::fs::read_dir(&rec)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name() != "model.txt")
        .count();
    assert_eq!(replies, 1);
    let model = std::fs::read_to_string(rec.join("model.txt")).unwrap();
    assert_eq!(model.trim(), "mock-model");
    // No server needed to replay; an unseen prompt fails loudly.
    let rec2 = rec.clone();
    blocking(move || {
        common::Test::new()
            .args(["llm", "check", "--no-tools", "--replay"])
            .arg(&rec2)
            .run()
            .success()
            .stdout_has("An API lets programs talk.");
        common::Test::new()
            .args([
                "llm",
                "check",
                "--no-tools",
                "--prompt",
                "something else",
                "--replay",
            ])
            .arg(&rec2)
            .run()
            .failure(1)
            .stderr_has("no recording");
    })
    .await;
}

#[test]
fn missing_model_file_says_how_to_fetch_it() {
    let cache = tempfile::tempdir().unwrap();
    common::Test::new()
        .env("XDG_CACHE_HOME", cache.path())
        .args(["llm", "check"])
        .run()
        .failure(2)
        .no_panic()
        .stderr_has("scripts/fetch-model.sh");
    common::Test::new()
        .args(["llm", "check", "--model", "/nonexistent/model.gguf"])
        .run()
        .failure(2)
        .stderr_has("/nonexistent/model.gguf");
}

#[test]
fn bad_endpoint_url_is_bad_input() {
    common::Test::new()
        .args(["llm", "check", "--base-url", "localhost:8000"])
        .run()
        .failure(2)
        .stderr_has("must start with http://");
}
