//! The settings every command that talks to a model shares, and the factory that turns them (with
//! the config file and environment) into a ready client.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::limits::{RateLimited, RoundRobin};
use super::meter::{Meter, Metered};
use super::openai::OpenAiClient;
use super::replay::{Recorder, Replayer};
use super::retry::Retrying;
use super::settings::LlmFileSettings;
use super::{LlmClient, LlmError};

/// How to reach a model: an endpoint, or the embedded model and its sizes; record/replay; client-side
/// limits. Unset fields fall back to the config file (`[llm]`), then to the defaults.
#[derive(Debug, Clone, Default)]
pub struct LlmOptions {
    /// OpenAI-compatible base URL; `None`: the config's endpoints, else the embedded model.
    pub base_url: Option<String>,
    /// Model name at the endpoint, or path of a GGUF file for the embedded model.
    pub model: Option<String>,
    /// Record every LLM request/response into this directory.
    pub record: Option<PathBuf>,
    /// Answer from recordings in this directory; fail loudly on an unseen request.
    pub replay: Option<PathBuf>,
    /// Client-side limit on LLM requests per minute.
    pub llm_rpm: Option<u32>,
    /// Client-side limit on LLM tokens per minute.
    pub llm_tpm: Option<u32>,
    /// Retries of a failed LLM call.
    pub llm_retries: Option<u32>,
    /// Seconds before an LLM call times out.
    pub llm_timeout: Option<u64>,
    /// Context size of the embedded model, shared by its parallel sequences.
    pub llm_context: Option<u32>,
    /// CPU threads of the embedded model.
    pub llm_threads: Option<u32>,
    /// Sequences the embedded model decodes together.
    pub llm_parallel: Option<u32>,
}

/// Where the embedded model's weights are looked up when no path is given: the cache that
/// `scripts/fetch-model.sh` fills (`$XDG_CACHE_HOME/sum2act/models`, else `~/.cache/sum2act/models`).
pub fn model_cache_dir() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        return PathBuf::from(x).join("sum2act/models");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache/sum2act/models")
}

/// File names written by `scripts/fetch-model.sh`, the default first. The 0.5B model is the default
/// because a 10-query sample run has to finish in about 10 minutes on 2 cores; the 1.5B model is
/// better but about 2.5x slower (see the README's model section).
pub const KNOWN_MODEL_FILES: [&str; 2] = [
    "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
];

/// The GGUF file to load: `--model PATH`, config `llm.model_path`, else the first fetched model in the
/// cache. A missing file is an error that says how to get one.
pub fn resolve_model_path(
    args: &LlmOptions,
    config: LlmFileSettings<'_>,
) -> Result<PathBuf, LlmError> {
    if let Some(m) = &args.model {
        return existing(PathBuf::from(m));
    }
    if let Some(p) = &config.llm.model_path {
        return existing(p.clone());
    }
    let dir = model_cache_dir();
    KNOWN_MODEL_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
        .ok_or_else(|| LlmError::ModelFileMissing {
            path: dir.join(KNOWN_MODEL_FILES[0]),
        })
}

fn existing(p: PathBuf) -> Result<PathBuf, LlmError> {
    if p.is_file() {
        Ok(p)
    } else {
        Err(LlmError::ModelFileMissing { path: p })
    }
}

/// One endpoint after flags, env and config are merged.
struct EndpointSpec {
    base_url: String,
    api_key: Option<String>,
    model: Option<String>,
}

fn endpoints(
    args: &LlmOptions,
    config: LlmFileSettings<'_>,
) -> Result<Vec<EndpointSpec>, LlmError> {
    let default_key = std::env::var("OPENAI_API_KEY")
        .ok()
        .filter(|k| !k.is_empty());
    if let Some(url) = args.base_url.as_deref().filter(|u| !u.is_empty()) {
        return Ok(vec![EndpointSpec {
            base_url: url.to_string(),
            api_key: default_key,
            model: args.model.clone(),
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
                        crate::redact::url(&e.base_url)
                    ))
                })?),
                None => default_key.clone(),
            };
            Ok(EndpointSpec {
                base_url: e.base_url.clone(),
                api_key,
                model: args.model.clone().or_else(|| e.model.clone()),
            })
        })
        .collect()
}

/// Builds the configured model: endpoints from flags/env/config, else the embedded model; wrapped with
/// retries, limits, metering, and record/replay. The key comes from OPENAI_API_KEY (never logged).
pub async fn build(
    args: &LlmOptions,
    config: LlmFileSettings<'_>,
) -> Result<Arc<dyn LlmClient>, LlmError> {
    let meter = Meter::new();
    let prices = config.prices.clone();
    if let Some(dir) = &args.replay {
        let replay: Arc<dyn LlmClient> = Arc::new(Replayer::new(dir)?);
        return Ok(Arc::new(Metered::new(replay, meter, prices)));
    }
    let rpm = args.llm_rpm.or(config.llm.requests_per_minute);
    let tpm = args.llm_tpm.or(config.llm.tokens_per_minute);
    let specs = endpoints(args, config)?;
    let core: Arc<dyn LlmClient> = if specs.is_empty() {
        let local = build_local(args, config)?;
        Arc::new(RateLimited::new(local, rpm, tpm))
    } else {
        let timeout =
            Duration::from_secs(args.llm_timeout.unwrap_or(config.llm.timeout_secs).max(1));
        let clients = specs
            .into_iter()
            .map(|s| {
                OpenAiClient::new(&s.base_url, s.api_key, s.model, timeout)
                    .map(|c| Arc::new(c) as Arc<dyn LlmClient>)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let rr = RoundRobin::new(clients)?;
        let retries = args.llm_retries.unwrap_or(config.llm.max_retries);
        Arc::new(Retrying::new(RateLimited::new(rr, rpm, tpm), retries).with_meter(meter.clone()))
    };
    let core = match &args.record {
        Some(dir) => Arc::new(Recorder::new(core, dir)?) as Arc<dyn LlmClient>,
        None => core,
    };
    Ok(Arc::new(Metered::new(core, meter, prices)))
}

#[cfg(feature = "local-model")]
fn build_local(
    args: &LlmOptions,
    config: LlmFileSettings<'_>,
) -> Result<Arc<dyn LlmClient>, LlmError> {
    let path = resolve_model_path(args, config)?;
    let options = super::local::LocalOptions {
        context: args.llm_context.unwrap_or(config.llm.context),
        threads: args.llm_threads.or(config.llm.threads),
        parallel: args.llm_parallel.or(config.llm.parallel).unwrap_or(4),
        ..super::local::LocalOptions::default()
    };
    Ok(super::local::LocalModel::shared(&path, options)?)
}

#[cfg(not(feature = "local-model"))]
fn build_local(
    _args: &LlmOptions,
    _config: LlmFileSettings<'_>,
) -> Result<Arc<dyn LlmClient>, LlmError> {
    Err(LlmError::Config(
        "this build has no embedded model (feature `local-model` is off); set OPENAI_BASE_URL or --base-url".into(),
    ))
}

/// Whether `build` would use the embedded model for these settings.
pub fn uses_embedded_model(args: &LlmOptions, config: LlmFileSettings<'_>) -> bool {
    args.replay.is_none()
        && args.base_url.as_deref().is_none_or(str::is_empty)
        && config.llm.endpoints.is_empty()
}
