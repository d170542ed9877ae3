//! Agent flags shared by `run`, `chat` and `batch`: the method and its limits. Flags win over the
//! config file's `[agent]` section, which wins over the defaults.

use clap::Args;

use super::budget_args::BudgetArgs;
use super::values::named;
use crate::config::Config;
use sum2act_core::agent::{AgentOptions, AgentSection, FoldChars, Method, Strategy, ToolDocs};

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
    /// Sum2Act: have the model split the request into checklist parts even when the deterministic
    /// splitter finds one part (a request with several parts is always split this way).
    #[arg(long)]
    pub decompose: bool,
    /// Sum2Act: a result of plain JSON up to this many characters is folded into the state as it is,
    /// with no state-manager call; 0 (the default) sends every result to the state manager.
    #[arg(long, value_name = "CHARS")]
    pub fold_chars: Option<usize>,
    /// Sum2Act: where the router reads what each tool does (listed, schemas).
    #[arg(long, value_name = "WHERE", value_parser = named::<ToolDocs>(ToolDocs::NAMES))]
    pub tool_docs: Option<ToolDocs>,
    /// Sum2Act: the router may call the tools of independent parts in one reply (by default it calls
    /// one tool per turn, the paper's loop).
    #[arg(long)]
    pub calls_at_once: bool,
    /// Sum2Act: the paper's loop, a router call and a state-manager call per tool call, instead of
    /// one model call per round (the default).
    #[arg(long)]
    pub steps: bool,
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
    /// Longest model reply text or tool-call arguments kept (bytes); longer ones are cut and counted
    /// (default: config `agent.max_reply_bytes`, else 65536).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_reply_bytes: Option<u64>,
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
    /// The options for the solver: the defaults, the config file's `[agent]` and `[budget]`, then
    /// these flags.
    pub fn options(&self, config: &Config) -> AgentOptions {
        let mut o = AgentOptions::default();
        config.agent.overlay(&mut o);
        self.section().overlay(&mut o);
        o.budget = self.budget.resolve(&config.budget);
        o
    }

    /// The values these flags give, each flag onto its option.
    fn section(&self) -> AgentSection {
        AgentSection {
            max_tokens: self.max_tokens,
            answer_max_tokens: self.answer_max_tokens,
            max_reply_bytes: self.max_reply_bytes.map(|n| n as usize),
            state_token_budget: self.state_budget.map(|n| n as usize),
            decompose: self.decompose.then_some(true),
            fold_chars: self.fold_chars.map(FoldChars),
            tool_docs: self.tool_docs,
            calls_at_once: self.calls_at_once.then_some(true),
            rounds: self.steps.then_some(false),
            tries: self.tries,
            width: self.width,
            repeat_guard: self.no_repeat_guard.then_some(false),
            parallel: self.parallel.map(usize::from),
            strategy: self.strategy,
            beam_width: self.beam_width.map(usize::from),
            threshold: self.threshold,
            max_path: self.max_path.map(usize::from),
        }
    }

    /// The options of this run's method, for run manifests (`AgentOptions::record`).
    pub fn manifest_value(&self, config: &Config) -> serde_json::Value {
        self.options(config).record(self.method)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::Value;

    use super::*;
    use sum2act_core::agent::Budget;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        agent: AgentArgs,
    }

    /// The flag of each option of the core's tables, with a value other than the default.
    const FLAGS: &[(&str, &[&str])] = &[
        ("max_tokens", &["--max-tokens", "100"]),
        ("answer_max_tokens", &["--answer-max-tokens", "100"]),
        ("max_reply_bytes", &["--max-reply-bytes", "2000"]),
        ("state_token_budget", &["--state-budget", "100"]),
        ("decompose", &["--decompose"]),
        ("fold_chars", &["--fold-chars", "1200"]),
        ("tool_docs", &["--tool-docs", "schemas"]),
        ("calls_at_once", &["--calls-at-once"]),
        ("rounds", &["--steps"]),
        ("tries", &["--tries", "3"]),
        ("width", &["--width", "3"]),
        ("repeat_guard", &["--no-repeat-guard"]),
        ("parallel", &["--parallel", "2"]),
        ("strategy", &["--strategy", "beam"]),
        ("beam_width", &["--beam-width", "3"]),
        ("threshold", &["--threshold", "0.25"]),
        ("max_path", &["--max-path", "2"]),
        ("preset", &["--budget", "toolbench"]),
        ("observation_chars", &["--observation-chars", "100"]),
        ("max_steps", &["--max-steps", "5"]),
        ("max_tool_calls", &["--max-tool-calls", "5"]),
        ("max_llm_calls", &["--max-llm-calls", "5"]),
        ("max_depth", &["--max-depth", "5"]),
        ("assume_missing", &["--assume-missing", "off"]),
        ("retry_prompt", &["--retry-prompt", "toolbench"]),
    ];

    /// What `run.json` records of a run of `method` under `flags`: the agent's options and the budget.
    fn recorded(flags: &[&str], method: Method) -> serde_json::Map<String, Value> {
        let mut args = vec!["sum2act", "--method", method.name()];
        args.extend(flags);
        let parsed = Flags::try_parse_from(args).unwrap_or_else(|e| panic!("{flags:?}: {e}"));
        let o = parsed.agent.options(&Config::default());
        let mut all = serde_json::Map::new();
        for part in [
            o.record(method),
            o.budget.record(method, &Default::default()),
        ] {
            if let Value::Object(m) = part {
                all.extend(m);
            }
        }
        all
    }

    /// Every option of the core (agent options and budget) has a flag, and the flag reaches the
    /// option: what the run records changes. An option added without its flag fails here.
    #[test]
    fn every_option_has_a_flag_that_sets_it() {
        let mut keys: Vec<&str> = [AgentOptions::KEYS, Budget::KEYS].concat();
        let mut flagged: Vec<&str> = FLAGS.iter().map(|(k, _)| *k).collect();
        keys.sort_unstable();
        flagged.sort_unstable();
        assert_eq!(
            flagged, keys,
            "the options with a flag are the core's options"
        );
        for (key, flags) in FLAGS {
            let method = Method::ALL
                .into_iter()
                .find(|m| recorded(&[], *m).contains_key(*key))
                .unwrap_or_else(|| panic!("`{key}` is in no method's record"));
            let (before, after) = (recorded(&[], method), recorded(flags, method));
            assert_ne!(
                before[*key], after[*key],
                "{flags:?} leaves `{key}` as it was"
            );
        }
    }

    /// Flags win over the config file, which wins over the defaults, for method options too.
    #[test]
    fn flags_win_over_the_config_file() {
        let config: Config =
            toml::from_str("[agent]\ntries = 4\nstrategy = \"greedy\"\n[budget]\nmax_steps = 9\n")
                .unwrap();
        let parse = |flags: &[&str]| {
            let args = ["sum2act"].iter().chain(flags);
            Flags::try_parse_from(args).unwrap().agent.options(&config)
        };
        let from_file = parse(&[]);
        assert_eq!(from_file.tries, 4);
        assert_eq!(from_file.strategy, Strategy::Greedy);
        assert_eq!(from_file.budget.max_steps, 9);
        let flagged = parse(&["--tries", "5", "--max-steps", "7"]);
        assert_eq!((flagged.tries, flagged.budget.max_steps), (5, 7));
    }
}
