/// Errors of the LLM layer. `is_retriable` tells the retry decorator which ones are worth another try.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot reach LLM endpoint {endpoint}: {message}")]
    Unreachable { endpoint: String, message: String },
    #[error("LLM endpoint {endpoint} rejected the API key (HTTP {status}); check OPENAI_API_KEY")]
    Unauthorized { endpoint: String, status: u16 },
    #[error("model `{model}` not found at {endpoint}: {message}")]
    ModelNotFound {
        endpoint: String,
        model: String,
        message: String,
    },
    #[error("rate limited by {endpoint} (HTTP 429)")]
    RateLimited {
        endpoint: String,
        retry_after: Option<std::time::Duration>,
    },
    #[error("LLM endpoint {endpoint} failed with HTTP {status}: {message}")]
    Server {
        endpoint: String,
        status: u16,
        message: String,
    },
    #[error("LLM call timed out after {0:?}")]
    Timeout(std::time::Duration),
    #[error(
        "prompt of {prompt_tokens} tokens does not fit the model's context of {context} tokens"
    )]
    ContextOverflow { prompt_tokens: u64, context: u64 },
    #[error("prompt does not fit the context of the model at {endpoint}: {message}")]
    RemoteContextOverflow { endpoint: String, message: String },
    #[error("invalid response from the model: {0}")]
    InvalidResponse(String),
    /// The reply reached the token cap before its JSON was complete. The cut text is kept so a
    /// caller can salvage what it can (an agent keeps a final answer cut at the cap).
    #[error(
        "the reply reached the token cap ({max_tokens}) before its JSON was complete: {}",
        preview(content)
    )]
    Truncated { max_tokens: u32, content: String },
    #[error("model called unknown tool `{0}`")]
    UnknownTool(String),
    #[error("embedded model: {0}")]
    Local(String),
    #[error(
        "embedded model file {path} not found; run scripts/fetch-model.sh (or pass --model PATH, or set OPENAI_BASE_URL to use an endpoint)"
    )]
    ModelFileMissing { path: std::path::PathBuf },
    #[error("replay: {0}")]
    Replay(String),
    #[error("by-hand model: {0}")]
    ByHand(String),
    #[error("LLM configuration: {0}")]
    Config(String),
}

impl LlmError {
    /// Worth retrying with backoff: rate limits, server errors, timeouts, connection problems.
    pub fn is_retriable(&self) -> bool {
        match self {
            LlmError::Unreachable { .. } | LlmError::RateLimited { .. } | LlmError::Timeout(_) => {
                true
            }
            LlmError::Server { status, .. } => *status >= 500 || *status == 408,
            _ => false,
        }
    }

    /// Whether the user's setup (flags, files, key, model name) is at fault rather than the run:
    /// the CLI maps these to exit code 2.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            LlmError::Unauthorized { .. }
                | LlmError::ModelNotFound { .. }
                | LlmError::ModelFileMissing { .. }
                | LlmError::Config(_)
        )
    }

    /// Whether a model that fails this way before its first reply was never set up right: the
    /// input's fault ([`Self::is_bad_input`]) or no endpoint at the URL. A timeout or a server error
    /// is an outage of a model that is there.
    pub(crate) fn is_setup(&self) -> bool {
        self.is_bad_input() || matches!(self, LlmError::Unreachable { .. })
    }

    /// The server's requested wait before the next try, if it gave one.
    pub(crate) fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            LlmError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// The first 200 characters of a reply, for messages.
fn preview(text: &str) -> String {
    text.chars().take(200).collect()
}
