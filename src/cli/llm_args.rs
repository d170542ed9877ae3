//! The model flags of every command that talks to a model; merged with the config file they become
//! [`LlmOptions`].

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::values::named;
use crate::config::Config;
use sum2act_core::llm::{DEFAULT_PARALLEL, EndpointSpec, LlmError, LlmOptions};
use sum2act_local::wait::SpinSetting;

/// StableToolBench's name for the endpoint (its scripts export it), read when ours is not set.
pub const OPENAI_API_BASE: &str = "OPENAI_API_BASE";
/// The key of an endpoint given by flag or env, or of a config endpoint without `api_key_env`.
const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
/// StableToolBench's name for the key (its inference scripts export it), read when ours is not set.
const OPENAI_KEY: &str = "OPENAI_KEY";
/// StableToolBench's name for the endpoint's model (`--chatgpt_model $GPT_MODEL` in its scripts), read
/// when neither `--model` nor `$SUM2ACT_MODEL` is set. Never a path: the embedded model ignores it.
const GPT_MODEL: &str = "GPT_MODEL";

/// Flags shared by every command that talks to a model (flattened into run/batch/chat/eval/...).
#[derive(Debug, Clone, Default, Args)]
pub struct LlmArgs {
    /// OpenAI-compatible base URL (e.g. http://127.0.0.1:8000/v1); default: the embedded model. Also
    /// read from $OPENAI_API_BASE (StableToolBench's name) when $OPENAI_BASE_URL is not set.
    #[arg(long, env = "OPENAI_BASE_URL", value_name = "URL")]
    pub base_url: Option<String>,
    /// Model name at the endpoint, or path of a GGUF file for the embedded model. The endpoint's
    /// model is also read from $GPT_MODEL (StableToolBench's name) when $SUM2ACT_MODEL is not set.
    #[arg(long = "model", env = "SUM2ACT_MODEL", value_name = "NAME|PATH")]
    pub model: Option<String>,
    /// Record every LLM request/response into DIR.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// With --record: requests DIR already holds are answered from it; only the others reach the model
    /// (and are recorded), so a change that alters a few requests of a run is recorded again for those.
    #[arg(long, requires = "record")]
    pub reuse_recorded: bool,
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
        default_value_t = SpinSetting::default()
    )]
    pub llm_spin: SpinSetting,
}

impl LlmArgs {
    /// The library's settings: these flags (and the variables clap reads for them), then
    /// `$OPENAI_API_BASE` and `$GPT_MODEL`, then the config file's `[llm]` section and prices, then the
    /// defaults (`--llm-spin` is read before parsing: see `llm::wait`). An endpoint's key comes from
    /// `$OPENAI_API_KEY` (else `$OPENAI_KEY`), or the variable its `api_key_env` names (never logged). With `--replay`
    /// no endpoint is resolved: the recordings answer.
    pub fn resolve(&self, config: &Config) -> Result<LlmOptions, LlmError> {
        let endpoints = match &self.replay {
            Some(_) => Vec::new(),
            None => self.endpoints(config)?,
        };
        Ok(LlmOptions {
            endpoints,
            ..self.embedded(config)
        })
    }

    /// The settings of the embedded model alone (no endpoint is resolved): `llm bench`.
    pub fn embedded(&self, config: &Config) -> LlmOptions {
        let file = &config.llm;
        LlmOptions {
            endpoints: Vec::new(),
            model_path: self
                .model
                .as_ref()
                .map(PathBuf::from)
                .or_else(|| file.model_path.clone()),
            record: self.record.clone(),
            reuse_recorded: self.reuse_recorded,
            replay: self.replay.clone(),
            requests_per_minute: self.llm_rpm.or(file.requests_per_minute),
            tokens_per_minute: self.llm_tpm.or(file.tokens_per_minute),
            retries: self.llm_retries.unwrap_or(file.max_retries),
            timeout: Duration::from_secs(self.llm_timeout.unwrap_or(file.timeout_secs).max(1)),
            context: self.llm_context.unwrap_or(file.context),
            threads: self.llm_threads.or(file.threads),
            parallel: self
                .llm_parallel
                .or(file.parallel)
                .unwrap_or(DEFAULT_PARALLEL),
            prices: config.prices.clone(),
        }
    }

    /// `--base-url` (or `$OPENAI_BASE_URL`, `$OPENAI_API_BASE`) alone, else the config file's
    /// endpoints; none means the embedded model.
    fn endpoints(&self, config: &Config) -> Result<Vec<EndpointSpec>, LlmError> {
        let default_key = std::env::var(OPENAI_API_KEY)
            .ok()
            .filter(|k| !k.is_empty())
            .or_else(|| super::values::env_alias(OPENAI_KEY));
        let model = self
            .model
            .clone()
            .or_else(|| super::values::env_alias(GPT_MODEL));
        let base_url = self
            .base_url
            .clone()
            .or_else(|| super::values::env_alias(OPENAI_API_BASE));
        if let Some(url) = base_url.filter(|u| !u.is_empty()) {
            return Ok(vec![EndpointSpec {
                base_url: url,
                api_key: default_key,
                model,
            }]);
        }
        config
            .llm
            .endpoints
            .iter()
            .map(|e| {
                let api_key = match &e.api_key_env {
                    Some(var) => Some(std::env::var(var).map_err(|_| {
                        LlmError::Config(format!(
                            "endpoint {} takes its key from ${var}, which is not set",
                            sum2act_core::redact::url(&e.base_url)
                        ))
                    })?),
                    None => default_key.clone(),
                };
                Ok(EndpointSpec {
                    base_url: e.base_url.clone(),
                    api_key,
                    model: model.clone().or_else(|| e.model.clone()),
                })
            })
            .collect()
    }
}
