//! The model flags of every command that talks to a model; they become [`LlmOptions`].

use std::path::PathBuf;

use clap::Args;

use super::values::named;
use crate::llm::LlmOptions;
use crate::llm::wait::SpinSetting;

/// StableToolBench's name for the endpoint (its scripts export it), read when ours is not set.
pub const OPENAI_API_BASE: &str = "OPENAI_API_BASE";

/// Flags shared by every command that talks to a model (flattened into run/batch/chat/eval/...).
#[derive(Debug, Clone, Default, Args)]
pub struct LlmArgs {
    /// OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1); default: the embedded model. Also
    /// read from $OPENAI_API_BASE (StableToolBench's name) when $OPENAI_BASE_URL is not set.
    #[arg(long, env = "OPENAI_BASE_URL", value_name = "URL")]
    pub base_url: Option<String>,
    /// Model name at the endpoint, or path of a GGUF file for the embedded model.
    #[arg(long = "model", env = "SUM2ACT_MODEL", value_name = "NAME|PATH")]
    pub model: Option<String>,
    /// Record every LLM request/response into DIR.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Answer from recordings in DIR; fail loudly on an unseen request.
    #[arg(long, value_name = "DIR", conflicts_with = "record")]
    pub replay: Option<PathBuf>,
    /// Client-side limit on LLM requests per minute (default: config `llm.requests_per_minute`, else none).
    #[arg(long, value_name = "N")]
    pub llm_rpm: Option<u32>,
    /// Client-side limit on LLM tokens per minute (default: config `llm.tokens_per_minute`, else none).
    #[arg(long, value_name = "N")]
    pub llm_tpm: Option<u32>,
    /// Retries of a failed LLM call (429, 5xx, timeouts, resets) (default: config `llm.max_retries`).
    #[arg(long, value_name = "N")]
    pub llm_retries: Option<u32>,
    /// Seconds before an LLM call times out (default: config `llm.timeout_secs`).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub llm_timeout: Option<u64>,
    /// Context size of the embedded model, shared by its parallel sequences (default: config `llm.context`).
    #[arg(long, value_name = "TOKENS")]
    pub llm_context: Option<u32>,
    /// CPU threads of the embedded model (default: config `llm.threads`, else all cores).
    #[arg(long, value_name = "N")]
    pub llm_threads: Option<u32>,
    /// Sequences the embedded model decodes together (default: config `llm.parallel`, else 4).
    #[arg(long, value_name = "N")]
    pub llm_parallel: Option<u32>,
    /// How the embedded model's threads wait: spin (fastest on an idle machine), off (passive: protects
    /// a busy one), auto (spin when the 1-minute load average is under half a core).
    #[arg(
        long,
        env = "SUM2ACT_LLM_SPIN",
        value_parser = named::<SpinSetting>(SpinSetting::NAMES),
        value_name = "auto|on|off",
        default_value = "auto"
    )]
    pub llm_spin: SpinSetting,
}

impl LlmArgs {
    /// The library's settings (`--llm-spin` is read before parsing: see `llm::wait`).
    pub fn options(&self) -> LlmOptions {
        LlmOptions {
            base_url: self
                .base_url
                .clone()
                .or_else(|| super::values::env_alias(OPENAI_API_BASE)),
            model: self.model.clone(),
            record: self.record.clone(),
            replay: self.replay.clone(),
            llm_rpm: self.llm_rpm,
            llm_tpm: self.llm_tpm,
            llm_retries: self.llm_retries,
            llm_timeout: self.llm_timeout,
            llm_context: self.llm_context,
            llm_threads: self.llm_threads,
            llm_parallel: self.llm_parallel,
        }
    }
}
