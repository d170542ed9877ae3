//! Term scoring: each query term's weighted BM25 contribution to every API and tool, and the
//! per-text sums ([`Relevance`]) that the search ranks by.

use std::collections::HashMap;
use std::rc::Rc;

use super::{DocField, RetrieveError, Retriever};

/// `x` relative to `max` (0 when nothing matched).
pub(super) fn relative(x: f32, max: f32) -> f32 {
    if max > 0.0 { x / max } else { 0.0 }
}

/// One query term's weighted BM25 contribution to each API and to each tool, by document number.
pub(super) struct TermHits {
    pub(super) api: Vec<(u32, f32)>,
    pub(super) tool: Vec<(u32, f32)>,
}

impl TermHits {
    pub(super) fn api_score(&self, d: u32) -> f32 {
        self.api
            .binary_search_by_key(&d, |&(x, _)| x)
            .map_or(0.0, |i| self.api[i].1)
    }
}

pub(super) struct TermScorer<'a> {
    retriever: &'a Retriever,
    apis: tantivy::Searcher,
    tools: tantivy::Searcher,
}

/// Per document: the sum over fields and the best field.
#[derive(Default)]
struct FieldScores {
    sum_max: HashMap<u32, (f32, f32)>,
}

impl FieldScores {
    fn add(&mut self, d: u32, x: f32) {
        let e = self.sum_max.entry(d).or_insert((0.0, 0.0));
        e.0 += x;
        e.1 = e.1.max(x);
    }

    /// The best field fully, the others by `tie`, sorted by document.
    fn combine(self, tie: f32) -> Vec<(u32, f32)> {
        let mut out: Vec<(u32, f32)> = self
            .sum_max
            .into_iter()
            .map(|(d, (sum, max))| (d, max + tie * (sum - max)))
            .collect();
        out.sort_by_key(|&(d, _)| d);
        out
    }
}

impl<'a> TermScorer<'a> {
    pub(super) fn new(retriever: &'a Retriever) -> Self {
        TermScorer {
            retriever,
            apis: retriever.apis.searcher(),
            tools: retriever.tools.searcher(),
        }
    }

    pub(super) fn hits(
        &self,
        key: &(String, bool),
        cache: &mut HashMap<(String, bool), Rc<TermHits>>,
    ) -> Result<Rc<TermHits>, RetrieveError> {
        if let Some(h) = cache.get(key) {
            return Ok(h.clone());
        }
        let r = self.retriever;
        let w = &r.weights;
        let (term, is_pair) = (&key.0, key.1);
        let mut api = FieldScores::default();
        let mut tool = FieldScores::default();
        if is_pair {
            let f = DocField::ALL.len();
            r.apis
                .for_each_score(&self.apis, f, term, w.api_pairs, |d, x| api.add(d, x))?;
            r.tools
                .for_each_score(&self.tools, f, term, w.tool_pairs, |d, x| tool.add(d, x))?;
        } else {
            // The best field counts fully, the others by the tie factor, so a common word
            // repeated across a document's fields cannot outweigh a rare word found in one.
            for (f, (&ba, &bt)) in w.api_fields.iter().zip(&w.tool_fields).enumerate() {
                r.apis
                    .for_each_score(&self.apis, f, term, ba, |d, x| api.add(d, x))?;
                r.tools
                    .for_each_score(&self.tools, f, term, bt, |d, x| tool.add(d, x))?;
            }
        }
        let h = Rc::new(TermHits {
            api: api.combine(w.field_tie),
            tool: tool.combine(w.field_tie),
        });
        cache.insert(key.clone(), h.clone());
        Ok(h)
    }
}

/// Summed API and tool scores of a text (dense, by document number), with their maxima for
/// normalising.
pub(super) struct Relevance {
    pub(super) api: Vec<f32>,
    pub(super) tool: Vec<f32>,
    pub(super) max_api: f32,
    max_tool: f32,
    tool_weight: f32,
    /// Dense relevance per API (empty: none) and its weight.
    pub(super) dense: Vec<f32>,
    pub(super) dense_weight: f32,
}

impl Relevance {
    pub(super) fn new(apis: usize, tools: usize, tool_weight: f32) -> Self {
        Relevance {
            api: vec![0.0; apis],
            tool: vec![0.0; tools],
            max_api: 0.0,
            max_tool: 0.0,
            tool_weight,
            dense: Vec::new(),
            dense_weight: 0.0,
        }
    }

    pub(super) fn add(&mut self, hits: &TermHits) {
        for (out, part) in [(&mut self.api, &hits.api), (&mut self.tool, &hits.tool)] {
            for &(d, x) in part {
                if let Some(v) = out.get_mut(d as usize) {
                    *v += x;
                }
            }
        }
    }

    pub(super) fn finish(&mut self) {
        self.max_api = self.api.iter().copied().fold(0.0f32, f32::max);
        self.max_tool = self.tool.iter().copied().fold(0.0f32, f32::max);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.max_api <= 0.0 && self.max_tool <= 0.0 && !self.dense.iter().any(|&x| x > 0.0)
    }

    pub(super) fn tool_part(&self, tool: u32) -> f32 {
        let x = self.tool.get(tool as usize).copied().unwrap_or(0.0);
        self.tool_weight * relative(x, self.max_tool)
    }

    /// Own score plus weighted tool and dense scores, each relative to the best
    /// (0 ..= 1 + tool weight + dense weight).
    pub(super) fn score(&self, api: u32, tool: u32) -> f32 {
        let x = self.api.get(api as usize).copied().unwrap_or(0.0);
        let dense = self.dense.get(api as usize).copied().unwrap_or(0.0);
        relative(x, self.max_api) + self.tool_part(tool) + self.dense_weight * dense
    }
}
