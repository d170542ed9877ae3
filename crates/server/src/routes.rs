//! The HTTP face of the virtual API: `POST /virtual` (StableToolBench's protocol, also at ToolBench's
//! `/rapidapi`) and `GET /health`,
//! on a real axum server with a request size cap and graceful shutdown.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body as HttpBody, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::ServerError;
use super::answer::{Pending, Prepared};
use super::engine::{Answer, VirtualApi};
use crate::net::Limits;
use sum2act_core::tools::http::{SIMULATING_HEADER, SOURCE_HEADER};
use sum2act_core::tools::{ReplySource, ToolRequest};

/// Largest request body accepted.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// The body StableToolBench clients send; the key is accepted and ignored (and never logged).
#[derive(Deserialize)]
struct Body {
    #[serde(default)]
    category: String,
    tool_name: String,
    api_name: String,
    #[serde(default)]
    tool_input: Value,
    #[serde(default)]
    strip: String,
}

/// The reply body, fields in the order StableToolBench sends them; `source` only in an early answer's
/// body (see `tools::http::SIMULATING_HEADER`).
#[derive(Serialize)]
struct ReplyBody<'a> {
    error: &'a str,
    response: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'a str>,
}

fn json_response(status: StatusCode, body: Vec<u8>, source: &str) -> Response {
    let mut resp = (status, body).into_response();
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(v) = HeaderValue::from_str(source) {
        headers.insert(SOURCE_HEADER, v);
    }
    resp
}

fn error_body(status: StatusCode, message: &str, source: &str) -> Response {
    let body = serde_json::to_vec(&ReplyBody {
        error: message,
        response: &Value::String(String::new()),
        source: None,
    })
    .unwrap_or_default();
    json_response(status, body, source)
}

pub async fn virtual_api(
    State(api): State<Arc<VirtualApi>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    // A body over the size cap (413) or one that cannot be read gets the protocol's reply shape too.
    let body = match body {
        Ok(b) => b,
        Err(rejection) => {
            let status = rejection.status();
            let message = format!("request invalid: {}", rejection.body_text());
            return error_body(status, &message, "caller");
        }
    };
    let parsed: Body = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => {
            return error_body(
                StatusCode::UNPROCESSABLE_ENTITY,
                &format!(
                    "request invalid: expected {{category, tool_name, api_name, tool_input, strip}}: {e}"
                ),
                "caller",
            );
        }
    };
    let request = ToolRequest {
        category: parsed.category,
        tool_name: parsed.tool_name,
        api_name: parsed.api_name,
        tool_input: parsed.tool_input,
        strip: parsed.strip,
    };
    let answer = match api.prepare(&request).await {
        Prepared::Done(answer) => answer,
        Prepared::Simulate(pending)
            if headers.contains_key(SIMULATING_HEADER) && api.slow(&pending) =>
        {
            return early_answer(api, *pending);
        }
        Prepared::Simulate(pending) => api.finish(*pending).await.0,
    };
    match answer {
        Answer::Reply(reply) => {
            let source = reply.source.map_or("remote", |s| s.as_str());
            match serde_json::to_vec(&ReplyBody {
                error: &reply.error,
                response: &reply.response,
                source: None,
            }) {
                Ok(body) => json_response(StatusCode::OK, body, source),
                Err(e) => error_body(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("cannot encode the reply: {e}"),
                    source,
                ),
            }
        }
        Answer::HttpError(status) => error_body(
            StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
            "Service temporarily unavailable (injected fault)",
            "fault",
        ),
    }
}

/// Answers at once that the reply is being simulated, then sends it when it is made. The simulation
/// runs on its own task: a client that gives up does not cancel it, and the world keeps its reply.
fn early_answer(api: Arc<VirtualApi>, pending: Pending) -> Response {
    let task = tokio::spawn(async move { api.finish(pending).await });
    let rest = async move {
        let body = match task.await {
            Ok((Answer::Reply(reply), source)) => serde_json::to_vec(&ReplyBody {
                error: &reply.error,
                response: &reply.response,
                source: Some(source.as_str()),
            }),
            Ok((Answer::HttpError(status), _)) => serde_json::to_vec(&ReplyBody {
                error: &format!("request invalid, data error. status_code={status}"),
                response: &Value::String(String::new()),
                source: Some(ReplySource::Fault.as_str()),
            }),
            Err(e) => serde_json::to_vec(&ReplyBody {
                error: &format!("the simulation failed: {e}"),
                response: &Value::String(String::new()),
                source: Some(ReplySource::Caller.as_str()),
            }),
        };
        Ok::<_, std::convert::Infallible>(Bytes::from(body.unwrap_or_default()))
    };
    // A first chunk of white space (valid before JSON) sends the head now, not with the body.
    let first = futures::stream::once(async { Ok(Bytes::from_static(b" ")) });
    let stream = futures::StreamExt::chain(first, futures::stream::once(rest));
    let mut resp = Response::new(HttpBody::from_stream(stream));
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(SIMULATING_HEADER, HeaderValue::from_static("1"));
    resp
}

async fn health(State(api): State<Arc<VirtualApi>>) -> Response {
    let body = serde_json::json!({
        "status": "ok",
        "tools": api.catalog().tool_count(),
        "apis": api.catalog().api_count(),
        "answers": api.stats.snapshot(),
    });
    json_response(StatusCode::OK, body.to_string().into_bytes(), "caller")
}

/// Any other path: the protocol's reply shape saying where the server answers, not an empty 404.
async fn not_found(method: axum::http::Method, uri: axum::http::Uri) -> Response {
    let message = format!(
        "no route {method} {}: this server answers POST /virtual (StableToolBench's protocol; POST /rapidapi, ToolBench's path, is the same) and GET /health",
        uri.path()
    );
    error_body(StatusCode::NOT_FOUND, &message, "caller")
}

/// The server's routes: `/rapidapi` too, the path ToolBench's own client posts the same body to.
pub fn router(api: Arc<VirtualApi>) -> Router {
    Router::new()
        .route("/virtual", post(virtual_api))
        .route("/rapidapi", post(virtual_api))
        .route("/health", get(health))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES))
        .with_state(api)
}

/// A running server; dropping it (or `shutdown`) stops it gracefully.
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl ServerHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The `/virtual` URL clients use.
    pub fn url(&self) -> String {
        format!("http://{}/virtual", self.addr)
    }

    /// Stops accepting, lets requests in flight finish, and waits for the server to end.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            match task.await {
                Ok(Err(e)) => tracing::warn!("tool server ended with an error: {e}"),
                Err(e) => tracing::warn!("tool server task failed: {e}"),
                Ok(Ok(())) => {}
            }
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, ServerError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| ServerError::Bind { addr, error })
}

/// Starts the server in the background (port 0 picks a free port).
pub async fn spawn(api: Arc<VirtualApi>, addr: SocketAddr) -> Result<ServerHandle, ServerError> {
    let listener = bind(addr).await?;
    let addr = listener
        .local_addr()
        .map_err(|error| ServerError::Bind { addr, error })?;
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        crate::net::serve(listener, router(api), Limits::default(), async move {
            let _ = stopped.await;
        })
        .await
    });
    Ok(ServerHandle {
        addr,
        stop: Some(stop),
        task: Some(task),
    })
}

/// Runs the server in the foreground until `signal` completes; `on_ready` gets the bound address.
pub async fn serve_until(
    api: Arc<VirtualApi>,
    addr: SocketAddr,
    limits: Limits,
    on_ready: impl FnOnce(SocketAddr),
    signal: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let listener = bind(addr).await?;
    let bound = listener
        .local_addr()
        .map_err(|error| ServerError::Bind { addr, error })?;
    on_ready(bound);
    crate::net::serve(listener, router(api), limits, signal)
        .await
        .map_err(ServerError::Serve)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_request_gets_the_protocol_reply_shape() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let api = crate::sample_api().unwrap();
            let server = spawn(Arc::new(api), "127.0.0.1:0".parse().unwrap())
                .await
                .unwrap();
            let big = "x".repeat(MAX_REQUEST_BYTES + 10);
            let resp = reqwest::Client::new()
                .post(server.url())
                .body(big)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status().as_u16(), 413);
            let v: Value = resp.json().await.unwrap();
            assert!(
                v["error"]
                    .as_str()
                    .is_some_and(|e| e.contains("too large") || e.contains("limit")),
                "{v}"
            );
            assert_eq!(v["response"], "");
            server.shutdown().await;
        });
    }
}
