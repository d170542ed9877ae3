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
mod persist;
mod retriever;
mod score;
mod search;
#[cfg(test)]
mod tests;
pub mod tokenize;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use sum2act_core::toolbench::DataError;

pub use baseline::Bm25Baseline;
pub use doc::{ApiText, DocField};
pub use eval::{EvalReport, Half, QueryDetail, evaluate};
pub use index::TermIndex;
pub use metrics::{Metrics, MetricsSum, ndcg_at, recall_at};
pub use persist::{default_index_dir, fingerprint};
pub use retriever::Retriever;

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

/// Little-endian `f32`s, as safetensors files and the embedding cache store them.
fn le_f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}
