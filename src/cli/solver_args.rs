//! The flags of the commands that solve queries (`run`, `batch`, `chat`): the method, the model, the
//! tool environment and the retriever, and the environment they build.

use std::path::Path;
use std::sync::Arc;

use clap::Args;

use super::BadInput;
use super::agent_args::AgentArgs;
use super::llm_args::LlmArgs;
use super::retriever_args::RetrieverArgs;
use super::tool_args::ToolArgs;
use crate::config::Config;
use crate::llm::LlmClient;
use crate::prompts::Prompts;
use crate::server::{ServerError, ToolSetup, tool_setup};
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

/// What an episode runs against: the model, the tools (and the embedded server behind them), the
/// prompts.
pub struct Environment {
    pub llm: Arc<dyn LlmClient>,
    pub setup: ToolSetup,
    pub prompts: Arc<Prompts>,
}

impl SolverArgs {
    /// Builds the model, then the tool environment (whose LLM simulation may use the model; its world
    /// defaults to `out/world`) with the MCP servers `mcp` (from `ToolArgs::resolve_tools`), then loads
    /// the prompts. An MCP server that cannot be started or reached is the user's setup to fix (exit
    /// code 2).
    pub async fn environment(
        &self,
        config: &Config,
        data: &DataDir,
        out: Option<&Path>,
        mcp: Vec<McpSpec>,
    ) -> anyhow::Result<Environment> {
        let llm = crate::llm::build(&self.llm.options(), config.llm_settings()).await?;
        let mut tools = self.tool_args.options(out);
        tools.mcp = mcp;
        let setup = match tool_setup(&tools, &config.tools, data, Some(llm.clone())).await {
            Ok(s) => s,
            Err(ServerError::Mcp(e)) => return Err(BadInput(e.to_string()).into()),
            Err(e) => return Err(e.into()),
        };
        let prompts = Arc::new(Prompts::load()?);
        Ok(Environment {
            llm,
            setup,
            prompts,
        })
    }
}
