//! The whole-catalogue tool graph cached on disk: building it walks every API's docs and template
//! (seconds on the full ToolBench catalogue), yet it only changes with the catalogue. The file is
//! keyed by the catalogue's fingerprint (computed by the caller, the retriever's) and
//! `GRAPH_VERSION`; a missing, stale, unreadable or damaged file is rebuilt (with a warning when it
//! was there but unusable), never an error.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::graph::{ApiNode, Edge, ToolGraph};
use crate::toolbench::Function;
use crate::toolbench::io::write_atomic;

/// Bump whenever `ToolGraph::build` or the file layout changes, so old files miss.
pub(crate) const GRAPH_VERSION: u32 = 2;

/// Where a graph came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GraphSource {
    /// Read from an up-to-date cache file.
    Loaded,
    /// Built (and written to the cache when that worked).
    Built,
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    fingerprint: String,
    apis: Vec<ApiNode>,
    edges: Vec<Edge>,
}

/// Why a cache file was not used.
enum Miss {
    /// No file, or one for another catalogue / version: rebuilt silently.
    Absent,
    /// A file that cannot be read or parsed: rebuilt with a warning.
    Damaged(String),
}

/// The cache file of a catalogue fingerprint under `dir` (one per fingerprint).
pub(crate) fn cache_path(dir: &Path, fingerprint: &str) -> PathBuf {
    let short = fingerprint.get(..16).unwrap_or(fingerprint);
    dir.join(format!("graph-v{GRAPH_VERSION}-{short}.json"))
}

/// The graph of `functions` (the catalogue with that `fingerprint`): loaded from `dir` when an
/// up-to-date file is there, else built and written atomically (a failed write only warns).
pub fn load_or_build(
    dir: &Path,
    fingerprint: &str,
    functions: &[Function],
) -> (ToolGraph, GraphSource) {
    let path = cache_path(dir, fingerprint);
    match load(&path, fingerprint) {
        Ok(graph) => return (graph, GraphSource::Loaded),
        Err(Miss::Absent) => {}
        Err(Miss::Damaged(why)) => {
            tracing::warn!("rebuilding the tool graph: cache {} {why}", path.display());
        }
    }
    let graph = ToolGraph::build(functions);
    if let Err(e) = save(&path, fingerprint, &graph) {
        tracing::warn!("cannot cache the tool graph: {e}");
    }
    (graph, GraphSource::Built)
}

fn load(path: &Path, fingerprint: &str) -> Result<ToolGraph, Miss> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Miss::Absent),
        Err(e) => return Err(Miss::Damaged(format!("is unreadable: {e}"))),
    };
    let file: CacheFile = serde_json::from_slice(&bytes)
        .map_err(|e| Miss::Damaged(format!("is not a tool graph: {e}")))?;
    if file.version != GRAPH_VERSION || file.fingerprint != fingerprint {
        return Err(Miss::Absent);
    }
    let n = file.apis.len();
    if let Some(e) = file.edges.iter().find(|e| e.from >= n || e.to >= n) {
        return Err(Miss::Damaged(format!(
            "has an edge {} -> {} beyond its {n} APIs",
            e.from, e.to
        )));
    }
    Ok(ToolGraph::from_parts(file.apis, file.edges))
}

fn save(path: &Path, fingerprint: &str, graph: &ToolGraph) -> Result<(), String> {
    let file = CacheFile {
        version: GRAPH_VERSION,
        fingerprint: fingerprint.to_string(),
        apis: graph.apis.clone(),
        edges: graph.edges.clone(),
    };
    let bytes = serde_json::to_vec(&file).map_err(|e| e.to_string())?;
    write_atomic(path, &bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::toolbench::fixture::movie_function as function;

    fn catalogue() -> Vec<Function> {
        vec![
            function(
                "cinebase",
                "Search movies",
                &["title"],
                Some(json!({"results": [{"movie_id": "str"}]})),
            ),
            function("cinebase", "Movie details", &["movie_id"], None),
        ]
    }

    #[test]
    fn round_trip_loads_the_same_graph() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (built, src) = load_or_build(dir.path(), "aaaa", &catalogue());
        assert_eq!(src, GraphSource::Built);
        assert!(cache_path(dir.path(), "aaaa").is_file());
        let (loaded, src) = load_or_build(dir.path(), "aaaa", &catalogue());
        assert_eq!(src, GraphSource::Loaded);
        assert_eq!(loaded, built);
        assert!(!loaded.edges.is_empty());
        assert_eq!(
            loaded.edges_between(0, 1).count(),
            built.edges_between(0, 1).count()
        );
    }

    #[test]
    fn a_changed_catalogue_misses() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        load_or_build(dir.path(), "aaaa", &catalogue());
        let mut changed = catalogue();
        changed.push(function("cinebase", "Cast", &["movie_id"], None));
        let (graph, src) = load_or_build(dir.path(), "bbbb", &changed);
        assert_eq!(src, GraphSource::Built);
        assert_eq!(graph.apis.len(), 3);
        // Same short name, other full fingerprint: still a miss, not the old graph.
        let (_, src) = load_or_build(dir.path(), "aaaa-other", &catalogue());
        assert_eq!(src, GraphSource::Built);
    }

    #[test]
    fn a_corrupt_file_is_rebuilt() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let (built, _) = load_or_build(dir.path(), "aaaa", &catalogue());
        let path = cache_path(dir.path(), "aaaa");
        std::fs::write(&path, b"{\"version\": 1, \"fing").unwrap_or_else(|e| panic!("{e}"));
        let (graph, src) = load_or_build(dir.path(), "aaaa", &catalogue());
        assert_eq!(src, GraphSource::Built);
        assert_eq!(graph, built);
        // The rebuild rewrote a good file.
        assert_eq!(
            load_or_build(dir.path(), "aaaa", &catalogue()).1,
            GraphSource::Loaded
        );
        // Edges pointing past the APIs are damage too, not a panic later.
        let bad = json!({"version": GRAPH_VERSION, "fingerprint": "aaaa", "apis": [],
            "edges": [{"from": 0, "output": "id", "to": 5, "param": "id", "kind": "id"}]});
        std::fs::write(&path, bad.to_string()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            load_or_build(dir.path(), "aaaa", &catalogue()).1,
            GraphSource::Built
        );
    }
}
