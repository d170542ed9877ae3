//! Tool environment flags (`run`, `batch`, `chat`) and fault injection flags (also `serve`); they
//! become [`ToolOptions`] and [`FaultConfig`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use super::BadInput;
use super::values::named;
use crate::config::Config;
use sum2act_core::agent::toolset::{ToolChoice, ToolSet};
use sum2act_core::tools::ToolConfig;
use sum2act_core::tools::mcp::McpSpec;
use sum2act_server::faults::DEFAULT_TIMEOUT_DELAY_MS;
use sum2act_server::{FaultConfig, FaultMix, SimulationMode, ToolOptions};

/// StableToolBench's name for the tool server (its client reads it), read when ours is not set.
pub const SERVICE_URL: &str = "SERVICE_URL";

/// Fault injection flags (shared by `serve` and the commands that start the embedded server).
#[derive(Debug, Clone, Default, Args)]
pub struct FaultArgs {
    /// Fraction of tool calls that fail with an injected fault (0 to 1).
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    pub fault_rate: Option<f64>,
    /// Fault kinds and weights: rate-limit, too-many-requests, unauthorized, unsubscribed, not-working,
    /// timeout, server-error, huge (default: rate-limit,unauthorized,not-working,timeout).
    #[arg(long, value_name = "KIND[=W],...")]
    pub fault_mix: Option<FaultMix>,
    /// Seed of the fault decisions (the same seed meets the same faults).
    #[arg(long, value_name = "N", default_value_t = FaultConfig::default().seed)]
    pub fault_seed: u64,
    /// Extra latency added to every answer, in milliseconds.
    #[arg(long, value_name = "MS")]
    pub fault_latency_ms: Option<u64>,
    /// How long a `timeout` fault holds the request, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_TIMEOUT_DELAY_MS)]
    pub fault_timeout_ms: u64,
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(format!("`{s}` is not a rate between 0 and 1")),
    }
}

/// The simulated world's flags (shared by `serve` and the commands that start the embedded server).
#[derive(Debug, Clone, Default, Args)]
pub struct WorldArgs {
    /// Keep the simulated world in DIR: every reply made up (the same call always gets the same
    /// reply) and the entity memory. Share one DIR between runs and methods so they meet one world.
    #[arg(long, value_name = "DIR")]
    pub world: Option<PathBuf>,
    /// Do not give the LLM simulator what earlier replies fixed about the values a call names.
    #[arg(long)]
    pub no_entity_memory: bool,
}

/// Tool environment flags of `run`, `batch` and `chat`.
#[derive(Debug, Clone, Default, Args)]
pub struct ToolArgs {
    /// A StableToolBench-compatible /virtual URL; default: start the embedded server on loopback.
    /// Also read from $SERVICE_URL (StableToolBench's name) when $TOOLBENCH_SERVICE_URL is not set.
    #[arg(long, env = "TOOLBENCH_SERVICE_URL", value_name = "URL")]
    pub tool_server: Option<String>,
    /// Key sent as the toolbench_key header (never logged).
    #[arg(
        long,
        env = "TOOLBENCH_KEY",
        hide_env_values = true,
        value_name = "KEY"
    )]
    pub toolbench_key: Option<String>,
    /// How the embedded server answers calls that are not in the response cache.
    #[arg(long, value_parser = named::<SimulationMode>(SimulationMode::NAMES), default_value_t = SimulationMode::default())]
    pub tool_simulation: SimulationMode,
    /// Keep the simulated world in the data directory's response cache folder (reruns then match).
    #[arg(long, conflicts_with = "world")]
    pub save_tool_responses: bool,
    #[command(flatten)]
    pub world: WorldArgs,
    /// Calls per minute per tool (ToolBench assumes 30).
    #[arg(long, value_name = "N")]
    pub tool_rate_limit: Option<u32>,
    /// Seconds before a tool call times out (ToolBench's timeout: the API's answer; a simulator's
    /// thinking is not charged to it).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub tool_timeout: Option<u64>,
    /// Seconds a tool simulator may take to make a reply (default: no limit; the simulator's model
    /// has its own timeout and falls back to the schema simulator).
    #[arg(long, value_name = "SECS")]
    pub simulator_timeout: Option<u64>,
    /// Reject calls with parameters the API does not declare (default: pass them to the API, as
    /// ToolBench does).
    #[arg(long)]
    pub strict_params: bool,
    /// An MCP server whose tools the agent gets (repeatable): "[NAME=]COMMAND ARGS" (stdio) or
    /// [NAME=]URL (streamable HTTP). Its tools join the query's unless --tools says otherwise.
    #[arg(long = "mcp", value_name = "SERVER", value_parser = parse_mcp)]
    pub mcp: Vec<McpSpec>,
    #[command(flatten)]
    pub faults: FaultArgs,
}

fn parse_mcp(s: &str) -> Result<McpSpec, String> {
    s.parse()
}

impl FaultArgs {
    pub fn config(&self) -> FaultConfig {
        FaultConfig {
            rate: self.fault_rate.unwrap_or(0.0),
            mix: self.fault_mix.clone().unwrap_or_default(),
            seed: self.fault_seed,
            latency: Duration::from_millis(self.fault_latency_ms.unwrap_or(0)),
            timeout_delay: Duration::from_millis(self.fault_timeout_ms),
            ..FaultConfig::default()
        }
    }
}

impl ToolArgs {
    /// The options: these flags (and the variables clap reads for them), then `$SERVICE_URL`, then
    /// the config file's `[tools]` section, then its defaults; `mcp` are the servers to start (from
    /// [`ToolArgs::resolve_tools`]). `out` is the run's output folder, whose `world/` holds the world
    /// of a run whose simulation uses a model when no world is named.
    pub fn resolve(&self, config: &Config, out: Option<&Path>, mcp: Vec<McpSpec>) -> ToolOptions {
        let file = &config.tools;
        let mut calls = ToolConfig::from_section(file);
        if let Some(n) = self.tool_rate_limit {
            calls.per_tool_per_minute = Some(n);
        }
        if let Some(s) = self.tool_timeout {
            calls.timeout = Duration::from_secs(s.max(1));
        }
        if let Some(s) = self.simulator_timeout {
            calls.simulator_timeout = Some(Duration::from_secs(s.max(1)));
        }
        calls.strict_params = self.strict_params;
        let toolbench_key = self.toolbench_key.clone().or_else(|| {
            let var = file.key_env.as_ref()?;
            std::env::var(var).ok()
        });
        let world = self.world.world.clone().or_else(|| {
            (self.tool_simulation.uses_llm() && !self.save_tool_responses)
                .then(|| out.map(|o| o.join("world")))
                .flatten()
        });
        ToolOptions {
            tool_server: self
                .tool_server
                .clone()
                .or_else(|| super::values::env_alias(SERVICE_URL))
                .or_else(|| file.server_url.clone()),
            toolbench_key,
            calls,
            tool_simulation: self.tool_simulation,
            save_tool_responses: self.save_tool_responses,
            world,
            entity_memory: !self.world.no_entity_memory,
            faults: self.faults.config(),
            mcp,
        }
    }

    /// The tools of a run: `--tools` as given, else `default` (with `+mcp` when MCP servers are
    /// configured); and the MCP servers to start for it (`--mcp` flags, then `[[mcp]]` entries; none
    /// when the choice has no `mcp`).
    pub fn resolve_tools(
        &self,
        given: Option<ToolChoice>,
        default: ToolSet,
        config: &Config,
    ) -> Result<(ToolChoice, Vec<McpSpec>), BadInput> {
        let mut specs = self.mcp.clone();
        for e in &config.mcp {
            specs.push(McpSpec::from_entry(e).map_err(|m| BadInput(format!("config file: {m}")))?);
        }
        let choice = given.unwrap_or_else(|| {
            let c = ToolChoice::set(default);
            if specs.is_empty() { c } else { c.with_mcp() }
        });
        if choice.mcp && specs.is_empty() {
            return Err(BadInput(format!(
                "--tools {choice} needs MCP servers: give --mcp \"COMMAND ARGS\" or --mcp URL, or [[mcp]] entries in the config file"
            )));
        }
        if !choice.mcp && !self.mcp.is_empty() {
            return Err(BadInput(format!(
                "--mcp is given but --tools {choice} offers no MCP tools: use --tools {choice}+mcp (or leave --tools out)"
            )));
        }
        Ok((choice, if choice.mcp { specs } else { Vec::new() }))
    }
}
