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
use crate::harness::{Harness, SetupError, SolverOptions};
use sum2act_core::toolbench::DataDir;
use sum2act_core::tools::mcp::McpSpec;
use sum2act_server::ServerError;

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

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use sum2act_core::agent::AgentOptions;
    use sum2act_core::llm::LlmOptions;
    use sum2act_core::tools::ToolConfig;
    use sum2act_server::FaultConfig;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        solver: SolverArgs,
    }

    /// Each default is written once: the flags left out and an empty config file resolve to the
    /// library's own defaults.
    #[test]
    fn no_flags_and_no_config_resolve_to_the_librarys_defaults() {
        let flags = Flags::try_parse_from(["sum2act"]).unwrap();
        let config = Config::default();
        let o = flags.solver.resolve(&config, None, Vec::new()).unwrap();
        let d = AgentOptions::default();
        assert_eq!(o.method, sum2act_core::agent::Method::default());
        assert_eq!(o.agent.budget, d.budget);
        assert_eq!(
            (o.agent.state_token_budget, o.agent.max_tokens),
            (d.state_token_budget, d.max_tokens)
        );
        assert_eq!(o.agent.answer_max_tokens, d.answer_max_tokens);
        assert_eq!(o.agent.max_reply_bytes, d.max_reply_bytes);
        let l = LlmOptions::default();
        assert_eq!(
            (o.llm.retries, o.llm.timeout, o.llm.context, o.llm.parallel),
            (l.retries, l.timeout, l.context, l.parallel)
        );
        assert_eq!(o.tools.calls, ToolConfig::default());
        assert_eq!(o.tools.faults, FaultConfig::default());
        assert_eq!(o.tools.tool_simulation, Default::default());
    }
}
