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

impl RetryPrompt {
    pub fn prompt(self) -> PromptName {
        match self {
            RetryPrompt::Toolbench => PromptName::DfsDiversity,
            RetryPrompt::Answerable => PromptName::DfsDiversityAnswerable,
        }
    }
}

/// The limits and policies of one run, the same for every method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The preset these values started from (a flag may have changed some).
    pub preset: Preset,
    /// Characters of a tool reply the model may read: the tool caller's cut (what ReAct and DFSDT
    /// keep in their history) and the cap of the steps that digest a reply (Sum2Act's state manager,
    /// plan/graph's answer call) are both this number.
    pub observation_chars: usize,
    /// Model decisions (actions, `Finish` included) per chain: Sum2Act's router steps, a ReAct
    /// try's steps, the actions on one DFSDT path.
    pub max_steps: u32,
    /// Tool calls per episode, all of DFSDT's branches and all of a plan's rounds together; `None`
    /// is no limit. A call past it is not made: the model is told to finish.
    pub max_tool_calls: Option<u32>,
    /// Model calls per episode, of every kind (ToolBench's `max_query_count` for DFSDT).
    pub max_llm_calls: u32,
    /// ToolBench's chain limit in tree levels (`single_chain_max_step`; a thought, an action and
    /// its input are three): `None` under the equal budget, where `max_steps` counts actions.
    pub max_depth: Option<u32>,
    /// Where the request lacks a value a tool needs, the model is told to call with the most
    /// plausible one and say so in the answer (every method's prompt, or none).
    pub assume_missing: bool,
    /// DFSDT's re-expansion prompt.
    pub retry_prompt: RetryPrompt,
}

/// The observation budget of the equal preset: whole replies of simulated and cached APIs.
pub const EQUAL_OBSERVATION_CHARS: usize = crate::tools::settings::DEFAULT_OBSERVATION_CHARS;
/// ToolBench's observation cut.
pub const TOOLBENCH_OBSERVATION_CHARS: usize = 1_024;

impl Default for Budget {
    fn default() -> Self {
        Budget::preset(Preset::Equal)
    }
}

impl Budget {
    pub fn preset(preset: Preset) -> Self {
        match preset {
            Preset::Equal => Budget {
                preset,
                observation_chars: EQUAL_OBSERVATION_CHARS,
                max_steps: 30,
                max_tool_calls: Some(30),
                max_llm_calls: 64,
                max_depth: None,
                assume_missing: true,
                retry_prompt: RetryPrompt::Answerable,
            },
            Preset::Toolbench => Budget {
                preset,
                observation_chars: TOOLBENCH_OBSERVATION_CHARS,
                max_steps: 30,
                max_tool_calls: None,
                max_llm_calls: 200,
                max_depth: Some(12),
                assume_missing: false,
                retry_prompt: RetryPrompt::Toolbench,
            },
        }
    }

    /// Whether a chain of `steps` actions that reached `depth` tree levels may take another action.
    pub fn chain_open(&self, steps: usize, depth: u32) -> bool {
        steps < self.max_steps as usize && self.max_depth.is_none_or(|d| depth < d)
    }

    /// The record `run.json` keeps for a run of `method`: the limits, the policies, what its model
    /// reads of each reply, and the hashes of the templates it renders.
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
        json!({
            "preset": self.preset,
            "observation_chars": self.observation_chars,
            "max_steps": self.max_steps,
            "max_tool_calls": self.max_tool_calls,
            "max_llm_calls": self.max_llm_calls,
            "max_depth": self.max_depth,
            "assume_missing": self.assume_missing,
            "retry_prompt": (method == Method::Dfsdt).then_some(self.retry_prompt),
            "reads": reads(method, self),
            "prompts": prompts,
        })
    }
}

/// The config file's `[budget]` section: a preset and any values that differ from it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BudgetSection {
    pub preset: Option<Preset>,
    pub observation_chars: Option<usize>,
    pub max_steps: Option<u32>,
    pub max_tool_calls: Option<u32>,
    pub max_llm_calls: Option<u32>,
    pub max_depth: Option<u32>,
    pub assume_missing: Option<bool>,
}

impl BudgetSection {
    /// The section's values over its preset's (the equal budget when it names none).
    pub fn resolve(&self) -> Budget {
        let mut b = Budget::preset(self.preset.unwrap_or_default());
        self.overlay(&mut b);
        b
    }

    /// Sets the values this section (or a set of flags of the same shape) gives.
    pub fn overlay(&self, b: &mut Budget) {
        if let Some(n) = self.observation_chars {
            b.observation_chars = n;
        }
        if let Some(n) = self.max_steps {
            b.max_steps = n;
        }
        if let Some(n) = self.max_tool_calls {
            b.max_tool_calls = Some(n);
        }
        if let Some(n) = self.max_llm_calls {
            b.max_llm_calls = n;
        }
        if let Some(n) = self.max_depth {
            b.max_depth = Some(n);
        }
        if let Some(on) = self.assume_missing {
            b.assume_missing = on;
        }
    }

    /// The limits that must be at least 1, by config key, for the config file's check.
    pub fn limits(&self) -> [(&'static str, Option<u64>); 5] {
        [
            (
                "budget.observation_chars",
                self.observation_chars.map(|n| n as u64),
            ),
            ("budget.max_steps", self.max_steps.map(u64::from)),
            ("budget.max_tool_calls", self.max_tool_calls.map(u64::from)),
            ("budget.max_llm_calls", self.max_llm_calls.map(u64::from)),
            ("budget.max_depth", self.max_depth.map(u64::from)),
        ]
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
