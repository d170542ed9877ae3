//! API retrieval over a tool catalogue: which APIs an instruction needs, best first.
//!
//! Two tantivy indices, both over expanded, pre-tokenized text ([`doc`], [`tokenize`]): one document
//! per API and one per tool (all its APIs together). An API's score is its own multi-field BM25 plus
//! its tool's, each normalised by the query's best, so a tool that matches several parts of a
//! multi-part request lifts all its APIs. The list is then picked greedily: once an API is chosen,
//! the query terms it matched count less, so the next picks cover the request's other intents
//! instead of repeating the first one through competing tools.

mod baseline;
mod doc;
mod eval;
mod index;
mod metrics;
pub mod tokenize;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::toolbench::io::write_json_atomic;
use crate::toolbench::{Catalog, DataError};

pub use baseline::Bm25Baseline;
pub use doc::{ApiText, DocField};
pub use eval::{EvalReport, evaluate};
pub use index::TermIndex;
pub use metrics::{Metrics, MetricsSum, ndcg_at, recall_at};
use tokenize::Analyzer;

/// Bumped whenever analysis or the index layout changes, so cached indices are rebuilt.
const INDEX_VERSION: u32 = 1;

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
/// `../shared/toolbench` (see the README): per-field boosts of the API and tool indices, the boost
/// of the name word-pair field, the weight of the tool score, and how much a query term still
/// counts once a chosen API has matched it.
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
}

impl Default for Weights {
    fn default() -> Self {
        // category, tool name, tool description, API name, API description, parameter names,
        // parameter descriptions, parameter defaults, response fields
        Weights {
            api_fields: [0.5, 1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 1.0, 0.3],
            tool_fields: [0.5, 1.0, 1.0, 2.0, 1.0, 0.5, 0.5, 0.5, 0.3],
            api_pairs: 0.5,
            tool_pairs: 0.5,
            tool_weight: 1.5,
            coverage_discount: 0.7,
        }
    }
}

/// How to build the retriever.
#[derive(Debug, Clone, Default)]
pub struct RetrieveOptions {
    /// Folder of cached indices (one sub-folder per catalogue fingerprint). `None`: in memory only.
    pub index_dir: Option<PathBuf>,
    /// Write the index to `index_dir` when no up-to-date one is there (else build in memory).
    pub write: bool,
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
}

const PAIRS: &str = "name_pairs";

fn field_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = DocField::ALL.iter().map(|f| f.name()).collect();
    names.push(PAIRS);
    names
}

/// A hash of everything the index is built from.
pub fn fingerprint(catalog: &Catalog) -> String {
    let mut h = Sha256::new();
    h.update(INDEX_VERSION.to_le_bytes());
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
        for (ti, tool) in catalog.tools().iter().enumerate() {
            let mut ids = Vec::new();
            for api in &tool.file.api_list {
                ids.push(entries.len() as u32);
                entries.push(Entry {
                    category: tool.category.clone(),
                    tool_name: tool.file.tool_name.clone(),
                    api_name: api.name.clone(),
                    tool: ti as u32,
                });
                texts.push(ApiText::of(tool, api));
            }
            tool_apis.push(ids);
        }
        let names = field_names();
        let (apis, tools, source, location) = match &options.index_dir {
            Some(root) => {
                let fp = fingerprint(catalog);
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
        Ok(Retriever {
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
        let api_searcher = self.apis.searcher();
        let tool_searcher = self.tools.searcher();
        // Per query term (and word pair): its contribution to each API and to each tool.
        let mut api_terms: Vec<HashMap<u32, f32>> = Vec::new();
        let mut tool_score: HashMap<u32, f32> = HashMap::new();
        let mut seen = HashSet::new();
        let pair_field = DocField::ALL.len();
        let terms = self
            .analyzer
            .terms(instruction)
            .into_iter()
            .map(|t| (t, false));
        let pairs = self
            .analyzer
            .bigrams(instruction)
            .into_iter()
            .map(|t| (t, true));
        for (term, is_pair) in terms.chain(pairs) {
            if !seen.insert((term.clone(), is_pair)) {
                continue;
            }
            let mut per_api = HashMap::new();
            if is_pair {
                self.apis.score_term(
                    &api_searcher,
                    pair_field,
                    &term,
                    w.api_pairs,
                    &mut per_api,
                )?;
                self.tools.score_term(
                    &tool_searcher,
                    pair_field,
                    &term,
                    w.tool_pairs,
                    &mut tool_score,
                )?;
            } else {
                for (f, (&ba, &bt)) in w.api_fields.iter().zip(&w.tool_fields).enumerate() {
                    self.apis
                        .score_term(&api_searcher, f, &term, ba, &mut per_api)?;
                    self.tools
                        .score_term(&tool_searcher, f, &term, bt, &mut tool_score)?;
                }
            }
            if !per_api.is_empty() {
                api_terms.push(per_api);
            }
        }
        let mut api_total: HashMap<u32, f32> = HashMap::new();
        for m in &api_terms {
            for (&d, &s) in m {
                *api_total.entry(d).or_insert(0.0) += s;
            }
        }
        let max_api = api_total.values().copied().fold(0.0f32, f32::max);
        let max_tool = tool_score.values().copied().fold(0.0f32, f32::max);
        if max_api <= 0.0 && max_tool <= 0.0 {
            return Ok(Vec::new());
        }
        let norm = |x: f32, m: f32| if m > 0.0 { x / m } else { 0.0 };
        // Candidates: APIs that match, and every API of a matching tool.
        let mut candidates: HashSet<u32> = api_total.keys().copied().collect();
        for &t in tool_score.keys() {
            if let Some(ids) = self.tool_apis.get(t as usize) {
                candidates.extend(ids);
            }
        }
        let tool_part = |d: u32| {
            let t = self.entries[d as usize].tool;
            w.tool_weight * norm(tool_score.get(&t).copied().unwrap_or(0.0), max_tool)
        };
        let mut ranked: Vec<(u32, f32)> = candidates
            .into_iter()
            .map(|d| {
                (
                    d,
                    norm(api_total.get(&d).copied().unwrap_or(0.0), max_api) + tool_part(d),
                )
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.truncate((4 * k).max(100));
        // Greedy coverage over the shortlist.
        let matrix: Vec<Vec<f32>> = ranked
            .iter()
            .map(|(d, _)| {
                api_terms
                    .iter()
                    .map(|m| norm(m.get(d).copied().unwrap_or(0.0), max_api))
                    .collect()
            })
            .collect();
        let tool_parts: Vec<f32> = ranked.iter().map(|(d, _)| tool_part(*d)).collect();
        let mut term_weight = vec![1.0f32; api_terms.len()];
        let mut taken = vec![false; ranked.len()];
        let mut emitted = HashSet::new();
        let mut hits = Vec::with_capacity(k);
        while hits.len() < k {
            let mut best: Option<(usize, f32)> = None;
            for (c, row) in matrix.iter().enumerate() {
                if taken[c] {
                    continue;
                }
                let s: f32 = row
                    .iter()
                    .zip(&term_weight)
                    .map(|(x, tw)| x * tw)
                    .sum::<f32>()
                    + tool_parts[c];
                if best.is_none_or(|(_, bs)| s > bs) {
                    best = Some((c, s));
                }
            }
            let Some((c, score)) = best else { break };
            taken[c] = true;
            for (tw, x) in term_weight.iter_mut().zip(&matrix[c]) {
                if *x > 0.0 {
                    *tw *= w.coverage_discount;
                }
            }
            let e = &self.entries[ranked[c].0 as usize];
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
}
