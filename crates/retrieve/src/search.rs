//! [`Retriever::search`] in four phases: the request's relevance (whole and per intent), a
//! shortlist of candidates, and a greedy pick in which each choice changes what the next needs.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::score::{Relevance, TermHits, TermScorer, relative};
use super::{Hit, RetrieveError, Retriever, Weights, intent};
use sum2act_core::agent::toolset::{RankedApi, ToolSearch};

/// Term hits already looked up for this request, by (term, is word pair).
type HitCache = HashMap<(String, bool), Rc<TermHits>>;

/// What one request asks for.
struct Query {
    whole: Relevance,
    /// The whole request's terms that match some API (the coverage discounts them one by one).
    api_terms: Vec<Rc<TermHits>>,
    /// Each intent's weight and relevance (empty: the request is not split).
    intents: Vec<(f32, Relevance)>,
    /// Dense relevance of the whole request per API (empty: no encoder).
    dense: Vec<f32>,
}

impl Query {
    fn dense_of(&self, w: &Weights, d: u32) -> f32 {
        w.dense_weight * self.dense.get(d as usize).copied().unwrap_or(0.0)
    }
}

/// Best score first, then the lower document number.
fn by_score(a: &(u32, f32), b: &(u32, f32)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

impl Retriever {
    /// Top-k APIs for an instruction, best first. (tool, API) pairs listed under several categories
    /// are returned once.
    pub fn search(&self, instruction: &str, k: usize) -> Result<Vec<Hit>, RetrieveError> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let Some(query) = self.query(instruction)? else {
            return Ok(Vec::new());
        };
        let chosen = self.shortlist(&query, k);
        Ok(self.pick(&query, &chosen, k))
    }

    /// Phase 1: the request's relevance, whole and per intent; `None` when nothing matches.
    fn query(&self, instruction: &str) -> Result<Option<Query>, RetrieveError> {
        let w = &self.weights;
        let scorer = TermScorer::new(self);
        let mut cache = HitCache::new();
        let parts = intent::split_intents(instruction);
        let by_intent = w.intent_weight > 0.0 && parts.len() > 1;
        // Dense relevance of the whole request and of each intent, encoded in one go.
        let mut dense_parts = match &self.dense {
            Some(d) => {
                let mut texts = vec![instruction];
                if by_intent && w.intent_dense_weight > 0.0 {
                    texts.extend(parts.iter().map(|p| p.text.as_str()));
                }
                d.relevance(&texts)?.into_iter()
            }
            None => Vec::new().into_iter(),
        };
        let dense = dense_parts.next().unwrap_or_default();
        // The whole instruction, term by term (the coverage discounts terms one by one).
        let mut api_terms: Vec<Rc<TermHits>> = Vec::new();
        let mut whole = self.relevance();
        for key in &self.term_keys(instruction) {
            let hits = scorer.hits(key, &mut cache)?;
            whole.add(&hits);
            if !hits.api.is_empty() {
                api_terms.push(hits);
            }
        }
        whole.finish();
        if whole.is_empty() && self.dense.is_none() {
            return Ok(None);
        }
        let mut intents = Vec::new();
        if by_intent {
            intents = self.intents(&scorer, &parts, &mut dense_parts, &mut cache)?;
        }
        Ok(Some(Query {
            whole,
            api_terms,
            intents,
            dense,
        }))
    }

    fn relevance(&self) -> Relevance {
        Relevance::new(
            self.entries.len(),
            self.tool_apis.len(),
            self.weights.tool_weight,
        )
    }

    /// Each intent on its own, normalised by its own best, so a request served by weaker
    /// matches still gets its best API into the list.
    fn intents(
        &self,
        scorer: &TermScorer,
        parts: &[intent::Intent],
        dense_parts: &mut impl Iterator<Item = Vec<f32>>,
        cache: &mut HitCache,
    ) -> Result<Vec<(f32, Relevance)>, RetrieveError> {
        let w = &self.weights;
        let mut intents = Vec::new();
        for part in parts {
            let mut r = self.relevance();
            for key in self.term_keys(&part.text) {
                let hits = scorer.hits(&key, cache)?;
                r.add(&hits);
            }
            r.finish();
            if let Some(d) = dense_parts.next() {
                r.dense = d;
                r.dense_weight = w.intent_dense_weight;
            }
            if !r.is_empty() {
                let weight = if part.context { w.context_weight } else { 1.0 };
                intents.push((weight, r));
            }
        }
        Ok(intents)
    }

    fn score_in(&self, r: &Relevance, d: u32) -> f32 {
        r.score(d, self.entries[d as usize].tool)
    }

    /// Phase 2: candidates are APIs that match, every API of a matching tool, and the nearest by
    /// meaning.
    fn candidates(&self, q: &Query) -> Vec<u32> {
        let mut is_candidate: Vec<bool> = q
            .whole
            .api
            .iter()
            .enumerate()
            .map(|(d, &x)| x > 0.0 || q.dense.get(d).is_some_and(|&y| y > 0.0))
            .collect();
        for (t, _) in q.whole.tool.iter().enumerate().filter(|(_, x)| **x > 0.0) {
            for &d in &self.tool_apis[t] {
                is_candidate[d as usize] = true;
            }
        }
        (0..is_candidate.len() as u32)
            .filter(|&d| is_candidate[d as usize])
            .collect()
    }

    /// Phase 3: the best candidates for the whole request, joined by each intent's own best.
    fn shortlist(&self, q: &Query, k: usize) -> Vec<u32> {
        let candidates = self.candidates(q);
        let mut ranked: Vec<(u32, f32)> = candidates
            .iter()
            .map(|&d| (d, self.score_in(&q.whole, d) + q.dense_of(&self.weights, d)))
            .collect();
        ranked.sort_by(by_score);
        let shortlist = (4 * k).max(100);
        let mut chosen: Vec<u32> = ranked.iter().take(shortlist).map(|(d, _)| *d).collect();
        for (_, r) in &q.intents {
            let mut own: Vec<(u32, f32)> = candidates
                .iter()
                .map(|&d| (d, self.score_in(r, d)))
                .collect();
            let n = k.max(10).min(own.len());
            if n < own.len() {
                own.select_nth_unstable_by(n, by_score);
            }
            own[..n].sort_by(by_score);
            for &(d, _) in &own[..n] {
                if !chosen.contains(&d) {
                    chosen.push(d);
                }
            }
        }
        chosen
    }

    /// Phase 4: greedy coverage over the shortlist; each (tool, API) pair is emitted once.
    fn pick(&self, q: &Query, chosen: &[u32], k: usize) -> Vec<Hit> {
        let mut cover = Coverage::new(self, q, chosen);
        let mut emitted = HashSet::new();
        let mut hits = Vec::with_capacity(k);
        while hits.len() < k {
            let Some((c, score)) = cover.best() else {
                break;
            };
            // The category bonus can lift a later pick above an earlier one; the printed scores
            // follow the rank.
            let score = hits.last().map_or(score, |h: &Hit| score.min(h.score));
            let e = cover.take(c);
            if emitted.insert((e.tool_name.clone(), e.api_name.clone())) {
                hits.push(Hit {
                    category: e.category.clone(),
                    tool_name: e.tool_name.clone(),
                    api_name: e.api_name.clone(),
                    score,
                });
            }
        }
        hits
    }
}

/// The greedy pick's state: what each shortlisted API offers and what the request still needs.
struct Coverage<'a> {
    retriever: &'a Retriever,
    query: &'a Query,
    chosen: &'a [u32],
    /// Per candidate and matching term: its normalised term score.
    matrix: Vec<Vec<f32>>,
    tool_parts: Vec<f32>,
    /// Per candidate and intent: how well it serves the intent, 0..1.
    serves: Vec<Vec<f32>>,
    term_weight: Vec<f32>,
    unserved: Vec<f32>,
    intent_total: f32,
    picked_cats: HashSet<u32>,
    taken: Vec<bool>,
}

impl<'a> Coverage<'a> {
    fn new(retriever: &'a Retriever, query: &'a Query, chosen: &'a [u32]) -> Self {
        let w = &retriever.weights;
        let matrix = chosen
            .iter()
            .map(|d| {
                query
                    .api_terms
                    .iter()
                    .map(|m| relative(m.api_score(*d), query.whole.max_api))
                    .collect()
            })
            .collect();
        let tool_parts = chosen
            .iter()
            .map(|&d| query.whole.tool_part(retriever.entries[d as usize].tool))
            .collect();
        let serves = chosen
            .iter()
            .map(|&d| {
                query
                    .intents
                    .iter()
                    .map(|(_, r)| retriever.score_in(r, d) / (1.0 + w.tool_weight + r.dense_weight))
                    .collect()
            })
            .collect();
        Coverage {
            retriever,
            query,
            chosen,
            matrix,
            tool_parts,
            serves,
            term_weight: vec![1.0; query.api_terms.len()],
            unserved: vec![1.0; query.intents.len()],
            intent_total: query.intents.iter().map(|(x, _)| x).sum(),
            picked_cats: HashSet::new(),
            taken: vec![false; chosen.len()],
        }
    }

    /// What candidate `c` would add now: its uncovered terms, tool, meaning, category and the
    /// intents still unserved.
    fn gain(&self, c: usize) -> f32 {
        let w = &self.retriever.weights;
        let d = self.chosen[c];
        let mut s: f32 = self.matrix[c]
            .iter()
            .zip(&self.term_weight)
            .map(|(x, tw)| x * tw)
            .sum::<f32>()
            + self.tool_parts[c];
        s += self.query.dense_of(w, d);
        if self
            .picked_cats
            .contains(&self.retriever.entries[d as usize].cat)
        {
            s += w.category_bonus;
        }
        if self.intent_total > 0.0 {
            let gain: f32 = self.serves[c]
                .iter()
                .zip(&self.unserved)
                .zip(&self.query.intents)
                .map(|((x, u), (iw, _))| iw * x * u)
                .sum();
            s += w.intent_weight * gain / self.intent_total;
        }
        s
    }

    /// The untaken candidate with the highest gain (the first on ties), and its gain.
    fn best(&self) -> Option<(usize, f32)> {
        let mut best: Option<(usize, f32)> = None;
        for c in (0..self.chosen.len()).filter(|&c| !self.taken[c]) {
            let s = self.gain(c);
            if best.is_none_or(|(_, bs)| s > bs) {
                best = Some((c, s));
            }
        }
        best
    }

    /// Takes candidate `c`: its terms and intents count less from now on, its category earns the
    /// bonus. Returns its entry.
    fn take(&mut self, c: usize) -> &'a super::retriever::Entry {
        let w = &self.retriever.weights;
        self.taken[c] = true;
        for (tw, x) in self.term_weight.iter_mut().zip(&self.matrix[c]) {
            if *x > 0.0 {
                *tw *= w.coverage_discount;
            }
        }
        for (u, x) in self.unserved.iter_mut().zip(&self.serves[c]) {
            *u *= 1.0 - w.intent_discount * x;
        }
        let e = &self.retriever.entries[self.chosen[c] as usize];
        self.picked_cats.insert(e.cat);
        e
    }
}

impl ToolSearch for Retriever {
    fn top_k(&self, instruction: &str, k: usize) -> Result<Vec<RankedApi>, String> {
        let hits = self.search(instruction, k).map_err(|e| e.to_string())?;
        Ok(hits
            .into_iter()
            .map(|h| RankedApi {
                category: h.category,
                tool_name: h.tool_name,
                api_name: h.api_name,
            })
            .collect())
    }
}
