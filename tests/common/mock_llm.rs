//! A deterministic stand-in for an OpenAI-compatible endpoint, served on loopback so the real binary
//! runs end to end in tests without model weights. Its "policy": with tools offered, call the first
//! API with its example arguments, then `Finish` once an observation or a fact is in the prompt; with a
//! JSON schema, answer with a value that fits the schema (a state update quotes the observation).
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::{Json, Router, extract::State, routing::post};
use serde_json::{Value, json};

pub struct MockLlm {
    pub base_url: String,
    pub requests: Arc<AtomicUsize>,
}

/// Starts the mock on a background thread; it lives until the test process exits.
pub fn spawn() -> MockLlm {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind mock LLM");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = requests.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let app = Router::new()
                .route("/v1/chat/completions", post(complete))
                .route(
                    "/v1/models",
                    axum::routing::get(|| async { Json(json!({"data": [{"id": "mock"}]})) }),
                )
                .with_state(counter);
            let _ = axum::serve(listener, app).await;
        });
    });
    MockLlm {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        requests,
    }
}

async fn complete(State(counter): State<Arc<AtomicUsize>>, Json(body): Json<Value>) -> Json<Value> {
    counter.fetch_add(1, Ordering::SeqCst);
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let text: String = messages
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let (content, calls) = if let Some(schema) = schema_of(&body) {
        (fill(&schema, &text).to_string(), vec![])
    } else if let Some(tools) = body["tools"].as_array().filter(|t| !t.is_empty()) {
        let seen_result =
            messages.iter().any(|m| m["role"] == "tool") || text.contains("Facts found:\n1.");
        let call = if seen_result {
            finish(&text)
        } else {
            first_api_call(tools)
        };
        ("Let me act.".to_string(), vec![call])
    } else {
        ("pong".to_string(), vec![])
    };
    let message = if calls.is_empty() {
        json!({"role": "assistant", "content": content})
    } else {
        json!({"role": "assistant", "content": content, "tool_calls": calls})
    };
    let prompt_tokens = (text.len() / 4) as u64;
    Json(json!({
        "id": "mock-1", "object": "chat.completion", "model": "mock",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 20, "total_tokens": prompt_tokens + 20}
    }))
}

fn schema_of(body: &Value) -> Option<Value> {
    let rf = &body["response_format"];
    match rf["type"].as_str() {
        Some("json_schema") => Some(rf["json_schema"]["schema"].clone()),
        Some("json_object") => Some(json!({"type": "object"})),
        _ => None,
    }
}

/// A value that satisfies `schema`; facts quote the observation the prompt shows.
fn fill(schema: &Value, prompt: &str) -> Value {
    match schema["type"].as_str() {
        Some("object") => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema["properties"].as_object() {
                for (k, v) in props {
                    let value = if k == "new_facts" {
                        json!([format!("observed: {}", observation(prompt))])
                    } else {
                        fill(v, prompt)
                    };
                    out.insert(k.clone(), value);
                }
            }
            Value::Object(out)
        }
        Some("array") => json!([]),
        Some("boolean") => json!(true),
        Some("integer") | Some("number") => json!(0),
        _ => match schema["enum"].as_array().and_then(|e| e.first()) {
            Some(first) => first.clone(),
            None => json!("ok"),
        },
    }
}

fn observation(prompt: &str) -> String {
    let start = prompt
        .find("The API returned:")
        .map(|i| i + 17)
        .unwrap_or(0);
    prompt[start..].trim().chars().take(80).collect()
}

fn first_api_call(tools: &[Value]) -> Value {
    let f = tools
        .iter()
        .map(|t| {
            if t.get("function").is_some() {
                &t["function"]
            } else {
                t
            }
        })
        .find(|f| f["name"] != "Finish")
        .cloned()
        .unwrap_or(json!({"name": "Finish"}));
    let mut args = serde_json::Map::new();
    if let Some(props) = f["parameters"]["properties"].as_object() {
        for (k, v) in props {
            args.insert(
                k.clone(),
                v.get("example_value").cloned().unwrap_or(json!("test")),
            );
        }
    }
    json!({"id": "call_1", "type": "function", "function": {"name": f["name"], "arguments": Value::Object(args).to_string()}})
}

fn finish(prompt: &str) -> Value {
    let fact = prompt
        .find("1. ")
        .map(|i| prompt[i + 3..].lines().next().unwrap_or("").to_string())
        .unwrap_or_else(|| "the tool answered".to_string());
    let args = json!({"return_type": "give_answer", "final_answer": format!("Here is what I found: {fact}")});
    json!({"id": "call_2", "type": "function", "function": {"name": "Finish", "arguments": args.to_string()}})
}
