//! An OpenAI-compatible HTTP front for any `LlmClient` (the embedded model, in practice), so Python
//! tools such as StableToolBench's harness or ToolEval, and several sum2act processes, can share one
//! loaded model. Concurrent requests reach the model together, where the engine batches them.

use super::purpose::Purpose;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Path as AxumPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::purpose::{self, ReaderRole};
use super::{
    Completion, CompletionRequest, LlmClient, LlmError, Message, ResponseFormat, Role, ToolCall,
    ToolChoice,
};

/// Parses an OpenAI chat-completions body. Errors name the offending field.
pub fn parse_request(body: &Value) -> Result<CompletionRequest, String> {
    if body["stream"].as_bool() == Some(true) {
        return Err("`stream`: streaming is not supported; send stream=false".into());
    }
    let messages = body["messages"]
        .as_array()
        .ok_or("`messages` must be an array of {role, content}")?
        .iter()
        .enumerate()
        .map(|(i, m)| parse_message(i, m))
        .collect::<Result<Vec<_>, _>>()?;
    if messages.is_empty() {
        return Err("`messages` is empty".into());
    }
    let tools: Vec<Value> = match &body["tools"] {
        Value::Null => Vec::new(),
        Value::Array(a) => a
            .iter()
            .map(|t| t.get("function").unwrap_or(t).clone())
            .collect(),
        _ => return Err("`tools` must be an array".into()),
    };
    let tool_choice = match &body["tool_choice"] {
        Value::Null => ToolChoice::Auto,
        Value::String(s) => match s.as_str() {
            "auto" => ToolChoice::Auto,
            "required" | "any" => ToolChoice::Required,
            "none" => ToolChoice::None,
            other => return Err(format!("`tool_choice`: unknown value {other:?}")),
        },
        v => match v["function"]["name"].as_str() {
            Some(name) => ToolChoice::Function(name.to_string()),
            None => return Err("`tool_choice` object needs function.name".into()),
        },
    };
    let rf = &body["response_format"];
    let response_format = match rf["type"].as_str() {
        None | Some("text") => ResponseFormat::Text,
        Some("json_object") => ResponseFormat::JsonObject,
        Some("json_schema") => {
            let spec = &rf["json_schema"];
            let schema = spec
                .get("schema")
                .cloned()
                .ok_or("`response_format.json_schema.schema` is missing")?;
            ResponseFormat::JsonSchema {
                name: spec["name"].as_str().unwrap_or("response").to_string(),
                schema,
            }
        }
        Some(other) => return Err(format!("`response_format.type`: unknown value {other:?}")),
    };
    let max_tokens = body["max_completion_tokens"]
        .as_u64()
        .or_else(|| body["max_tokens"].as_u64())
        .unwrap_or(512)
        .min(u64::from(u32::MAX)) as u32;
    let mut request = CompletionRequest::new(Purpose::Serve, messages)
        .with_tools(tools, tool_choice)
        .with_max_tokens(max_tokens)
        .with_temperature(body["temperature"].as_f64().unwrap_or(0.0) as f32);
    request.response_format = response_format;
    request.seed = body["seed"].as_u64();
    Ok(request)
}

fn parse_message(i: usize, m: &Value) -> Result<Message, String> {
    let role = match m["role"].as_str() {
        Some("system") | Some("developer") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") | Some("function") => Role::Tool,
        other => return Err(format!("`messages[{i}].role`: unknown role {other:?}")),
    };
    // Content is a string, null, or a list of parts of which we keep the text ones.
    let content = match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => {
            return Err(format!(
                "`messages[{i}].content` must be a string or a list of parts"
            ));
        }
    };
    let tool_calls = m["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .enumerate()
                .map(|(k, c)| ToolCall {
                    id: c["id"]
                        .as_str()
                        .map_or_else(|| format!("call_{k}"), str::to_string),
                    name: c["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    arguments: match &c["function"]["arguments"] {
                        Value::String(s) => s.clone(),
                        Value::Null => "{}".into(),
                        v => v.to_string(),
                    },
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Message {
        role,
        content,
        tool_calls,
        tool_call_id: m["tool_call_id"].as_str().map(str::to_string),
        name: m["name"].as_str().map(str::to_string),
    })
}

/// The chat-completions response body for `c`.
pub fn response_json(c: &Completion, id: &str) -> Value {
    let mut message = json!({"role": "assistant", "content": c.content});
    if !c.tool_calls.is_empty() {
        message["tool_calls"] = c
            .tool_calls
            .iter()
            .map(|t| json!({"id": t.id, "type": "function", "function": {"name": t.name, "arguments": t.arguments}}))
            .collect();
    }
    json!({
        "id": id,
        "object": "chat.completion",
        "created": chrono::Utc::now().timestamp(),
        "model": c.model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": c.finish_reason.clone().unwrap_or_else(|| "stop".into()),
        }],
        "usage": {
            "prompt_tokens": c.usage.prompt_tokens,
            "completion_tokens": c.usage.completion_tokens,
            "total_tokens": c.usage.total(),
        },
    })
}

fn error(status: StatusCode, kind: &str, code: Option<&str>, message: String) -> Response {
    let body = json!({"error": {"message": message, "type": kind, "code": code}});
    (status, Json(body)).into_response()
}

fn llm_error(e: &LlmError) -> Response {
    let msg = e.to_string();
    match e {
        LlmError::ContextOverflow { .. } => error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            Some("context_length_exceeded"),
            msg,
        ),
        // Not retriable: asking again cannot produce a recording that does not exist.
        LlmError::Replay(_) => error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            Some("not_recorded"),
            msg,
        ),
        LlmError::UnknownTool(_) | LlmError::Config(_) => {
            error(StatusCode::BAD_REQUEST, "invalid_request_error", None, msg)
        }
        LlmError::InvalidResponse(_) | LlmError::Truncated { .. } => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_response",
            None,
            msg,
        ),
        _ => error(StatusCode::INTERNAL_SERVER_ERROR, "server_error", None, msg),
    }
}

struct AppState {
    client: Arc<dyn LlmClient>,
}

async fn chat(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Option<Json<Value>>,
) -> Response {
    complete(&state, None, &headers, body).await
}

/// `/role/{role}/v1/...`: a client that sends no purpose (StableToolBench's Python, curl) chooses
/// which by-hand reader answers it by the URL.
async fn chat_as_role(
    State(state): State<Arc<AppState>>,
    AxumPath(role): AxumPath<String>,
    headers: HeaderMap,
    body: Option<Json<Value>>,
) -> Response {
    match role_named(&role) {
        Ok(role) => complete(&state, Some(role), &headers, body).await,
        Err(refused) => *refused,
    }
}

/// The role a `/role/{role}/v1` URL names, or a 404 listing the roles.
fn role_named(name: &str) -> Result<ReaderRole, Box<Response>> {
    name.parse::<ReaderRole>().map_err(|e| {
        Box::new(error(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            None,
            e.to_string(),
        ))
    })
}

/// The purpose a request is answered under: the URL's role wins, then our client's purpose header.
fn purpose_of(role: Option<ReaderRole>, headers: &HeaderMap) -> Option<String> {
    if let Some(r) = role {
        return Some(r.purpose().to_string());
    }
    headers
        .get(purpose::PURPOSE_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(purpose::from_header)
}

async fn complete(
    state: &AppState,
    role: Option<ReaderRole>,
    headers: &HeaderMap,
    body: Option<Json<Value>>,
) -> Response {
    let Some(Json(body)) = body else {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            None,
            "body must be JSON (Content-Type: application/json)".into(),
        );
    };
    let mut request = match parse_request(&body) {
        Ok(r) => r,
        Err(m) => return error(StatusCode::BAD_REQUEST, "invalid_request_error", None, m),
    };
    if let Some(p) = purpose_of(role, headers) {
        request.purpose = Purpose::from(p);
    }
    match state.client.complete(&request).await {
        Ok(c) => {
            let id = format!("chatcmpl-{:x}", rand::random::<u64>());
            Json(response_json(&c, &id)).into_response()
        }
        Err(e) => llm_error(&e),
    }
}

async fn models(State(state): State<Arc<AppState>>) -> Json<Value> {
    Json(json!({
        "object": "list",
        "data": [{"id": state.client.model_id(), "object": "model", "owned_by": "sum2act"}],
    }))
}

async fn models_as_role(
    State(state): State<Arc<AppState>>,
    AxumPath(role): AxumPath<String>,
) -> Response {
    match role_named(&role) {
        Ok(_) => models(State(state)).await.into_response(),
        Err(refused) => *refused,
    }
}

/// The routes: `POST /v1/chat/completions`, `GET /v1/models`, `GET /health`, and the same under
/// `/role/{agent|simulator|judge}/v1/` for clients that choose a by-hand reader by URL.
pub fn router(client: Arc<dyn LlmClient>) -> Router {
    let state = Arc::new(AppState { client });
    Router::new()
        .route("/v1/chat/completions", post(chat))
        .route("/chat/completions", post(chat))
        .route("/v1/models", get(models))
        .route("/models", get(models))
        .route("/role/{role}/v1/chat/completions", post(chat_as_role))
        .route("/role/{role}/v1/models", get(models_as_role))
        .route("/health", get(|| async { "ok" }))
        .with_state(state)
}

/// Serves `client` on `listener` until the process ends, under the default connection limits.
pub async fn serve(
    listener: tokio::net::TcpListener,
    client: Arc<dyn LlmClient>,
) -> std::io::Result<()> {
    serve_with(listener, client, crate::net::Limits::default()).await
}

/// Serves `client` under `limits`. A client that disconnects drops its request's future, and the
/// embedded engine stops generating for a request whose caller is gone.
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    client: Arc<dyn LlmClient>,
    limits: crate::net::Limits,
) -> std::io::Result<()> {
    crate::net::serve(listener, router(client), limits, std::future::pending()).await
}

/// Binds `addr` (errors name it).
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, LlmError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| LlmError::Config(format!("cannot listen on {addr}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::openai::OpenAiClient;
    use crate::llm::scripted::ScriptedLlm;

    #[test]
    fn parses_tools_formats_and_parts() {
        let body = json!({
            "model": "x",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
            "tool_choice": {"type": "function", "function": {"name": "f"}},
            "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": {"type": "object"}}},
            "max_tokens": 7
        });
        let r = parse_request(&body).unwrap();
        assert_eq!(r.messages[0].content, "hi");
        assert_eq!(r.tools[0]["name"], "f");
        assert_eq!(r.tool_choice, ToolChoice::Function("f".into()));
        assert_eq!(r.max_tokens, 7);
        assert!(matches!(
            r.response_format,
            ResponseFormat::JsonSchema { .. }
        ));
        let err =
            parse_request(&json!({"messages": [{"role": "robot", "content": "x"}]})).unwrap_err();
        assert!(err.contains("messages[0].role"), "{err}");
    }

    #[tokio::test]
    async fn our_client_talks_to_our_server() {
        let model: Arc<dyn LlmClient> = Arc::new(ScriptedLlm::new(|req, _| {
            Ok(Completion {
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: req.tools[0]["name"].as_str().unwrap_or_default().into(),
                    arguments: "{\"q\":1}".into(),
                }],
                ..crate::llm::scripted::reply("thinking")
            })
        }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve(listener, model));
        let client = OpenAiClient::new(
            &format!("http://{addr}/v1"),
            None,
            None,
            std::time::Duration::from_secs(5),
        )
        .unwrap();
        assert_eq!(
            client.list_models().await.unwrap(),
            vec!["scripted".to_string()]
        );
        let req = CompletionRequest::new("t", vec![Message::user("go")]).with_tools(
            vec![json!({"name": "lookup", "parameters": {}})],
            ToolChoice::Required,
        );
        let c = client.complete(&req).await.unwrap();
        assert_eq!(c.tool_calls[0].name, "lookup");
        assert_eq!(c.tool_calls[0].arguments, "{\"q\":1}");
        assert_eq!(c.usage.prompt_tokens, 10);
    }

    /// A model that never answers and records when its call is dropped.
    struct Hanging {
        dropped: Arc<std::sync::atomic::AtomicBool>,
    }

    struct OnDrop(Arc<std::sync::atomic::AtomicBool>);

    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[async_trait::async_trait]
    impl LlmClient for Hanging {
        async fn complete(&self, _: &CompletionRequest) -> Result<Completion, LlmError> {
            let _guard = OnDrop(self.dropped.clone());
            std::future::pending::<()>().await;
            Err(LlmError::Config("unreachable".into()))
        }

        fn model_id(&self) -> String {
            "hanging".into()
        }
    }

    #[tokio::test]
    async fn a_disconnected_client_stops_its_request() {
        use tokio::io::AsyncWriteExt;
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let model: Arc<dyn LlmClient> = Arc::new(Hanging {
            dropped: dropped.clone(),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve(listener, model));
        let body = json!({"messages": [{"role": "user", "content": "hi"}]}).to_string();
        let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        client.write_all(head.as_bytes()).await.unwrap();
        client.write_all(body.as_bytes()).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(!dropped.load(std::sync::atomic::Ordering::SeqCst));
        // The client gives up (a client-side timeout): the server must stop working for it.
        drop(client);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while !dropped.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(
                std::time::Instant::now() < deadline,
                "the request kept running"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}
