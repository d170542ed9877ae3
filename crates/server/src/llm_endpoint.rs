//! An OpenAI-compatible HTTP front for any `LlmClient` (the embedded model, in practice), so Python
//! tools such as StableToolBench's harness or ToolEval, and several sum2act processes, can share one
//! loaded model. Concurrent requests reach the model together, where the engine batches them.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Path as AxumPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use sum2act_core::llm::purpose::{self, Purpose, ReaderRole};
use sum2act_core::llm::wire::{parse_request, response_json};
use sum2act_core::llm::{LlmClient, LlmError};

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

#[cfg(test)]
mod tests {
    use super::*;
    use sum2act_core::llm::openai::OpenAiClient;
    use sum2act_core::llm::scripted::ScriptedLlm;
    use sum2act_core::llm::{Completion, CompletionRequest, Message, ToolCall, ToolChoice};

    #[tokio::test]
    async fn our_client_talks_to_our_server() {
        let model: Arc<dyn LlmClient> = Arc::new(ScriptedLlm::new(|req, _| {
            Ok(Completion {
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: req.tools[0]["name"].as_str().unwrap_or_default().into(),
                    arguments: "{\"q\":1}".into(),
                }],
                ..sum2act_core::llm::scripted::reply("thinking")
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
