//! The evaluator: pass rate (SoPR-style, N judge votes per query), win rate against a reference run,
//! paired A/B statistics, judge calibration against human labels, and the judge-free metrics.
//!
//! Every judge call goes through [`judge::Judge`], which logs it and caches its verdict keyed by model,
//! prompt hash and input hash, so re-running an evaluation is free and gives identical numbers.

pub mod api_docs;
pub mod cache;
pub mod calibration;
pub mod evidence;
pub mod evidence_judge;
pub mod headline;
pub mod html_report;
pub mod input;
pub mod judge;
#[cfg(test)]
mod judge_tests;
pub mod labels;
pub mod metrics;
pub mod observations;
#[cfg(test)]
mod observations_tests;
pub mod pass_rate;
pub mod progress;
pub mod repeats;
pub mod report;
pub mod requirements;
#[cfg(test)]
mod rubric_tests;
pub mod rules;
pub mod stats;
pub mod tool_metrics;
pub mod win_rate;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use cache::{JudgeCache, JudgeRecord};
pub use input::{Answer, AnswerSet, Converted, ConvertedAnswer, Record, load_answers};
pub use judge::{Judge, JudgeOptions};
pub use metrics::{Metrics, metrics};
pub use pass_rate::{PassRate, PassRateOptions, QueryVerdict, pass_rate};
pub use progress::{JudgeProgress, Quiet};
pub use stats::{Calibration, Interval};
pub use win_rate::{CompareOptions, Comparison, compare};

/// Errors of the evaluator.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// Unreadable or malformed input (answer files, converted files, labels, id files).
    #[error(transparent)]
    Data(#[from] sum2act_core::toolbench::DataError),
    #[error("{path}: {message}")]
    BadInput { path: PathBuf, message: String },
    #[error("the judge model failed")]
    Llm(#[from] sum2act_core::llm::LlmError),
    #[error(transparent)]
    Prompt(#[from] sum2act_core::prompts::PromptError),
    #[error("{0}")]
    Other(String),
}

impl EvalError {
    pub fn bad_input(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        EvalError::BadInput {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Whether the user's input is at fault (exit code 2) rather than the judge or the machine.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, EvalError::Data(_) | EvalError::BadInput { .. })
    }
}

/// Which judge produces pass rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum JudgeMode {
    /// Rules, the evidence check of every claim, and one narrow yes/no question per part of the request.
    #[default]
    Evidence,
    /// ToolEval-style holistic verdict on the final answer (re-checked with the trajectory when Unsure),
    /// comparable with numbers published with strong judges.
    Tooleval,
}

sum2act_core::names::named_values!(JudgeMode, "judge mode", loose {
    Evidence => "evidence": "",
    Tooleval => "tooleval": "",
});

impl JudgeMode {
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

/// A pass-rate label, as StableToolBench's judge gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Label {
    Solved,
    Unsolved,
    Unsure,
}

impl Label {
    /// SoPR scoring: Solved 1, Unsure 0.5, Unsolved 0.
    pub fn score(self) -> f64 {
        match self {
            Label::Solved => 1.0,
            Label::Unsure => 0.5,
            Label::Unsolved => 0.0,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Label::Solved => "Solved",
            Label::Unsolved => "Unsolved",
            Label::Unsure => "Unsure",
        }
    }

    /// Parses a label case-insensitively (`solved`, `Unsolved`, `UNSURE`).
    pub fn parse(text: &str) -> Option<Label> {
        match text.trim().to_ascii_lowercase().as_str() {
            "solved" => Some(Label::Solved),
            "unsolved" => Some(Label::Unsolved),
            "unsure" => Some(Label::Unsure),
            _ => None,
        }
    }
}

/// Identifies a query across subsets (ids are only unique within a subset).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct QueryKey {
    pub subset: String,
    pub query_id: u64,
}

impl QueryKey {
    pub fn new(subset: impl Into<String>, query_id: u64) -> Self {
        QueryKey {
            subset: subset.into(),
            query_id,
        }
    }
}

impl std::fmt::Display for QueryKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.subset, self.query_id)
    }
}

/// One summary per subset (in subset order) and one over everything, named `overall`: the rows of
/// every per-subset report. `group` makes a summary from a name and its items.
pub fn per_subset<'a, T, G>(
    items: &'a [T],
    subset: impl Fn(&'a T) -> &'a str,
    group: impl Fn(&str, &[&'a T]) -> G,
) -> (Vec<G>, G) {
    let mut by_subset: BTreeMap<&str, Vec<&T>> = BTreeMap::new();
    for item in items {
        by_subset.entry(subset(item)).or_default().push(item);
    }
    let groups = by_subset
        .iter()
        .map(|(name, its)| group(name, its))
        .collect();
    let all: Vec<&T> = items.iter().collect();
    (groups, group("overall", &all))
}
