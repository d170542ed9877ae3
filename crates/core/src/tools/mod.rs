//! The tool caller: turns a model's function call into a `/virtual` request under rate limits,
//! timeouts and retries, and the reply into a ToolBench observation; MCP servers' tools (`mcp`) go
//! through the same caller, and binary outputs become the episode's files (`resources`).

pub mod args;
pub mod caller;
pub mod graph;
pub mod graph_cache;
pub mod graph_catalogue;
pub mod http;
pub mod mcp;
pub mod observation;
pub(crate) mod resources;
pub mod settings;
mod types;

use async_trait::async_trait;

pub(crate) use caller::ToolCaller;

pub use caller::ToolEnv;
pub use http::HttpSource;
pub use settings::ToolConfig;
pub use types::{Finish, ReplySource, ToolReply, ToolRequest};
pub(crate) use types::{Observation, Resource};

/// Errors of a tool source. The caller turns each into an observation; none reaches the agent as a crash.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("tool call timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// The API answered at once that it is simulating the reply, and the simulation took longer than
    /// the simulator's own limit (`--simulator-timeout`).
    #[error("the tool simulator took longer than {0:?}")]
    SimulatorTimeout(std::time::Duration),
    #[error("tool server answered HTTP {0}")]
    Status(u16),
    #[error("tool server reply is not JSON: {0}")]
    BadReply(String),
    /// The reply was refused unread beyond the cap: memory stays bounded whatever a server sends.
    #[error("tool server reply larger than {} (refused)", size(*.0))]
    TooLarge(usize),
    #[error("cannot reach tool server {url}: {message}")]
    Unreachable { url: String, message: String },
    /// The URL is not one a client can use (bad syntax, not http/https): the user's input.
    #[error("{0}")]
    InvalidUrl(String),
    #[error("{0}")]
    Other(String),
}

/// A byte count as people read it: `8 MiB`, or `1000 bytes` when not a whole number of MiB.
pub(crate) fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

impl ToolError {
    /// No `/virtual` endpoint answered: the connection failed, or the URL's path is not served
    /// (HTTP 404/405). The tool environment is down or misconfigured; an API's own error reply, a
    /// timeout or a server error are answers and do not count.
    pub fn is_environment(&self) -> bool {
        matches!(
            self,
            ToolError::Unreachable { .. } | ToolError::Status(404 | 405)
        )
    }
}

/// The rest of a reply that a simulator is still making; owns what it needs.
pub(crate) type Simulation = futures::future::BoxFuture<'static, Result<ToolReply, ToolError>>;

/// What a source says first: the reply, or that the API (a simulator) is still making it. The caller
/// charges ToolBench's timeout to the first part only: a simulator's thinking is not the API's latency.
pub enum Started {
    Ready(ToolReply),
    Simulating(Simulation),
}

/// Something that answers `/virtual` requests: a remote server over HTTP, or an in-process catalogue.
#[async_trait]
pub trait ToolSource: Send + Sync {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError>;

    /// The reply, or the simulation still under way. Sources that cannot tell answer in one part.
    async fn start(&self, request: &ToolRequest) -> Result<Started, ToolError> {
        self.call(request).await.map(Started::Ready)
    }

    /// A short description for manifests and logs (never includes a key).
    fn describe(&self) -> String;

    /// What the source is, for comparing runs: `describe` without what differs between two runs of
    /// one setup (the port an embedded server happened to get).
    fn identity(&self) -> String {
        self.describe()
    }

    /// This source's own limit per attempt, instead of ToolBench's timeout: a source that does real
    /// work here (an MCP server's OCR or speech recognition on a busy machine) is no slow web API.
    fn attempt_timeout(&self) -> Option<std::time::Duration> {
        None
    }

    /// Whether the source answers at all, checked once before a run spends model calls on it.
    async fn check(&self) -> Result<(), ToolError> {
        Ok(())
    }
}
