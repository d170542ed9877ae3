//! `sum2act serve --mcp`: a data directory's ToolBench APIs as MCP tools, answered by the same
//! engine as the `/virtual` server (response cache, then simulation; faults and limits included),
//! over stdio or streamable HTTP. Tool names are the functions' names agents see
//! (`{api}_for_{tool}`), their input schemas the functions' parameters.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Map, Value};

use super::{Answer, ServerError, VirtualApi};
use sum2act_core::toolbench::Function;
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
}

impl CatalogueMcp {
    /// One tool per catalogue API (a name seen twice keeps its first API).
    pub fn new(api: Arc<VirtualApi>) -> Self {
        let mut tools = Vec::new();
        let mut functions = HashMap::new();
        for (tool, doc) in api.catalog().api_docs() {
            let f = Function::from_doc(&doc, &tool.standard_name);
            if functions.contains_key(&f.name) {
                continue;
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
        }
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
        let f = self
            .functions
            .get(name)
            .ok_or_else(|| ErrorData::invalid_params(format!("no tool named `{name}`"), None))?;
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
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    on_ready(bound);
    crate::net::serve(listener, app, limits, signal)
        .await
        .map_err(ServerError::Serve)
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
