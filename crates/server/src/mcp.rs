//! `sum2act serve --mcp`: a data directory's ToolBench APIs as MCP tools, answered by the same
//! engine as the `/virtual` server (response cache, then simulation; faults and limits included),
//! over stdio or streamable HTTP. Tool names are the functions' names agents see
//! (`{api}_for_{tool}`), their input schemas the functions' parameters.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::response::IntoResponse;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value};

use super::{Answer, ServerError, VirtualApi};
use sum2act_core::toolbench::Function;
use sum2act_core::toolbench::naming::{MAX_FUNCTION_NAME, last_chars};
use sum2act_core::tools::ToolRequest;
use sum2act_core::tools::observation::python_dumps;

/// The transport `serve --mcp` speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpServe {
    Stdio,
    Http,
}

sum2act_core::names::named_values!(McpServe, "MCP transport" {
    Stdio => "stdio": "JSON-RPC on stdin/stdout (the client starts us)",
    Http => "http": "streamable HTTP at http://HOST:PORT/mcp",
});

/// Tools per `tools/list` page (a full ToolBench catalogue has 16k APIs).
pub const PAGE: usize = 500;

/// The MCP server over a virtual API.
#[derive(Clone)]
pub struct CatalogueMcp {
    api: Arc<VirtualApi>,
    tools: Arc<Vec<Tool>>,
    functions: Arc<HashMap<String, Function>>,
    renamed: Arc<Vec<Renamed>>,
}

/// An API whose function name another API of the catalogue already has (the name keeps only the
/// last 64 characters of `{api}_for_{tool}`): served under `name`, its clashing name plus `_2`, `_3`….
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renamed {
    pub name: String,
    pub clashing: String,
    pub tool: String,
    pub api: String,
}

impl CatalogueMcp {
    /// One tool per catalogue API; an API whose name is taken gets a numbered one ([`Renamed`]).
    pub fn new(api: Arc<VirtualApi>) -> Self {
        let mut tools = Vec::new();
        let mut functions: HashMap<String, Function> = HashMap::new();
        let mut renamed = Vec::new();
        for (tool, doc) in api.catalog().api_docs() {
            let mut f = Function::from_doc(&doc, &tool.standard_name);
            if functions.contains_key(&f.name) {
                let name = free_name(&f.name, &functions);
                renamed.push(Renamed {
                    name: name.clone(),
                    clashing: std::mem::replace(&mut f.name, name),
                    tool: f.tool.clone(),
                    api: f.api.clone(),
                });
            }
            let mut schema = match &f.schema["parameters"] {
                Value::Object(m) => m.clone(),
                _ => Map::new(),
            };
            // ToolBench's own key; not JSON Schema.
            schema.remove("optional");
            let description = f.schema["description"].as_str().unwrap_or("").to_string();
            tools.push(Tool::new(f.name.clone(), description, Arc::new(schema)));
            functions.insert(f.name.clone(), f);
        }
        CatalogueMcp {
            api,
            tools: Arc::new(tools),
            functions: Arc::new(functions),
            renamed: Arc::new(renamed),
        }
    }

    /// The APIs served under another name than their function name, because it clashed.
    pub fn renamed(&self) -> &[Renamed] {
        &self.renamed
    }

    pub fn tool_count(&self) -> usize {
        self.tools.len()
    }

    /// The result of calling `name` with `arguments`, as the `/virtual` server would answer it: the
    /// response as text (JSON as its text); an error reply is a result marked as an error.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<CallToolResult, ErrorData> {
        let f = self.functions.get(name).ok_or_else(|| unknown_tool(name))?;
        if let Err(why) = check_arguments(f, arguments.as_ref()) {
            return Ok(CallToolResult::error(vec![ContentBlock::text(why)]));
        }
        let request = ToolRequest {
            category: f.category.clone(),
            tool_name: f.tool.clone(),
            api_name: f.api.clone(),
            tool_input: Value::Object(arguments.unwrap_or_default()),
            strip: String::new(),
        };
        Ok(match self.api.answer(&request).await {
            Answer::Reply(r) if r.error.is_empty() => {
                CallToolResult::success(vec![ContentBlock::text(text_of(&r.response))])
            }
            Answer::Reply(r) => {
                let mut parts = vec![ContentBlock::text(r.error)];
                if !matches!(&r.response, Value::String(s) if s.is_empty()) {
                    parts.push(ContentBlock::text(text_of(&r.response)));
                }
                CallToolResult::error(parts)
            }
            Answer::HttpError(status) => CallToolResult::error(vec![ContentBlock::text(format!(
                "the API failed (HTTP {status})"
            ))]),
        })
    }
}

/// The MCP spec's answer to a call of a tool the server does not have: JSON-RPC error -32602.
pub fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("Unknown tool: {name}"), None)
}

/// `name` with the first `_N` suffix (N ≥ 2) no function has yet, within the 64-character limit
/// (the start gives way, as ToolBench's names keep their last characters).
fn free_name(name: &str, taken: &HashMap<String, Function>) -> String {
    (2..)
        .map(|n| {
            let suffix = format!("_{n}");
            let keep = MAX_FUNCTION_NAME - suffix.len();
            format!("{}{suffix}", last_chars(name, keep))
        })
        .find(|candidate| !taken.contains_key(candidate))
        .unwrap_or_else(|| name.to_string())
}

/// Every argument has the JSON type its parameter declares (`string`, `integer`, `boolean`;
/// ToolBench's NUMBER is `integer` but its values include decimals, so any number passes); a null
/// stands for an absent optional argument. The error names the argument and both types.
fn check_arguments(f: &Function, arguments: Option<&Map<String, Value>>) -> Result<(), String> {
    let properties = &f.schema["parameters"]["properties"];
    for (key, value) in arguments.into_iter().flatten() {
        let Some(declared) = properties[key.as_str()]["type"].as_str() else {
            continue;
        };
        let fits = match (declared, value) {
            (_, Value::Null) => !f.required.contains(key),
            ("string", v) => v.is_string(),
            ("integer" | "number", v) => v.is_number(),
            ("boolean", v) => v.is_boolean(),
            ("object", v) => v.is_object(),
            ("array", v) => v.is_array(),
            _ => true,
        };
        if !fits {
            return Err(format!(
                "invalid arguments for {}: `{key}` must be {} {declared}, not {}",
                f.name,
                if declared.starts_with(['a', 'i', 'o']) {
                    "an"
                } else {
                    "a"
                },
                sum2act_core::tools::args::json_kind(value)
            ));
        }
    }
    Ok(())
}

/// A string response as it is; anything else as JSON text (Python's `json.dumps`, as observations
/// print it).
fn text_of(response: &Value) -> String {
    match response {
        Value::String(s) => s.clone(),
        other => python_dumps(other),
    }
}

impl ServerHandler for CatalogueMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("sum2act", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "ToolBench APIs (RapidAPI-style): recorded answers where the data has them, simulated ones otherwise.",
            )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start = match request.and_then(|r| r.cursor) {
            Some(c) => c
                .parse::<usize>()
                .map_err(|_| ErrorData::invalid_params(format!("bad cursor `{c}`"), None))?,
            None => 0,
        };
        let end = (start + PAGE).min(self.tools.len());
        let mut result =
            ListToolsResult::with_all_items(self.tools.get(start..end).unwrap_or(&[]).to_vec());
        if end < self.tools.len() {
            result.next_cursor = Some(end.to_string());
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(&request.name, request.arguments)
            .await
            .map(CallToolResponse::from)
    }
}

/// Serves `server` on stdin/stdout until the client closes them.
pub async fn serve_stdio(server: CatalogueMcp) -> Result<(), ServerError> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServerError::Serve(std::io::Error::other(e.to_string())))?;
    running
        .waiting()
        .await
        .map_err(|e| ServerError::Serve(std::io::Error::other(e.to_string())))?;
    Ok(())
}

/// Serves `server` over streamable HTTP at `/mcp` until `signal` completes; `on_ready` gets the
/// bound address. Host names other than loopback are accepted only for the bound address.
pub async fn serve_http(
    server: CatalogueMcp,
    addr: SocketAddr,
    limits: crate::net::Limits,
    on_ready: impl FnOnce(SocketAddr),
    signal: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|error| ServerError::Bind { addr, error })?;
    let bound = listener
        .local_addr()
        .map_err(|error| ServerError::Bind { addr, error })?;
    let hosts = [
        "localhost".to_string(),
        "127.0.0.1".into(),
        "::1".into(),
        addr.ip().to_string(),
    ];
    let config = StreamableHttpServerConfig::default().with_allowed_hosts(hosts);
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(move || Ok(server.clone()), sessions.clone(), config);
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(sessions, session_end));
    on_ready(bound);
    crate::net::serve(listener, app, limits, signal)
        .await
        .map_err(ServerError::Serve)
}

/// A session-closing `DELETE` answered as the streamable-HTTP spec says: 200 once the session is
/// ended, 404 for a session that is not there. rmcp answers 202 to both, which the official Python
/// SDK reports as "Session termination failed: 202" at the end of every session.
async fn session_end(
    axum::extract::State(sessions): axum::extract::State<
        Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
    >,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{Method, StatusCode};
    use rmcp::transport::streamable_http_server::SessionManager;
    if request.method() != Method::DELETE {
        return next.run(request).await;
    }
    let id = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok());
    if let Some(id) = id
        && !sessions.has_session(&id.into()).await.unwrap_or(false)
    {
        return (StatusCode::NOT_FOUND, "no such MCP session").into_response();
    }
    let mut response = next.run(request).await;
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CatalogueMcp {
        CatalogueMcp::new(Arc::new(super::super::sample_api().unwrap()))
    }

    #[tokio::test]
    async fn catalogue_apis_are_tools_answered_by_the_engine() {
        let s = sample();
        assert_eq!(s.tool_count(), 55, "the sample's APIs");
        let t = &s.tools[0];
        assert!(t.input_schema.get("optional").is_none());
        let name = t.name.to_string();
        let f = &s.functions[&name];
        let mut args = Map::new();
        for p in &f.required {
            args.insert(p.clone(), Value::from("x"));
        }
        let ok = s.call(&name, Some(args)).await.unwrap();
        assert_ne!(ok.is_error, Some(true), "{ok:?}");
        if !f.required.is_empty() {
            let missing = s.call(&name, None).await.unwrap();
            assert_eq!(missing.is_error, Some(true), "{missing:?}");
        }
        let unknown = s.call("no_such_tool", None).await.unwrap_err();
        assert!(unknown.message.contains("no_such_tool"));
    }
}
