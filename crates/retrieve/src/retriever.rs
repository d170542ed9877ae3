//! The [`Retriever`]: its entries and indices, and how it is built from a catalogue.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::persist::TermIndices;
use super::tokenize::Analyzer;
use super::{ApiText, IndexSource, RetrieveError, RetrieveOptions, TermIndex, Weights, dense};
use sum2act_core::toolbench::Catalog;

/// One API of the catalogue, as a search result names it.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) category: String,
    pub(super) tool_name: String,
    pub(super) api_name: String,
    pub(super) tool: u32,
    /// Category number, for the coherence bonus.
    pub(super) cat: u32,
}

/// The API retriever (see the module doc for the ranking).
pub struct Retriever {
    pub(super) entries: Vec<Entry>,
    /// APIs of each tool, by tool position.
    pub(super) tool_apis: Vec<Vec<u32>>,
    pub(super) apis: TermIndex,
    pub(super) tools: TermIndex,
    pub(super) analyzer: Analyzer,
    pub(super) weights: Weights,
    source: IndexSource,
    location: Option<PathBuf>,
    pub(super) dense: Option<dense::DenseIndex>,
}

/// The catalogue read API by API: entries, index texts and sentences to embed, in one order.
struct Corpus {
    entries: Vec<Entry>,
    tool_apis: Vec<Vec<u32>>,
    texts: Vec<ApiText>,
    sentences: Vec<Vec<String>>,
}

impl Corpus {
    fn of(catalog: &Catalog, options: &RetrieveOptions) -> Self {
        let mut c = Corpus {
            entries: Vec::with_capacity(catalog.api_count()),
            tool_apis: Vec::with_capacity(catalog.tool_count()),
            texts: Vec::with_capacity(catalog.api_count()),
            sentences: Vec::with_capacity(catalog.api_count()),
        };
        let mut cats: HashMap<&str, u32> = HashMap::new();
        for (ti, tool) in catalog.tools().iter().enumerate() {
            let next = cats.len() as u32;
            let cat = *cats.entry(tool.category.as_str()).or_insert(next);
            let mut ids = Vec::new();
            for api in &tool.file.api_list {
                ids.push(c.entries.len() as u32);
                c.entries.push(Entry {
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
                c.texts.push(ApiText::of(tool, api, examples));
                c.sentences.push(dense::api_texts(tool, api, examples));
            }
            c.tool_apis.push(ids);
        }
        c
    }
}

impl Retriever {
    /// Builds the index for a catalogue, or opens a cached, up-to-date one from `options.index_dir`.
    pub fn build(catalog: &Catalog, options: &RetrieveOptions) -> Result<Self, RetrieveError> {
        let analyzer = Analyzer::default();
        let corpus = Corpus::of(catalog, options);
        let indices = TermIndices::open_or_build(
            catalog,
            options,
            &analyzer,
            &corpus.texts,
            &corpus.tool_apis,
        )?;
        let dense = match &options.encoder {
            Some(e) => {
                let cache = options.index_dir.as_ref().map(|d| d.join("dense"));
                Some(dense::DenseIndex::build(
                    e.clone(),
                    &corpus.sentences,
                    cache.as_deref(),
                    options.on_embed.as_deref(),
                )?)
            }
            None => None,
        };
        Ok(Retriever {
            dense,
            entries: corpus.entries,
            tool_apis: corpus.tool_apis,
            apis: indices.apis,
            tools: indices.tools,
            analyzer,
            weights: options.weights.clone(),
            source: indices.source,
            location: indices.location,
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

    /// The query terms of a text and its word pairs, each once.
    pub(super) fn term_keys(&self, text: &str) -> Vec<(String, bool)> {
        let mut seen = HashSet::new();
        let terms = self.analyzer.terms(text).into_iter().map(|t| (t, false));
        let pairs = self.analyzer.bigrams(text).into_iter().map(|t| (t, true));
        terms
            .chain(pairs)
            .filter(|k| seen.insert(k.clone()))
            .collect()
    }
}
