//! Where a world keeps its replies: one file per call, `{Category}/{tool}/{api}/{id}.json` under the
//! world folder (`id`: a hash of the canonical arguments), or a map in memory when the world has no
//! folder. A reply is never replaced: the first one stored for a call is the call's reply for every
//! later reader, in this process or another (hard-link creation fails when the file exists).
//!
//! Paths are built only from catalogue names (see `server::cache`) and a hex hash, never from a request.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use sum2act_core::toolbench::DataError;
use sum2act_core::tools::{ReplySource, ToolReply};

/// One call of a world: the catalogue's names and the arguments (canonical JSON: any key order is the
/// same call).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Call {
    pub category: String,
    pub tool: String,
    pub api: String,
    /// `tools::args::canonical_json` of the arguments object.
    pub arguments: String,
}

impl Call {
    /// `category/tool/api`.
    pub fn api_label(&self) -> String {
        format!("{}/{}/{}", self.category, self.tool, self.api)
    }

    /// A stable file name for the arguments.
    pub fn id(&self) -> String {
        hex::encode(Sha256::digest(self.arguments.as_bytes()))[..32].to_string()
    }

    fn key(&self) -> String {
        format!("{}\u{1f}{}", self.api_label(), self.arguments)
    }
}

/// A stored reply as written in the world folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// `category/tool/api`.
    pub api: String,
    pub arguments: Value,
    #[serde(default)]
    pub error: String,
    #[serde(default)]
    pub response: Value,
    /// Who made the reply (`simulated`, `llm`).
    #[serde(default)]
    pub source: Option<ReplySource>,
}

impl Entry {
    pub fn reply(&self) -> ToolReply {
        ToolReply::new(self.error.clone(), self.response.clone(), self.source)
    }
}

/// The replies of a world.
#[derive(Debug)]
pub enum Store {
    Dir(PathBuf),
    Memory(Mutex<HashMap<String, ToolReply>>),
}

/// Temporary file names unique within the process.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Store {
    pub fn dir(&self) -> Option<&Path> {
        match self {
            Store::Dir(d) => Some(d),
            Store::Memory(_) => None,
        }
    }

    /// The folder of an API's calls.
    pub fn api_dir(root: &Path, call: &Call) -> PathBuf {
        root.join(&call.category).join(&call.tool).join(&call.api)
    }

    fn file(root: &Path, call: &Call) -> PathBuf {
        Self::api_dir(root, call).join(format!("{}.json", call.id()))
    }

    /// The stored reply of a call.
    pub fn get(&self, call: &Call) -> Option<ToolReply> {
        match self {
            Store::Memory(m) => m.lock().ok()?.get(&call.key()).cloned(),
            Store::Dir(root) => read_entry(&Self::file(root, call), call).map(|e| e.reply()),
        }
    }

    /// Stores `reply` unless the call has one already; returns the call's reply (the one stored first).
    pub fn put(&self, call: &Call, reply: ToolReply) -> Result<ToolReply, DataError> {
        match self {
            Store::Memory(m) => {
                let mut map = m
                    .lock()
                    .map_err(|_| DataError::Other("world lock poisoned".into()))?;
                Ok(map.entry(call.key()).or_insert(reply).clone())
            }
            Store::Dir(root) => put_file(&Self::file(root, call), call, reply),
        }
    }
}

fn read_entry(path: &Path, call: &Call) -> Option<Entry> {
    let text = std::fs::read_to_string(path).ok()?;
    let entry: Entry = match serde_json::from_str(&text) {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!("ignoring unreadable world file {}: {e}", path.display());
            return None;
        }
    };
    // A hash collision (or a file copied by hand) must not answer another call.
    if sum2act_core::tools::args::canonical_json(&entry.arguments) != call.arguments {
        tracing::warn!(
            "world file {} holds other arguments; ignored",
            path.display()
        );
        return None;
    }
    Some(entry)
}

/// Writes the entry to a temporary file, then links it into place: the link fails when another writer
/// got there first, and that writer's reply is returned instead.
fn put_file(path: &Path, call: &Call, reply: ToolReply) -> Result<ToolReply, DataError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| DataError::io(dir, e))?;
    let arguments: Value =
        serde_json::from_str(&call.arguments).unwrap_or(Value::Object(Map::new()));
    let entry = Entry {
        api: call.api_label(),
        arguments,
        error: reply.error.clone(),
        response: reply.response.clone(),
        source: reply.source,
    };
    let text = serde_json::to_string_pretty(&entry)
        .map_err(|e| DataError::Other(format!("cannot encode a world reply: {e}")))?;
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        call.id(),
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(text.as_bytes()).and_then(|_| f.sync_all()));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(DataError::io(&tmp, e));
    }
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(reply),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Ok(read_entry(path, call).map(|e| e.reply()).unwrap_or(reply))
        }
        Err(e) => Err(DataError::io(path, e)),
    }
}

/// Every stored entry under a world folder, in path order (for the consistency check).
pub fn entries(root: &Path) -> Vec<(PathBuf, Entry)> {
    sum2act_core::toolbench::io::json_files_under(root)
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(&p).ok()?;
            let entry: Entry = serde_json::from_str(&text).ok()?;
            Some((p, entry))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(args: &str) -> Call {
        Call {
            category: "Data".into(),
            tool: "t".into(),
            api: "a".into(),
            arguments: args.into(),
        }
    }

    fn reply(n: i64) -> ToolReply {
        ToolReply::new(String::new(), json!({"n": n}), Some(ReplySource::Llm))
    }

    #[test]
    fn the_first_reply_stored_wins_on_disk_and_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        for store in [
            Store::Dir(dir.path().to_path_buf()),
            Store::Memory(Mutex::new(HashMap::new())),
        ] {
            let c = call(r#"{"id":"tt1"}"#);
            assert_eq!(store.get(&c), None);
            assert_eq!(store.put(&c, reply(1)).unwrap(), reply(1));
            assert_eq!(store.put(&c, reply(2)).unwrap(), reply(1));
            assert_eq!(store.get(&c), Some(reply(1)));
            assert_eq!(store.get(&call(r#"{"id":"tt2"}"#)), None);
        }
        let all = entries(dir.path());
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].1.arguments, json!({"id": "tt1"}));
        assert_eq!(all[0].1.api, "Data/t/a");
    }

    #[test]
    fn a_file_holding_other_arguments_answers_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::Dir(dir.path().to_path_buf());
        let c = call(r#"{"id":"tt1"}"#);
        store.put(&c, reply(1)).unwrap();
        let path = Store::file(dir.path(), &c);
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("tt1", "tt9");
        std::fs::write(&path, text).unwrap();
        assert_eq!(store.get(&c), None);
    }
}
