//! The reference point every retrieval number is compared with: plain BM25 over one field holding
//! tool name, API name and API description, lower-cased words, no stemming, no expansion.

use std::collections::{HashMap, HashSet};

use super::index::{TermIndex, TokenDoc};
use super::tokenize::simple_terms;
use super::{Hit, RetrieveError};
use sum2act_core::toolbench::Catalog;

pub struct Bm25Baseline {
    entries: Vec<(String, String, String)>,
    index: TermIndex,
}

impl Bm25Baseline {
    pub fn build(catalog: &Catalog) -> Result<Self, RetrieveError> {
        let mut entries = Vec::new();
        let mut docs: Vec<TokenDoc> = Vec::new();
        for tool in catalog.tools() {
            for api in &tool.file.api_list {
                let text = format!("{} {} {}", tool.file.tool_name, api.name, api.description);
                docs.push(vec![simple_terms(&text)]);
                entries.push((
                    tool.category.clone(),
                    tool.file.tool_name.clone(),
                    api.name.clone(),
                ));
            }
        }
        let index = TermIndex::build(&["text"], &docs, None)?;
        Ok(Bm25Baseline { entries, index })
    }

    /// Top-k APIs by BM25 (a query word counted as often as it occurs).
    pub fn search(&self, instruction: &str, k: usize) -> Result<Vec<Hit>, RetrieveError> {
        let mut counts: HashMap<String, f32> = HashMap::new();
        for t in simple_terms(instruction) {
            *counts.entry(t).or_insert(0.0) += 1.0;
        }
        let searcher = self.index.searcher();
        let mut scores = HashMap::new();
        for (term, n) in &counts {
            self.index.score_term(&searcher, 0, term, *n, &mut scores)?;
        }
        let mut ranked: Vec<(u32, f32)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut seen = HashSet::new();
        let mut hits = Vec::with_capacity(k);
        for (d, score) in ranked {
            if hits.len() >= k {
                break;
            }
            let Some((category, tool, api)) = self.entries.get(d as usize) else {
                continue;
            };
            if seen.insert((tool.clone(), api.clone())) {
                hits.push(Hit {
                    category: category.clone(),
                    tool_name: tool.clone(),
                    api_name: api.clone(),
                    score,
                });
            }
        }
        Ok(hits)
    }
}
