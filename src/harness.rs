//! The one entry for the commands that solve queries (`run`, `batch`, `chat`): from resolved plain
//! options it builds the solver and what its episodes run against (the model client, the tool
//! environment with its servers, the prompts), the core's [`SolverEnv`]. The CLI resolves the options
//! (flags > env > config file > defaults) before; nothing here reads a flag or the config file.

use std::sync::Arc;

use sum2act_core::agent::{AgentOptions, Method};
use sum2act_core::llm::{LlmError, LlmOptions};
use sum2act_core::prompts::{PromptError, Prompts};
use sum2act_core::setup::SolverEnv;
use sum2act_core::toolbench::DataDir;
use sum2act_server::{ServerError, ToolOptions, ToolSetup, tool_setup};

/// Everything a solving run is built from, resolved by the CLI.
#[derive(Debug, Clone)]
pub struct SolverOptions {
    pub method: Method,
    pub agent: AgentOptions,
    pub llm: LlmOptions,
    pub tools: ToolOptions,
}

/// Why the solver's environment could not be built.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Tools(#[from] ServerError),
    #[error(transparent)]
    Prompts(#[from] PromptError),
}

/// A built solver environment and the servers behind it (the embedded tool server, MCP servers),
/// which [`Harness::shutdown`] stops.
pub struct Harness {
    pub env: SolverEnv,
    setup: ToolSetup,
}

impl Harness {
    /// Builds the model, then the tool environment (whose LLM simulation may use the model), then
    /// loads the prompts.
    pub async fn build(options: SolverOptions, data: &DataDir) -> Result<Harness, SetupError> {
        let solver = sum2act_core::agent::solver(options.method, &options.agent);
        let llm = sum2act_local::build(&options.llm).await?;
        let setup = tool_setup(&options.tools, data, Some(llm.clone())).await?;
        let prompts = Arc::new(Prompts::load()?);
        let env = SolverEnv {
            solver,
            llm,
            tools: setup.env.clone(),
            prompts,
            options: options.agent,
        };
        Ok(Harness { env, setup })
    }

    /// Stops the MCP servers and the embedded server; what the MCP servers that died during the run
    /// said (empty when none did). The environment goes first: its HTTP clients' keep-alive
    /// connections to the embedded server close with it, so the server has nothing to wait for.
    pub async fn shutdown(self) -> Vec<String> {
        let Harness { env, setup } = self;
        drop(env);
        setup.shutdown().await
    }
}
