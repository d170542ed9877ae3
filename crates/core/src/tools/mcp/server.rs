//! One connection to an MCP server: started (stdio) or reached (streamable HTTP), initialised, its
//! tools listed; calls; noticing that it died and why (exit status, its last lines of stderr); and a
//! clean stop. A stdio server is our child: it is killed when dropped, so it never outlives us.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr};

use super::McpError;
use super::content::reply_of;
use super::spec::{McpSpec, McpTransport};
use crate::tools::{ToolError, ToolReply};

/// Limits of connecting to servers.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// Start, initialise and list tools within this time.
    pub startup_timeout: Duration,
    /// One tool call within this time (per attempt). Local tools do real work (speech recognition
    /// took 13-46 s on a loaded 2-core machine), so ToolBench's 15 s for web APIs does not apply.
    pub call_timeout: Duration,
    /// Tools kept per server (the rest are left out with a warning).
    pub max_tools: usize,
    /// Environment every stdio server gets (before its own `env`): `SUM2ACT_DATA` = the run's data
    /// directory, so a server of ours reads the same data.
    pub env: Vec<(String, String)>,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            startup_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(120),
            max_tools: 512,
            env: Vec::new(),
        }
    }
}

/// The longest tool name kept (the MCP specification's limit).
const MAX_TOOL_NAME: usize = 128;

/// Lines of a server's stderr kept for error messages, and their length.
const STDERR_LINES: usize = 20;
const STDERR_LINE_CHARS: usize = 300;

type Service = RunningService<RoleClient, ClientConfig>;

/// A stdio server's process and the tail of its stderr.
struct Process {
    child: tokio::sync::Mutex<Child>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

/// A connected server.
pub(crate) struct McpServer {
    /// The name its functions are spaced under.
    pub name: String,
    /// Its command line or URL, for messages.
    pub shown: String,
    pub tools: Vec<Tool>,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<Service>>,
    process: Option<Process>,
    /// Why it stopped answering, once it did.
    gone: Mutex<Option<String>>,
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("sum2act", env!("CARGO_PKG_VERSION")),
    )
}

impl McpServer {
    /// Starts or reaches the server, initialises the session and lists its tools.
    pub(crate) async fn connect(
        spec: &McpSpec,
        options: &McpOptions,
    ) -> Result<McpServer, McpError> {
        let shown = spec.shown();
        let fail = |message: String| McpError::Start {
            server: shown.clone(),
            message,
        };
        let (process, service) = match &spec.transport {
            McpTransport::Stdio { program, args, env } => {
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(args)
                    .envs(options.env.iter().map(|(k, v)| (k, v)))
                    .envs(env)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true);
                let mut child = cmd
                    .spawn()
                    .map_err(|e| fail(format!("cannot start it: {e}")))?;
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err(fail("its stdin/stdout could not be piped".into()));
                };
                let stderr = Arc::new(Mutex::new(VecDeque::new()));
                if let Some(pipe) = child.stderr.take() {
                    tokio::spawn(keep_tail(pipe, stderr.clone(), shown.clone()));
                }
                let started = tokio::time::timeout(
                    options.startup_timeout,
                    client_config().serve((stdout, stdin)),
                )
                .await;
                let process = Process {
                    child: tokio::sync::Mutex::new(child),
                    stderr,
                };
                match started {
                    Ok(Ok(service)) => (Some(process), service),
                    Ok(Err(e)) => {
                        let why = process.exit_reason().await;
                        return Err(fail(format!(
                            "it did not complete the MCP handshake ({e}){why}"
                        )));
                    }
                    Err(_) => {
                        return Err(fail(format!(
                            "no MCP handshake within {:?}{}",
                            options.startup_timeout,
                            process.exit_reason().await
                        )));
                    }
                }
            }
            McpTransport::Http {
                url,
                bearer_token_env,
            } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                if let Some(var) = bearer_token_env {
                    let token = std::env::var(var).map_err(|_| {
                        fail(format!(
                            "the environment variable {var} (bearer_token_env) is not set"
                        ))
                    })?;
                    config = config.auth_header(token);
                }
                let transport = StreamableHttpClientTransport::from_config(config);
                let service =
                    tokio::time::timeout(options.startup_timeout, client_config().serve(transport))
                        .await
                        .map_err(|_| {
                            fail(format!(
                                "no MCP handshake within {:?}",
                                options.startup_timeout
                            ))
                        })?
                        .map_err(|e| {
                            fail(format!("it did not complete the MCP handshake ({e})"))
                        })?;
                (None, service)
            }
        };
        let peer = service.peer().clone();
        let listed = tokio::time::timeout(options.startup_timeout, peer.list_all_tools()).await;
        let mut tools = match listed {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => return Err(fail(format!("it did not list its tools ({e})"))),
            Err(_) => return Err(fail("it did not list its tools in time".into())),
        };
        // The MCP spec's limit on tool names: a longer one is left out rather than shown to models.
        let named = tools.len();
        tools.retain(|t| !t.name.is_empty() && t.name.len() <= MAX_TOOL_NAME);
        if tools.len() < named {
            tracing::warn!(
                "MCP server {shown}: {} tools with an empty name or one over {MAX_TOOL_NAME} bytes left out",
                named - tools.len()
            );
        }
        if tools.len() > options.max_tools {
            tracing::warn!(
                "MCP server {shown}: {} tools, only the first {} are used",
                tools.len(),
                options.max_tools
            );
            tools.truncate(options.max_tools);
        }
        let own_name = peer
            .peer_info()
            .and_then(|i| i.server_info.as_ref().map(|s| s.name.clone()))
            .unwrap_or_default();
        let name = spec.name.clone().unwrap_or(own_name);
        Ok(McpServer {
            name,
            shown,
            tools,
            peer,
            service: tokio::sync::Mutex::new(Some(service)),
            process,
            gone: Mutex::new(None),
        })
    }

    /// Why the server stopped answering, if it did.
    pub(crate) fn gone(&self) -> Option<String> {
        self.gone.lock().ok().and_then(|g| g.clone())
    }

    /// Calls one tool. A result the tool marks as an error, and an MCP error answer, are replies
    /// with an error; a server that stopped answering is an error of the call, and is remembered.
    pub(crate) async fn call(
        &self,
        tool: &str,
        args: Map<String, Value>,
    ) -> Result<ToolReply, ToolError> {
        if let Some(why) = self.gone() {
            return Err(ToolError::Other(self.gone_message(&why)));
        }
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        match self.peer.call_tool(params).await {
            Ok(result) => reply_of(&result),
            Err(ServiceError::McpError(e)) => Ok(ToolReply::new(
                format!("MCP error {}: {}", e.code.0, e.message),
                Value::String(String::new()),
                Some(crate::tools::ReplySource::Mcp),
            )),
            Err(ServiceError::Timeout { timeout }) => Err(ToolError::Timeout(timeout)),
            Err(e)
                if self.peer.is_transport_closed()
                    || matches!(e, ServiceError::TransportClosed) =>
            {
                let why = match &self.process {
                    Some(p) => format!("the connection closed{}", p.exit_reason().await),
                    None => format!("the connection closed ({e})"),
                };
                tracing::warn!("MCP server `{}` ({}) stopped: {why}", self.name, self.shown);
                if let Ok(mut g) = self.gone.lock() {
                    g.get_or_insert(why.clone());
                }
                Err(ToolError::Other(self.gone_message(&why)))
            }
            Err(e) => Err(ToolError::Unreachable {
                url: self.shown.clone(),
                message: e.to_string(),
            }),
        }
    }

    fn gone_message(&self, why: &str) -> String {
        format!("MCP server `{}` stopped: {why}", self.name)
    }

    /// Ends the session and the process: stdin is closed, and a server that does not exit within
    /// two seconds is killed.
    pub(crate) async fn shutdown(&self) {
        if let Some(service) = self.service.lock().await.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), service.cancel()).await;
        }
        if let Some(p) = &self.process {
            let mut child = p.child.lock().await;
            if tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
        }
    }
}

impl Process {
    /// `: exited with status N; its stderr ends with: ...`, or `` while it runs and said nothing.
    async fn exit_reason(&self) -> String {
        let status = {
            let mut child = self.child.lock().await;
            match tokio::time::timeout(Duration::from_secs(1), child.wait()).await {
                Ok(Ok(s)) => Some(s),
                _ => None,
            }
        };
        let tail: Vec<String> = self
            .stderr
            .lock()
            .map(|t| t.iter().rev().take(5).rev().cloned().collect())
            .unwrap_or_default();
        let mut out = String::new();
        if let Some(s) = status {
            out.push_str(&format!(": the process exited ({s})"));
        }
        if !tail.is_empty() {
            out.push_str(&format!("; its stderr ends with: {}", tail.join(" | ")));
        }
        out
    }
}

/// Keeps the last lines of a server's stderr (for error messages) and logs them at debug level.
/// Lines are cut as they are read, so a server writing without newlines cannot fill our memory.
async fn keep_tail(pipe: ChildStderr, tail: Arc<Mutex<VecDeque<String>>>, server: String) {
    let mut reader = BufReader::new(pipe);
    let mut line: Vec<u8> = Vec::new();
    let keep = |line: &mut Vec<u8>, bytes: &[u8]| {
        let room = (STDERR_LINE_CHARS * 4).saturating_sub(line.len());
        line.extend_from_slice(&bytes[..bytes.len().min(room)]);
    };
    loop {
        let (ended, used) = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(buf) => match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    keep(&mut line, &buf[..i]);
                    (true, i + 1)
                }
                None => {
                    keep(&mut line, buf);
                    (false, buf.len())
                }
            },
        };
        reader.consume(used);
        if ended {
            record_line(&line, &tail, &server);
            line.clear();
        }
    }
    if !line.is_empty() {
        record_line(&line, &tail, &server);
    }
}

fn record_line(bytes: &[u8], tail: &Mutex<VecDeque<String>>, server: &str) {
    let line: String = String::from_utf8_lossy(bytes)
        .chars()
        .take(STDERR_LINE_CHARS)
        .collect();
    tracing::debug!(server, "mcp stderr: {line}");
    if let Ok(mut t) = tail.lock() {
        if t.len() == STDERR_LINES {
            t.pop_front();
        }
        t.push_back(line);
    }
}
