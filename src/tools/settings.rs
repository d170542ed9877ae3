//! The config file's `[tools]` section, defined here, in the layer that uses it; the CLI's config file is
//! made of it and hands it down.

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
    pub max_observation_length: usize,
}

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
            max_observation_length: 1024,
        }
    }
}
