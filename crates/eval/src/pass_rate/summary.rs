//! Per-subset and overall pass-rate numbers from per-query verdicts: mean and std over the judge runs,
//! the bootstrap interval over queries, and the judge-free figures.

use super::{GroupPassRate, PassRate, QueryVerdict, Source};
use crate::evidence::EvidenceReport;
use crate::stats::{Interval, bootstrap_mean, mean, std_dev};
use crate::{JudgeMode, per_subset};

/// Bootstrap resamples of the interval over queries.
const RESAMPLES: usize = 2000;

/// Builds the per-subset and overall numbers from per-query verdicts.
pub fn summarise(judge: &str, votes: u32, queries: Vec<QueryVerdict>) -> PassRate {
    let (groups, overall) = per_subset(&queries, |q| &q.subset, |name, qs| group(name, qs, votes));
    PassRate {
        judge: judge.to_string(),
        mode: JudgeMode::default(),
        votes,
        subsets: groups,
        overall,
        queries,
    }
}

fn group(name: &str, qs: &[&QueryVerdict], votes: u32) -> GroupPassRate {
    let run = |r: usize, with_missing: bool| -> f64 {
        let scores: Vec<f64> = qs
            .iter()
            .filter(|q| with_missing || q.source != Source::Missing)
            .map(|q| q.label(r).score())
            .collect();
        mean(&scores) * 100.0
    };
    let runs: Vec<f64> = (0..votes as usize).map(|r| run(r, true)).collect();
    let without: Vec<f64> = (0..votes as usize).map(|r| run(r, false)).collect();
    let n = qs.len().max(1) as f64;
    let reports: Vec<&EvidenceReport> = qs.iter().filter_map(|q| q.evidence.as_ref()).collect();
    let backed = qs
        .iter()
        .filter(|q| {
            q.source != Source::Rule
                && q.evidence
                    .as_ref()
                    .is_some_and(|e| e.observed > 0 && e.unsupported_values == 0)
        })
        .count();
    let answered = qs
        .iter()
        .filter(|q| q.source == Source::Judge && q.evidence.is_some())
        .count();
    GroupPassRate {
        subset: name.to_string(),
        queries: qs.len(),
        missing: qs.iter().filter(|q| q.source == Source::Missing).count(),
        by_rule: qs.iter().filter(|q| q.source == Source::Rule).count(),
        pass_rate: mean(&runs),
        std: std_dev(&runs),
        run_pass_rates: runs,
        pass_rate_without_missing: mean(&without),
        ci: zero_interval(),
        unusable_votes: qs.iter().map(|q| u64::from(q.unusable)).sum(),
        judged_votes: qs
            .iter()
            .filter(|q| q.source == Source::Judge && q.evidence.is_some())
            .map(|q| q.labels.len() as u64)
            .sum(),
        answered: answered as f64 / n * 100.0,
        evidence_backed: backed as f64 / n * 100.0,
        claims: reports.iter().map(|e| e.claims.len()).sum(),
        claims_supported: reports.iter().map(|e| e.supported).sum(),
        answers_with_invented_values: reports.iter().filter(|e| e.unsupported_values > 0).count(),
    }
}

pub(super) fn zero_interval() -> Interval {
    Interval {
        estimate: 0.0,
        low: 0.0,
        high: 0.0,
    }
}

/// Bootstrap 95% interval over the queries of a group (`overall`: all).
pub(super) fn interval_of(queries: &[QueryVerdict], subset: &str, seed: u64) -> Interval {
    let scores: Vec<f64> = queries
        .iter()
        .filter(|q| subset == "overall" || q.subset == subset)
        .map(|q| q.score * 100.0)
        .collect();
    bootstrap_mean(&scores, RESAMPLES, seed)
}
