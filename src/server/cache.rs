//! The response cache: `{Category}/{tool}/{api}.json`, each file mapping the canonical JSON of the
//! arguments to a recorded `{"error", "response"}`. Files are read on first use and kept in memory.
//! New answers (saving on) are appended, one JSON line each, to a journal beside the file,
//! `{api}.jsonl`: a new call costs one small append whatever the size of the recorded file (rewriting
//! it cost a read, a rewrite and two fsyncs per answer), and an answer survives a kill of the process
//! as soon as its line is written. Reads merge the journal into the map; a recorded entry wins over a
//! journal line, and the first journal line of a key wins over later ones.
//!
//! StableToolBench's own cache layout (`{Category}/{tool}_for_{Category}/{api}.json`, Python-repr
//! keys) is read too, in the same folder: its `tool_response_cache` serves as `DATA/response_cache`
//! as it is (`serve import-cache` converts it once instead).
//!
//! Paths are only ever built from names found in the tool catalogue (folder names and file stems that
//! exist on disk, and standardised API names), never from what a request says.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;

use crate::toolbench::DataError;
use crate::toolbench::io::{read_json, write_json_atomic};

type Entries = BTreeMap<String, Value>;

/// One file's entries, shared by readers; a new answer is inserted in place (never a copy of the map).
type Shared = Arc<RwLock<Entries>>;

/// A response cache folder.
#[derive(Debug)]
pub struct ResponseCache {
    root: PathBuf,
    files: RwLock<HashMap<PathBuf, Shared>>,
    /// Serialises read-modify-write of files when saving.
    write: Mutex<()>,
}

impl ResponseCache {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ResponseCache {
            root: root.into(),
            files: RwLock::new(HashMap::new()),
            write: Mutex::new(()),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
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
        !name.is_empty()
            && !name.starts_with('.')
            && !name.contains(['/', '\\', '\0'])
            && std::fs::read_dir(&self.root).is_ok_and(|dir| {
                dir.filter_map(Result::ok)
                    .any(|e| e.file_name() == name && e.path().is_dir())
            })
    }

    fn entries(&self, path: &Path) -> Shared {
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
        read_journal(&journal_of(path), &mut entries);
        match self.files.write() {
            // Another reader may have loaded it meanwhile: keep the first.
            Ok(mut files) => files
                .entry(path.to_path_buf())
                .or_insert_with(|| Arc::new(RwLock::new(entries)))
                .clone(),
            Err(_) => Arc::new(RwLock::new(entries)),
        }
    }

    /// The recorded `{"error", "response"}` for a canonical argument key.
    pub fn get(&self, path: &Path, key: &str) -> Option<Value> {
        self.entries(path).read().ok()?.get(key).cloned()
    }

    /// Up to `n` recorded examples of an API (for the LLM simulator's prompt).
    pub fn examples(&self, path: &Path, n: usize) -> Vec<(String, Value)> {
        let entries = self.entries(path);
        let Ok(entries) = entries.read() else {
            return Vec::new();
        };
        entries
            .iter()
            .take(n)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Adds an answer: one line appended to the API's journal (the recorded file is never
    /// rewritten). A key that already has an answer keeps it.
    pub fn put(&self, path: &Path, key: &str, value: Value) -> Result<(), DataError> {
        let _guard = self
            .write
            .lock()
            .map_err(|_| DataError::Other("response cache lock poisoned".into()))?;
        let entries = self.entries(path);
        if entries.read().is_ok_and(|e| e.contains_key(key)) {
            return Ok(());
        }
        let journal = journal_of(path);
        let mut line = serde_json::to_string(&serde_json::json!({"key": key, "value": value}))
            .map_err(|e| DataError::Other(format!("cannot encode a cache entry: {e}")))?;
        line.push('\n');
        if let Some(dir) = journal.parent() {
            std::fs::create_dir_all(dir).map_err(|e| DataError::write(dir, e))?;
        }
        // One write of the whole line in append mode: concurrent writers never interleave lines.
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&journal)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .map_err(|e| DataError::write(&journal, e))?;
        if let Ok(mut entries) = entries.write() {
            entries.insert(key.to_string(), value);
        }
        Ok(())
    }
}

/// StableToolBench's file for the same API, when the cache holds its layout: `{Category}/
/// {tool}_for_{Category}/{api}.json`, keyed by Python's `str()` of the arguments in the order its client
/// sent them. Its keys are read as dict literals and keyed canonically, like ours (an unreadable key
/// is skipped); our own recorded entries win.
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
                .entry(crate::tools::args::canonical_json(&args))
                .or_insert(value);
        }
    }
}

/// The journal of new answers beside a recorded file: `{api}.jsonl`.
fn journal_of(path: &Path) -> PathBuf {
    path.with_extension("jsonl")
}

/// Adds a journal's entries to `entries` (recorded entries and earlier lines win). A line that does
/// not parse (one cut by a crash mid-write) is skipped.
fn read_journal(journal: &Path, entries: &mut Entries) {
    let Ok(text) = std::fs::read_to_string(journal) else {
        return;
    };
    let mut skipped = 0usize;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let parsed = serde_json::from_str::<Value>(line).ok().and_then(|v| {
            let key = v.get("key")?.as_str()?.to_string();
            Some((key, v.get("value")?.clone()))
        });
        match parsed {
            Some((key, value)) => {
                entries.entry(key).or_insert(value);
            }
            None => skipped += 1,
        }
    }
    if skipped > 0 {
        tracing::warn!(
            "{}: skipped {skipped} unreadable line(s) of the response journal",
            journal.display()
        );
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
                            let k = crate::tools::args::canonical_json(&args);
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
            let key = crate::tools::args::canonical_json(&args);
            assert_eq!(
                cache.get(&f, &key),
                Some(json!({"error": "", "response": i})),
                "{key}"
            );
        }
    }

    #[test]
    fn put_then_get_and_import() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ResponseCache::new(dir.path().join("ours"));
        let f = cache.file("Data", "theclique", "transfermarkt_search");
        assert_eq!(cache.get(&f, "{}"), None);
        cache
            .put(
                &f,
                "{\"name\":\"x\"}",
                json!({"error": "", "response": "hi"}),
            )
            .unwrap();
        assert_eq!(
            cache.get(&f, "{\"name\":\"x\"}"),
            Some(json!({"error": "", "response": "hi"}))
        );
        let fresh = ResponseCache::new(dir.path().join("ours"));
        assert!(fresh.get(&f, "{\"name\":\"x\"}").is_some());

        let stb = dir.path().join("stb/Data/theclique_for_Data");
        std::fs::create_dir_all(&stb).unwrap();
        std::fs::write(
            stb.join("transfermarkt_search.json"),
            r#"{"{'name': 'Lionel Messi', 'page': 1, 'x': True}": {"error": "", "response": "r"}, "not a dict": {}, "{'name': 'x'}": {"error": "", "response": "dup"}}"#,
        )
        .unwrap();
        let report = import_stb_cache(&dir.path().join("stb"), &dir.path().join("ours")).unwrap();
        assert_eq!(
            report,
            ImportReport {
                files: 1,
                entries: 2,
                skipped: 1,
                existing: 0
            }
        );
        let again = ResponseCache::new(dir.path().join("ours"));
        assert_eq!(
            again.get(&f, r#"{"name":"Lionel Messi","page":1,"x":true}"#),
            Some(json!({"error": "", "response": "r"}))
        );
        // A recorded (imported) reply wins over the one saved in the journal.
        assert_eq!(
            again.get(&f, "{\"name\":\"x\"}"),
            Some(json!({"error": "", "response": "dup"}))
        );
    }

    #[test]
    fn new_answers_go_to_the_journal_and_a_cut_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ResponseCache::new(dir.path());
        let f = cache.file("Data", "t", "a");
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(&f, r#"{"{}": {"error": "", "response": "recorded"}}"#).unwrap();
        let recorded = std::fs::read(&f).unwrap();
        let one = json!({"error": "", "response": 1});
        cache.put(&f, "{\"n\":1}", one.clone()).unwrap();
        // A key with an answer keeps it; the recorded entry is never replaced.
        cache
            .put(&f, "{\"n\":1}", json!({"error": "", "response": 2}))
            .unwrap();
        cache
            .put(&f, "{}", json!({"error": "", "response": "new"}))
            .unwrap();
        assert_eq!(
            std::fs::read(&f).unwrap(),
            recorded,
            "the recorded file was rewritten"
        );
        let journal = f.with_extension("jsonl");
        assert_eq!(
            std::fs::read_to_string(&journal).unwrap().lines().count(),
            1
        );
        // A crash mid-write leaves a cut last line: it is skipped, the rest loads.
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&journal)
            .unwrap();
        std::io::Write::write_all(&mut file, b"{\"key\": \"{\\\"n\\\":3}\", \"val").unwrap();
        let fresh = ResponseCache::new(dir.path());
        assert_eq!(fresh.get(&f, "{\"n\":1}"), Some(one));
        assert_eq!(
            fresh.get(&f, "{}"),
            Some(json!({"error": "", "response": "recorded"}))
        );
        assert_eq!(fresh.get(&f, "{\"n\":3}"), None);
    }
}
