//! The LLM layer: one small trait every method talks to, and its implementations (OpenAI-compatible
//! HTTP, the embedded llama.cpp model, a model answered by hand, record/replay, a scripted model for
//! tests) plus decorators for
//! retries, rate limits and accounting. Most callers only need [`LlmOptions`] and `sum2act_local::build`
//! (this layer's [`build_with`] with the embedded model's loader).

mod error;
pub mod json_check;
pub(crate) mod limits;
pub(crate) mod meter;
pub mod openai;
mod options;
pub mod purpose;
pub mod replay;
pub(crate) mod retry;
pub mod scripted;
pub mod settings;
mod tokens;
mod types;
pub mod wire;

use std::sync::Arc;

use async_trait::async_trait;

pub use error::LlmError;
pub(crate) use meter::Meter;
pub use options::{
    DEFAULT_CONTEXT, DEFAULT_PARALLEL, EndpointSpec, LlmOptions, build_with, model_cache_dir,
    resolve_model_path, uses_embedded_model,
};
pub use purpose::Purpose;
pub use tokens::{count_completion_tokens, count_prompt_tokens, count_tokens};
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
