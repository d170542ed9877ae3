//! The resolved settings every command that talks to a model shares (the CLI merges flags, env and
//! the config file into them), and the factory that turns them into a ready client.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::limits::{RateLimited, RoundRobin};
use super::meter::{Meter, Metered};
use super::openai::OpenAiClient;
use super::replay::{Recorder, Replayer};
use super::retry::Retrying;
use super::settings::{LlmSection, Price};
use super::{LlmClient, LlmError};

/// Sequences the embedded model decodes together when nothing says otherwise.
pub const DEFAULT_PARALLEL: u32 = 4;
/// Context size of the embedded model when nothing says otherwise (shared by its sequences).
pub const DEFAULT_CONTEXT: u32 = 8192;

/// How to reach a model, resolved: the endpoints (none: the embedded model and its sizes),
/// record/replay, client-side limits, prices. [`LlmOptions::default`] is the config file's defaults.
#[derive(Debug, Clone)]
pub struct LlmOptions {
    /// Endpoints used round-robin with failover; empty: the embedded model.
    pub endpoints: Vec<EndpointSpec>,
    /// The embedded model's GGUF file; `None`: the first fetched model in the cache.
    pub model_path: Option<PathBuf>,
    /// Record every LLM request/response into this directory.
    pub record: Option<PathBuf>,
    /// With `record`: answer the requests that directory already holds from it, asking the model only
    /// the others.
    pub reuse_recorded: bool,
    /// Answer from recordings in this directory; fail loudly on an unseen request.
    pub replay: Option<PathBuf>,
    /// Client-side limit on LLM requests per minute.
    pub requests_per_minute: Option<u32>,
    /// Client-side limit on LLM tokens per minute.
    pub tokens_per_minute: Option<u32>,
    /// Retries of a failed LLM call.
    pub retries: u32,
    /// Time before an LLM call times out.
    pub timeout: Duration,
    /// Context size of the embedded model, shared by its parallel sequences.
    pub context: u32,
    /// CPU threads of the embedded model (`None`: all cores).
    pub threads: Option<u32>,
    /// Sequences the embedded model decodes together.
    pub parallel: u32,
    /// USD per million tokens, by model id.
    pub prices: BTreeMap<String, Price>,
}

impl Default for LlmOptions {
    fn default() -> Self {
        let file = LlmSection::default();
        LlmOptions {
            endpoints: Vec::new(),
            model_path: file.model_path,
            record: None,
            reuse_recorded: false,
            replay: None,
            requests_per_minute: file.requests_per_minute,
            tokens_per_minute: file.tokens_per_minute,
            retries: file.max_retries,
            timeout: Duration::from_secs(file.timeout_secs.max(1)),
            context: file.context,
            threads: file.threads,
            parallel: file.parallel.unwrap_or(DEFAULT_PARALLEL),
            prices: BTreeMap::new(),
        }
    }
}

/// One OpenAI-compatible endpoint, resolved: its key read from the environment (never logged).
#[derive(Clone)]
pub struct EndpointSpec {
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: Option<String>,
}

impl std::fmt::Debug for EndpointSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EndpointSpec")
            .field("base_url", &crate::redact::url(&self.base_url))
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("model", &self.model)
            .finish()
    }
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
pub(crate) const KNOWN_MODEL_FILES: [&str; 2] = [
    "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
];

/// The GGUF file to load: the resolved `model_path`, else the first fetched model in the cache. A
/// missing file is an error that says how to get one.
pub fn resolve_model_path(options: &LlmOptions) -> Result<PathBuf, LlmError> {
    if let Some(p) = &options.model_path {
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

/// Loads the embedded model for resolved options (the `sum2act-local` crate has the one there is;
/// the core never links llama.cpp).
pub(crate) type EmbeddedLoader = fn(&LlmOptions) -> Result<Arc<dyn LlmClient>, LlmError>;

/// Builds the configured model: the endpoints, else the embedded model `embedded` loads; wrapped
/// with retries, limits, metering, and record/replay.
pub async fn build_with(
    options: &LlmOptions,
    embedded: EmbeddedLoader,
) -> Result<Arc<dyn LlmClient>, LlmError> {
    let meter = Meter::new();
    let prices = options.prices.clone();
    if let Some(dir) = &options.replay {
        let replay: Arc<dyn LlmClient> = Arc::new(Replayer::new(dir)?);
        return Ok(Arc::new(Metered::new(replay, meter, prices)));
    }
    let (rpm, tpm) = (options.requests_per_minute, options.tokens_per_minute);
    let core: Arc<dyn LlmClient> = if options.endpoints.is_empty() {
        let local = embedded(options)?;
        Arc::new(RateLimited::new(local, rpm, tpm))
    } else {
        let clients = options
            .endpoints
            .iter()
            .map(|s| {
                OpenAiClient::new(
                    &s.base_url,
                    s.api_key.clone(),
                    s.model.clone(),
                    options.timeout,
                )
                .map(|c| Arc::new(c) as Arc<dyn LlmClient>)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let rr = RoundRobin::new(clients)?;
        Arc::new(
            Retrying::new(RateLimited::new(rr, rpm, tpm), options.retries)
                .with_meter(meter.clone()),
        )
    };
    let core = match &options.record {
        Some(dir) => {
            let recorder = Recorder::new(core, dir)?;
            let recorder = if options.reuse_recorded {
                recorder.reusing()
            } else {
                recorder
            };
            Arc::new(recorder) as Arc<dyn LlmClient>
        }
        None => core,
    };
    Ok(Arc::new(Metered::new(core, meter, prices)))
}

/// Whether `build` would use the embedded model for these settings.
pub fn uses_embedded_model(options: &LlmOptions) -> bool {
    options.replay.is_none() && options.endpoints.is_empty()
}
