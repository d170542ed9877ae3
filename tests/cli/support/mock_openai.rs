//! A scripted OpenAI-compatible server on loopback for batch tests and benchmarks: the real binary
//! (or library) talks to it over HTTP exactly as it would to vLLM. The script is stateless, so any
//! number of concurrent episodes can share it:
//! - with `tools`: the first step of an episode calls the first real tool, later steps call Finish;
//! - with a JSON schema: a minimal instance of the schema;
//! - otherwise: a short text.
//!
//! `latency` delays every reply (a slow model); `requests()` counts the calls served.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

#[derive(Default)]
struct Shared {
    latency: Duration,
    requests: AtomicU64,
}

pub struct MockOpenAi {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl MockOpenAi {
    /// Starts the server on a free loopback port in the current tokio runtime.
    pub async fn start(latency: Duration) -> MockOpenAi {
        let shared = Arc::new(Shared {
            latency,
            requests: AtomicU64::new(0),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(complete))
            .route(
                "/v1/models",
                get(|| async {
                    Json(json!({"object": "list", "data": [{"id": "mock", "object": "model"}]}))
                }),
            )
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind mock");
        let addr = listener.local_addr().expect("mock addr");
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        MockOpenAi {
            addr,
            shared,
            stop: Some(tx),
        }
    }

    /// Starts the server on its own thread and runtime (for tests that drive a child process).
    pub fn spawn_thread(
        latency: Duration,
    ) -> (
        String,
        std::thread::JoinHandle<()>,
        tokio::sync::oneshot::Sender<()>,
    ) {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let handle = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let mock = MockOpenAi::start(latency).await;
                let _ = addr_tx.send(mock.base_url());
                let _ = stop_rx.await;
                drop(mock);
            });
        });
        let url = addr_rx.recv().expect("mock started");
        (url, handle, stop_tx)
    }

    /// `spawn_thread`, also returning the server thread's Linux thread id (to measure its CPU apart).
    pub fn spawn_thread_with_tid(
        latency: Duration,
    ) -> (
        (String, String),
        std::thread::JoinHandle<()>,
        tokio::sync::oneshot::Sender<()>,
    ) {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let handle = std::thread::spawn(move || {
            let tid = std::fs::read_link("/proc/thread-self")
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
                .unwrap_or_default();
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let mock = MockOpenAi::start(latency).await;
                let _ = addr_tx.send((mock.base_url(), tid));
                let _ = stop_rx.await;
                drop(mock);
            });
        });
        let started = addr_rx.recv().expect("mock started");
        (started, handle, stop_tx)
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> u64 {
        self.shared.requests.load(Ordering::SeqCst)
    }
}

impl Drop for MockOpenAi {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

async fn complete(State(shared): State<Arc<Shared>>, Json(request): Json<Value>) -> Json<Value> {
    shared.requests.fetch_add(1, Ordering::SeqCst);
    if !shared.latency.is_zero() {
        tokio::time::sleep(shared.latency).await;
    }
    Json(reply(&request))
}

/// A chat-completion reply whose only content is one call of function `name` with `args` (for tests
/// that script a model step by step).
pub fn call_reply(name: &str, args: &Value) -> Value {
    let call = json!({"id": "c", "type": "function", "function": {"name": name, "arguments": args.to_string()}});
    json!({
        "id": "x", "object": "chat.completion", "created": 0, "model": "mock",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "", "tool_calls": [call]}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

/// Whether a request is a method's turn after its first tool call: Sum2Act's router with the state of
/// step 1 (`--steps`), or its call reading a round's results (in rounds, the default). Tests that make
/// a model fail mid-episode fail it here.
pub fn later_turn(request: &Value) -> bool {
    let text = request.to_string();
    text.contains("STATE after 1 step") || text.contains("This round's calls have returned")
}

/// The scripted reply to one chat-completion request.
pub fn reply(request: &Value) -> Value {
    let empty = Vec::new();
    let messages = request["messages"].as_array().unwrap_or(&empty);
    let tools = request["tools"].as_array().unwrap_or(&empty);
    let (content, calls) = if !tools.is_empty() {
        let (name, args) = if first_step(messages) {
            match tools
                .iter()
                .map(|t| &t["function"])
                .find(|f| f["name"] != "Finish")
            {
                Some(f) => (
                    f["name"].as_str().unwrap_or("Finish").to_string(),
                    arguments_for(&f["parameters"]),
                ),
                None => ("Finish".to_string(), finish_args()),
            }
        } else {
            ("Finish".to_string(), finish_args())
        };
        let call = json!({"id": "call_1", "type": "function", "function": {"name": name, "arguments": args.to_string()}});
        (String::new(), vec![call])
    } else if let Some(schema) = request.pointer("/response_format/json_schema/schema") {
        (instance(schema).to_string(), Vec::new())
    } else if request
        .pointer("/response_format/type")
        .and_then(Value::as_str)
        == Some("json_object")
    {
        ("{}".to_string(), Vec::new())
    } else {
        ("All done.".to_string(), Vec::new())
    };
    let finish_reason = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    let prompt_tokens: usize = messages
        .iter()
        .map(|m| m["content"].as_str().map_or(0, str::len) / 4)
        .sum();
    json!({
        "id": "chatcmpl-mock", "object": "chat.completion", "created": 0, "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt_tokens.max(1), "completion_tokens": 12, "total_tokens": prompt_tokens.max(1) + 12}
    })
}

/// No tool result yet: no `tool` message, and the Sum2Act state says 0 steps (or is absent).
fn first_step(messages: &[Value]) -> bool {
    let any_tool = messages
        .iter()
        .any(|m| m["role"] == "tool" || m["role"] == "function");
    let later_state = messages.iter().any(|m| {
        m["content"].as_str().is_some_and(|c| {
            c.match_indices("STATE after ")
                .any(|(i, _)| !c[i + 12..].starts_with("0 "))
        })
    });
    !any_tool && !later_state
}

fn finish_args() -> Value {
    json!({"return_type": "give_answer", "final_answer": "Here is what I found: the requested information is 42."})
}

/// Arguments filling every required parameter with a value of its type.
fn arguments_for(parameters: &Value) -> Value {
    let mut out = serde_json::Map::new();
    let empty = Vec::new();
    for name in parameters["required"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(Value::as_str)
    {
        if name.is_empty() {
            continue;
        }
        let schema = &parameters["properties"][name];
        out.insert(name.to_string(), instance(schema));
    }
    Value::Object(out)
}

/// A small value matching a JSON schema (the first branch of an `anyOf`/`oneOf`, the first of several
/// types, a `const`).
pub fn instance(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    for k in ["anyOf", "oneOf"] {
        if let Some(first) = schema[k].as_array().and_then(|b| b.first()) {
            return instance(first);
        }
    }
    let kind = match &schema["type"] {
        Value::Array(types) => types.first().and_then(Value::as_str).unwrap_or("string"),
        other => other.as_str().unwrap_or("string"),
    };
    match kind {
        "object" => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (k, v) in props {
                    out.insert(k.clone(), instance(v));
                }
            }
            Value::Object(out)
        }
        "array" => json!([instance(&schema["items"])]),
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "null" => Value::Null,
        _ => json!("ok"),
    }
}
