//! The config file's `[tools]` section, defined here, in the layer that uses it (the CLI's config file is
//! made of it and hands it down), and the settings a run's tool caller works with, resolved from it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsSection {
    /// A StableToolBench-compatible `/virtual` URL; empty means the embedded server.
    pub server_url: Option<String>,
    /// Name of the environment variable holding the toolbench key.
    pub key_env: Option<String>,
    pub global_per_minute: Option<u32>,
    pub per_tool_per_minute: Option<u32>,
    pub timeout_secs: u64,
    /// The tool simulator's own limit in seconds, once a server said it is simulating (none: no limit).
    pub simulator_timeout_secs: Option<u64>,
    pub retries: u32,
}

/// Characters of a reply kept by the tool caller unless the run's budget says otherwise.
pub const DEFAULT_OBSERVATION_CHARS: usize = 16_384;

impl Default for ToolsSection {
    fn default() -> Self {
        ToolsSection {
            server_url: None,
            key_env: None,
            global_per_minute: None,
            per_tool_per_minute: None,
            timeout_secs: 15,
            simulator_timeout_secs: None,
            retries: 2,
        }
    }
}

/// Limits and behaviour of tool calls for a run.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolConfig {
    /// Observation text length before `...` is appended: the run's budget (`agent::Budget`) sets it,
    /// so what ReAct and DFSDT keep is what the other methods read.
    pub max_observation_length: usize,
    /// Per attempt: ToolBench's timeout, charged to the API's answer, never to a simulator's thinking
    /// (a server that says it is simulating gets [`ToolConfig::simulator_timeout`] for the rest).
    pub timeout: Duration,
    /// The simulator's own limit once the API said it is simulating; `None`: as long as it takes (the
    /// simulator's model has its own timeout and fallback).
    pub simulator_timeout: Option<Duration>,
    /// Extra attempts after a timeout, an HTTP 429/5xx or a connection failure.
    pub retries: u32,
    /// First backoff delay; doubles on each retry.
    pub backoff: Duration,
    pub global_per_minute: Option<u32>,
    /// ToolBench assumes 30/min per tool.
    pub per_tool_per_minute: Option<u32>,
    /// Answer identical calls of a run from memory (successful replies only).
    pub cache_calls: bool,
    /// The protocol's `strip` field (`truncate`, `filter`, `random`); servers may ignore it.
    pub strip: String,
    /// Reject calls with parameters the API does not declare. ToolBench and StableToolBench pass them
    /// through (and real APIs mostly ignore them), so the default is off.
    pub strict_params: bool,
}

impl Default for ToolConfig {
    fn default() -> Self {
        ToolConfig::from_section(&ToolsSection::default())
    }
}

impl ToolConfig {
    pub fn from_section(s: &ToolsSection) -> Self {
        ToolConfig {
            max_observation_length: DEFAULT_OBSERVATION_CHARS,
            timeout: Duration::from_secs(s.timeout_secs.max(1)),
            simulator_timeout: s
                .simulator_timeout_secs
                .map(|n| Duration::from_secs(n.max(1))),
            retries: s.retries,
            backoff: Duration::from_millis(500),
            global_per_minute: s.global_per_minute,
            per_tool_per_minute: s.per_tool_per_minute,
            cache_calls: true,
            strip: "truncate".to_string(),
            strict_params: false,
        }
    }
}
