//! Pass rate, SoPR-style: per query N independent judge votes; rules first (no Finish, gave up, empty,
//! cut off, and under the evidence judge a restatement → Unsolved without asking). The evidence judge
//! asks one question per part of the request; the ToolEval-style judge re-checks an Unsure vote with the
//! whole trajectory. Solved 1, Unsure 0.5, Unsolved 0; mean ± population std over the N judge runs and a
//! bootstrap 95% interval over queries, per subset and overall. A vote the judge never answered usably is
//! an error: counted (and scored 0), never a silent Unsure.
//! Unlike StableToolBench, a missing answer counts as a failure (its number without them is reported too).

use std::collections::BTreeMap;

use futures::StreamExt;
use serde::{Deserialize, Serialize};

use super::evidence::{EvidenceReport, check_answer};
use super::evidence_judge::{PartResult, SplitBy};
use super::input::{Answer, AnswerSet};
use super::judge::{DEFAULT_JUDGE_SEED, Judge};
use super::progress::JudgeProgress;
use super::rules::{Rule, decide, finish_rule};
use super::stats::{Interval, mean};
use super::{EvalError, JudgeMode, Label, QueryKey};

mod summary;
mod votes;
use summary::interval_of;
pub use summary::summarise;
use votes::{Judged, evidence_votes, tooleval_votes};

#[derive(Debug, Clone)]
pub struct PassRateOptions {
    /// Independent judge runs per query.
    pub votes: u32,
    /// Judge calls in flight at once.
    pub concurrency: usize,
    pub mode: JudgeMode,
    /// Seed of the bootstrap over queries.
    pub seed: u64,
}

/// Judge votes per query (`--votes` of `eval`, `compare`, `calibrate` and `batch --eval`).
pub const DEFAULT_VOTES: u32 = 3;
/// Judge calls in flight at once (`--judge-concurrency`).
pub const DEFAULT_JUDGE_CONCURRENCY: usize = 4;

impl Default for PassRateOptions {
    fn default() -> Self {
        PassRateOptions {
            votes: DEFAULT_VOTES,
            concurrency: DEFAULT_JUDGE_CONCURRENCY,
            mode: JudgeMode::Evidence,
            seed: DEFAULT_JUDGE_SEED,
        }
    }
}

/// How a query's labels were decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The judge voted.
    #[default]
    Judge,
    /// A rule decided (no Finish, gave up, empty answer): no judge call.
    Rule,
    /// No answer file: counted as Unsolved.
    Missing,
}

/// One query's votes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct QueryVerdict {
    pub subset: String,
    pub query_id: u64,
    pub source: Source,
    /// The rule that decided (when `source` is `rule`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Rule>,
    /// One label per vote.
    pub labels: Vec<Label>,
    pub reasons: Vec<String>,
    /// Mean score over the votes (0..1).
    pub score: f64,
    /// Votes with no usable judge reply (scored 0) and their raw replies.
    #[serde(default)]
    pub unusable: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unusable_replies: Vec<String>,
    /// The claim check of the answer (absent for missing answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceReport>,
    /// The evidence judge's parts of the request and its votes on each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_by: Option<SplitBy>,
}

impl QueryVerdict {
    pub fn key(&self) -> QueryKey {
        QueryKey::new(self.subset.clone(), self.query_id)
    }

    /// The label of vote `i` (votes cycle when a caller asks for more rounds than there were votes).
    pub fn label(&self, i: usize) -> Label {
        if self.labels.is_empty() {
            return Label::Unsolved;
        }
        self.labels[i % self.labels.len()]
    }

    /// Majority over the votes: score above ½ Solved, below Unsolved, exactly ½ Unsure.
    pub fn majority(&self) -> Label {
        if self.score > 0.5 + 1e-9 {
            Label::Solved
        } else if self.score < 0.5 - 1e-9 {
            Label::Unsolved
        } else {
            Label::Unsure
        }
    }
}

/// The pass rate of a group of queries (a subset, or all).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupPassRate {
    pub subset: String,
    pub queries: usize,
    pub missing: usize,
    /// Queries decided by a rule without a judge call.
    pub by_rule: usize,
    /// The pass rate of each judge run, in percent.
    pub run_pass_rates: Vec<f64>,
    /// Mean and population std over the runs, in percent.
    pub pass_rate: f64,
    pub std: f64,
    /// The same with missing answers dropped, as StableToolBench computes it.
    pub pass_rate_without_missing: f64,
    /// Bootstrap 95% interval of the pass rate over queries (query scores resampled), in percent.
    #[serde(default = "summary::zero_interval")]
    pub ci: Interval,
    /// Votes with no usable judge reply, of `judged_votes` asked.
    #[serde(default)]
    pub unusable_votes: u64,
    #[serde(default)]
    pub judged_votes: u64,
    /// Judge-free: answers that finished with a final answer no rule rejected, in percent.
    #[serde(default)]
    pub answered: f64,
    /// Judge-free: answers with at least one claim from an observation and no invented value, in percent.
    #[serde(default)]
    pub evidence_backed: f64,
    /// Claims checked, supported, and answers with an invented (unsupported) value.
    #[serde(default)]
    pub claims: usize,
    #[serde(default)]
    pub claims_supported: usize,
    #[serde(default)]
    pub answers_with_invented_values: usize,
}

/// A full pass-rate evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassRate {
    pub judge: String,
    /// Which judge produced the labels.
    #[serde(default)]
    pub mode: JudgeMode,
    pub votes: u32,
    pub subsets: Vec<GroupPassRate>,
    pub overall: GroupPassRate,
    pub queries: Vec<QueryVerdict>,
}

impl PassRate {
    pub fn verdict(&self, key: &QueryKey) -> Option<&QueryVerdict> {
        self.queries
            .iter()
            .find(|q| q.subset == key.subset && q.query_id == key.query_id)
    }

    /// Per-query verdicts by key.
    pub fn by_key(&self) -> BTreeMap<QueryKey, &QueryVerdict> {
        self.queries.iter().map(|q| (q.key(), q)).collect()
    }
}

/// The verdicts decided before any judge (missing answers, rules) with every answer's claim check, and
/// the answers left for the judge.
fn prepare(
    set: &AnswerSet,
    mode: JudgeMode,
    votes: u32,
) -> (BTreeMap<QueryKey, QueryVerdict>, Vec<&Answer>) {
    let mut verdicts: BTreeMap<QueryKey, QueryVerdict> = BTreeMap::new();
    let mut jobs = Vec::new();
    for key in &set.expected {
        let base = QueryVerdict {
            subset: key.subset.clone(),
            query_id: key.query_id,
            labels: vec![Label::Unsolved; votes as usize],
            reasons: vec![String::new(); votes as usize],
            ..QueryVerdict::default()
        };
        let Some(answer) = set.answers.get(key) else {
            let reasons = vec!["no answer file".to_string(); votes as usize];
            let v = QueryVerdict {
                source: Source::Missing,
                reasons,
                ..base
            };
            verdicts.insert(key.clone(), v);
            continue;
        };
        let evidence = check_answer(answer);
        let hit = match mode {
            JudgeMode::Evidence => decide(answer, &evidence),
            JudgeMode::Tooleval => finish_rule(answer),
        };
        let mut v = QueryVerdict {
            evidence: Some(evidence),
            ..base
        };
        if let Some(hit) = hit {
            v.source = Source::Rule;
            v.rule = Some(hit.rule);
            v.reasons = vec![hit.detail; votes as usize];
        } else {
            jobs.push(answer);
        }
        verdicts.insert(key.clone(), v);
    }
    (verdicts, jobs)
}

/// The judge-free figures alone (rules and the evidence check, no votes): what `eval --no-judge` prints.
pub fn evidence_only(set: &AnswerSet) -> PassRate {
    let (verdicts, _) = prepare(set, JudgeMode::Evidence, 0);
    summarise("none", 0, verdicts.into_values().collect())
}

/// Scores every expected query of `set` with `judge`, telling `progress` of each answer judged.
pub async fn pass_rate(
    set: &AnswerSet,
    judge: &Judge,
    options: &PassRateOptions,
    progress: &dyn JudgeProgress,
) -> Result<PassRate, EvalError> {
    let votes = options.votes.max(1);
    let (mut verdicts, jobs) = prepare(set, options.mode, votes);
    let verdicts_ref = &verdicts;
    progress.start(jobs.len());
    let results: Vec<Result<Judged, EvalError>> = futures::stream::iter(jobs)
        .map(|answer| async move {
            let evidence = verdicts_ref
                .get(&answer.key)
                .and_then(|v| v.evidence.clone())
                .unwrap_or_default();
            let judged = match options.mode {
                JudgeMode::Evidence => evidence_votes(judge, answer, &evidence, votes).await,
                JudgeMode::Tooleval => tooleval_votes(judge, answer, votes).await,
            };
            progress.judged();
            judged
        })
        .buffer_unordered(options.concurrency.max(1))
        .collect()
        .await;
    progress.end();
    // The log keeps every vote made, also when a later call failed: a rerun resumes from it.
    let saved = judge.save();
    let mut first_error = None;
    for r in results {
        match r {
            Ok(j) => {
                if let Some(v) = verdicts.get_mut(&j.key) {
                    v.unusable = j.unusable.len() as u32;
                    v.unusable_replies = j.unusable;
                    v.labels = j.labels;
                    v.reasons = j.reasons;
                    v.parts = j.parts;
                    v.split_by = j.split_by;
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    saved?;
    let mut queries: Vec<QueryVerdict> = verdicts.into_values().collect();
    for q in &mut queries {
        q.score = mean(&q.labels.iter().map(|l| l.score()).collect::<Vec<_>>());
    }
    let mut pr = summarise(judge.model_id(), votes, queries);
    pr.mode = options.mode;
    pr.subsets
        .iter_mut()
        .chain(std::iter::once(&mut pr.overall))
        .for_each(|g| g.ci = interval_of(&pr.queries, &g.subset, options.seed));
    Ok(pr)
}

#[cfg(test)]
mod tests;
