//! The embedded model: a GGUF file run in-process by llama.cpp, behind the core's `LlmClient` trait.
//!
//! `build` is the factory every command uses to reach a model: the core's `llm::build_with` (endpoints,
//! retries, limits, metering, record/replay) with this crate's loader for the embedded model. Built
//! without the `local-model` feature, the loader says so and only endpoints work.
//!
//! - `model`: the engine (one thread owns llama.cpp's context; concurrent episodes share one decode);
//! - `gbnf`: JSON schema → GBNF grammar, for structured output;
//! - `cpu`: the CPU features this binary and llama.cpp were built for, checked before anything runs;
//! - `wait`: OpenMP's spin policy, set before the first thread starts;
//! - `bench`: `sum2act llm bench`, tokens per second of the embedded model.

#[cfg(feature = "local-model")]
pub mod bench;
pub mod cpu;
pub mod gbnf;
#[cfg(feature = "local-model")]
pub mod model;
pub mod wait;

use std::sync::Arc;

use sum2act_core::llm::{LlmClient, LlmError, LlmOptions};

pub use wait::ensure_openmp_wait_policy;

/// The configured model, ready: the endpoints, else the embedded model (see `llm::build_with`).
pub async fn build(options: &LlmOptions) -> Result<Arc<dyn LlmClient>, LlmError> {
    sum2act_core::llm::build_with(options, load).await
}

#[cfg(feature = "local-model")]
fn load(options: &LlmOptions) -> Result<Arc<dyn LlmClient>, LlmError> {
    let path = sum2act_core::llm::resolve_model_path(options)?;
    let local = model::LocalOptions {
        context: options.context,
        threads: options.threads,
        parallel: options.parallel,
        ..model::LocalOptions::default()
    };
    Ok(model::LocalModel::shared(&path, local)?)
}

#[cfg(not(feature = "local-model"))]
fn load(_options: &LlmOptions) -> Result<Arc<dyn LlmClient>, LlmError> {
    Err(LlmError::Config(
        "this build has no embedded model (feature `local-model` is off); set OPENAI_BASE_URL or --base-url".into(),
    ))
}
