//! A data directory: `queries/*.json`, `tools/{Category}/{tool}.json` and optionally
//! `response_cache/` (ours) and `tool_response_cache/` (StableToolBench's), laid out as ToolBench and
//! StableToolBench ship them. A tool server needs only `tools/` ([`DataDir::open_tools`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::DataError;
use super::catalog::{Catalog, CatalogLoad};
use super::io::read_json;
use super::model::Query;
use super::schema::Function;

/// StableToolBench's name for its response cache folder.
pub(crate) const STB_CACHE_DIR: &str = "tool_response_cache";

/// Environment variable naming the default data directory.
pub const DATA_ENV: &str = "SUM2ACT_DATA";

/// The shipped sample, found next to the sources this binary was built from.
pub fn sample_dir() -> PathBuf {
    source_root().join("toolbench").join("sample")
}

/// The checkout this binary was built from (this crate lives in its `crates/core`).
pub(crate) fn source_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::canonicalize(&root).unwrap_or(root)
}

/// Longest subset name accepted (a file name on every common filesystem).
pub(crate) const MAX_SUBSET_NAME: usize = 200;

/// A subset is the base name of one `queries/*.json` file and names one folder of a run directory, so
/// it must be a plain name: a path in it (`..`, `/`, a leading `.`) would read a query file outside the
/// data directory or write answers outside the run directory.
pub fn check_subset_name(name: &str) -> Result<(), String> {
    let plain = !name.is_empty()
        && name.len() <= MAX_SUBSET_NAME
        && !name.starts_with('.')
        && !name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control());
    if plain {
        Ok(())
    } else {
        Err(format!(
            "`{}`: a subset is a plain name (the base name of a queries/*.json file, at most {MAX_SUBSET_NAME} bytes), not a path",
            name.escape_debug()
        ))
    }
}

/// Longest query text accepted, in bytes. ToolBench's queries are under 2 KiB; a longer one is a broken
/// file or a paste gone wrong, and would be sent to the model in every prompt of its episode.
pub(crate) const MAX_QUERY_BYTES: usize = 16 * 1024;

/// Refuses a query text over [`MAX_QUERY_BYTES`].
pub(crate) fn check_query_text(text: &str) -> Result<(), String> {
    if text.len() <= MAX_QUERY_BYTES {
        return Ok(());
    }
    Err(format!(
        "the query is {} bytes, over the limit of {} KiB (MAX_QUERY_BYTES; ToolBench's queries are under 2 KiB)",
        text.len(),
        MAX_QUERY_BYTES / 1024
    ))
}

/// A data directory on disk.
#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
}

impl DataDir {
    /// Opens `root`, checking that it has the expected sub-folders.
    pub fn open(root: &Path) -> Result<Self, DataError> {
        Self::open_needing(root, &["queries", "tools"])
    }

    /// Opens `root` for a tool server, which needs only `tools/`: a folder of tools and caches
    /// (StableToolBench's `toolenv` beside its `tool_response_cache`) has no queries.
    pub(crate) fn open_tools(root: &Path) -> Result<Self, DataError> {
        Self::open_needing(root, &["tools"])
    }

    fn open_needing(root: &Path, needed: &[&str]) -> Result<Self, DataError> {
        if !root.is_dir() {
            return Err(DataError::Other(format!(
                "{}: data directory not found (expected {} inside; see --data)",
                root.display(),
                needed
                    .iter()
                    .map(|sub| format!("{sub}/"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            )));
        }
        for sub in needed {
            if !root.join(sub).is_dir() {
                return Err(DataError::Other(format!(
                    "{}: not a data directory: missing `{sub}/`",
                    root.display()
                )));
            }
        }
        Ok(DataDir {
            root: root.to_path_buf(),
        })
    }

    /// `--data DIR` if given, else `$SUM2ACT_DATA`, else the shipped sample.
    pub fn open_or_default(dir: Option<&Path>) -> Result<Self, DataError> {
        Self::chosen(dir).map_or_else(|| Self::open(&sample_dir()), |d| Self::open(&d))
    }

    /// As [`DataDir::open_or_default`], for a tool server ([`DataDir::open_tools`]).
    pub fn open_tools_or_default(dir: Option<&Path>) -> Result<Self, DataError> {
        Self::chosen(dir).map_or_else(|| Self::open(&sample_dir()), |d| Self::open_tools(&d))
    }

    /// `--data DIR`, else `$SUM2ACT_DATA`; none: the shipped sample.
    pub fn chosen(dir: Option<&Path>) -> Option<PathBuf> {
        dir.map(Path::to_path_buf)
            .or_else(|| std::env::var_os(DATA_ENV).map(PathBuf::from))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub(crate) fn tools_dir(&self) -> PathBuf {
        self.root.join("tools")
    }

    /// The response cache folder, if the data directory has one.
    pub fn response_cache_dir(&self) -> Option<PathBuf> {
        let p = self.root.join("response_cache");
        p.is_dir().then_some(p)
    }

    /// StableToolBench's cache folder (`tool_response_cache`, its layout and keys), if the data
    /// directory has one: read beside ours, never written.
    pub fn stb_cache_dir(&self) -> Option<PathBuf> {
        let p = self.root.join(STB_CACHE_DIR);
        p.is_dir().then_some(p)
    }

    /// The URL cache folder (recorded files answering http(s) URLs for the media tools), if any.
    pub fn url_cache_dir(&self) -> Option<PathBuf> {
        let p = self.root.join("url_cache");
        p.is_dir().then_some(p)
    }

    /// Subset names: the base names of the `queries/*.json` files (not folders), sorted.
    pub fn subsets(&self) -> Result<Vec<String>, DataError> {
        let dir = self.root.join("queries");
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(|e| DataError::io(&dir, e))? {
            let path = entry.map_err(|e| DataError::io(&dir, e))?.path();
            if path.extension().is_some_and(|e| e == "json")
                && !path.is_dir()
                && let Some(stem) = path.file_stem()
            {
                let name = stem.to_string_lossy().to_string();
                if check_subset_name(&name).is_ok() {
                    names.push(name);
                }
            }
        }
        names.sort();
        Ok(names)
    }

    /// The queries of one subset.
    pub fn queries(&self, subset: &str) -> Result<Vec<Query>, DataError> {
        check_subset_name(subset).map_err(DataError::Other)?;
        let path = self.root.join("queries").join(format!("{subset}.json"));
        if path.is_dir() {
            return Err(DataError::Other(format!(
                "{}: is a folder, not a query file",
                path.display()
            )));
        }
        if !path.is_file() {
            let known = self.subsets().unwrap_or_default().join(", ");
            return Err(DataError::Other(format!(
                "{}: no such subset `{subset}` (known: {known})",
                path.display()
            )));
        }
        load_queries(&path)
    }

    /// The tool catalogue (broken tool files are reported, the rest loads).
    pub fn catalog(&self) -> Result<CatalogLoad, DataError> {
        Catalog::load(&self.tools_dir())
    }
}

/// Loads a query file and checks ids are unique within it.
pub fn load_queries(path: &Path) -> Result<Vec<Query>, DataError> {
    let queries: Vec<Query> = read_json(path)?;
    let mut seen = BTreeSet::new();
    for (i, q) in queries.iter().enumerate() {
        check_query_text(&q.query)
            .map_err(|why| DataError::invalid(path, format!("[{i}].query"), why))?;
        if !seen.insert(q.query_id) {
            return Err(DataError::invalid(
                path,
                format!("[{i}].query_id"),
                format!("duplicate query_id {}", q.query_id),
            ));
        }
    }
    Ok(queries)
}

/// Loads a StableToolBench id file (`{"588": 0, ...}`) into the set of ids.
pub fn load_id_file(path: &Path) -> Result<BTreeSet<u64>, DataError> {
    let map: BTreeMap<String, serde_json::Value> = read_json(path)?;
    map.keys()
        .map(|k| {
            k.parse::<u64>()
                .map_err(|_| DataError::invalid(path, k.clone(), "query id is not an integer"))
        })
        .collect()
}

/// One query ready for a solver: its functions resolved against the catalogue.
#[derive(Debug, Clone)]
pub struct Task {
    pub subset: String,
    pub query_id: u64,
    pub query: String,
    pub functions: Vec<Function>,
    /// `relevant APIs` as (tool name, api name), original names.
    pub relevant: Vec<[String; 2]>,
}

impl Task {
    /// Resolves a query's api_list (minimal entries through the catalogue) into functions.
    pub fn from_query(subset: &str, q: &Query, catalog: &Catalog) -> Result<Self, DataError> {
        let mut functions = Vec::with_capacity(q.apis().len());
        for (i, doc) in q.apis().iter().enumerate() {
            let full = catalog.resolve(doc).ok_or_else(|| {
                DataError::Other(format!(
                    "query {} api_list[{i}]: API `{}` of tool `{}` ({}) is not in the tools catalogue",
                    q.query_id, doc.api_name, doc.tool_name, doc.category_name
                ))
            })?;
            let tool = catalog.standard_tool_name(&full.category_name, &full.tool_name);
            functions.push(Function::from_doc(&full, &tool));
        }
        Ok(Task {
            subset: subset.to_string(),
            query_id: q.query_id,
            query: q.query.clone(),
            functions,
            relevant: q.relevant().to_vec(),
        })
    }
}

/// Per-subset counts printed by `sum2act data stats`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SubsetStats {
    pub subset: String,
    pub queries: usize,
    pub tools: usize,
    pub apis: usize,
    pub categories: usize,
    pub mean_api_list: f64,
    pub mean_relevant: f64,
}

impl SubsetStats {
    pub fn of(subset: &str, queries: &[Query]) -> Self {
        let mut tools = BTreeSet::new();
        let mut apis = BTreeSet::new();
        let mut categories = BTreeSet::new();
        let (mut list_len, mut relevant) = (0usize, 0usize);
        for q in queries {
            list_len += q.apis().len();
            relevant += q.relevant().len();
            for a in q.apis() {
                tools.insert(a.tool_name.as_str());
                apis.insert((
                    a.category_name.as_str(),
                    a.tool_name.as_str(),
                    a.api_name.as_str(),
                ));
                categories.insert(a.category_name.as_str());
            }
        }
        let n = queries.len().max(1) as f64;
        SubsetStats {
            subset: subset.to_string(),
            queries: queries.len(),
            tools: tools.len(),
            apis: apis.len(),
            categories: categories.len(),
            mean_api_list: list_len as f64 / n,
            mean_relevant: relevant as f64 / n,
        }
    }
}
