//! The config file's model settings (`[llm]`, `[[llm.endpoints]]`, `[prices]`), defined here, in the
//! layer that uses them; the CLI's config file is made of them and merges them with the flags into
//! [`super::LlmOptions`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One OpenAI-compatible endpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    pub base_url: String,
    /// Name of the environment variable holding the key (the key itself never goes in the file).
    #[serde(default)]
    pub api_key_env: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSection {
    /// Endpoints used round-robin with failover; empty means the embedded model.
    pub endpoints: Vec<Endpoint>,
    /// Path of the embedded model's GGUF file (default: the cache of scripts/fetch-model.sh).
    pub model_path: Option<PathBuf>,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u32>,
    pub max_retries: u32,
    pub timeout_secs: u64,
    /// Context size of the embedded model.
    pub context: u32,
    /// CPU threads of the embedded model (default: all cores).
    pub threads: Option<u32>,
    /// Sequences the embedded model decodes together (concurrent episodes share one decode).
    pub parallel: Option<u32>,
}

impl Default for LlmSection {
    fn default() -> Self {
        LlmSection {
            endpoints: Vec::new(),
            model_path: None,
            requests_per_minute: None,
            tokens_per_minute: None,
            max_retries: 5,
            timeout_secs: 120,
            context: super::DEFAULT_CONTEXT,
            threads: None,
            parallel: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// USD per million prompt tokens.
    pub prompt: f64,
    /// USD per million completion tokens.
    pub completion: f64,
}
