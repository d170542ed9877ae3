//! `retrieve eval`: both retrievers over every query of a data directory, scored against each
//! query's `relevant APIs`. The corpus is the whole catalogue, never the query's own `api_list`,
//! and the relevant APIs are only read after ranking.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use super::{Bm25Baseline, Hit, MetricsSum, RetrieveError, Retriever};
use crate::toolbench::DataDir;

/// Metrics per subset and `overall`, for our retriever and the BM25 baseline.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub ours: BTreeMap<String, super::Metrics>,
    pub bm25: BTreeMap<String, super::Metrics>,
}

/// Scores both retrievers on every subset of `data`. Queries without relevant APIs are skipped.
pub fn evaluate(
    data: &DataDir,
    ours: &Retriever,
    bm25: &Bm25Baseline,
) -> Result<EvalReport, RetrieveError> {
    let mut all = [MetricsSum::default(), MetricsSum::default()];
    let mut report = EvalReport {
        ours: BTreeMap::new(),
        bm25: BTreeMap::new(),
    };
    for subset in data.subsets()? {
        let mut sums = [MetricsSum::default(), MetricsSum::default()];
        for q in data.queries(&subset)? {
            let ranked = [ours.search(&q.query, 10)?, bm25.search(&q.query, 10)?];
            let relevant: HashSet<(String, String)> = q
                .relevant()
                .iter()
                .map(|[t, a]| (t.clone(), a.clone()))
                .collect();
            if relevant.is_empty() {
                continue;
            }
            for (sum, hits) in sums.iter_mut().zip(&ranked) {
                sum.add(&pairs(hits), &relevant);
            }
        }
        for i in 0..2 {
            all[i].merge(&sums[i]);
        }
        report.ours.insert(subset.clone(), sums[0].mean());
        report.bm25.insert(subset, sums[1].mean());
    }
    report.ours.insert("overall".into(), all[0].mean());
    report.bm25.insert("overall".into(), all[1].mean());
    Ok(report)
}

fn pairs(hits: &[Hit]) -> Vec<(String, String)> {
    hits.iter()
        .map(|h| (h.tool_name.clone(), h.api_name.clone()))
        .collect()
}

impl EvalReport {
    /// A table: one row per subset and method, `overall` rows last.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{:<16} {:<6} {:>7} {:>7} {:>7} {:>9} {:>10} {:>8}\n",
            "subset", "method", "ndcg@1", "ndcg@3", "ndcg@5", "recall@5", "recall@10", "queries"
        );
        let mut names: Vec<&String> = self.ours.keys().filter(|k| *k != "overall").collect();
        names.sort();
        let overall = "overall".to_string();
        names.push(&overall);
        for name in names {
            for (method, map) in [("bm25", &self.bm25), ("ours", &self.ours)] {
                if let Some(m) = map.get(name) {
                    out.push_str(&format!(
                        "{:<16} {:<6} {:>7.1} {:>7.1} {:>7.1} {:>9.1} {:>10.1} {:>8}\n",
                        name, method, m.ndcg1, m.ndcg3, m.ndcg5, m.recall5, m.recall10, m.queries
                    ));
                }
            }
        }
        out
    }
}
