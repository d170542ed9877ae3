//! Per-subset and overall numbers of a comparison: win rate with its bootstrap interval, sign tests,
//! and the pass-rate difference.

use super::{CompareOptions, Comparison, GroupComparison, Outcome, QueryPreference};
use crate::per_subset;
use crate::stats::{bootstrap_mean, mean, sign_test};

/// Per-subset and overall numbers from per-query outcomes.
pub fn summarise(
    reference: String,
    candidate: String,
    judge: &str,
    rounds: u32,
    options: &CompareOptions,
    queries: Vec<QueryPreference>,
) -> Comparison {
    let (subsets, overall) =
        per_subset(&queries, |q| &q.subset, |name, qs| group(name, qs, options));
    Comparison {
        reference,
        candidate,
        judge: judge.to_string(),
        rounds,
        seed: options.seed,
        resamples: options.resamples,
        subsets,
        overall,
        queries,
    }
}

fn group(name: &str, qs: &[&QueryPreference], options: &CompareOptions) -> GroupComparison {
    let n = qs.len();
    let count = |o: Outcome| qs.iter().filter(|q| q.outcome == o).count();
    let (wins, losses, ties) = (
        count(Outcome::Win),
        count(Outcome::Loss),
        count(Outcome::Tie),
    );
    let win_values: Vec<f64> = qs
        .iter()
        .map(|q| {
            if q.outcome == Outcome::Win {
                100.0
            } else {
                0.0
            }
        })
        .collect();
    let diffs: Vec<f64> = qs
        .iter()
        .map(|q| (q.candidate_score - q.reference_score) * 100.0)
        .collect();
    let better = diffs.iter().filter(|d| **d > 1e-9).count();
    let worse = diffs.iter().filter(|d| **d < -1e-9).count();
    GroupComparison {
        subset: name.to_string(),
        queries: n,
        wins,
        losses,
        ties,
        win_rate: bootstrap_mean(&win_values, options.resamples, options.seed),
        win_rate_ties_half: if n == 0 {
            0.0
        } else {
            (wins as f64 + ties as f64 / 2.0) / n as f64 * 100.0
        },
        win_p_value: sign_test(wins as u64, losses as u64),
        reference_pass_rate: mean(
            &qs.iter()
                .map(|q| q.reference_score * 100.0)
                .collect::<Vec<_>>(),
        ),
        candidate_pass_rate: mean(
            &qs.iter()
                .map(|q| q.candidate_score * 100.0)
                .collect::<Vec<_>>(),
        ),
        pass_rate_difference: bootstrap_mean(
            &diffs,
            options.resamples,
            options.seed.wrapping_add(1),
        ),
        pass_p_value: sign_test(better as u64, worse as u64),
        candidate_better: better,
        reference_better: worse,
    }
}
