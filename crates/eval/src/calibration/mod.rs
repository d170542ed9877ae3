//! The judge's measured agreement with hand labels, kept in a registry (`eval/judge_calibration.json`,
//! shipped inside the binary; `--calibration FILE` reads another): per judge model and mode, the
//! agreement, Cohen's kappa and n, the label set and the half of it they were measured on, and the
//! prompt hashes of the measurement. `eval` picks its default judge mode from it and prints the
//! held-out figure beside every pass rate. The default is the mode with the best agreement pooled
//! for the judge model: the confusion matrices of its calibrate-half and all-label entries of
//! current prompts, added up over label sets that share no file (larger n first), so that no
//! single label set decides alone ([`Registry::choose`]); then another model's figures, then
//! earlier prompts', pooled the same way.
//!
//! Halves are fixed by query, so every answer to one query falls in the same half: a query is in the
//! calibrate half when the first byte of SHA-256 of `SUBSET/ID` is even, in the report half otherwise.

mod choose;
pub mod measure;
pub mod pairs;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::stats::Calibration;
use super::{EvalError, JudgeMode, QueryKey};
use sum2act_core::toolbench::io::{read_json, write_json_atomic};

/// The registry shipped with sum2act.
const SHIPPED: &str = include_str!("../../../../eval/judge_calibration.json");

/// What a registry entry measured: a pass-rate judge mode, or the preference (win-rate) judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdicts {
    Evidence,
    Tooleval,
    Preference,
}

impl Verdicts {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdicts::Evidence => "evidence",
            Verdicts::Tooleval => "tooleval",
            Verdicts::Preference => "preference",
        }
    }

    /// The judge prompts whose wording the measurement depends on.
    pub fn prompts(self) -> &'static [sum2act_core::prompts::PromptName] {
        match self {
            Verdicts::Evidence => &[super::judge::SPLIT_PROMPT, super::judge::PART_PROMPT],
            Verdicts::Tooleval => &[super::judge::ANSWER_PROMPT, super::judge::TRAJECTORY_PROMPT],
            Verdicts::Preference => &[super::judge::PREFER_PROMPT],
        }
    }
}

impl Verdicts {
    /// The pass-rate judge mode these verdicts come from; `None` for the preference judge, which
    /// decides no pass rate. Written out, so a new mode must say what it is.
    pub fn judge_mode(self) -> Option<JudgeMode> {
        match self {
            Verdicts::Evidence => Some(JudgeMode::Evidence),
            Verdicts::Tooleval => Some(JudgeMode::Tooleval),
            Verdicts::Preference => None,
        }
    }
}

impl From<JudgeMode> for Verdicts {
    fn from(m: JudgeMode) -> Self {
        match m {
            JudgeMode::Evidence => Verdicts::Evidence,
            JudgeMode::Tooleval => Verdicts::Tooleval,
        }
    }
}

/// Which labels a figure was measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// The half used to choose and tune the judge.
    Calibrate,
    /// The held-out half, for the figures reported.
    Report,
    /// Every label.
    All,
}

sum2act_core::names::named_values!(Split, "split", loose {
    Calibrate => "calibrate": "",
    Report => "report": "",
    All => "all": "",
});

impl Split {
    pub fn as_str(self) -> &'static str {
        self.name()
    }

    /// Whether a label of `key` belongs to this split.
    pub fn holds(self, key: &QueryKey) -> bool {
        self == Split::All || half(key) == self
    }
}

/// The half a query's labels belong to: calibrate when the first byte of SHA-256 of `SUBSET/ID` is
/// even, report otherwise.
pub fn half(key: &QueryKey) -> Split {
    let digest = Sha256::digest(format!("{}/{}", key.subset, key.query_id).as_bytes());
    if digest[0] % 2 == 0 {
        Split::Calibrate
    } else {
        Split::Report
    }
}

/// One measured agreement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub judge_model: String,
    pub mode: Verdicts,
    /// The label file(s) measured against.
    pub label_set: String,
    pub split: Split,
    pub n: usize,
    pub agreement: f64,
    pub kappa: f64,
    /// Pass-rate judges: labels Solved / Unsolved × judge Solved / Unsolved / Unsure.
    #[serde(default)]
    pub confusion: Vec<Vec<u64>>,
    /// Hashes of the prompts the judge used (`Verdicts::prompts`); a changed prompt makes the figure
    /// one of an earlier judge.
    #[serde(default)]
    pub prompts: BTreeMap<String, String>,
    #[serde(default)]
    pub votes: u32,
    /// When and how it was measured.
    #[serde(default)]
    pub measured: String,
    #[serde(default)]
    pub command: String,
}

impl Entry {
    /// Whether the judge's prompts are still those of the measurement.
    pub fn fresh(&self, current: &BTreeMap<String, String>) -> bool {
        self.prompts
            .iter()
            .all(|(name, hash)| current.get(name).is_none_or(|h| h == hash))
    }

    /// The entry as the calibration printed beside pass rates.
    pub fn calibration(&self) -> Calibration {
        let mut confusion = [[0u64; 3]; 2];
        for (r, row) in self.confusion.iter().take(2).enumerate() {
            for (c, v) in row.iter().take(3).enumerate() {
                confusion[r][c] = *v;
            }
        }
        Calibration {
            judge: format!("{} ({} judge)", self.judge_model, self.mode.as_str()),
            n: self.n,
            accuracy: self.agreement,
            kappa: self.kappa,
            confusion,
            unmatched: Vec::new(),
            label_set: self.label_set.clone(),
            split: self.split.as_str().to_string(),
        }
    }

    /// `64.8%, kappa 0.25, n = 176 on eval/labels/x.json (calibrate half)`.
    pub fn describe(&self) -> String {
        format!(
            "{:.1}%, kappa {}, n = {} on {} ({})",
            self.agreement * 100.0,
            self.calibration().kappa_text(2),
            self.n,
            self.label_set,
            split_words(self.split)
        )
    }
}

/// `calibrate half`, `report half`, `all labels`.
pub fn split_words(split: Split) -> &'static str {
    match split {
        Split::Calibrate => "calibrate half",
        Split::Report => "report half",
        Split::All => "all labels",
    }
}

/// The registry file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Registry {
    pub format: u32,
    #[serde(default)]
    pub description: String,
    pub entries: Vec<Entry>,
}

/// How the judge mode of an evaluation was chosen.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeChoice {
    pub mode: JudgeMode,
    /// `flag`, `registry` or `default`.
    pub chosen_by: &'static str,
    /// The measurement behind a registry choice: the registry entry, or for several pooled one
    /// synthetic entry of their summed confusion whose `label_set` names each of them.
    pub entry: Option<Entry>,
    /// One line for people.
    pub why: String,
}

impl Registry {
    /// The registry shipped inside the binary.
    pub fn shipped() -> Registry {
        serde_json::from_str(SHIPPED).unwrap_or_default()
    }

    /// Reads a registry file (an empty one when it does not exist yet).
    pub fn load(path: &Path) -> Result<Registry, EvalError> {
        if !path.exists() {
            return Ok(Registry {
                format: 2,
                ..Registry::default()
            });
        }
        let v: serde_json::Value = read_json(path)?;
        serde_json::from_value(v).map_err(|e| {
            EvalError::bad_input(path, format!("not a judge calibration registry: {e}"))
        })
    }

    /// Writes the registry (entries sorted by model, mode, split).
    pub fn save(&mut self, path: &Path) -> Result<(), EvalError> {
        self.format = 2;
        self.entries.sort_by(|a, b| {
            (&a.judge_model, a.mode, a.split, &a.label_set).cmp(&(
                &b.judge_model,
                b.mode,
                b.split,
                &b.label_set,
            ))
        });
        write_json_atomic(path, self)?;
        Ok(())
    }

    /// Adds `entry`, replacing the one of the same model, mode, label set and split.
    pub fn record(&mut self, entry: Entry) {
        self.entries.retain(|e| {
            (&e.judge_model, e.mode, &e.label_set, e.split)
                != (
                    &entry.judge_model,
                    entry.mode,
                    &entry.label_set,
                    entry.split,
                )
        });
        self.entries.push(entry);
    }

    /// The figure to print beside a pass rate of `model` in `mode`: the held-out (report) half, else
    /// all labels, else the calibrate half; current prompts first.
    pub fn figure(
        &self,
        model: &str,
        mode: Verdicts,
        prompts: &BTreeMap<String, String>,
    ) -> Option<Entry> {
        let rank = |e: &Entry| {
            let split = match e.split {
                Split::Report => 0,
                Split::All => 1,
                Split::Calibrate => 2,
            };
            (!e.fresh(prompts), split, std::cmp::Reverse(e.n))
        };
        self.entries
            .iter()
            .filter(|e| e.judge_model == model && e.mode == mode)
            .min_by_key(|e| rank(e))
            .cloned()
    }
}

#[cfg(test)]
mod tests;
