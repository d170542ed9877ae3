//! The LLM layer: one small trait every method talks to, and its implementations (OpenAI-compatible
//! HTTP, the embedded llama.cpp model, record/replay, a scripted model for tests) plus decorators for
//! retries, rate limits and accounting. Most callers only need [`LlmArgs`] and [`build`].

mod args;
#[cfg(feature = "local-model")]
pub mod bench;
mod error;
pub mod gbnf;
pub mod limits;
#[cfg(feature = "local-model")]
pub mod local;
pub mod meter;
pub mod openai;
pub mod replay;
pub mod retry;
pub mod scripted;
pub mod server;
mod tokens;
mod types;

use std::sync::Arc;

use async_trait::async_trait;

pub use args::{
    KNOWN_MODEL_FILES, LlmArgs, build, model_cache_dir, resolve_model_path, uses_embedded_model,
};
pub use error::LlmError;
pub use meter::{Meter, Metered, UsageTotals, metered};
pub use tokens::{count_prompt_tokens, count_tokens};
pub use types::{
    Completion, CompletionRequest, Message, ResponseFormat, Role, ToolCall, ToolChoice, Usage,
};

/// A chat-completion model.
#[async_trait]
pub trait LlmClient: Send + Sync {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError>;

    /// The model's id as recorded in manifests and judge logs.
    fn model_id(&self) -> String;

    /// The run's accounting, when this client feeds one (the client from [`build`] does).
    fn meter(&self) -> Option<Arc<Meter>> {
        None
    }
}

#[async_trait]
impl<T: LlmClient + ?Sized> LlmClient for Arc<T> {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        (**self).complete(request).await
    }

    fn model_id(&self) -> String {
        (**self).model_id()
    }

    fn meter(&self) -> Option<Arc<Meter>> {
        (**self).meter()
    }
}

/// llama.cpp's OpenMP threads spin at every barrier by default. When the cores are shared (the agent's
/// own threads, other processes, a 2-core CI box) the spinning thread starves the one it waits for and
/// decoding gets 3-4x slower (measured: 2.5 vs 10.8 tok/s for the 0.5B model on a busy 2-core machine).
/// libgomp reads `OMP_WAIT_POLICY` when it is loaded, before `main`, so the only way to set it from
/// inside is to re-execute the binary once with it set. Call first thing in `main`; returns when no
/// re-execution happened (the variable is already set, or exec failed).
pub fn ensure_openmp_passive() {
    #[cfg(all(unix, feature = "local-model"))]
    {
        use std::os::unix::process::CommandExt;
        if std::env::var_os("OMP_WAIT_POLICY").is_some() {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        // `exec` only returns on failure; then we run on with the default policy.
        let _ = std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env("OMP_WAIT_POLICY", "PASSIVE")
            .exec();
    }
}
