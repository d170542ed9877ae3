//! One judge mode measured against hand labels over many runs (one run per method and model): the
//! pooled agreement, kappa and confusion, and per method the judge's pass rate beside the labelled
//! rate, on the labels of one split.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::{Split, Verdicts, split_words};
use crate::input::AnswerSet;
use crate::labels::{LabelEntry, Matching, match_run};
use crate::pass_rate::PassRate;
use crate::stats::{Calibration, calibration};
use crate::{Label, QueryKey};

/// The labels of `split` (labels without a subset belong only to `all`: their half is unknown).
pub fn in_split(entries: &[LabelEntry], split: Split) -> Vec<LabelEntry> {
    entries
        .iter()
        .filter(|e| {
            split == Split::All
                || (!e.subset.is_empty()
                    && split.holds(&QueryKey::new(e.subset.clone(), e.query_id)))
        })
        .cloned()
        .collect()
}

/// `set` reduced to the answers some label of `entries` applies to: only they are judged.
pub fn labelled_only(set: &AnswerSet, entries: &[LabelEntry], data: Option<&Path>) -> AnswerSet {
    let mut out = set.clone();
    out.expected.retain(|k| {
        entries.iter().any(|e| {
            e.applies_to(set, data)
                && e.query_id == k.query_id
                && (e.subset.is_empty() || e.subset == k.subset)
        })
    });
    out.answers.retain(|k, _| out.expected.contains(k));
    out
}

/// One run's labelled answers with the judge's verdicts on them.
#[derive(Debug, Clone, Serialize)]
pub struct RunRows {
    pub method: String,
    pub matching: Matching,
}

/// Matches `entries` with one run's judged answers.
pub fn rows(
    entries: &[LabelEntry],
    set: &AnswerSet,
    data: Option<&Path>,
    pr: &PassRate,
) -> Result<RunRows, String> {
    Ok(RunRows {
        method: set.method.clone(),
        matching: match_run(entries, set, data, pr)?,
    })
}

/// A method's judge pass rate beside its labelled rate (percent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MethodRate {
    pub method: String,
    pub n: usize,
    /// Share of the answers the labels call Solved.
    pub labelled: f64,
    /// The judge's pass rate on the same answers (Solved 1, Unsure ½).
    pub judged: f64,
}

impl MethodRate {
    pub fn difference(&self) -> f64 {
        self.judged - self.labelled
    }
}

/// One judge mode measured on one split.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    pub mode: Verdicts,
    pub split: Split,
    pub calibration: Calibration,
    pub methods: Vec<MethodRate>,
    pub stale: Vec<String>,
    pub human_unsure: Vec<String>,
}

/// Pools the runs' rows of one mode (`None` when no label applied).
pub fn pool(judge: &str, mode: Verdicts, split: Split, runs: &[RunRows]) -> Option<Measurement> {
    let pairs: Vec<(Label, Label)> = runs
        .iter()
        .flat_map(|r| r.matching.pairs.iter().map(|(_, h, j)| (*h, *j)))
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let mut by_method: BTreeMap<&str, (usize, f64, f64)> = BTreeMap::new();
    for r in runs {
        let m = &r.matching;
        for ((_, human, _), score) in m.pairs.iter().zip(&m.scores) {
            let e = by_method.entry(r.method.as_str()).or_default();
            e.0 += 1;
            e.1 += human.score();
            e.2 += score;
        }
    }
    let methods = by_method
        .into_iter()
        .map(|(method, (n, labelled, judged))| MethodRate {
            method: method.to_string(),
            n,
            labelled: labelled / n as f64 * 100.0,
            judged: judged / n as f64 * 100.0,
        })
        .collect();
    let mut c = calibration(&format!("{judge} ({} judge)", mode.as_str()), &pairs);
    c.split = split.as_str().to_string();
    c.unmatched = runs
        .iter()
        .flat_map(|r| r.matching.unmatched.clone())
        .collect();
    Some(Measurement {
        mode,
        split,
        calibration: c,
        methods,
        stale: stale_everywhere(runs),
        human_unsure: runs
            .iter()
            .flat_map(|r| r.matching.human_unsure.clone())
            .collect(),
    })
}

/// Labels stale in every run: a label of one run's answer is not stale because another run of the
/// same method and model (an earlier version) answered the query differently.
fn stale_everywhere(runs: &[RunRows]) -> Vec<String> {
    let used: std::collections::BTreeSet<&String> = runs
        .iter()
        .flat_map(|r| {
            let m = &r.matching;
            m.pairs.iter().map(|p| &p.0).chain(&m.human_unsure)
        })
        .collect();
    let mut stale: Vec<String> = runs
        .iter()
        .flat_map(|r| r.matching.stale.iter())
        .filter(|n| !used.contains(n))
        .cloned()
        .collect();
    stale.sort();
    stale.dedup();
    stale
}

/// The measurements of both modes as one table, and the per-method rates beside the labels.
pub fn table(judge: &str, label_set: &str, ms: &[Measurement]) -> String {
    let mut s = String::new();
    let Some(first) = ms.first() else {
        let _ = writeln!(s, "no label of {label_set} applies to these runs' answers");
        return s;
    };
    let _ = writeln!(
        s,
        "judge {judge} against {label_set} ({}):",
        split_words(first.split)
    );
    let _ = writeln!(
        s,
        "{:<10} {:>5} {:>10} {:>7}  confusion (labels Solved/Unsolved × judge Solved/Unsolved/Unsure)",
        "mode", "n", "agreement", "kappa"
    );
    for m in ms {
        let c = &m.calibration;
        let _ = writeln!(
            s,
            "{:<10} {:>5} {:>9.1}% {:>7}  {:?}",
            m.mode.as_str(),
            c.n,
            c.accuracy * 100.0,
            c.kappa_text(2),
            c.confusion
        );
    }
    let _ = writeln!(
        s,
        "per method: labelled Solved % · judge pass rate % (difference), on the same answers"
    );
    let mut head = format!("{:<10} {:>5} {:>8}", "method", "n", "labels");
    for m in ms {
        head.push_str(&format!(" {:>18}", m.mode.as_str()));
    }
    let _ = writeln!(s, "{head}");
    for (i, rate) in first.methods.iter().enumerate() {
        let mut line = format!("{:<10} {:>5} {:>8.1}", rate.method, rate.n, rate.labelled);
        for m in ms {
            if let Some(r) = m.methods.get(i) {
                line.push_str(&format!(
                    " {:>18}",
                    format!("{:.1} ({:+.1})", r.judged, r.difference())
                ));
            }
        }
        let _ = writeln!(s, "{line}");
    }
    let stale: usize = first.stale.len();
    if stale > 0 {
        let _ = writeln!(
            s,
            "{stale} labels are stale (the answer changed since it was labelled; not scored)"
        );
    }
    if !first.human_unsure.is_empty() {
        let _ = writeln!(
            s,
            "{} labels are Unsure (not scored)",
            first.human_unsure.len()
        );
    }
    s
}
