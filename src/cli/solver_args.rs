//! The flags of the commands that solve queries (`run`, `batch`, `chat`): the method, the model, the
//! tool environment and the retriever, and the environment they build.

use std::path::Path;
use std::sync::Arc;

use clap::Args;

use super::agent_args::AgentArgs;
use super::llm_args::LlmArgs;
use super::retriever_args::RetrieverArgs;
use super::tool_args::ToolArgs;
use crate::config::Config;
use crate::llm::LlmClient;
use crate::prompts::Prompts;
use crate::server::{ToolSetup, tool_setup};
use crate::toolbench::DataDir;

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
    /// defaults to `out/world`), then loads the prompts.
    pub async fn environment(
        &self,
        config: &Config,
        data: &DataDir,
        out: Option<&Path>,
    ) -> anyhow::Result<Environment> {
        let llm = crate::llm::build(&self.llm.options(), config).await?;
        let tools = self.tool_args.options(out);
        let setup = tool_setup(&tools, config, data, Some(llm.clone())).await?;
        let prompts = Arc::new(Prompts::load()?);
        Ok(Environment {
            llm,
            setup,
            prompts,
        })
    }
}
