//! Agent flags shared by `run`, `chat` and `batch`: the method and its limits. Flags win over the
//! config file's `[agent]` section, which wins over the defaults.

use clap::Args;

use super::budget_args::BudgetArgs;
use super::values::named;
use crate::config::Config;
use sum2act_core::agent::{AgentOptions, Method, MethodOptions, Strategy, ToolDocs};

#[derive(Debug, Clone, Args)]
pub struct AgentArgs {
    /// Agent method.
    #[arg(long, default_value_t = Method::default(), value_parser = named::<Method>(Method::NAMES))]
    pub method: Method,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Token budget of the Sum2Act state shown to the router (default: config `agent.state_token_budget`).
    #[arg(long, value_name = "TOKENS", allow_negative_numbers = true, value_parser = at_least_one())]
    pub state_budget: Option<u32>,
    /// Sum2Act: a result of plain JSON up to this many characters is folded into the state as it is,
    /// with no state-manager call; 0 sends every result to the state manager (the paper's loop).
    #[arg(long, value_name = "CHARS")]
    pub fold_chars: Option<usize>,
    /// Sum2Act: where the router reads what each tool does (listed, schemas).
    #[arg(long, value_name = "WHERE", value_parser = named::<ToolDocs>(ToolDocs::NAMES))]
    pub tool_docs: Option<ToolDocs>,
    /// Sum2Act: the router may call the tools of independent parts in one reply (by default it calls
    /// one tool per turn, the paper's loop).
    #[arg(long)]
    pub calls_at_once: bool,
    /// Sum2Act: have the model split the request into checklist parts even when the deterministic
    /// splitter finds one part (a request with several parts is always split this way).
    #[arg(long)]
    pub decompose: bool,
    /// ReAct: independent tries (CoT@n).
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = at_least_one())]
    pub tries: Option<u32>,
    /// DFSDT: tree width.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = at_least_one())]
    pub width: Option<u32>,
    /// Tokens the model may write per call.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = at_least_one())]
    pub max_tokens: Option<u32>,
    /// Tokens of a call that writes the final answer or a Sum2Act state update, and of a Finish cut
    /// at --max-tokens, asked again (default: config `agent.answer_max_tokens`, else 2048).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub answer_max_tokens: Option<u32>,
    /// ReAct/DFSDT: run exact repeats of earlier calls again instead of asking the model to finish
    /// (ToolBench's behaviour).
    #[arg(long)]
    pub no_repeat_guard: bool,
    /// plan/graph: tool calls in flight at once (1 = one by one).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub parallel: Option<u16>,
    /// graph: how to search the tool graph (greedy, beam, adaptive, exhaustive).
    #[arg(long, value_name = "NAME", value_parser = named::<Strategy>(Strategy::NAMES))]
    pub strategy: Option<Strategy>,
    /// graph: paths kept per step by the beam strategy.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=16))]
    pub beam_width: Option<u16>,
    /// graph: relevance (0-1) a tool needs for the adaptive strategy to expand it.
    #[arg(long, value_name = "X", value_parser = parse_unit)]
    pub threshold: Option<f32>,
    /// graph: tools on one solution path at most.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=6))]
    pub max_path: Option<u16>,
}

/// A count or limit that must be at least 1: 0 steps, tokens or seconds would run and do nothing.
pub fn at_least_one() -> clap::builder::RangedI64ValueParser<u32> {
    clap::value_parser!(u32).range(1..)
}

/// A number from 0 to 1.
fn parse_unit(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("`{s}` is not a number from 0 to 1")),
    }
}

impl AgentArgs {
    /// The options for the solver.
    pub fn options(&self, config: &Config) -> AgentOptions {
        let d = AgentOptions::default();
        AgentOptions {
            budget: self.budget.resolve(&config.budget),
            state_token_budget: self.state_budget.unwrap_or(config.agent.state_token_budget)
                as usize,
            fold_chars: self.fold_chars.unwrap_or(d.fold_chars),
            calls_at_once: self.calls_at_once,
            tool_docs: self.tool_docs.unwrap_or(d.tool_docs),
            decompose: self.decompose,
            tries: self.tries.unwrap_or(d.tries),
            width: self.width.unwrap_or(d.width),
            max_tokens: self.max_tokens.unwrap_or(d.max_tokens),
            answer_max_tokens: self
                .answer_max_tokens
                .unwrap_or(config.agent.answer_max_tokens)
                .max(1),
            repeat_guard: !self.no_repeat_guard,
            max_reply_bytes: config.agent.max_reply_bytes.max(1024),
            methods: self.method_options(),
        }
    }

    fn method_options(&self) -> MethodOptions {
        let d = MethodOptions::default();
        MethodOptions {
            parallel: self.parallel.map_or(d.parallel, usize::from),
            strategy: self.strategy.unwrap_or(d.strategy),
            beam_width: self.beam_width.map_or(d.beam_width, usize::from),
            threshold: self.threshold.unwrap_or(d.threshold),
            max_path: self.max_path.map_or(d.max_path, usize::from),
            catalogue_graph: None,
        }
    }

    /// The options of this run's method as JSON, for run manifests: those every method has, and
    /// those of its own method only (the budget is recorded apart, by `Budget::record`).
    pub fn manifest_value(&self, config: &Config) -> serde_json::Value {
        let o = self.options(config);
        let mut v = serde_json::json!({
            "method": self.method.name(),
            "max_tokens": o.max_tokens,
            "answer_max_tokens": o.answer_max_tokens,
            "max_reply_bytes": o.max_reply_bytes,
        });
        let own = match self.method {
            Method::Sum2act => serde_json::json!({
                "state_token_budget": o.state_token_budget,
                "fold_chars": o.fold_chars,
                "calls_at_once": o.calls_at_once,
                "tool_docs": o.tool_docs.name(),
                "decompose": o.decompose,
            }),
            Method::React => serde_json::json!({"tries": o.tries, "repeat_guard": o.repeat_guard}),
            Method::Dfsdt => serde_json::json!({"width": o.width, "repeat_guard": o.repeat_guard}),
            Method::Plan => serde_json::json!({"parallel": o.methods.parallel}),
            Method::Graph => serde_json::json!({
                "parallel": o.methods.parallel,
                "strategy": o.methods.strategy.as_str(),
                "beam_width": o.methods.beam_width,
                "threshold": o.methods.threshold,
                "max_path": o.methods.max_path,
            }),
        };
        if let (Some(all), Some(own)) = (v.as_object_mut(), own.as_object()) {
            all.extend(own.clone());
        }
        v
    }
}
