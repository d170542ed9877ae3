//! Every MCP server of a run behind one tool source: their tools as functions (named apart), calls
//! routed by server, the servers that died, and a clean stop of them all.

use std::collections::HashSet;
use std::sync::Arc;

use async_trait::async_trait;

use super::McpError;
use super::functions::{function_name, mcp_function, sanitize};
use super::server::{McpOptions, McpServer};
use super::spec::{McpSpec, valid_name};
use crate::toolbench::Function;
use crate::tools::args::input_object;
use crate::tools::{ToolError, ToolReply, ToolRequest, ToolSource};

/// The connected servers of a run.
pub struct McpHub {
    servers: Vec<Arc<McpServer>>,
    functions: Vec<Function>,
    /// [`McpOptions::call_timeout`]: the caller's limit per attempt for these tools.
    call_timeout: std::time::Duration,
}

impl McpHub {
    /// Connects to every server (in order; the first that fails stops the rest, which are shut down).
    pub async fn connect(specs: &[McpSpec], options: &McpOptions) -> Result<McpHub, McpError> {
        let mut servers: Vec<Arc<McpServer>> = Vec::new();
        for spec in specs {
            match McpServer::connect(spec, options).await {
                Ok(mut s) => {
                    s.name = unique_name(&s.name, servers.len(), &servers);
                    tracing::info!(
                        "MCP server `{}` ({}): {} tools",
                        s.name,
                        s.shown,
                        s.tools.len()
                    );
                    servers.push(Arc::new(s));
                }
                Err(e) => {
                    for s in &servers {
                        s.shutdown().await;
                    }
                    return Err(e);
                }
            }
        }
        let mut taken = HashSet::new();
        let functions = servers
            .iter()
            .flat_map(|s| {
                s.tools
                    .iter()
                    .map(|t| {
                        let name = function_name(&s.name, &t.name, &mut taken);
                        mcp_function(&s.name, name, t)
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        Ok(McpHub {
            servers,
            functions,
            call_timeout: options.call_timeout,
        })
    }

    /// Every server's tools as functions, server by server in the order given.
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    /// `name (command or URL, N tools)` per server, for manifests and logs.
    pub(crate) fn describe(&self) -> String {
        let each: Vec<String> = self
            .servers
            .iter()
            .map(|s| format!("{} ({}, {} tools)", s.name, s.shown, s.tools.len()))
            .collect();
        format!("MCP servers: {}", each.join("; "))
    }

    /// One line per server that stopped during the run, saying why.
    pub fn failures(&self) -> Vec<String> {
        self.servers
            .iter()
            .filter_map(|s| {
                let why = s.gone()?;
                Some(format!(
                    "MCP server `{}` ({}) stopped during the run: {why}",
                    s.name, s.shown
                ))
            })
            .collect()
    }

    /// Stops every server.
    pub async fn shutdown(&self) {
        for s in &self.servers {
            s.shutdown().await;
        }
    }
}

/// The server's name for function names: its own (sanitised) when valid, else `server{i}`, with a
/// number added when another server has it already.
fn unique_name(name: &str, index: usize, others: &[Arc<McpServer>]) -> String {
    let mut base: String = sanitize(name).to_lowercase().chars().take(32).collect();
    if !valid_name(&base) {
        base = format!("server{}", index + 1);
    }
    let mut candidate = base.clone();
    let mut n = 2;
    while others.iter().any(|s| s.name == candidate) {
        candidate = format!("{base}{n}");
        n += 1;
    }
    candidate
}

#[async_trait]
impl ToolSource for McpHub {
    /// `tool_name` names the server and `api_name` its tool; `tool_input` holds the arguments.
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        let server = self
            .servers
            .iter()
            .find(|s| s.name == request.tool_name)
            .ok_or_else(|| ToolError::Other(format!("no MCP server `{}`", request.tool_name)))?;
        let args = input_object(&request.tool_input).map_err(ToolError::Other)?;
        server.call(&request.api_name, args).await
    }

    fn describe(&self) -> String {
        McpHub::describe(self)
    }

    fn attempt_timeout(&self) -> Option<std::time::Duration> {
        Some(self.call_timeout)
    }
}
