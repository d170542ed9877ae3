//! The agent's options, each declared once. One table per group ([`option_group!`]) gives the
//! resolved options, the config file's section (also what a set of flags gives), the overlay of one on
//! the other, the check of a value given, and the run's record in `run.json`: adding an option is one
//! line here (or in `budget.rs`) and its flag in the binary.

use serde::{Deserialize, Serialize};

use super::budget::Budget;
use crate::tools::graph_catalogue::CatalogueGraph;

/// Declares a group of options once. From
/// `pub struct Options; pub struct Section; options { NAME: TYPE = DEFAULT, for METHODS; ... }`
/// (METHODS: `all` or `[Method, ...]`, the methods that read it) and an optional
/// `not options { NAME: TYPE = DEFAULT; ... }` (fields that are no one's to set, such as shared data),
/// it makes:
/// - `Options`, every option set, with `Default` from the table and `KEYS`, the options' names;
/// - `Options::options_of(method)`: the options `method` reads, by name (the run's record);
/// - `Section`: every option optional, for a config file section or the flags given (unknown keys
///   refused), with `overlay` onto `Options` and `invalid`, the first value its option cannot take.
macro_rules! option_group {
    (@uses all, $method:expr) => { true };
    (@uses [$($m:ident),+ $(,)?], $method:expr) => {
        matches!($method, $($crate::agent::Method::$m)|+)
    };
    (
        $(#[$meta:meta])*
        pub struct $name:ident;
        $(#[$section_meta:meta])*
        pub struct $section:ident;
        options {
            $(
                $(#[$field_meta:meta])*
                $field:ident: $ty:ty = $default:expr, for $uses:tt;
            )+
        }
        $(not options {
            $(
                $(#[$extra_meta:meta])*
                $extra:ident: $extra_ty:ty = $extra_default:expr;
            )*
        })?
    ) => {
        $(#[$meta])*
        pub struct $name {
            $($(#[$field_meta])* pub $field: $ty,)+
            $($($(#[$extra_meta])* pub $extra: $extra_ty,)*)?
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    $($field: $default,)+
                    $($($extra: $extra_default,)*)?
                }
            }
        }

        impl $name {
            /// Every option's name: its key in the config section and in the run's record.
            pub const KEYS: &'static [&'static str] = &[$(stringify!($field)),+];

            /// The options `method` reads, by name, for the run's record (`run.json`).
            pub fn options_of(
                &self,
                method: $crate::agent::Method,
            ) -> serde_json::Map<String, serde_json::Value> {
                let mut out = serde_json::Map::new();
                $(
                    if $crate::agent::options::option_group!(@uses $uses, method) {
                        let value = serde_json::to_value(&self.$field).unwrap_or_default();
                        out.insert(stringify!($field).into(), value);
                    }
                )+
                out
            }
        }

        $(#[$section_meta])*
        #[derive(Debug, Clone, Default, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $section {
            $($(#[$field_meta])* pub $field: Option<$ty>,)+
        }

        impl $section {
            /// Sets the values this section gives.
            pub fn overlay(&self, options: &mut $name) {
                $(
                    if let Some(v) = &self.$field {
                        options.$field = <$ty as Clone>::clone(v);
                    }
                )+
            }

            /// The first value given that its option cannot take: the option's name and why.
            pub fn invalid(&self) -> Option<(&'static str, &'static str)> {
                $(
                    let problem = self
                        .$field
                        .as_ref()
                        .and_then(<$ty as $crate::agent::options::OptionValue>::problem);
                    if let Some(problem) = problem {
                        return Some((stringify!($field), problem));
                    }
                )+
                None
            }
        }
    };
}
pub(crate) use option_group;

/// A type an option may have, and which of its values no option may take.
pub(crate) trait OptionValue {
    /// Why this value cannot be an option's, if it cannot.
    fn problem(&self) -> Option<&'static str> {
        None
    }
}

const ZERO: &str = "must be at least 1 (0 would run and do nothing)";

/// Counts and limits: 0 steps, tokens or calls would run and do nothing.
impl OptionValue for u32 {
    fn problem(&self) -> Option<&'static str> {
        (*self == 0).then_some(ZERO)
    }
}

impl OptionValue for usize {
    fn problem(&self) -> Option<&'static str> {
        (*self == 0).then_some(ZERO)
    }
}

/// Fractional options are relevances or shares.
impl OptionValue for f32 {
    fn problem(&self) -> Option<&'static str> {
        (!(0.0..=1.0).contains(self)).then_some("must be a number from 0 to 1")
    }
}

impl OptionValue for bool {}

impl<T: OptionValue> OptionValue for Option<T> {
    fn problem(&self) -> Option<&'static str> {
        self.as_ref().and_then(T::problem)
    }
}

/// Default of `AgentOptions::answer_max_tokens`.
pub(crate) const DEFAULT_ANSWER_MAX_TOKENS: u32 = 2048;

/// Default of `AgentOptions::state_token_budget`: room for a strong model's facts on a multi-part
/// request (the dev run's largest states held ~600 tokens of facts; at 600 the router saw them cut).
pub(crate) const DEFAULT_STATE_TOKEN_BUDGET: usize = 1_200;

/// Default of `AgentOptions::max_reply_bytes` (64 KiB).
pub(crate) const DEFAULT_MAX_REPLY_BYTES: usize = 64 * 1024;

option_group! {
    /// Limits and switches of the methods: those every method reads, then each method's own.
    #[derive(Debug, Clone)]
    pub struct AgentOptions;
    /// The config file's `[agent]` section, or the agent flags given: the options that differ.
    pub struct AgentSection;
    options {
        /// Tokens the model may write per call.
        max_tokens: u32 = 384, for all;
        /// Tokens of a call that writes the final answer or a state update (a list or an image does
        /// not fit `max_tokens`): Sum2Act's state manager and answer call, plan/graph's answer call,
        /// and a `Finish` of any method that was cut at `max_tokens` (asked again once with this).
        answer_max_tokens: u32 = DEFAULT_ANSWER_MAX_TOKENS, for all;
        /// Longest reply text and tool-call arguments kept from one model call (bytes): a model that
        /// writes megabytes would otherwise fill answer files, prompts and memory. Longer ones are
        /// cut and counted in `cut_replies`.
        max_reply_bytes: usize = DEFAULT_MAX_REPLY_BYTES, for all;
        /// Token budget of the Sum2Act state shown to the router.
        state_token_budget: usize = DEFAULT_STATE_TOKEN_BUDGET, for [Sum2act];
        /// Sum2Act: have the model split the request into checklist parts even when the
        /// deterministic splitter finds one part.
        decompose: bool = false, for [Sum2act];
        /// Sum2Act: a successful result of plain JSON up to this many characters (compact) is folded
        /// into the state as it is, with no state-manager call; 0 (the default) sends every result to
        /// the state manager. Measured with a strong model (docs/sum2act.md, issue 43): 9% fewer
        /// tokens, 7 fewer of 48 queries solved at 1,200 (`sum2act@lean`: most ToolBench results are smaller,
        /// the median the state manager read was 903), so it is off by default.
        fold_chars: FoldChars = FoldChars(0), for [Sum2act];
        /// Sum2Act: where the router reads what each tool does.
        tool_docs: ToolDocs = ToolDocs::Listed, for [Sum2act];
        /// Sum2Act: the router may call several tools in one reply (independent parts at once); off
        /// (the default, and what the strong-model reference runs measured): one call per turn.
        calls_at_once: bool = false, for [Sum2act];
        /// Sum2Act in rounds (the default): one model call per round splits the request (first) or
        /// reads the round's results into facts and proposes the next calls or the answer
        /// (`sum2act/rounds`). Off (`--steps`): the paper's loop of a router call and a state-manager
        /// call per tool call, which solved fewer queries for more than twice the tokens with the
        /// strong model (issue 43, docs/sum2act.md).
        rounds: bool = true, for [Sum2act];
        /// Independent tries of ReAct (CoT@n).
        tries: u32 = 1, for [React];
        /// DFSDT tree width.
        width: u32 = 2, for [Dfsdt];
        /// ReAct/DFSDT: an exact repeat of a call already made on the same chain is not run again;
        /// the model is asked to finish instead (Sum2Act always does this). Off = ToolBench's
        /// behaviour, where a small model can spend its whole budget repeating one call.
        repeat_guard: bool = true, for [React, Dfsdt];
        /// Tool calls of one plan (or of independent subtasks) in flight at once; 1 runs them one
        /// by one.
        parallel: usize = 4, for [Plan, Graph];
        /// How `graph` searches the tool graph.
        strategy: Strategy = Strategy::Adaptive, for [Graph];
        /// Paths kept per step by the beam strategy.
        beam_width: usize = 2, for [Graph];
        /// Relevance (0–1) a tool needs for the adaptive strategy to expand it.
        threshold: f32 = 0.6, for [Graph];
        /// Tools on one solution path at most.
        max_path: usize = 3, for [Graph];
    }
    not options {
        /// The one budget every method runs under (its own group, recorded apart).
        budget: Budget = Budget::default();
        /// `graph`: the catalogue's tool graph, loaded once by the caller (from the on-disk cache)
        /// and shared by every episode; tool sets drawn from the catalogue are cut out of it.
        catalogue_graph: Option<CatalogueGraph> = None;
    }
}

impl AgentOptions {
    /// The record `run.json` keeps of a run of `method`: the method and the options it reads (the
    /// budget is recorded apart, by `Budget::record`).
    pub fn record(&self, method: super::Method) -> serde_json::Value {
        let mut record = serde_json::Map::new();
        record.insert("method".into(), method.name().into());
        record.extend(self.options_of(method));
        serde_json::Value::Object(record)
    }
}

/// Characters of a Sum2Act result folded by code (`AgentOptions::fold_chars`); unlike other counts, 0
/// is a setting: nothing is folded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FoldChars(pub usize);

impl OptionValue for FoldChars {}

/// Where Sum2Act's router reads what each tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolDocs {
    /// A listing in the system prompt (descriptions, arguments, examples); the offered functions carry
    /// argument types only (the default: measured with the strong model).
    Listed,
    /// Only in the offered functions (descriptions and examples in their schemas): the names and
    /// arguments are not written twice.
    Schemas,
}

crate::names::named_values!(ToolDocs, "tool docs" {
    Listed => "listed": "a listing in the system prompt, argument types in the functions (the default)",
    Schemas => "schemas": "only in the offered functions",
});

impl OptionValue for ToolDocs {}

/// ControlLLM's four ways of searching the tool graph (adaptive is the paper's best trade-off).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Follows the single most relevant tool at each step.
    Greedy,
    /// Keeps the best `beam_width` partial paths at each step.
    Beam,
    /// Expands every tool whose relevance reaches the threshold.
    Adaptive,
    /// Expands every executable tool up to the path-length limit.
    Exhaustive,
}

crate::names::named_values!(Strategy, "search strategy" {
    Greedy => "greedy": "",
    Beam => "beam": "",
    Adaptive => "adaptive": "",
    Exhaustive => "exhaustive": "",
});

impl OptionValue for Strategy {}

impl Strategy {
    pub(crate) fn as_str(self) -> &'static str {
        self.name()
    }
}

#[cfg(test)]
impl AgentOptions {
    /// The defaults with Sum2Act's step loop (`--steps`): the tests written for that loop.
    pub(crate) fn steps() -> Self {
        AgentOptions {
            rounds: false,
            ..AgentOptions::default()
        }
    }
}

#[cfg(test)]
mod tests;
