//! `retrieve eval`: both retrievers over every query of a data directory, scored against each
//! query's `relevant APIs`. The corpus is the whole catalogue, never the query's own `api_list`,
//! and the relevant APIs are only read after ranking.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use super::{Bm25Baseline, Hit, MetricsSum, RetrieveError, Retriever, ndcg_at};
use sum2act_core::toolbench::DataDir;

/// Which queries to score: the weights are tuned on the even `query_id`s, so the odd ones are the
/// held-out check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Half {
    #[default]
    All,
    Even,
    Odd,
}

sum2act_core::names::named_values!(Half, "half" {
    All => "all": "",
    Even => "even": "",
    Odd => "odd": "",
});

impl Half {
    pub fn keeps(self, query_id: u64) -> bool {
        match self {
            Half::All => true,
            Half::Even => query_id.is_multiple_of(2),
            Half::Odd => !query_id.is_multiple_of(2),
        }
    }
}

/// One query's outcome, for looking at what goes wrong.
#[derive(Debug, Clone, Serialize)]
pub struct QueryDetail {
    pub subset: String,
    pub query_id: u64,
    pub query: String,
    pub ndcg5: f64,
    pub relevant: Vec<(String, String)>,
    pub ranked: Vec<(String, String)>,
}

/// Metrics per subset and `overall`, for our retriever and the BM25 baseline.
#[derive(Debug, Clone, Serialize)]
pub struct EvalReport {
    pub ours: BTreeMap<String, super::Metrics>,
    pub bm25: BTreeMap<String, super::Metrics>,
    /// Our retriever's ranking of every scored query (not part of the JSON report).
    #[serde(skip)]
    pub details: Vec<QueryDetail>,
}

/// Scores both retrievers on every subset of `data`. Queries without relevant APIs are skipped.
pub fn evaluate(
    data: &DataDir,
    ours: &Retriever,
    bm25: &Bm25Baseline,
    half: Half,
) -> Result<EvalReport, RetrieveError> {
    let mut all = [MetricsSum::default(), MetricsSum::default()];
    let mut report = EvalReport {
        ours: BTreeMap::new(),
        bm25: BTreeMap::new(),
        details: Vec::new(),
    };
    for subset in data.subsets()? {
        let mut sums = [MetricsSum::default(), MetricsSum::default()];
        for q in data.queries(&subset)? {
            if !half.keeps(q.query_id) {
                continue;
            }
            let ranked = [
                pairs(&ours.search(&q.query, 10)?),
                pairs(&bm25.search(&q.query, 10)?),
            ];
            let relevant: HashSet<(String, String)> = q
                .relevant()
                .iter()
                .map(|[t, a]| (t.clone(), a.clone()))
                .collect();
            if relevant.is_empty() {
                continue;
            }
            for (sum, hits) in sums.iter_mut().zip(&ranked) {
                sum.add(hits, &relevant);
            }
            let [ours_ranked, _] = ranked;
            report.details.push(QueryDetail {
                subset: subset.clone(),
                query_id: q.query_id,
                query: q.query.clone(),
                ndcg5: 100.0 * ndcg_at(&ours_ranked, &relevant, 5),
                relevant: q
                    .relevant()
                    .iter()
                    .map(|[t, a]| (t.clone(), a.clone()))
                    .collect(),
                ranked: ours_ranked,
            });
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

    /// Queries whose NDCG@5 is below `below`, worst first: the relevant APIs (`*` when in our top 5)
    /// and our top 5 (`+` when relevant).
    pub fn misses(&self, below: f64) -> String {
        let mut bad: Vec<&QueryDetail> = self.details.iter().filter(|d| d.ndcg5 < below).collect();
        bad.sort_by(|a, b| a.ndcg5.total_cmp(&b.ndcg5));
        let mut out = String::new();
        for d in bad {
            out.push_str(&format!(
                "[{} {}] ndcg@5 {:.1}: {}\n",
                d.subset, d.query_id, d.ndcg5, d.query
            ));
            let top: Vec<&(String, String)> = d.ranked.iter().take(5).collect();
            for r in &d.relevant {
                let mark = if top.contains(&r) { '*' } else { ' ' };
                out.push_str(&format!("   want{mark} {} / {}\n", r.0, r.1));
            }
            for r in top {
                let mark = if d.relevant.contains(r) { '+' } else { ' ' };
                out.push_str(&format!("   got{mark}  {} / {}\n", r.0, r.1));
            }
        }
        out
    }
}
