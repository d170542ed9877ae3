//! Win rate of a candidate run against a reference run on the same queries, and the paired A/B
//! statistics (bootstrap intervals, sign tests) for the win rate and the pass-rate difference.
//!
//! Per query and round: a missing answer loses; exactly one Solved (by that round's pass-rate vote) wins;
//! identical answers tie; otherwise the judge prefers one, with the order of the two answers shuffled per
//! round by a seeded RNG. A candidate wins a query when preferred in more rounds than the reference; equal
//! counts are ties, reported on their own (the win rate counts them as 0, as StableToolBench does).

use std::collections::{BTreeMap, BTreeSet};

use futures::StreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::input::{Answer, AnswerSet};
use super::judge::Judge;
use super::observations::judge_view;
use super::pass_rate::{PassRate, QueryVerdict, Source};
use super::progress::JudgeProgress;
use super::stats::Interval;
use super::{EvalError, Label, QueryKey};

mod summary;
pub use summary::summarise;

#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// Judge rounds per query.
    pub rounds: u32,
    /// Seed of the order shuffling and of the bootstrap.
    pub seed: u64,
    /// Bootstrap resamples.
    pub resamples: usize,
    pub concurrency: usize,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            rounds: 3,
            seed: 42,
            resamples: 10_000,
            concurrency: 4,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Win,
    Loss,
    Tie,
}

/// Who won one round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Winner {
    Reference,
    Candidate,
    Tie,
}

/// What decided one round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// An answer is missing (it loses; two missing answers tie).
    Missing,
    /// Exactly one answer was Solved by that round's pass-rate vote.
    Status,
    /// The two answers are the same.
    Identical,
    /// The judge preferred one.
    Judge,
    /// The judge gave no verdict (a tie).
    NoVerdict,
}

impl DecidedBy {
    /// The name as written in reports.
    pub fn as_str(&self) -> &'static str {
        match self {
            DecidedBy::Missing => "missing",
            DecidedBy::Status => "status",
            DecidedBy::Identical => "identical",
            DecidedBy::Judge => "judge",
            DecidedBy::NoVerdict => "no_verdict",
        }
    }
}

/// Who won one round, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub winner: Winner,
    pub decided_by: DecidedBy,
    /// Whether the candidate was shown first to the judge.
    #[serde(default)]
    pub candidate_first: bool,
    #[serde(default)]
    pub reason: String,
}

/// The outcome for one query (from the candidate's side).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryPreference {
    pub subset: String,
    pub query_id: u64,
    pub reference_rounds: u32,
    pub candidate_rounds: u32,
    pub outcome: Outcome,
    /// Pass-rate scores (0..1) of both answers.
    pub reference_score: f64,
    pub candidate_score: f64,
    pub rounds: Vec<Round>,
}

/// Comparison numbers for a group of queries (a subset, or all). Rates in percent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupComparison {
    pub subset: String,
    pub queries: usize,
    pub wins: usize,
    pub losses: usize,
    pub ties: usize,
    /// wins / queries, with its paired-bootstrap 95% interval.
    pub win_rate: Interval,
    /// (wins + ties/2) / queries, for readers used to that convention.
    pub win_rate_ties_half: f64,
    /// Sign test of wins against losses.
    pub win_p_value: f64,
    pub reference_pass_rate: f64,
    pub candidate_pass_rate: f64,
    /// Candidate minus reference pass rate (mean per-query score difference), with its 95% interval.
    pub pass_rate_difference: Interval,
    /// Sign test of queries where the candidate scored higher against those where it scored lower.
    pub pass_p_value: f64,
    pub candidate_better: usize,
    pub reference_better: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub reference: String,
    pub candidate: String,
    pub judge: String,
    pub rounds: u32,
    pub seed: u64,
    pub resamples: usize,
    pub subsets: Vec<GroupComparison>,
    pub overall: GroupComparison,
    pub queries: Vec<QueryPreference>,
}

/// Whether the candidate is shown first in `round` of `key`: a seeded coin, stable across runs and
/// machines (it does not depend on the order the queries are processed in).
pub fn candidate_first(seed: u64, key: &QueryKey, round: u32) -> bool {
    let digest =
        Sha256::digest(format!("{seed}/{}/{}/{round}", key.subset, key.query_id).as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    StdRng::seed_from_u64(u64::from_le_bytes(bytes)).gen_bool(0.5)
}

fn round(winner: Winner, decided_by: DecidedBy) -> Round {
    Round {
        winner,
        decided_by,
        candidate_first: false,
        reason: String::new(),
    }
}

/// Compares `candidate` against `reference`; both pass rates must come from the same judge setup.
/// `progress` hears of each round the judge decides.
pub async fn compare(
    reference: (&AnswerSet, &PassRate),
    candidate: (&AnswerSet, &PassRate),
    judge: &Judge,
    options: &CompareOptions,
    progress: &dyn JudgeProgress,
) -> Result<Comparison, EvalError> {
    let rounds = options.rounds.max(1);
    let (refs, cands) = (Side::new(reference), Side::new(candidate));
    let (mut table, jobs) = settle(&refs, &cands, rounds);
    progress.start(jobs.len());
    let judged = judge_rounds(jobs, judge, options, progress).await;
    progress.end();
    let saved = judge.save();
    for j in judged {
        let (key, r, rd) = j?;
        if let Some(rs) = table.get_mut(&key) {
            rs[r as usize] = Some(rd);
        }
    }
    saved?;
    let queries: Vec<QueryPreference> = table
        .into_iter()
        .map(|(key, rs)| preference(key, rs, &refs, &cands))
        .collect();
    let (ref_name, cand_name) = side_names(reference.0, candidate.0);
    Ok(summarise(
        ref_name,
        cand_name,
        judge.model_id(),
        rounds,
        options,
        queries,
    ))
}

/// One side of the comparison: its answers and its pass-rate verdicts.
struct Side<'a> {
    answers: &'a AnswerSet,
    verdicts: BTreeMap<QueryKey, &'a QueryVerdict>,
}

impl<'a> Side<'a> {
    fn new((answers, pass_rate): (&'a AnswerSet, &'a PassRate)) -> Self {
        Side {
            answers,
            verdicts: pass_rate.by_key(),
        }
    }

    /// The label of round `r` (Unsolved when the query has no verdict).
    fn label(&self, key: &QueryKey, r: u32) -> Label {
        self.verdicts
            .get(key)
            .map_or(Label::Unsolved, |q| q.label(r as usize))
    }

    /// The pass-rate score (0 for a missing answer).
    fn score(&self, key: &QueryKey) -> f64 {
        self.verdicts
            .get(key)
            .filter(|q| q.source != Source::Missing)
            .map_or(0.0, |q| q.score)
    }
}

/// A round only the judge can decide: the query, the round, the reference's and the candidate's answer.
type JudgeJob<'a> = (QueryKey, u32, &'a Answer, &'a Answer);

/// Every round of every query decided without the judge where it can be (missing answers, one Solved,
/// identical answers); the others are left `None` and returned as jobs for the judge.
fn settle<'a>(
    refs: &Side<'a>,
    cands: &Side<'a>,
    rounds: u32,
) -> (BTreeMap<QueryKey, Vec<Option<Round>>>, Vec<JudgeJob<'a>>) {
    let keys: BTreeSet<&QueryKey> = refs
        .answers
        .expected
        .union(&cands.answers.expected)
        .collect();
    let mut table = BTreeMap::new();
    let mut jobs = Vec::new();
    for key in keys {
        let (ra, ca) = (
            refs.answers.answers.get(key),
            cands.answers.answers.get(key),
        );
        let rs = (0..rounds)
            .map(|r| match (ra, ca) {
                (None, None) => Some(round(Winner::Tie, DecidedBy::Missing)),
                (None, Some(_)) => Some(round(Winner::Candidate, DecidedBy::Missing)),
                (Some(_), None) => Some(round(Winner::Reference, DecidedBy::Missing)),
                (Some(a), Some(b)) => {
                    let decided = settle_pair(a, b, refs.label(key, r), cands.label(key, r));
                    if decided.is_none() {
                        jobs.push((key.clone(), r, a, b));
                    }
                    decided
                }
            })
            .collect();
        table.insert(key.clone(), rs);
    }
    (table, jobs)
}

/// A round between two answers decided by their pass-rate labels or by being the same, if it can be.
fn settle_pair(a: &Answer, b: &Answer, la: Label, lb: Label) -> Option<Round> {
    if la == Label::Solved && lb != Label::Solved {
        Some(round(Winner::Reference, DecidedBy::Status))
    } else if lb == Label::Solved && la != Label::Solved {
        Some(round(Winner::Candidate, DecidedBy::Status))
    } else if a.final_text().trim() == b.final_text().trim() && a.tool_steps() == b.tool_steps() {
        Some(round(Winner::Tie, DecidedBy::Identical))
    } else {
        None
    }
}

/// Asks the judge for every round it must decide, `options.concurrency` at a time.
async fn judge_rounds(
    jobs: Vec<JudgeJob<'_>>,
    judge: &Judge,
    options: &CompareOptions,
    progress: &dyn JudgeProgress,
) -> Vec<Result<(QueryKey, u32, Round), EvalError>> {
    let seed = options.seed;
    futures::stream::iter(jobs)
        .map(|(key, r, a, b)| async move {
            let round = judge_round(judge, &key, r, (a, b), seed).await;
            progress.judged();
            let round = round?;
            Ok((key, r, round))
        })
        .buffer_unordered(options.concurrency.max(1))
        .collect()
        .await
}

/// One judged round: the two answers in the round's seeded order, the judge's preference mapped back
/// to reference (`a`) or candidate (`b`).
pub async fn judge_round(
    judge: &Judge,
    key: &QueryKey,
    r: u32,
    (a, b): (&Answer, &Answer),
    seed: u64,
) -> Result<Round, EvalError> {
    let cand_first = candidate_first(seed, key, r);
    let (ta, tb) = (a.final_text(), b.final_text());
    // Both sides' observations share one prompt.
    let budget = judge.evidence_budget(&[&a.converted.query, &ta, &tb], 2);
    let max_obs = judge.options().max_observation_chars;
    let (tra, trb) = (
        judge_view(a, max_obs, budget),
        judge_view(b, max_obs, budget),
    );
    let (first, second) = if cand_first {
        ((tb.as_str(), trb.as_str()), (ta.as_str(), tra.as_str()))
    } else {
        ((ta.as_str(), tra.as_str()), (tb.as_str(), trb.as_str()))
    };
    let ctx = key.to_string();
    let (pref, reason) = judge
        .prefers_first(&a.converted.query, first, second, r, &ctx)
        .await?;
    let winner = match pref {
        None => Winner::Tie,
        Some(first_better) if first_better == cand_first => Winner::Candidate,
        Some(_) => Winner::Reference,
    };
    let decided_by = if pref.is_some() {
        DecidedBy::Judge
    } else {
        DecidedBy::NoVerdict
    };
    Ok(Round {
        winner,
        decided_by,
        candidate_first: cand_first,
        reason,
    })
}

/// The outcome of one query from its rounds (a round the judge never answered is a tie).
fn preference(
    key: QueryKey,
    rounds: Vec<Option<Round>>,
    refs: &Side<'_>,
    cands: &Side<'_>,
) -> QueryPreference {
    let rs: Vec<Round> = rounds
        .into_iter()
        .map(|r| r.unwrap_or_else(|| round(Winner::Tie, DecidedBy::NoVerdict)))
        .collect();
    let won = |w: Winner| rs.iter().filter(|r| r.winner == w).count() as u32;
    let (cand, refr) = (won(Winner::Candidate), won(Winner::Reference));
    let outcome = match cand.cmp(&refr) {
        std::cmp::Ordering::Greater => Outcome::Win,
        std::cmp::Ordering::Less => Outcome::Loss,
        std::cmp::Ordering::Equal => Outcome::Tie,
    };
    QueryPreference {
        reference_score: refs.score(&key),
        candidate_score: cands.score(&key),
        subset: key.subset,
        query_id: key.query_id,
        reference_rounds: refr,
        candidate_rounds: cand,
        outcome,
        rounds: rs,
    }
}

/// The names of the two sides: their method names, or their folders when the method is the same
/// (e.g. two models).
fn side_names(reference: &AnswerSet, candidate: &AnswerSet) -> (String, String) {
    let (ref_name, cand_name) = (reference.name(), candidate.name());
    if ref_name != cand_name {
        return (ref_name, cand_name);
    }
    let folder = |s: &AnswerSet| {
        s.source
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
    };
    (
        folder(reference).unwrap_or_else(|| "reference".into()),
        folder(candidate).unwrap_or_else(|| "candidate".into()),
    )
}

#[cfg(test)]
mod tests;
