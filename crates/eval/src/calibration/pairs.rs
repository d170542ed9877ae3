//! Paired labels for the preference (win-rate) judge: for two answers to one query, which one a person
//! prefers by the rubric's order (`eval/README.md`). The judge is asked the same question in `rounds`
//! rounds with the order of the two answers shuffled (seeded); its majority is compared with the label.
//!
//! Format: `{"format": 1, "pairs": [{"subset", "query_id", "a": {"method", "model", "answer_hash"},
//! "b": {…}, "preferred": "a" | "b" | "tie", "reason"}]}`.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::input::{Answer, AnswerSet};
use crate::judge::Judge;
use crate::labels::answer_hash;
use crate::stats::{Calibration, calibration};
use crate::win_rate::{Winner, judge_round};
use crate::{EvalError, Label, QueryKey};
use sum2act_core::toolbench::io::read_json;

/// One side of a pair: which answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Side {
    pub method: String,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub answer_hash: String,
}

/// Which answer a person preferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preferred {
    A,
    B,
    Tie,
}

/// One paired label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairLabel {
    pub subset: String,
    pub query_id: u64,
    pub a: Side,
    pub b: Side,
    pub preferred: Preferred,
    #[serde(default)]
    pub reason: String,
}

impl PairLabel {
    pub fn key(&self) -> QueryKey {
        QueryKey::new(self.subset.clone(), self.query_id)
    }

    pub fn name(&self) -> String {
        format!(
            "{}/{} {} vs {}",
            self.subset, self.query_id, self.a.method, self.b.method
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PairFile {
    format: u32,
    #[serde(default)]
    description: String,
    pairs: Vec<PairLabel>,
}

/// Loads a paired-label file.
pub fn load(path: &Path) -> Result<Vec<PairLabel>, EvalError> {
    let v: serde_json::Value = read_json(path)?;
    let file: PairFile = serde_json::from_value(v)
        .map_err(|e| EvalError::bad_input(path, format!("not a paired-label file: {e}")))?;
    let _ = file.description;
    if file.format != 1 {
        return Err(EvalError::bad_input(
            path,
            format!("unknown paired-label format {}", file.format),
        ));
    }
    if file.pairs.is_empty() {
        return Err(EvalError::bad_input(path, "no pairs"));
    }
    Ok(file.pairs)
}

/// The answer a side names among the runs: `Err(())` when its answer changed since labelling.
fn find<'a>(sets: &'a [AnswerSet], key: &QueryKey, side: &Side) -> Option<Result<&'a Answer, ()>> {
    let set = sets.iter().find(|s| {
        s.method == side.method
            && (side.model.is_empty() || s.model.is_empty() || s.model == side.model)
    })?;
    let answer = set.answers.get(key)?;
    if !side.answer_hash.is_empty() && answer_hash(&answer.final_text()) != side.answer_hash {
        return Some(Err(()));
    }
    Some(Ok(answer))
}

/// The preference judge against paired labels.
#[derive(Debug, Clone, Serialize)]
pub struct PairMeasurement {
    /// Agreement and kappa over the pairs labelled A or B (A as Solved, B as Unsolved; a judge tie
    /// always disagrees).
    pub calibration: Calibration,
    /// Pairs labelled a tie (not scored), stale or not found in the runs.
    pub ties: Vec<String>,
    pub stale: Vec<String>,
    pub missing: Vec<String>,
}

/// Asks the preference judge about every labelled pair found in `sets`, `rounds` times each.
pub async fn measure(
    judge: &Judge,
    labels: &[PairLabel],
    sets: &[AnswerSet],
    rounds: u32,
    seed: u64,
) -> Result<Option<PairMeasurement>, EvalError> {
    let mut pairs = Vec::new();
    let (mut ties, mut stale, mut missing) = (Vec::new(), Vec::new(), Vec::new());
    for label in labels {
        let key = label.key();
        let (a, b) = match (find(sets, &key, &label.a), find(sets, &key, &label.b)) {
            (Some(Ok(a)), Some(Ok(b))) => (a, b),
            (Some(Err(())), _) | (_, Some(Err(()))) => {
                stale.push(label.name());
                continue;
            }
            _ => {
                missing.push(label.name());
                continue;
            }
        };
        if label.preferred == Preferred::Tie {
            ties.push(label.name());
            continue;
        }
        let judged = majority(judge, &key, (a, b), rounds, seed).await?;
        let human = if label.preferred == Preferred::A {
            Label::Solved
        } else {
            Label::Unsolved
        };
        pairs.push((human, judged));
    }
    judge.save()?;
    if pairs.is_empty() {
        return Ok(None);
    }
    let name = format!("{} (preference judge)", judge.model_id());
    Ok(Some(PairMeasurement {
        calibration: calibration(&name, &pairs),
        ties,
        stale,
        missing,
    }))
}

/// The judge's majority over `rounds` (A as Solved, B as Unsolved, an even split as Unsure).
async fn majority(
    judge: &Judge,
    key: &QueryKey,
    (a, b): (&Answer, &Answer),
    rounds: u32,
    seed: u64,
) -> Result<Label, EvalError> {
    let (mut for_a, mut for_b) = (0, 0);
    for r in 0..rounds.max(1) {
        match judge_round(judge, key, r, (a, b), seed).await?.winner {
            Winner::Reference => for_a += 1,
            Winner::Candidate => for_b += 1,
            Winner::Tie => {}
        }
    }
    Ok(match for_a.cmp(&for_b) {
        std::cmp::Ordering::Greater => Label::Solved,
        std::cmp::Ordering::Less => Label::Unsolved,
        std::cmp::Ordering::Equal => Label::Unsure,
    })
}
