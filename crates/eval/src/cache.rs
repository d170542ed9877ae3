//! The judge log, which is also the judge cache: one JSON line per judge call (model id, prompt name and
//! hash, input hash, vote index, verdict, reason). A call whose key is already in the log is answered from
//! it, so re-running an evaluation costs nothing and reproduces the same numbers exactly.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::EvalError;
use sum2act_core::toolbench::io::write_atomic;

/// One judge call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeRecord {
    /// Hash of (model, prompt hash, input hash, vote): the cache key.
    pub key: String,
    /// `answer_status`, `trajectory_status` or `preference`.
    pub kind: String,
    pub model: String,
    /// `evidence` or `tooleval`: the judge mode the call served (empty in old logs).
    #[serde(default)]
    pub mode: String,
    /// Prompt template name and the hash of its text.
    pub prompt: String,
    pub prompt_hash: String,
    /// Hash of everything filled into the prompt.
    pub input_hash: String,
    /// Which independent vote (pass rate) or round (win rate) this is.
    pub vote: u32,
    /// The parsed verdict (`Solved`/`Unsolved`/`Unsure`, or `A`/`B`).
    pub verdict: String,
    pub reason: String,
    /// The raw reply of a call that gave no usable verdict (empty otherwise).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub raw: String,
    /// The query it was first asked for (context for people reading the log; not part of the key).
    #[serde(default)]
    pub query: String,
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub elapsed_ms: u64,
}

/// The cache key of a judge call.
pub fn cache_key(model: &str, prompt_hash: &str, input_hash: &str, vote: u32) -> String {
    let mut h = Sha256::new();
    for part in [model, prompt_hash, input_hash, &vote.to_string()] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    hex::encode(h.finalize())[..32].to_string()
}

/// Hash of a judge input (prompt variables and reply schema).
pub fn input_hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    hex::encode(h.finalize())[..32].to_string()
}

/// The log on disk and in memory.
#[derive(Debug)]
pub struct JudgeCache {
    path: Option<PathBuf>,
    records: Vec<JudgeRecord>,
    index: HashMap<String, usize>,
    unsaved: usize,
    /// Calls answered from the log in this session.
    pub hits: u64,
}

/// New records written after this many, so an interrupted evaluation keeps most of its judge calls.
const SAVE_EVERY: usize = 16;

impl JudgeCache {
    /// An in-memory cache (tests, `--no-cache`).
    pub fn memory() -> Self {
        JudgeCache {
            path: None,
            records: Vec::new(),
            index: HashMap::new(),
            unsaved: 0,
            hits: 0,
        }
    }

    /// Opens the log at `path` (created on first save). Lines that do not parse are skipped with a warning.
    pub fn open(path: &Path) -> Result<Self, EvalError> {
        let mut cache = JudgeCache::memory();
        cache.path = Some(path.to_path_buf());
        if path.is_file() {
            let text = std::fs::read_to_string(path)
                .map_err(|e| sum2act_core::toolbench::DataError::io(path, e))?;
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<JudgeRecord>(line) {
                    Ok(r) => cache.push(r),
                    Err(e) => {
                        tracing::warn!("{}:{}: skipped judge log line: {e}", path.display(), i + 1)
                    }
                }
            }
        }
        cache.unsaved = 0;
        Ok(cache)
    }

    /// Adds the records of another judge log (e.g. the one `eval` wrote for a run), so `compare` reuses
    /// verdicts already paid for. A missing file adds nothing.
    pub fn absorb(&mut self, path: &Path) -> Result<usize, EvalError> {
        if !path.is_file() || self.path.as_deref() == Some(path) {
            return Ok(0);
        }
        let other = JudgeCache::open(path)?;
        let before = self.records.len();
        for r in other.records {
            self.push(r);
        }
        let added = self.records.len() - before;
        self.unsaved += added;
        Ok(added)
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn records(&self) -> &[JudgeRecord] {
        &self.records
    }

    pub fn get(&mut self, key: &str) -> Option<JudgeRecord> {
        let r = self.index.get(key).map(|&i| self.records[i].clone());
        if r.is_some() {
            self.hits += 1;
        }
        r
    }

    fn push(&mut self, record: JudgeRecord) {
        if self.index.contains_key(&record.key) {
            return;
        }
        self.index.insert(record.key.clone(), self.records.len());
        self.records.push(record);
    }

    /// Adds a record and saves now and then.
    pub fn insert(&mut self, record: JudgeRecord) -> Result<(), EvalError> {
        self.push(record);
        self.unsaved += 1;
        if self.unsaved >= SAVE_EVERY {
            self.save()?;
        }
        Ok(())
    }

    /// Writes the whole log atomically.
    pub fn save(&mut self) -> Result<(), EvalError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let mut out = String::new();
        for r in &self.records {
            let line = serde_json::to_string(r)
                .map_err(|e| EvalError::Other(format!("judge log: {e}")))?;
            out.push_str(&line);
            out.push('\n');
        }
        write_atomic(path, out.as_bytes())?;
        self.unsaved = 0;
        Ok(())
    }
}

/// Parses a judge reply: JSON, possibly inside a ```json fence or after some chatter.
pub fn parse_reply(content: &str) -> Option<Value> {
    let t = content.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return v.is_object().then_some(v);
    }
    let start = t.find('{')?;
    let end = t.rfind('}')?;
    (end > start)
        .then(|| serde_json::from_str::<Value>(&t[start..=end]).ok())
        .flatten()
        .filter(Value::is_object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(key: &str) -> JudgeRecord {
        JudgeRecord {
            key: key.into(),
            kind: "answer_status".into(),
            model: "m".into(),
            mode: "tooleval".into(),
            prompt: "judge_answer".into(),
            prompt_hash: "p".into(),
            input_hash: "i".into(),
            vote: 0,
            verdict: "Solved".into(),
            reason: "ok".into(),
            raw: String::new(),
            query: "G1/1".into(),
            prompt_tokens: 1,
            completion_tokens: 1,
            elapsed_ms: 1,
        }
    }

    #[test]
    fn log_round_trips_and_answers_repeats() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("judge_log.jsonl");
        let mut c = JudgeCache::open(&path).unwrap();
        c.insert(record("a")).unwrap();
        c.insert(record("a")).unwrap();
        c.insert(record("b")).unwrap();
        c.save().unwrap();
        let mut again = JudgeCache::open(&path).unwrap();
        assert_eq!(again.len(), 2);
        assert_eq!(
            again.get("b").map(|r| r.verdict),
            Some("Solved".to_string())
        );
        assert_eq!(again.hits, 1);
        assert!(again.get("zzz").is_none());
    }

    #[test]
    fn keys_differ_by_every_part() {
        let k = cache_key("m", "p", "i", 0);
        assert_ne!(k, cache_key("m2", "p", "i", 0));
        assert_ne!(k, cache_key("m", "p2", "i", 0));
        assert_ne!(k, cache_key("m", "p", "i2", 0));
        assert_ne!(k, cache_key("m", "p", "i", 1));
        assert_eq!(k, cache_key("m", "p", "i", 0));
    }

    #[test]
    fn replies_in_fences_parse() {
        assert!(parse_reply("```json\n{\"answer_status\": \"Solved\"}\n```").is_some());
        assert!(parse_reply("no json here").is_none());
        assert!(parse_reply("[1,2]").is_none());
    }
}
