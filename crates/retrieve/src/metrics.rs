//! Ranking metrics with binary relevance: NDCG@k (ideal list = every relevant item first) and
//! recall@k. Duplicates in the ranked list count once.

use std::collections::HashSet;
use std::hash::Hash;

use serde::Serialize;

/// NDCG@k of `ranked` against the set `relevant` (0 when nothing is relevant).
pub fn ndcg_at<T: Eq + Hash>(ranked: &[T], relevant: &HashSet<T>, k: usize) -> f64 {
    let ideal: f64 = (0..k.min(relevant.len()))
        .map(|i| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    if ideal == 0.0 {
        return 0.0;
    }
    let mut seen = HashSet::new();
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .filter(|(_, x)| relevant.contains(*x) && seen.insert(*x))
        .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
        .sum();
    dcg / ideal
}

/// Share of `relevant` found in the first k of `ranked`.
pub fn recall_at<T: Eq + Hash>(ranked: &[T], relevant: &HashSet<T>, k: usize) -> f64 {
    if relevant.is_empty() {
        return 0.0;
    }
    let found: HashSet<&T> = ranked
        .iter()
        .take(k)
        .filter(|x| relevant.contains(*x))
        .collect();
    found.len() as f64 / relevant.len() as f64
}

/// Mean metrics over a set of queries, in percent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Metrics {
    #[serde(rename = "ndcg@1")]
    pub ndcg1: f64,
    #[serde(rename = "ndcg@3")]
    pub ndcg3: f64,
    #[serde(rename = "ndcg@5")]
    pub ndcg5: f64,
    #[serde(rename = "recall@5")]
    pub recall5: f64,
    #[serde(rename = "recall@10")]
    pub recall10: f64,
    /// How many queries the means are over (in the table, not in the JSON).
    #[serde(skip)]
    pub queries: usize,
}

/// Running sums for [`Metrics`].
#[derive(Debug, Clone, Copy, Default)]
pub struct MetricsSum {
    sums: [f64; 5],
    n: usize,
}

impl MetricsSum {
    pub fn add<T: Eq + Hash>(&mut self, ranked: &[T], relevant: &HashSet<T>) {
        let v = [
            ndcg_at(ranked, relevant, 1),
            ndcg_at(ranked, relevant, 3),
            ndcg_at(ranked, relevant, 5),
            recall_at(ranked, relevant, 5),
            recall_at(ranked, relevant, 10),
        ];
        for (s, x) in self.sums.iter_mut().zip(v) {
            *s += x;
        }
        self.n += 1;
    }

    pub fn merge(&mut self, other: &MetricsSum) {
        for (s, x) in self.sums.iter_mut().zip(other.sums) {
            *s += x;
        }
        self.n += other.n;
    }

    pub fn mean(&self) -> Metrics {
        let n = self.n.max(1) as f64;
        let m = |i: usize| 100.0 * self.sums[i] / n;
        Metrics {
            ndcg1: m(0),
            ndcg3: m(1),
            ndcg5: m(2),
            recall5: m(3),
            recall10: m(4),
            queries: self.n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&'static str]) -> HashSet<&'static str> {
        items.iter().copied().collect()
    }

    #[test]
    fn perfect_and_empty_rankings() {
        let rel = set(&["a", "b"]);
        assert!((ndcg_at(&["a", "b", "c"], &rel, 5) - 1.0).abs() < 1e-12);
        assert!((ndcg_at(&["b", "a"], &rel, 1) - 1.0).abs() < 1e-12);
        assert_eq!(ndcg_at(&["c", "d"], &rel, 5), 0.0);
        assert_eq!(ndcg_at::<&str>(&[], &rel, 5), 0.0);
        assert_eq!(ndcg_at(&["a"], &set(&[]), 5), 0.0);
    }

    #[test]
    fn ndcg_discounts_by_rank() {
        let rel = set(&["a"]);
        // Relevant item at rank 2: 1/log2(3).
        let v = ndcg_at(&["x", "a"], &rel, 5);
        assert!((v - 1.0 / 3f64.log2()).abs() < 1e-12, "{v}");
        // Two relevant, one found at rank 1: 1 / (1 + 1/log2(3)).
        let v = ndcg_at(&["a", "x"], &set(&["a", "b"]), 5);
        assert!((v - 1.0 / (1.0 + 1.0 / 3f64.log2())).abs() < 1e-12, "{v}");
    }

    #[test]
    fn duplicates_count_once() {
        let rel = set(&["a", "b"]);
        assert!(ndcg_at(&["a", "a"], &rel, 2) < 1.0);
        assert_eq!(recall_at(&["a", "a", "x"], &rel, 3), 0.5);
    }

    #[test]
    fn recall_cuts_at_k() {
        let rel = set(&["a", "b"]);
        assert_eq!(recall_at(&["x", "a", "b"], &rel, 2), 0.5);
        assert_eq!(recall_at(&["x", "a", "b"], &rel, 10), 1.0);
    }

    #[test]
    fn means_are_percentages() {
        let mut s = MetricsSum::default();
        s.add(&["a"], &set(&["a"]));
        s.add(&["x"], &set(&["a"]));
        let m = s.mean();
        assert_eq!(m.queries, 2);
        assert!((m.ndcg1 - 50.0).abs() < 1e-9);
        assert!((m.recall10 - 50.0).abs() < 1e-9);
    }
}
