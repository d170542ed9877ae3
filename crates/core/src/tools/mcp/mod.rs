//! The MCP client: tools of MCP servers (over stdio or streamable HTTP) as functions for every method,
//! called through the same caller as `/virtual` APIs (rate limits, timeouts, retries, size caps,
//! recording). Binary outputs become files of the episode (`tools::resources`).

mod content;
pub(crate) mod functions;
mod hub;
mod server;
pub mod spec;

pub use hub::McpHub;
pub use server::McpOptions;
pub use spec::{McpSpec, McpTransport};

/// Errors of connecting to MCP servers (a call's errors are observations, never these).
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The server could not be started, reached, initialised or listed: the user's setup to fix.
    #[error("MCP server `{server}`: {message}")]
    Start { server: String, message: String },
    /// A `[[mcp]]` entry of the config file is wrong.
    #[error("config file: {0}")]
    Config(String),
}
