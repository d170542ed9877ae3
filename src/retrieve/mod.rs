//! API retrieval over a tool catalogue: which APIs an instruction needs, best first.
//!
//! Two tantivy indices, both over expanded, pre-tokenized text ([`doc`], [`tokenize`]): one document
//! per API and one per tool (all its APIs together). A query term scores a document by its best
//! field plus a small share of its other fields (so a common word repeated across a document's
//! fields cannot outweigh a rare one). An API's score is its own score plus its tool's, each
//! normalised by the query's best, so a tool that matches several parts of a multi-part request
//! lifts all its APIs. The list is then picked greedily, and each pick changes what the next
//! needs: the query terms it matched count less, each intent of the request ([`intent`]) that it
//! serves asks for less, and its category earns a small bonus. So the next picks cover the
//! request's other intents instead of repeating the first one through competing tools.
//!
//! Optionally ([`dense`], [`minilm`]) a sentence encoder adds meaning-level similarity to the
//! request's and each intent's scores, for paraphrases no word of the catalogue matches.

mod baseline;
pub mod dense;
mod doc;
mod eval;
pub mod examples;
mod index;
pub mod intent;
mod metrics;
pub mod minilm;
pub mod tokenize;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::toolbench::io::write_json_atomic;
use crate::toolbench::{Catalog, DataError};

pub use baseline::Bm25Baseline;
pub use doc::{ApiText, DocField};
pub use eval::{EvalReport, Half, QueryDetail, evaluate};
pub use index::TermIndex;
pub use metrics::{Metrics, MetricsSum, ndcg_at, recall_at};
use tokenize::Analyzer;

/// Bumped whenever analysis or the index layout changes, so cached indices are rebuilt.
const INDEX_VERSION: u32 = 3;

#[derive(Debug, thiserror::Error)]
pub enum RetrieveError {
    #[error("search index: {0}")]
    Index(#[from] tantivy::TantivyError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Data(#[from] DataError),
    #[error("{0}")]
    BadInput(String),
}

impl RetrieveError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        RetrieveError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// One retrieved API, with the catalogue's original names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub category: String,
    pub tool_name: String,
    pub api_name: String,
    pub score: f32,
}

/// Ranking weights. The defaults were chosen by coordinate search on the development queries in
/// `../shared/toolbench` with an even `query_id` (the odd ones are held out; see the README).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Weights {
    /// Boost per [`DocField`] (in `DocField::ALL` order) in the API index.
    pub api_fields: [f32; 9],
    /// Boost per [`DocField`] in the tool index.
    pub tool_fields: [f32; 9],
    pub api_pairs: f32,
    pub tool_pairs: f32,
    pub tool_weight: f32,
    pub coverage_discount: f32,
    /// Weight of the per-intent coverage term (0: intents are not split).
    pub intent_weight: f32,
    /// How much of an intent's demand an API serving it fully uses up (0..1).
    pub intent_discount: f32,
    /// Weight of a scene-setting opening sentence relative to a request.
    pub context_weight: f32,
    /// How much a term's match in a document's other fields adds to its best field (1: sum).
    pub field_tie: f32,
    /// Bonus for an API in the category of an API already picked: ToolBench's multi-API
    /// requests mostly stay within one category.
    pub category_bonus: f32,
    /// Weight of the whole request's dense relevance (with an encoder configured). The two dense
    /// weights come from a small grid on all development queries; one vector for a multi-part
    /// request favours one part, so the whole-request weight stays small.
    pub dense_weight: f32,
    /// Weight of each intent's own dense relevance (with an encoder configured).
    pub intent_dense_weight: f32,
}

impl Default for Weights {
    fn default() -> Self {
        // category, tool name, tool description, API name, API description, parameter names,
        // parameter descriptions, parameter defaults, response fields
        Weights {
            api_fields: [0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 1.0, 0.3],
            tool_fields: [1.0, 1.0, 1.0, 2.0, 1.0, 0.5, 0.5, 0.5, 0.3],
            api_pairs: 0.375,
            tool_pairs: 0.5,
            tool_weight: 1.5,
            coverage_discount: 0.7,
            intent_weight: 1.0,
            intent_discount: 0.8,
            context_weight: 0.3,
            field_tie: 0.1,
            category_bonus: 0.2,
            dense_weight: 0.3,
            intent_dense_weight: 2.0,
        }
    }
}

/// How to build the retriever.
#[derive(Clone, Default)]
pub struct RetrieveOptions {
    /// A sentence encoder for dense relevance (hybrid ranking); `None`: lexical only.
    pub encoder: Option<std::sync::Arc<dyn dense::TextEncoder>>,
    /// Told how many sentences are about to be embedded when no cached embeddings fit (slow on a CPU),
    /// so a command can say why it is waiting.
    pub on_embed: Option<std::sync::Arc<dyn Fn(usize) + Send + Sync>>,
    /// Folder of cached indices (one sub-folder per catalogue fingerprint). `None`: in memory only.
    pub index_dir: Option<PathBuf>,
    /// Write the index to `index_dir` when no up-to-date one is there (else build in memory).
    pub write: bool,
    /// LLM-written example requests per API, indexed with the API's description and embedded
    /// one by one.
    pub examples: Option<std::sync::Arc<examples::ExampleRequests>>,
    pub weights: Weights,
}

/// Where an index came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexSource {
    Memory,
    Built,
    Cached,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    fingerprint: String,
    apis: usize,
    tools: usize,
}

#[derive(Debug, Clone)]
struct Entry {
    category: String,
    tool_name: String,
    api_name: String,
    tool: u32,
    /// Category number, for the coherence bonus.
    cat: u32,
}

/// The API retriever (see the module doc for the ranking).
pub struct Retriever {
    entries: Vec<Entry>,
    /// APIs of each tool, by tool position.
    tool_apis: Vec<Vec<u32>>,
    apis: TermIndex,
    tools: TermIndex,
    analyzer: Analyzer,
    weights: Weights,
    source: IndexSource,
    location: Option<PathBuf>,
    dense: Option<dense::DenseIndex>,
}

const PAIRS: &str = "name_pairs";

fn field_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = DocField::ALL.iter().map(|f| f.name()).collect();
    names.push(PAIRS);
    names
}

/// A hash of everything the index is built from.
pub fn fingerprint(catalog: &Catalog, examples: Option<&examples::ExampleRequests>) -> String {
    let mut h = Sha256::new();
    h.update(INDEX_VERSION.to_le_bytes());
    if let Some(e) = examples {
        h.update(e.digest().as_bytes());
    }
    for t in catalog.tools() {
        h.update(t.category.as_bytes());
        h.update([0]);
        h.update(t.standard_name.as_bytes());
        h.update([0]);
        h.update(serde_json::to_vec(&t.file).unwrap_or_default());
        h.update([0]);
    }
    hex::encode(h.finalize())
}

impl Retriever {
    /// Builds the index for a catalogue, or opens a cached, up-to-date one from `options.index_dir`.
    pub fn build(catalog: &Catalog, options: &RetrieveOptions) -> Result<Self, RetrieveError> {
        let analyzer = Analyzer::default();
        let mut entries = Vec::with_capacity(catalog.api_count());
        let mut tool_apis = Vec::with_capacity(catalog.tool_count());
        let mut texts = Vec::with_capacity(catalog.api_count());
        let mut sentences = Vec::with_capacity(catalog.api_count());
        let mut cats: HashMap<&str, u32> = HashMap::new();
        for (ti, tool) in catalog.tools().iter().enumerate() {
            let next = cats.len() as u32;
            let cat = *cats.entry(tool.category.as_str()).or_insert(next);
            let mut ids = Vec::new();
            for api in &tool.file.api_list {
                ids.push(entries.len() as u32);
                entries.push(Entry {
                    category: tool.category.clone(),
                    tool_name: tool.file.tool_name.clone(),
                    api_name: api.name.clone(),
                    tool: ti as u32,
                    cat,
                });
                let examples = options
                    .examples
                    .as_ref()
                    .map_or(&[][..], |e| e.for_api(tool, api));
                texts.push(ApiText::of(tool, api, examples));
                sentences.push(dense::api_texts(tool, api, examples));
            }
            tool_apis.push(ids);
        }
        let names = field_names();
        let (apis, tools, source, location) = match &options.index_dir {
            Some(root) => {
                let fp = fingerprint(catalog, options.examples.as_deref());
                let dir = root.join(&fp[..16]);
                let manifest = Manifest {
                    version: INDEX_VERSION,
                    fingerprint: fp,
                    apis: entries.len(),
                    tools: tool_apis.len(),
                };
                if read_manifest(&dir).as_ref() == Some(&manifest) {
                    let apis = TermIndex::open(&names, &dir.join("apis"))?;
                    let tools = TermIndex::open(&names, &dir.join("tools"))?;
                    (apis, tools, IndexSource::Cached, Some(dir))
                } else if options.write {
                    write_index(&dir, &manifest, &analyzer, &texts, &tool_apis)?;
                    let apis = TermIndex::open(&names, &dir.join("apis"))?;
                    let tools = TermIndex::open(&names, &dir.join("tools"))?;
                    (apis, tools, IndexSource::Built, Some(dir))
                } else {
                    let (a, t) = build_in(None, &analyzer, &texts, &tool_apis)?;
                    (a, t, IndexSource::Memory, None)
                }
            }
            None => {
                let (a, t) = build_in(None, &analyzer, &texts, &tool_apis)?;
                (a, t, IndexSource::Memory, None)
            }
        };
        let dense = match &options.encoder {
            Some(e) => {
                let cache = options.index_dir.as_ref().map(|d| d.join("dense"));
                Some(dense::DenseIndex::build(
                    e.clone(),
                    &sentences,
                    cache.as_deref(),
                    options.on_embed.as_deref(),
                )?)
            }
            None => None,
        };
        Ok(Retriever {
            dense,
            entries,
            tool_apis,
            apis,
            tools,
            analyzer,
            weights: options.weights.clone(),
            source,
            location,
        })
    }

    pub fn api_count(&self) -> usize {
        self.entries.len()
    }

    pub fn tool_count(&self) -> usize {
        self.tool_apis.len()
    }

    /// Whether the index was built in memory, written now, or opened from the cache.
    pub fn source(&self) -> IndexSource {
        self.source
    }

    /// The on-disk folder of the index, when it has one.
    pub fn location(&self) -> Option<&Path> {
        self.location.as_deref()
    }

    /// Top-k APIs for an instruction, best first. (tool, API) pairs listed under several categories
    /// are returned once.
    pub fn search(&self, instruction: &str, k: usize) -> Result<Vec<Hit>, RetrieveError> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let w = &self.weights;
        let scorer = TermScorer::new(self);
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
        // The whole instruction, term by term (the coverage below discounts terms one by one).
        let whole_keys = self.term_keys(instruction);
        let mut api_terms: Vec<Rc<TermHits>> = Vec::new();
        let mut cache: HashMap<(String, bool), Rc<TermHits>> = HashMap::new();
        let mut whole = Relevance::new(self.entries.len(), self.tool_apis.len(), w.tool_weight);
        for key in &whole_keys {
            let hits = scorer.hits(key, &mut cache)?;
            whole.add(&hits);
            if !hits.api.is_empty() {
                api_terms.push(hits);
            }
        }
        whole.finish();
        if whole.is_empty() && self.dense.is_none() {
            return Ok(Vec::new());
        }
        // Each intent on its own, normalised by its own best, so a request served by weaker
        // matches still gets its best API into the list.
        let mut intents: Vec<(f32, Relevance)> = Vec::new();
        if by_intent {
            for part in &parts {
                let mut r = Relevance::new(self.entries.len(), self.tool_apis.len(), w.tool_weight);
                for key in self.term_keys(&part.text) {
                    let hits = scorer.hits(&key, &mut cache)?;
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
        }
        let intent_total: f32 = intents.iter().map(|(x, _)| x).sum();
        let dense_of = |d: u32| w.dense_weight * dense.get(d as usize).copied().unwrap_or(0.0);
        // Candidates: APIs that match, every API of a matching tool, and the nearest by meaning.
        let mut is_candidate: Vec<bool> = whole
            .api
            .iter()
            .enumerate()
            .map(|(d, &x)| x > 0.0 || dense.get(d).is_some_and(|&y| y > 0.0))
            .collect();
        for (t, _) in whole.tool.iter().enumerate().filter(|(_, x)| **x > 0.0) {
            for &d in &self.tool_apis[t] {
                is_candidate[d as usize] = true;
            }
        }
        let candidates: Vec<u32> = (0..is_candidate.len() as u32)
            .filter(|&d| is_candidate[d as usize])
            .collect();
        let score_of = |r: &Relevance, d: u32| r.score(d, self.entries[d as usize].tool);
        let mut ranked: Vec<(u32, f32)> = candidates
            .iter()
            .map(|&d| (d, score_of(&whole, d) + dense_of(d)))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let shortlist = (4 * k).max(100);
        let mut chosen: Vec<u32> = ranked.iter().take(shortlist).map(|(d, _)| *d).collect();
        // Each intent's own best APIs join the shortlist.
        for (_, r) in &intents {
            let mut own: Vec<(u32, f32)> =
                candidates.iter().map(|&d| (d, score_of(r, d))).collect();
            let n = k.max(10).min(own.len());
            let by_score = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
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
        // Greedy coverage over the shortlist.
        let matrix: Vec<Vec<f32>> = chosen
            .iter()
            .map(|d| {
                api_terms
                    .iter()
                    .map(|m| norm(m.api_score(*d), whole.max_api))
                    .collect()
            })
            .collect();
        let tool_parts: Vec<f32> = chosen
            .iter()
            .map(|&d| whole.tool_part(self.entries[d as usize].tool))
            .collect();
        // Per candidate and intent: how well it serves the intent, 0..1.
        let serves: Vec<Vec<f32>> = chosen
            .iter()
            .map(|&d| {
                intents
                    .iter()
                    .map(|(_, r)| score_of(r, d) / (1.0 + w.tool_weight + r.dense_weight))
                    .collect()
            })
            .collect();
        let mut term_weight = vec![1.0f32; api_terms.len()];
        let mut unserved = vec![1.0f32; intents.len()];
        let mut picked_cats: HashSet<u32> = HashSet::new();
        let mut taken = vec![false; chosen.len()];
        let mut emitted = HashSet::new();
        let mut hits = Vec::with_capacity(k);
        while hits.len() < k {
            let mut best: Option<(usize, f32)> = None;
            for (c, row) in matrix.iter().enumerate() {
                if taken[c] {
                    continue;
                }
                let mut s: f32 = row
                    .iter()
                    .zip(&term_weight)
                    .map(|(x, tw)| x * tw)
                    .sum::<f32>()
                    + tool_parts[c];
                s += dense_of(chosen[c]);
                if picked_cats.contains(&self.entries[chosen[c] as usize].cat) {
                    s += w.category_bonus;
                }
                if intent_total > 0.0 {
                    let gain: f32 = serves[c]
                        .iter()
                        .zip(&unserved)
                        .zip(&intents)
                        .map(|((x, u), (iw, _))| iw * x * u)
                        .sum();
                    s += w.intent_weight * gain / intent_total;
                }
                if best.is_none_or(|(_, bs)| s > bs) {
                    best = Some((c, s));
                }
            }
            let Some((c, score)) = best else { break };
            taken[c] = true;
            // The category bonus can lift a later pick above an earlier one; the printed scores
            // follow the rank.
            let score = hits.last().map_or(score, |h: &Hit| score.min(h.score));
            for (tw, x) in term_weight.iter_mut().zip(&matrix[c]) {
                if *x > 0.0 {
                    *tw *= w.coverage_discount;
                }
            }
            for (u, x) in unserved.iter_mut().zip(&serves[c]) {
                *u *= 1.0 - w.intent_discount * x;
            }
            let e = &self.entries[chosen[c] as usize];
            picked_cats.insert(e.cat);
            if emitted.insert((e.tool_name.clone(), e.api_name.clone())) {
                hits.push(Hit {
                    category: e.category.clone(),
                    tool_name: e.tool_name.clone(),
                    api_name: e.api_name.clone(),
                    score,
                });
            }
        }
        Ok(hits)
    }

    /// The query terms of a text and its word pairs, each once.
    fn term_keys(&self, text: &str) -> Vec<(String, bool)> {
        let mut seen = HashSet::new();
        let terms = self.analyzer.terms(text).into_iter().map(|t| (t, false));
        let pairs = self.analyzer.bigrams(text).into_iter().map(|t| (t, true));
        terms
            .chain(pairs)
            .filter(|k| seen.insert(k.clone()))
            .collect()
    }
}

/// Little-endian `f32`s, as safetensors files and the embedding cache store them.
fn le_f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn norm(x: f32, max: f32) -> f32 {
    if max > 0.0 { x / max } else { 0.0 }
}

/// One query term's weighted BM25 contribution to each API and to each tool, by document number.
struct TermHits {
    api: Vec<(u32, f32)>,
    tool: Vec<(u32, f32)>,
}

impl TermHits {
    fn api_score(&self, d: u32) -> f32 {
        self.api
            .binary_search_by_key(&d, |&(x, _)| x)
            .map_or(0.0, |i| self.api[i].1)
    }
}

struct TermScorer<'a> {
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
    fn new(retriever: &'a Retriever) -> Self {
        TermScorer {
            retriever,
            apis: retriever.apis.searcher(),
            tools: retriever.tools.searcher(),
        }
    }

    fn hits(
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
struct Relevance {
    api: Vec<f32>,
    tool: Vec<f32>,
    max_api: f32,
    max_tool: f32,
    tool_weight: f32,
    /// Dense relevance per API (empty: none) and its weight.
    dense: Vec<f32>,
    dense_weight: f32,
}

impl Relevance {
    fn new(apis: usize, tools: usize, tool_weight: f32) -> Self {
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

    fn add(&mut self, hits: &TermHits) {
        for (out, part) in [(&mut self.api, &hits.api), (&mut self.tool, &hits.tool)] {
            for &(d, x) in part {
                if let Some(v) = out.get_mut(d as usize) {
                    *v += x;
                }
            }
        }
    }

    fn finish(&mut self) {
        self.max_api = self.api.iter().copied().fold(0.0f32, f32::max);
        self.max_tool = self.tool.iter().copied().fold(0.0f32, f32::max);
    }

    fn is_empty(&self) -> bool {
        self.max_api <= 0.0 && self.max_tool <= 0.0 && !self.dense.iter().any(|&x| x > 0.0)
    }

    fn tool_part(&self, tool: u32) -> f32 {
        let x = self.tool.get(tool as usize).copied().unwrap_or(0.0);
        self.tool_weight * norm(x, self.max_tool)
    }

    /// Own score plus weighted tool and dense scores, each relative to the best
    /// (0 ..= 1 + tool weight + dense weight).
    fn score(&self, api: u32, tool: u32) -> f32 {
        let x = self.api.get(api as usize).copied().unwrap_or(0.0);
        let dense = self.dense.get(api as usize).copied().unwrap_or(0.0);
        norm(x, self.max_api) + self.tool_part(tool) + self.dense_weight * dense
    }
}

/// Token documents for the API and tool indices.
fn token_docs(
    analyzer: &Analyzer,
    texts: &[ApiText],
    tool_apis: &[Vec<u32>],
) -> (Vec<index::TokenDoc>, Vec<index::TokenDoc>) {
    let api_docs: Vec<index::TokenDoc> = texts
        .iter()
        .map(|t| {
            let mut doc: index::TokenDoc = DocField::ALL
                .iter()
                .map(|f| analyzer.terms(t.get(*f)))
                .collect();
            doc.push(analyzer.bigrams(&t.names));
            doc
        })
        .collect();
    let tool_docs = tool_apis
        .iter()
        .map(|ids| {
            let mut doc: index::TokenDoc = vec![Vec::new(); DocField::ALL.len() + 1];
            for (n, &i) in ids.iter().enumerate() {
                let api = &api_docs[i as usize];
                for (f, field) in DocField::ALL.iter().enumerate() {
                    // Category and tool fields are the same for every API: count them once.
                    let once = matches!(
                        field,
                        DocField::Category | DocField::ToolName | DocField::ToolDescription
                    );
                    if !once || n == 0 {
                        doc[f].extend(api[f].iter().cloned());
                    }
                }
            }
            if let Some(&first) = ids.first() {
                let tool_name = texts[first as usize].get(DocField::ToolName);
                doc[DocField::ALL.len()] = analyzer.bigrams(tool_name);
            }
            doc
        })
        .collect();
    (api_docs, tool_docs)
}

fn build_in(
    dir: Option<&Path>,
    analyzer: &Analyzer,
    texts: &[ApiText],
    tool_apis: &[Vec<u32>],
) -> Result<(TermIndex, TermIndex), RetrieveError> {
    let names = field_names();
    let (api_docs, tool_docs) = token_docs(analyzer, texts, tool_apis);
    let (api_dir, tool_dir) = match dir {
        Some(d) => (Some(d.join("apis")), Some(d.join("tools"))),
        None => (None, None),
    };
    for d in api_dir.iter().chain(&tool_dir) {
        std::fs::create_dir_all(d).map_err(|e| RetrieveError::io(d, e))?;
    }
    let apis = TermIndex::build(&names, &api_docs, api_dir.as_deref())?;
    let tools = TermIndex::build(&names, &tool_docs, tool_dir.as_deref())?;
    Ok((apis, tools))
}

fn read_manifest(dir: &Path) -> Option<Manifest> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Builds into a temporary sibling folder, then renames it into place, so a crash never leaves a
/// half-written index behind a valid manifest.
fn write_index(
    dir: &Path,
    manifest: &Manifest,
    analyzer: &Analyzer,
    texts: &[ApiText],
    tool_apis: &[Vec<u32>],
) -> Result<(), RetrieveError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| RetrieveError::io(parent, e))?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = parent.join(format!(".{name}.{}.tmp", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| RetrieveError::io(&tmp, e))?;
    }
    build_in(Some(&tmp), analyzer, texts, tool_apis)?;
    write_json_atomic(&tmp.join("manifest.json"), manifest)?;
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| RetrieveError::io(dir, e))?;
    }
    std::fs::rename(&tmp, dir).map_err(|e| RetrieveError::io(dir, e))
}

/// The default folder of cached indices: `$SUM2ACT_INDEX_DIR`, else `$XDG_CACHE_HOME/sum2act/index`,
/// else `~/.cache/sum2act/index`.
pub fn default_index_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("SUM2ACT_INDEX_DIR") {
        return Some(PathBuf::from(d));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("sum2act").join("index"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolbench::{Tool, ToolFile};
    use serde_json::json;

    fn tool(category: &str, name: &str, apis: serde_json::Value) -> Tool {
        let file: ToolFile =
            serde_json::from_value(json!({"tool_name": name, "api_list": apis})).unwrap();
        Tool {
            category: category.into(),
            standard_name: crate::toolbench::naming::standardize(name),
            file,
        }
    }

    fn api(name: &str, desc: &str, param: &str, default: &str) -> serde_json::Value {
        json!({"name": name, "description": desc, "required_parameters": [
            {"name": param, "type": "STRING", "description": "", "default": default}]})
    }

    fn catalog() -> Catalog {
        Catalog::from_tools([
            tool(
                "Data",
                "TheClique",
                json!([
                    api("Transfermarkt search", "Search by name", "name", "messi"),
                    api("Songkick concert", "Concert info", "id_conc", "lumineers"),
                ]),
            ),
            tool(
                "Email",
                "Temp Mail",
                json!([
                    api("Read Inbox", "Read inbox messages", "email", "a@b.c"),
                    api("Create Mailbox", "New temporary mailbox", "domain", "x.com"),
                ]),
            ),
            tool(
                "Email",
                "Email Validator",
                json!([api("validateEmail", "Check an email address", "email", "")]),
            ),
            tool(
                "Email",
                "Mail Checker",
                json!([api("check mail", "Validate email address", "email", "")]),
            ),
            tool(
                "Weather",
                "WeatherNow",
                json!([api(
                    "currentForecast",
                    "Weather forecast for a city",
                    "city",
                    "Paris"
                )]),
            ),
            // The same tool under a second category, as in ToolBench.
            tool(
                "Other",
                "WeatherNow",
                json!([api(
                    "currentForecast",
                    "Weather forecast for a city",
                    "city",
                    "Paris"
                )]),
            ),
        ])
    }

    /// The dense half finds an API the words miss ("gig" never appears in the catalogue), while
    /// the lexical match stays first.
    #[test]
    fn dense_relevance_lifts_a_paraphrase_the_words_miss() {
        let concert = "TheClique: Songkick concert. Concert info";
        let encoder = dense::tests::Fixed::new(
            2,
            &[
                (concert, vec![1.0, 0.0]),
                ("Temp Mail: Read Inbox. Read inbox messages", vec![0.0, 1.0]),
                (
                    "Temp Mail: Create Mailbox. New temporary mailbox",
                    vec![0.0, 1.0],
                ),
                (
                    "Email Validator: validateEmail. Check an email address",
                    vec![0.0, 1.0],
                ),
                (
                    "Mail Checker: check mail. Validate email address",
                    vec![0.0, 1.0],
                ),
                ("which gig is on tonight and check my mail", vec![0.8, 0.6]),
                // Its two intents.
                ("which gig is on tonight", vec![1.0, 0.0]),
                ("check my mail", vec![0.0, 1.0]),
            ],
        );
        let query = "which gig is on tonight and check my mail";
        let lexical = Retriever::build(&catalog(), &RetrieveOptions::default()).unwrap();
        let hits = names(&lexical.search(query, 5).unwrap());
        assert!(
            !hits.contains(&pair("TheClique", "Songkick concert")),
            "{hits:?}"
        );
        let options = RetrieveOptions {
            encoder: Some(std::sync::Arc::new(encoder)),
            ..RetrieveOptions::default()
        };
        let hybrid = Retriever::build(&catalog(), &options).unwrap();
        assert_eq!(
            intent::split_intents(query).len(),
            2,
            "the test encoder covers both intents"
        );
        let hits = names(&hybrid.search(query, 5).unwrap());
        assert!(
            hits.contains(&pair("TheClique", "Songkick concert")),
            "{hits:?}"
        );
        assert_eq!(hits[0], pair("Mail Checker", "check mail"), "{hits:?}");
    }

    #[test]
    fn example_requests_bring_a_request_s_words_to_its_api() {
        let catalog = catalog();
        let query = "which gig is on tonight";
        let plain = Retriever::build(&catalog, &RetrieveOptions::default()).unwrap();
        let hits = names(&plain.search(query, 1).unwrap());
        assert_ne!(hits.first(), Some(&pair("TheClique", "Songkick concert")));
        let tool = catalog.tool("Data", "TheClique").unwrap();
        let line = examples::ExampleLine {
            tool: "TheClique".into(),
            api: "Songkick concert".into(),
            key: examples::api_key(tool, &tool.file.api_list[1]),
            requests: vec!["Is there a gig on tonight I could go to?".into()],
            model: "test".into(),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("examples.jsonl");
        std::fs::write(&path, serde_json::to_string(&line).unwrap()).unwrap();
        let loaded = examples::ExampleRequests::load(&path).unwrap();
        assert_ne!(
            fingerprint(&catalog, Some(&loaded)),
            fingerprint(&catalog, None)
        );
        let options = RetrieveOptions {
            examples: Some(std::sync::Arc::new(loaded)),
            ..RetrieveOptions::default()
        };
        let expanded = Retriever::build(&catalog, &options).unwrap();
        let hits = names(&expanded.search(query, 1).unwrap());
        assert_eq!(hits, [pair("TheClique", "Songkick concert")]);
    }

    fn names(hits: &[Hit]) -> Vec<(String, String)> {
        hits.iter()
            .map(|h| (h.tool_name.clone(), h.api_name.clone()))
            .collect()
    }

    fn pair(t: &str, a: &str) -> (String, String) {
        (t.to_string(), a.to_string())
    }

    #[test]
    fn camel_case_api_names_and_defaults_match() {
        let r = Retriever::build(&catalog(), &RetrieveOptions::default()).unwrap();
        let hits = r
            .search("What is the current forecast in Paris?", 3)
            .unwrap();
        assert_eq!(names(&hits)[0], pair("WeatherNow", "currentForecast"));
        let hits = r.search("Search transfermarkt for messi", 3).unwrap();
        assert_eq!(names(&hits)[0], pair("TheClique", "Transfermarkt search"));
    }

    #[test]
    fn duplicate_apis_across_categories_are_returned_once() {
        let r = Retriever::build(&catalog(), &RetrieveOptions::default()).unwrap();
        let hits = r.search("weather forecast", 10).unwrap();
        let n = names(&hits)
            .iter()
            .filter(|p| **p == pair("WeatherNow", "currentForecast"))
            .count();
        assert_eq!(n, 1);
    }

    #[test]
    fn every_intent_of_a_two_part_request_reaches_the_top() {
        let r = Retriever::build(&catalog(), &RetrieveOptions::default()).unwrap();
        let hits = r
            .search("Validate the email address of my friend. Also read inbox messages of my temp mail.", 3)
            .unwrap();
        let top = names(&hits);
        assert!(top.contains(&pair("Temp Mail", "Read Inbox")), "{top:?}");
        assert!(
            top.contains(&pair("Email Validator", "validateEmail"))
                || top.contains(&pair("Mail Checker", "check mail")),
            "{top:?}"
        );
    }

    #[test]
    fn scores_are_non_increasing_and_k_is_respected() {
        let r = Retriever::build(&catalog(), &RetrieveOptions::default()).unwrap();
        let hits = r.search("email mail inbox validate weather", 4).unwrap();
        assert_eq!(hits.len(), 4);
        assert!(
            hits.windows(2).all(|w| w[0].score >= w[1].score),
            "{hits:?}"
        );
        assert!(r.search("email", 0).unwrap().is_empty());
        assert!(r.search("zzzz qqqq", 5).unwrap().is_empty());
    }

    #[test]
    fn cached_index_is_reused_and_rebuilt_when_the_catalogue_changes() {
        let dir = tempfile::tempdir().unwrap();
        let options = RetrieveOptions {
            index_dir: Some(dir.path().to_path_buf()),
            write: true,
            ..RetrieveOptions::default()
        };
        let first = Retriever::build(&catalog(), &options).unwrap();
        assert_eq!(first.source(), IndexSource::Built);
        let again = Retriever::build(&catalog(), &options).unwrap();
        assert_eq!(again.source(), IndexSource::Cached);
        let q = "read inbox messages";
        assert_eq!(
            names(&first.search(q, 5).unwrap()),
            names(&again.search(q, 5).unwrap())
        );
        let mut tools = catalog().tools().to_vec();
        tools.truncate(2);
        let smaller = Catalog::from_tools(tools);
        let other = Retriever::build(&smaller, &options).unwrap();
        assert_eq!(other.source(), IndexSource::Built);
        assert_eq!(other.api_count(), 4);
    }

    #[test]
    fn baseline_ranks_by_plain_bm25() {
        let b = Bm25Baseline::build(&catalog()).unwrap();
        let hits = b.search("read inbox", 2).unwrap();
        assert_eq!(names(&hits)[0], pair("Temp Mail", "Read Inbox"));
    }

    fn with(weights: Weights) -> RetrieveOptions {
        RetrieveOptions {
            weights,
            ..RetrieveOptions::default()
        }
    }

    #[test]
    fn a_rare_word_in_one_field_beats_a_common_word_repeated_across_fields() {
        let location = |name: &str| {
            json!({"name": name, "description": "Location time zone for a location",
                "required_parameters": [{"name": "location", "type": "STRING",
                    "description": "location name", "default": ""}],
                "template_response": {"location": "str", "current": "str"}})
        };
        let mut tools = catalog().tools().to_vec();
        tools.push(tool(
            "Location",
            "World Time",
            json!([
                location("Timezone for Location"),
                location("Current time by location")
            ]),
        ));
        // "location" is a common word of the catalogue, "ISS" a rare one.
        for name in ["Geo Lookup", "Place Finder", "Maps Plus", "Address Book"] {
            tools.push(tool("Location", name, json!([location("Location search")])));
        }
        tools.push(tool(
            "Science",
            "ISS Tracker",
            json!([{"name": "get", "description": "gets you the data"}]),
        ));
        let catalog = Catalog::from_tools(tools);
        let q = "location of the ISS";
        let r = Retriever::build(&catalog, &RetrieveOptions::default()).unwrap();
        assert_eq!(
            names(&r.search(q, 3).unwrap())[0],
            pair("ISS Tracker", "get")
        );
        // Summing every field instead lets the repeated common word win.
        let summed = Weights {
            field_tie: 1.0,
            ..Weights::default()
        };
        let r = Retriever::build(&catalog, &with(summed)).unwrap();
        assert_ne!(
            names(&r.search(q, 3).unwrap())[0],
            pair("ISS Tracker", "get")
        );
    }

    /// A tool with many APIs matching one intent strongly, and a weak match for the other intent.
    fn crowded_catalog() -> Catalog {
        let forecast = |name: &str| api(name, "Weather forecast for a city", "city", "Paris");
        let mut tools = catalog().tools().to_vec();
        tools.push(tool(
            "Weather",
            "Forecast Hub",
            json!([
                forecast("Hourly forecast"),
                forecast("Daily forecast"),
                forecast("Weekly forecast"),
                forecast("Forecast alerts"),
            ]),
        ));
        tools.push(tool(
            "Music",
            "Tune Box",
            json!([api("Playlist songs", "Songs of a playlist", "id", "")]),
        ));
        Catalog::from_tools(tools)
    }

    #[test]
    fn each_intent_gets_its_best_api_into_the_top() {
        let q = "I need the hourly, daily and weekly weather forecast for Paris and any weather \
                 alerts. Additionally, show the songs of my playlist.";
        let r = Retriever::build(&crowded_catalog(), &RetrieveOptions::default()).unwrap();
        let top = names(&r.search(q, 3).unwrap());
        assert!(top.contains(&pair("Tune Box", "Playlist songs")), "{top:?}");
        assert!(top[0].0 == "Forecast Hub", "{top:?}");
        // Without the per-intent term the strong tool's siblings fill the list.
        let whole_only = Weights {
            intent_weight: 0.0,
            ..Weights::default()
        };
        let r = Retriever::build(&crowded_catalog(), &with(whole_only)).unwrap();
        let top = names(&r.search(q, 3).unwrap());
        assert!(
            !top.contains(&pair("Tune Box", "Playlist songs")),
            "{top:?}"
        );
    }

    #[test]
    fn a_second_pick_from_the_first_picks_category_is_preferred() {
        // Two identical inbox readers for the second intent; only the later one shares the
        // category of the first pick.
        let reader = |category: &str, name: &str| {
            tool(
                category,
                name,
                json!([api("Read Inbox", "Read inbox messages", "box", "")]),
            )
        };
        let catalog = Catalog::from_tools([
            tool(
                "Tools",
                "Email Validator",
                json!([api("validateEmail", "Check an email address", "email", "")]),
            ),
            reader("Misc", "Inbox Reader"),
            reader("Tools", "Inbox Viewer"),
        ]);
        let q = "Validate the email address. Also read inbox messages.";
        let order = |weights: Weights| {
            let r = Retriever::build(&catalog, &with(weights)).unwrap();
            names(&r.search(q, 3).unwrap())
        };
        let plain = order(Weights {
            category_bonus: 0.0,
            ..Weights::default()
        });
        assert_eq!(plain[0], pair("Email Validator", "validateEmail"));
        assert_eq!(plain[1], pair("Inbox Reader", "Read Inbox"));
        let coherent = order(Weights::default());
        assert_eq!(
            coherent[1],
            pair("Inbox Viewer", "Read Inbox"),
            "{coherent:?}"
        );
    }
}
