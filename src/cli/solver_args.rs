//! The flags of the commands that solve queries (`run`, `batch`, `chat`): the method, the model, the
//! tool environment and the retriever. They are resolved once, with the config file, into the
//! library's [`SolverOptions`], which [`start`] turns into a running [`Harness`].

use std::path::Path;

use clap::Args;

use super::BadInput;
use super::agent_args::AgentArgs;
use super::llm_args::LlmArgs;
use super::retriever_args::RetrieverArgs;
use super::tool_args::ToolArgs;
use crate::config::Config;
use crate::server::ServerError;
use crate::setup::{Harness, SetupError, SolverOptions};
use crate::toolbench::DataDir;
use crate::tools::mcp::McpSpec;

#[derive(Debug, Args)]
pub struct SolverArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
    #[command(flatten)]
    pub tool_args: ToolArgs,
    #[command(flatten)]
    pub retriever: RetrieverArgs,
}

impl SolverArgs {
    /// Every option of the solver, resolved (flags > env > config file > defaults); `out` is the
    /// run's folder (its `world/` is the default world of a simulation that uses a model) and `mcp`
    /// the MCP servers to start (from `ToolArgs::resolve_tools`).
    pub fn resolve(
        &self,
        config: &Config,
        out: Option<&Path>,
        mcp: Vec<McpSpec>,
    ) -> anyhow::Result<SolverOptions> {
        Ok(SolverOptions {
            method: self.agent.method,
            agent: self.agent.options(config),
            llm: self.llm.resolve(config)?,
            tools: self.tool_args.resolve(config, out, mcp),
        })
    }
}

/// Builds the solver and its environment. An MCP server that cannot be started or reached is the
/// user's setup to fix (exit code 2).
pub async fn start(options: SolverOptions, data: &DataDir) -> anyhow::Result<Harness> {
    Harness::build(options, data).await.map_err(|e| match e {
        SetupError::Tools(ServerError::Mcp(e)) => BadInput(e.to_string()).into(),
        SetupError::Tools(e) => e.into(),
        SetupError::Llm(e) => e.into(),
        SetupError::Prompts(e) => e.into(),
    })
}
