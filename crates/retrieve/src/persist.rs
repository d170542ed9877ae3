//! The on-disk index cache: one folder per catalogue fingerprint, holding both term indices and a
//! manifest that says what they were built from.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::index::{self, TermIndex};
use super::tokenize::Analyzer;
use super::{ApiText, DocField, IndexSource, RetrieveError, RetrieveOptions, examples};
use sum2act_core::toolbench::Catalog;
use sum2act_core::toolbench::io::write_json_atomic;

/// Bumped whenever analysis or the index layout changes, so cached indices are rebuilt.
const INDEX_VERSION: u32 = 3;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    fingerprint: String,
    apis: usize,
    tools: usize,
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

/// The API and tool term indices, and where they came from.
pub(super) struct TermIndices {
    pub(super) apis: TermIndex,
    pub(super) tools: TermIndex,
    pub(super) source: IndexSource,
    pub(super) location: Option<PathBuf>,
}

impl TermIndices {
    /// Opens the cached indices in `options.index_dir` when their manifest matches the catalogue,
    /// else writes them there (with `options.write`) or builds them in memory.
    pub(super) fn open_or_build(
        catalog: &Catalog,
        options: &RetrieveOptions,
        analyzer: &Analyzer,
        texts: &[ApiText],
        tool_apis: &[Vec<u32>],
    ) -> Result<Self, RetrieveError> {
        let Some(root) = &options.index_dir else {
            return Self::in_memory(analyzer, texts, tool_apis);
        };
        let fp = fingerprint(catalog, options.examples.as_deref());
        let dir = root.join(&fp[..16]);
        let manifest = Manifest {
            version: INDEX_VERSION,
            fingerprint: fp,
            apis: texts.len(),
            tools: tool_apis.len(),
        };
        if read_manifest(&dir).as_ref() == Some(&manifest) {
            Self::open(dir, IndexSource::Cached)
        } else if options.write {
            write_index(&dir, &manifest, analyzer, texts, tool_apis)?;
            Self::open(dir, IndexSource::Built)
        } else {
            Self::in_memory(analyzer, texts, tool_apis)
        }
    }

    fn open(dir: PathBuf, source: IndexSource) -> Result<Self, RetrieveError> {
        let names = field_names();
        Ok(TermIndices {
            apis: TermIndex::open(&names, &dir.join("apis"))?,
            tools: TermIndex::open(&names, &dir.join("tools"))?,
            source,
            location: Some(dir),
        })
    }

    fn in_memory(
        analyzer: &Analyzer,
        texts: &[ApiText],
        tool_apis: &[Vec<u32>],
    ) -> Result<Self, RetrieveError> {
        let (apis, tools) = build_in(None, analyzer, texts, tool_apis)?;
        Ok(TermIndices {
            apis,
            tools,
            source: IndexSource::Memory,
            location: None,
        })
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
