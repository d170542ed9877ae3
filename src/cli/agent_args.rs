//! Agent flags shared by `run`, `chat` and `batch`: the method and its limits. Flags win over the
//! config file's `[agent]` section, which wins over the defaults.

use clap::Args;
use serde::Serialize;

use crate::agent::AgentOptions;
use crate::config::Config;

#[derive(Debug, Clone, Args, Serialize)]
pub struct AgentArgs {
    /// Agent method.
    #[arg(long, default_value = "sum2act", value_parser = ["sum2act", "react", "cot", "dfsdt", "dfs"])]
    pub method: String,
    /// Actions per episode (default: config `agent.max_steps`, else 30).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_steps: Option<u32>,
    /// LLM calls per episode (DFSDT's max_query_count).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_llm_calls: Option<u32>,
    /// Token budget of the Sum2Act state shown to the router (default: config `agent.state_token_budget`).
    #[arg(long, value_name = "TOKENS")]
    pub state_budget: Option<usize>,
    /// Sum2Act: have the model split the request into checklist parts even when the deterministic
    /// splitter finds one part (a request with several parts is always split this way).
    #[arg(long)]
    pub decompose: bool,
    /// ReAct/DFSDT chain length limit in tree levels (ToolBench's single_chain_max_step).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_depth: Option<u32>,
    /// ReAct: independent tries (CoT@n).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub tries: Option<u32>,
    /// DFSDT: tree width.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub width: Option<u32>,
    /// Tokens the model may write per call.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub max_tokens: Option<u32>,
    /// ReAct/DFSDT: run exact repeats of earlier calls again instead of asking the model to finish
    /// (ToolBench's behaviour).
    #[arg(long)]
    pub no_repeat_guard: bool,
}

impl AgentArgs {
    /// The options for the solver.
    pub fn options(&self, config: &Config) -> AgentOptions {
        let d = AgentOptions::default();
        AgentOptions {
            max_steps: self.max_steps.unwrap_or(config.agent.max_steps),
            max_llm_calls: self.max_llm_calls.unwrap_or(d.max_llm_calls),
            state_token_budget: self
                .state_budget
                .unwrap_or(config.agent.state_token_budget as usize),
            decompose: self.decompose,
            max_depth: self.max_depth.unwrap_or(d.max_depth),
            tries: self.tries.unwrap_or(d.tries),
            width: self.width.unwrap_or(d.width),
            max_tokens: self.max_tokens.unwrap_or(d.max_tokens),
            repeat_guard: !self.no_repeat_guard,
            max_reply_bytes: config.agent.max_reply_bytes.max(1024),
        }
    }

    /// The effective options as JSON, for run manifests.
    pub fn manifest_value(&self, config: &Config) -> serde_json::Value {
        let o = self.options(config);
        serde_json::json!({
            "method": self.method,
            "max_steps": o.max_steps,
            "max_llm_calls": o.max_llm_calls,
            "state_token_budget": o.state_token_budget,
            "decompose": o.decompose,
            "max_depth": o.max_depth,
            "tries": o.tries,
            "width": o.width,
            "max_tokens": o.max_tokens,
            "repeat_guard": o.repeat_guard,
            "max_reply_bytes": o.max_reply_bytes,
        })
    }
}
