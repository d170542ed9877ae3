//! The one budget every method runs under: what the model may read of a tool reply, how many steps,
//! tool calls and model calls an episode may take, and the prompt policies that are not the method
//! itself. A comparison of methods is a comparison only when these are equal, so they live in one
//! struct, set once for a run, recorded in `run.json`, and checked by `compare` and `report`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::prompts::PromptName;
use crate::toolbench::method::Method;

/// The named starting points of a budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// One budget for every method: whole replies (16,384 characters), 30 steps, 30 tool calls,
    /// 64 model calls, missing inputs assumed, and a DFSDT retry that may answer.
    #[default]
    Equal,
    /// ToolBench's published baseline settings, to reproduce published numbers: replies cut at
    /// 1,024 characters, chains cut at 12 tree levels, 200 model calls, no tool-call limit, nothing
    /// assumed, and ToolBench's own DFSDT retry prompt. Applied to every method alike.
    Toolbench,
}

crate::names::named_values!(Preset, "budget" {
    Equal => "equal": "one budget for every method (the default)",
    Toolbench => "toolbench": "ToolBench's published baseline settings (1,024-character cut, depth 12)",
});

/// What DFSDT's model is told when it expands a node again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetryPrompt {
    /// ToolBench's: do something different, or give up (no way to answer from earlier attempts).
    Toolbench,
    /// Do something different, or answer when the earlier attempts already hold the answer.
    Answerable,
}

crate::names::named_values!(RetryPrompt, "retry prompt" {
    Toolbench => "toolbench": "ToolBench's: do something different, or give up",
    Answerable => "answerable": "do something different, or answer from the earlier attempts",
});

impl super::options::OptionValue for Preset {}
impl super::options::OptionValue for RetryPrompt {}

impl RetryPrompt {
    pub(crate) fn prompt(self) -> PromptName {
        match self {
            RetryPrompt::Toolbench => PromptName::DfsDiversity,
            RetryPrompt::Answerable => PromptName::DfsDiversityAnswerable,
        }
    }
}

/// The observation budget of the equal preset: whole replies of simulated and cached APIs.
pub(crate) const EQUAL_OBSERVATION_CHARS: usize = crate::tools::settings::DEFAULT_OBSERVATION_CHARS;
/// ToolBench's observation cut.
pub(crate) const TOOLBENCH_OBSERVATION_CHARS: usize = 1_024;

super::options::option_group! {
    /// The limits and policies of one run, the same for every method (the defaults are the equal
    /// preset's).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct Budget;
    /// The config file's `[budget]` section, or the budget flags given: a preset and any values that
    /// differ from it.
    pub struct BudgetSection;
    options {
        /// The preset these values started from (a flag may have changed some).
        preset: Preset = Preset::Equal, for all;
        /// Characters of a tool reply the model may read: the tool caller's cut (what ReAct and DFSDT
        /// keep in their history) and the cap of the steps that digest a reply (Sum2Act's state
        /// manager, plan/graph's answer call) are both this number.
        observation_chars: usize = EQUAL_OBSERVATION_CHARS, for all;
        /// Model decisions (actions, `Finish` included) per chain: Sum2Act's router steps, a ReAct
        /// try's steps, the actions on one DFSDT path.
        max_steps: u32 = 30, for all;
        /// Tool calls per episode, all of DFSDT's branches and all of a plan's rounds together;
        /// `None` is no limit. A call past it is not made: the model is told to finish.
        max_tool_calls: Option<u32> = Some(30), for all;
        /// Model calls per episode, of every kind (ToolBench's `max_query_count` for DFSDT).
        max_llm_calls: u32 = 64, for all;
        /// ToolBench's chain limit in tree levels (`single_chain_max_step`; a thought, an action and
        /// its input are three): `None` under the equal budget, where `max_steps` counts actions.
        max_depth: Option<u32> = None, for all;
        /// Where the request lacks a value a tool needs, the model is told to call with the most
        /// plausible one and say so in the answer (every method's prompt, or none).
        assume_missing: bool = true, for all;
        /// DFSDT's re-expansion prompt.
        retry_prompt: RetryPrompt = RetryPrompt::Answerable, for [Dfsdt];
    }
}

impl Budget {
    pub fn preset(preset: Preset) -> Self {
        match preset {
            Preset::Equal => Budget::default(),
            Preset::Toolbench => Budget {
                preset,
                observation_chars: TOOLBENCH_OBSERVATION_CHARS,
                max_tool_calls: None,
                max_llm_calls: 200,
                max_depth: Some(12),
                assume_missing: false,
                retry_prompt: RetryPrompt::Toolbench,
                ..Budget::default()
            },
        }
    }

    /// Whether a chain of `steps` actions that reached `depth` tree levels may take another action.
    pub(crate) fn chain_open(&self, steps: usize, depth: u32) -> bool {
        steps < self.max_steps as usize && self.max_depth.is_none_or(|d| depth < d)
    }

    /// The record `run.json` keeps for a run of `method`: the limits and policies it runs under,
    /// what its model reads of each reply, and the hashes of the templates it renders.
    pub fn record(
        &self,
        method: Method,
        hashes: &std::collections::BTreeMap<String, String>,
    ) -> Value {
        let prompts: serde_json::Map<String, Value> = method_prompts(method, self)
            .iter()
            .map(|p| {
                let name = p.as_str();
                (
                    name.to_string(),
                    json!(hashes.get(name).cloned().unwrap_or_default()),
                )
            })
            .collect();
        let mut record = self.options_of(method);
        record.insert("reads".into(), reads(method, self).into());
        record.insert("prompts".into(), prompts.into());
        Value::Object(record)
    }
}

impl BudgetSection {
    /// The section's values over its preset's (the equal budget when it names none).
    pub fn resolve(&self) -> Budget {
        let mut b = Budget::preset(self.preset.unwrap_or_default());
        self.overlay(&mut b);
        b
    }
}

/// What the method's model reads of a tool reply, in words, for the run's record.
fn reads(method: Method, b: &Budget) -> String {
    let n = b.observation_chars;
    match method {
        Method::Sum2act => format!(
            "the state manager reads up to {n} characters of each reply; the router reads the state, never a raw reply"
        ),
        Method::React | Method::Dfsdt => format!(
            "the model reads up to {n} characters of each reply, and keeps every earlier reply in its conversation"
        ),
        Method::Plan | Method::Graph => format!(
            "the answer call reads up to {n} characters of each reply; planning reads the tool list only"
        ),
    }
}

/// The templates a method renders (their hashes go into the run's record).
fn method_prompts(method: Method, b: &Budget) -> Vec<PromptName> {
    use PromptName as P;
    let mut names = match method {
        Method::Sum2act => vec![
            P::RouterSystem,
            P::RouterUser,
            P::RouterOpenParts,
            P::RouterRepeat,
            P::StateManager,
            P::Sum2actAnswer,
            P::Decompose,
        ],
        Method::React => vec![P::ReactSystem],
        Method::Dfsdt => vec![P::ReactSystem, b.retry_prompt.prompt()],
        Method::Plan => vec![
            P::Plan,
            P::PlanRepair,
            P::PlanReplan,
            P::PlanResponse,
            P::PlanSelect,
        ],
        Method::Graph => vec![
            P::GraphDecompose,
            P::GraphRank,
            P::GraphScore,
            P::GraphArgs,
            P::PlanResponse,
        ],
    };
    names.extend([P::FinishNow, P::Repair]);
    if b.assume_missing {
        names.push(match method {
            Method::Sum2act => P::AssumeMissingRouter,
            _ => P::AssumeMissing,
        });
        if method == Method::Sum2act {
            names.push(P::AssumeMissingOpenParts);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_differ_in_what_toolbench_published() {
        let e = Budget::preset(Preset::Equal);
        let t = Budget::preset(Preset::Toolbench);
        assert_eq!(t.observation_chars, 1024);
        assert_eq!(t.max_depth, Some(12));
        assert!(e.observation_chars >= 8192);
        assert!(e.assume_missing && !t.assume_missing);
        assert_eq!(e.retry_prompt, RetryPrompt::Answerable);
    }

    #[test]
    fn chains_stop_at_steps_or_depth() {
        let e = Budget::preset(Preset::Equal);
        assert!(e.chain_open(29, 500));
        assert!(!e.chain_open(30, 0));
        let t = Budget::preset(Preset::Toolbench);
        assert!(t.chain_open(3, 11));
        assert!(!t.chain_open(3, 12));
    }

    #[test]
    fn the_record_names_what_the_model_reads_and_the_prompts() {
        let b = Budget::default();
        let mut hashes = std::collections::BTreeMap::new();
        hashes.insert("react_system".to_string(), "abc".to_string());
        let r = b.record(Method::React, &hashes);
        assert_eq!(r["observation_chars"], 16384);
        assert_eq!(r["prompts"]["react_system"], "abc");
        assert!(r["reads"].as_str().unwrap().contains("16384"));
        assert!(r["retry_prompt"].is_null());
        let d = b.record(Method::Dfsdt, &hashes);
        assert_eq!(d["retry_prompt"], "answerable");
        assert!(d["prompts"].get("dfs_diversity_answerable").is_some());
    }
}
