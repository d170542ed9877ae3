//! The response cache: `{Category}/{tool}/{api}.json`, each file mapping the canonical JSON of the
//! arguments to a recorded `{"error", "response"}`. Files are read on first use and kept in memory,
//! never written by a run: new replies go to a world (`server::world`), one file per call.
//!
//! StableToolBench's own cache layout (`{Category}/{tool}_for_{Category}/{api}.json`, Python-repr keys
//! in the order its client sent them) is read too, in the same folder: its `tool_response_cache`
//! serves as `DATA/response_cache` as it is (`serve import-cache` converts it once instead).
//!
//! Paths are only ever built from names found in the tool catalogue (folder names and file stems that
//! exist on disk, and standardised API names), never from what a request says.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde_json::Value;

use sum2act_core::toolbench::DataError;
use sum2act_core::toolbench::io::{read_json, write_json_atomic};

type Entries = BTreeMap<String, Value>;

/// A response cache folder.
#[derive(Debug)]
pub struct ResponseCache {
    root: PathBuf,
    /// StableToolBench's own cache folder beside ours (`DATA/tool_response_cache`), read after it.
    theirs: Option<PathBuf>,
    files: RwLock<HashMap<PathBuf, Arc<Entries>>>,
}

impl ResponseCache {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ResponseCache {
            root: root.into(),
            theirs: None,
            files: RwLock::new(HashMap::new()),
        }
    }

    /// Also reads StableToolBench's cache folder `theirs` (its layout, its keys); ours wins.
    pub fn with_theirs(mut self, theirs: PathBuf) -> Self {
        self.theirs = Some(theirs);
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folders it reads, for `serve`'s first line.
    pub fn describe(&self) -> String {
        match &self.theirs {
            Some(t) => format!("{} and {}", self.root.display(), t.display()),
            None => self.root.display().to_string(),
        }
    }

    /// The file of an API. Callers pass catalogue names only (see the module doc).
    pub fn file(&self, category: &str, tool: &str, api: &str) -> PathBuf {
        self.root
            .join(category)
            .join(tool)
            .join(format!("{api}.json"))
    }

    /// Whether `name` is a category folder of this cache (a plain folder name, not a path).
    pub fn has_category(&self, name: &str) -> bool {
        let in_folder = |root: &Path| {
            std::fs::read_dir(root).is_ok_and(|dir| {
                dir.filter_map(Result::ok)
                    .any(|e| e.file_name() == name && e.path().is_dir())
            })
        };
        !name.is_empty()
            && !name.starts_with('.')
            && !name.contains(['/', '\\', '\0'])
            && (in_folder(&self.root) || self.theirs.as_deref().is_some_and(in_folder))
    }

    fn entries(&self, path: &Path) -> Arc<Entries> {
        if let Ok(files) = self.files.read()
            && let Some(e) = files.get(path)
        {
            return e.clone();
        }
        let mut entries = if path.is_file() {
            match read_json::<Entries>(path) {
                Ok(e) => e,
                Err(e) => {
                    tracing::warn!("ignoring unreadable response cache file: {e}");
                    Entries::new()
                }
            }
        } else {
            Entries::new()
        };
        read_stb_layout(path, &mut entries);
        if let (Some(theirs), Ok(rel)) = (&self.theirs, path.strip_prefix(&self.root)) {
            read_stb_layout(&theirs.join(rel), &mut entries);
        }
        let entries = Arc::new(entries);
        if let Ok(mut files) = self.files.write() {
            files.insert(path.to_path_buf(), entries.clone());
        }
        entries
    }

    /// The recorded `{"error", "response"}` for a canonical argument key.
    pub fn get(&self, path: &Path, key: &str) -> Option<Value> {
        self.entries(path).get(key).cloned()
    }

    /// Up to `n` recorded examples of an API (for the LLM simulator's prompt).
    pub fn examples(&self, path: &Path, n: usize) -> Vec<(String, Value)> {
        self.entries(path)
            .iter()
            .take(n)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// StableToolBench's file for the same API, when the cache holds its layout: `{Category}/
/// {tool}_for_{Category}/{api}.json`. Its keys are read as dict literals and keyed canonically, like
/// ours (an unreadable key is skipped); our own recorded entries win.
fn read_stb_layout(path: &Path, entries: &mut Entries) {
    let (Some(api), Some(tool_dir)) = (path.file_name(), path.parent()) else {
        return;
    };
    let (Some(tool), Some(category_dir)) = (tool_dir.file_name(), tool_dir.parent()) else {
        return;
    };
    let Some(category) = category_dir.file_name() else {
        return;
    };
    let theirs = category_dir
        .join(format!(
            "{}_for_{}",
            tool.to_string_lossy(),
            category.to_string_lossy()
        ))
        .join(api);
    if !theirs.is_file() {
        return;
    }
    let recorded: BTreeMap<String, Value> = match read_json(&theirs) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("ignoring unreadable response cache file: {e}");
            return;
        }
    };
    for (key, value) in recorded {
        if let Ok(args @ Value::Object(_)) = super::pyrepr::parse(&key) {
            entries
                .entry(sum2act_core::tools::args::canonical_json(&args))
                .or_insert(value);
        }
    }
}

/// What an import did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ImportReport {
    pub files: usize,
    pub entries: usize,
    /// Keys that are not a Python dict literal we can read.
    pub skipped: usize,
    /// Entries already present in the destination (kept as they were).
    pub existing: usize,
}

/// Converts a StableToolBench cache (`{Category}/{tool}_for_{Category}/{api}.json`, Python-repr keys)
/// into our layout under `dest` (canonical JSON keys), merging with what is there.
pub fn import_stb_cache(src: &Path, dest: &Path) -> Result<ImportReport, DataError> {
    let mut report = ImportReport::default();
    for category in sorted_dirs(src)? {
        let cat_name = file_name(&category);
        for tool_dir in sorted_dirs(&category)? {
            let dir_name = file_name(&tool_dir);
            let tool = dir_name
                .strip_suffix(&format!("_for_{cat_name}"))
                .unwrap_or(&dir_name)
                .to_string();
            let mut files: Vec<PathBuf> = std::fs::read_dir(&tool_dir)
                .map_err(|e| DataError::io(&tool_dir, e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
                .collect();
            files.sort();
            for file in files {
                let entries: BTreeMap<String, Value> = read_json(&file)?;
                let target = dest.join(&cat_name).join(&tool).join(file_name(&file));
                let mut merged: Entries = if target.is_file() {
                    read_json(&target)?
                } else {
                    Entries::new()
                };
                for (key, value) in entries {
                    match super::pyrepr::parse(&key) {
                        Ok(args @ Value::Object(_)) => {
                            let k = sum2act_core::tools::args::canonical_json(&args);
                            match merged.entry(k) {
                                std::collections::btree_map::Entry::Occupied(_) => {
                                    report.existing += 1
                                }
                                std::collections::btree_map::Entry::Vacant(slot) => {
                                    slot.insert(value);
                                    report.entries += 1;
                                }
                            }
                        }
                        _ => report.skipped += 1,
                    }
                }
                write_json_atomic(&target, &merged)?;
                report.files += 1;
            }
        }
    }
    Ok(report)
}

fn sorted_dirs(dir: &Path) -> Result<Vec<PathBuf>, DataError> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| DataError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    Ok(out)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn imported_keys_match_the_json_of_the_same_call() {
        // Keys as Python writes them, and the JSON a model would send for the same call.
        let calls = [
            (
                r#"{'city': 'Zürich', 'q': 'caf\xe9 \u200b 東京', 'n': 1.5, 'ok': True}"#,
                r#"{"city": "Zürich", "q": "café \u200b 東京", "n": 1.5, "ok": true}"#,
            ),
            (
                r#"{'filters': {'tags': ['a', "it's"], 'range': [1, 2.0e-07]}, 'page': None}"#,
                r#"{"filters": {"tags": ["a", "it's"], "range": [1, 2e-7]}, "page": null}"#,
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        let stb = dir.path().join("stb/Data/t_for_Data");
        std::fs::create_dir_all(&stb).unwrap();
        let mut file = serde_json::Map::new();
        for (i, (key, _)) in calls.iter().enumerate() {
            file.insert(key.to_string(), json!({"error": "", "response": i}));
        }
        std::fs::write(stb.join("a.json"), Value::Object(file).to_string()).unwrap();
        let report = import_stb_cache(&dir.path().join("stb"), &dir.path().join("ours")).unwrap();
        assert_eq!((report.entries, report.skipped), (2, 0));
        let cache = ResponseCache::new(dir.path().join("ours"));
        let f = cache.file("Data", "t", "a");
        for (i, (_, sent)) in calls.iter().enumerate() {
            let args: Value = serde_json::from_str(sent).unwrap();
            let key = sum2act_core::tools::args::canonical_json(&args);
            assert_eq!(
                cache.get(&f, &key),
                Some(json!({"error": "", "response": i})),
                "{key}"
            );
        }
    }

    #[test]
    fn import_merges_and_its_layout_is_read_directly() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ours/Data/theclique");
        std::fs::create_dir_all(&ours).unwrap();
        std::fs::write(
            ours.join("transfermarkt_search.json"),
            r#"{"{\"name\":\"x\"}": {"error": "", "response": "hi"}}"#,
        )
        .unwrap();
        let cache = ResponseCache::new(dir.path().join("ours"));
        let f = cache.file("Data", "theclique", "transfermarkt_search");
        assert_eq!(cache.get(&f, "{}"), None);
        assert_eq!(
            cache.get(&f, "{\"name\":\"x\"}"),
            Some(json!({"error": "", "response": "hi"}))
        );

        let stb = dir.path().join("stb/Data/theclique_for_Data");
        std::fs::create_dir_all(&stb).unwrap();
        std::fs::write(
            stb.join("transfermarkt_search.json"),
            r#"{"{'name': 'Lionel Messi', 'page': 1, 'x': True}": {"error": "", "response": "r"}, "not a dict": {}, "{'name': 'x'}": {"error": "", "response": "dup"}}"#,
        )
        .unwrap();
        // Its layout read as it is, in its own folder: keys in any order, ours first.
        let theirs = ResponseCache::new(dir.path().join("stb"));
        let g = theirs.file("Data", "theclique", "transfermarkt_search");
        assert_eq!(
            theirs.get(&g, r#"{"name":"Lionel Messi","page":1,"x":true}"#),
            Some(json!({"error": "", "response": "r"}))
        );
        let report = import_stb_cache(&dir.path().join("stb"), &dir.path().join("ours")).unwrap();
        assert_eq!(
            report,
            ImportReport {
                files: 1,
                entries: 1,
                skipped: 1,
                existing: 1
            }
        );
        let again = ResponseCache::new(dir.path().join("ours"));
        assert_eq!(
            again.get(&f, r#"{"name":"Lionel Messi","page":1,"x":true}"#),
            Some(json!({"error": "", "response": "r"}))
        );
        assert_eq!(
            again.get(&f, "{\"name\":\"x\"}"),
            Some(json!({"error": "", "response": "hi"}))
        );
    }
}
