//! An MCP client (rmcp) driving a `sum2act` subcommand that serves MCP over stdio, as an MCP host would.

use std::process::Stdio;

use base64::Engine;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

/// Whether a system program the media tools run is installed; says "skipped" when it is not (tests that
/// need it return early; scripts/setup.sh installs them all, so CI runs them).
pub fn installed(program: &str) -> bool {
    let found = std::process::Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        eprintln!("skipped: `{program}` is not installed (scripts/setup.sh installs it)");
    }
    found
}

/// A running `sum2act ARGS` with an MCP session open on its stdio.
pub struct McpChild {
    pub client: RunningService<RoleClient, ()>,
}

impl McpChild {
    /// Starts `sum2act` with `args` and `env`, and initialises the MCP session.
    pub async fn spawn(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_sum2act"));
        for var in super::CLEARED_ENV {
            cmd.env_remove(var);
        }
        cmd.args(args)
            .envs(env.iter().copied())
            .stderr(Stdio::inherit());
        let transport = TokioChildProcess::new(cmd).expect("spawn sum2act");
        let client = ().serve(transport).await.expect("MCP initialisation");
        McpChild { client }
    }

    /// Calls a tool; a protocol error fails the test (tool errors come back as results).
    pub async fn call(&self, name: &str, arguments: Value) -> CallToolResult {
        let Value::Object(map) = arguments else {
            panic!("arguments must be a JSON object")
        };
        self.client
            .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(map))
            .await
            .unwrap_or_else(|e| panic!("{name}: protocol error {e}"))
    }

    /// Calls a tool that must succeed; returns the result.
    pub async fn ok(&self, name: &str, arguments: Value) -> CallToolResult {
        let r = self.call(name, arguments).await;
        assert_ne!(r.is_error, Some(true), "{name} failed: {}", text(&r));
        r
    }

    /// Calls a tool that must succeed and make a file; returns the file's bytes.
    pub async fn made(&self, name: &str, arguments: Value) -> Vec<u8> {
        binary(&self.ok(name, arguments).await).1
    }

    /// Calls a tool that must fail; returns its error message.
    pub async fn err(&self, name: &str, arguments: Value) -> String {
        let r = self.call(name, arguments).await;
        assert_eq!(r.is_error, Some(true), "{name} should fail: {}", text(&r));
        text(&r)
    }

    /// Calls a tool that must be refused with a JSON-RPC error; returns its code and message.
    pub async fn protocol_error(&self, name: &str, arguments: Value) -> (i32, String) {
        let Value::Object(map) = arguments else {
            panic!("arguments must be a JSON object")
        };
        match self
            .client
            .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(map))
            .await
        {
            Err(rmcp::ServiceError::McpError(e)) => (e.code.0, e.message.to_string()),
            other => panic!("{name}: not a JSON-RPC error: {other:?}"),
        }
    }

    pub async fn close(self) {
        let _ = self.client.cancel().await;
    }
}

/// The first text block of a result.
pub fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .find_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The first text block parsed as JSON.
pub fn json(r: &CallToolResult) -> Value {
    serde_json::from_str(&text(r)).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(r)))
}

/// The image or audio block of a result: its MIME type and decoded bytes.
pub fn binary(r: &CallToolResult) -> (String, Vec<u8>) {
    let (data, mime) = r
        .content
        .iter()
        .find_map(|c| match c {
            ContentBlock::Image(i) => Some((&i.data, &i.mime_type)),
            ContentBlock::Audio(a) => Some((&a.data, &a.mime_type)),
            _ => None,
        })
        .expect("an image or audio block");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("base64");
    (mime.clone(), bytes)
}
