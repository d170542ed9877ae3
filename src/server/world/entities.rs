//! Entity memory: what earlier replies of a world fixed about an identifier (an id's title, a tracking
//! code's status, a transaction's fields), given to the LLM simulator when a later call names the same
//! value, so its reply does not contradict them. Kept as `entities.jsonl` in the world folder (one fact a
//! line, appended; other processes' lines are read before each lookup), or in memory.
//!
//! A fact comes from two places: a record inside a reply that carries an identifier (the record's
//! scalar fields, keyed by the identifier), and an identifier among a call's arguments (the reply's
//! main record, keyed by the argument's value).

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::store::Call;
use crate::server::pyrepr::decode_recorded;
use crate::toolbench::naming::{squash, tokens};
use crate::tools::ToolReply;

/// The file of a world folder that holds its facts.
pub const FILE: &str = "entities.jsonl";

/// Facts given to one simulation, at most.
pub const MAX_FACTS_SHOWN: usize = 6;
/// Characters of facts given to one simulation, at most.
pub const MAX_FACTS_CHARS: usize = 2000;
/// Facts taken from one reply, at most (a list of 100 records gives 30).
const MAX_FACTS_PER_REPLY: usize = 30;
/// Fields kept per record.
const MAX_FIELDS: usize = 12;
/// Longer strings are prose, not facts worth pinning.
const MAX_VALUE_CHARS: usize = 160;

/// What one reply fixed about one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// The identifier as it appeared.
    pub value: String,
    /// `category/tool/api` of the call whose reply fixed it.
    pub api: String,
    /// That call's arguments.
    pub arguments: Value,
    /// The record's scalar fields.
    pub record: Map<String, Value>,
}

/// A world's facts, by identifier.
#[derive(Debug)]
pub struct EntityMemory {
    path: Option<PathBuf>,
    index: Mutex<Index>,
}

#[derive(Debug, Default)]
struct Index {
    facts: Vec<Fact>,
    by_value: HashMap<String, Vec<usize>>,
    /// Bytes of the file read so far.
    offset: u64,
}

impl Index {
    fn contains(&self, fact: &Fact) -> bool {
        self.by_value
            .get(&norm(&fact.value))
            .is_some_and(|ids| ids.iter().any(|&i| self.facts[i] == *fact))
    }

    fn add(&mut self, fact: Fact) {
        if !self.contains(&fact) {
            let key = norm(&fact.value);
            self.by_value.entry(key).or_default().push(self.facts.len());
            self.facts.push(fact);
        }
    }
}

fn norm(v: &str) -> String {
    v.trim().to_lowercase()
}

impl EntityMemory {
    /// The facts of a world folder (`None`: kept in memory for this process).
    pub fn open(dir: Option<&Path>) -> Self {
        let memory = EntityMemory {
            path: dir.map(|d| d.join(FILE)),
            index: Mutex::new(Index::default()),
        };
        memory.refresh();
        memory
    }

    /// Reads lines other processes (and this one) appended since the last read.
    fn refresh(&self) {
        let (Some(path), Ok(mut index)) = (&self.path, self.index.lock()) else {
            return;
        };
        let Ok(mut file) = std::fs::File::open(path) else {
            return;
        };
        let mut text = String::new();
        if file.seek(SeekFrom::Start(index.offset)).is_err()
            || file.read_to_string(&mut text).is_err()
        {
            return;
        }
        // Only whole lines: another process may be writing the last one.
        let Some(end) = text.rfind('\n') else {
            return;
        };
        for line in text[..end].lines() {
            if let Ok(fact) = serde_json::from_str::<Fact>(line) {
                index.add(fact);
            }
        }
        index.offset += end as u64 + 1;
    }

    /// Takes the facts a reply fixes (nothing from an error reply; nothing known already, so a recorded
    /// reply served again adds nothing).
    pub fn remember(&self, call: &Call, args: &Map<String, Value>, reply: &ToolReply) {
        if !reply.error.is_empty() {
            return;
        }
        self.refresh();
        let mut facts = extract(&call.api_label(), args, &reply.response);
        if let Ok(index) = self.index.lock() {
            facts.retain(|f| !index.contains(f));
        }
        if facts.is_empty() {
            return;
        }
        match &self.path {
            None => {
                if let Ok(mut index) = self.index.lock() {
                    facts.into_iter().for_each(|f| index.add(f));
                }
            }
            Some(path) => {
                let mut lines = String::new();
                for f in &facts {
                    if let Ok(line) = serde_json::to_string(f) {
                        lines.push_str(&line);
                        lines.push('\n');
                    }
                }
                // One append per reply: concurrent writers never interleave within a line.
                let written = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .and_then(|mut f| f.write_all(lines.as_bytes()));
                if let Err(e) = written {
                    tracing::warn!("cannot append to {}: {e}", path.display());
                }
            }
        }
    }

    /// The facts about the values a call names, most recent first, within the prompt's bounds.
    pub fn recall(&self, args: &Map<String, Value>) -> Vec<Fact> {
        self.refresh();
        let Ok(index) = self.index.lock() else {
            return Vec::new();
        };
        let mut ids: Vec<usize> = Vec::new();
        for value in named_values(args) {
            if let Some(found) = index.by_value.get(&norm(&value)) {
                ids.extend(found);
            }
        }
        ids.sort_unstable_by(|a, b| b.cmp(a));
        ids.dedup();
        let mut out = Vec::new();
        let mut chars = 0;
        for fact in ids.into_iter().map(|i| &index.facts[i]) {
            let line = render_one(fact);
            if out.len() >= MAX_FACTS_SHOWN || chars + line.len() > MAX_FACTS_CHARS {
                break;
            }
            chars += line.len() + 1;
            out.push(fact.clone());
        }
        out
    }
}

/// The facts as prompt lines (`none` when there are none).
pub fn render(facts: &[Fact]) -> String {
    if facts.is_empty() {
        return "none".to_string();
    }
    facts.iter().map(render_one).collect::<Vec<_>>().join("\n")
}

/// One line, never cut inside a value: fields are dropped from the end until it fits.
fn render_one(f: &Fact) -> String {
    let mut record = f.record.clone();
    loop {
        let line = format!(
            "- `{}` (a reply of {} to {}): {}",
            f.value,
            f.api,
            f.arguments,
            Value::Object(record.clone())
        );
        if line.len() <= MAX_FACTS_CHARS / 3 || record.len() <= 1 {
            return line;
        }
        if let Some(last) = record.keys().next_back().cloned() {
            record.remove(&last);
        }
    }
}

/// Every scalar value of the arguments (lists and comma-separated lists split), as a call names them.
fn named_values(args: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack: Vec<&Value> = args.values().collect();
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => out.extend(
                s.split(',')
                    .map(str::trim)
                    .filter(|p| p.chars().count() >= 2)
                    .map(str::to_string),
            ),
            Value::Number(n) => out.push(n.to_string()),
            Value::Array(a) => stack.extend(a),
            Value::Object(m) => stack.extend(m.values()),
            _ => {}
        }
    }
    out
}

/// The facts one reply fixes (see the module doc).
pub fn extract(api: &str, args: &Map<String, Value>, response: &Value) -> Vec<Fact> {
    let response = decode_recorded(response);
    let arguments = Value::Object(args.clone());
    let fact = |value: String, record: Map<String, Value>| Fact {
        value,
        api: api.to_string(),
        arguments: arguments.clone(),
        record,
    };
    let mut out = Vec::new();
    if let Some(main) = main_record(&response) {
        for (k, v) in args {
            if let Some(value) = identifier(k, v) {
                out.push(fact(value, main.clone()));
            }
        }
    }
    let mut stack = vec![&response];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                let record = scalars(m);
                for (k, x) in m {
                    if let Some(value) = identifier(k, x)
                        && record.len() > 1
                    {
                        out.push(fact(value, record.clone()));
                    }
                }
                stack.extend(m.values().rev());
            }
            Value::Array(a) => stack.extend(a.iter().rev()),
            _ => {}
        }
        if out.len() >= MAX_FACTS_PER_REPLY {
            break;
        }
    }
    out.truncate(MAX_FACTS_PER_REPLY);
    out
}

/// The reply's own record: its scalar fields, or those of its only object field (`{"result": {...}}`).
fn main_record(v: &Value) -> Option<Map<String, Value>> {
    let mut v = v;
    for _ in 0..3 {
        let m = v.as_object()?;
        let record = scalars(m);
        if !record.is_empty() {
            return Some(record);
        }
        let mut objects = m.values().filter(|x| x.is_object());
        match (objects.next(), objects.next()) {
            (Some(only), None) => v = only,
            _ => return None,
        }
    }
    None
}

/// A record's short scalar fields, less the ones that change with every request (clocks, request ids).
fn scalars(m: &Map<String, Value>) -> Map<String, Value> {
    m.iter()
        .filter(|(k, _)| !volatile(k))
        .filter(|(_, v)| match v {
            Value::String(s) => !s.trim().is_empty() && s.chars().count() <= MAX_VALUE_CHARS,
            Value::Number(_) | Value::Bool(_) => true,
            _ => false,
        })
        .take(MAX_FIELDS)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Fields whose values are the moment of the request, not a property of the entity.
fn volatile(k: &str) -> bool {
    matches!(
        squash(k).as_str(),
        "timestamp"
            | "time"
            | "servertime"
            | "requestid"
            | "traceid"
            | "requesttime"
            | "generatedat"
            | "generatedin"
            | "fetchedat"
            | "checkedat"
            | "retrievedat"
            | "took"
            | "elapsed"
    )
}

/// The last word of a field name (`imdb_id`, `trackingNumber`, `tconst` → `id`, `number`, `tconst`).
fn last_word(k: &str) -> String {
    tokens(k).pop().unwrap_or_default()
}

/// Field names that hold an identifier whatever its value looks like.
fn id_field(k: &str) -> bool {
    let last = last_word(k);
    matches!(
        last.as_str(),
        "id" | "ids"
            | "code"
            | "number"
            | "no"
            | "symbol"
            | "ticker"
            | "slug"
            | "isbn"
            | "uuid"
            | "guid"
            | "sku"
            | "ref"
            | "reference"
            | "tconst"
            | "asin"
            | "iata"
            | "icao"
    ) || matches!(
        squash(k).as_str(),
        "imdbid" | "trackingnumber" | "orderid" | "transactionid"
    )
}

/// The value as an identifier, when the field or the value says it is one: a value under an id-like
/// field, or a token of letters and digits (`tt2937898`, `RB413450335SG`). Dates, URLs and prose are not.
fn identifier(k: &str, v: &Value) -> Option<String> {
    let text = match v {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        _ => return None,
    };
    let n = text.chars().count();
    if !(2..=64).contains(&n) || text.contains(char::is_whitespace) || text.contains("://") {
        return None;
    }
    let digits = text.chars().filter(char::is_ascii_digit).count();
    let letters = text.chars().filter(|c| c.is_alphabetic()).count();
    let date_like = text.len() >= 8
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | '/' | '.' | 'T' | 'Z' | '+'));
    if date_like && !id_field(k) {
        return None;
    }
    let token = n >= 5 && digits >= 2 && letters >= 1;
    let keyed = id_field(k) && (n >= 3 || digits == n);
    (token || keyed).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn records_with_identifiers_and_identifier_arguments_become_facts() {
        let reply = json!({"results": [
            {"imdb_id": "tt0999", "title": "Salt Road", "year": 2011, "overview": "x".repeat(400)},
            {"imdb_id": "tt1000", "title": "The Longest Winter", "year": 2015}
        ]});
        let facts = extract("Movies/m/search", &args(json!({"q": "road"})), &reply);
        let salt = facts.iter().find(|f| f.value == "tt0999").unwrap();
        assert_eq!(salt.record["title"], "Salt Road");
        assert!(salt.record.get("overview").is_none(), "prose is not a fact");
        assert_eq!(facts.len(), 2, "{facts:?}");

        // The argument names the entity; the reply's own record is what it fixed.
        let track = extract(
            "Logistics/p/track",
            &args(json!({"tracking_number": "GHI789", "lang": "en"})),
            &json!({"data": {"status": "delivered", "city": "Lyon", "timestamp": "2024-01-01"}}),
        );
        assert_eq!(track.len(), 1, "{track:?}");
        assert_eq!(track[0].value, "GHI789");
        assert_eq!(
            Value::Object(track[0].record.clone()),
            json!({"status": "delivered", "city": "Lyon"})
        );
    }

    #[test]
    fn dates_prose_and_plain_words_are_not_identifiers() {
        assert_eq!(identifier("date", &json!("2023-06-15")), None);
        assert_eq!(identifier("q", &json!("thriller")), None);
        assert_eq!(identifier("name", &json!("Lionel Messi")), None);
        assert_eq!(identifier("url", &json!("https://a.b/c123x")), None);
        assert_eq!(identifier("valid", &json!(true)), None);
        assert_eq!(identifier("id", &json!(28003)), Some("28003".into()));
        assert_eq!(
            identifier("trackingNumber", &json!("GHI")),
            Some("GHI".into())
        );
        assert_eq!(
            identifier("x", &json!("RB413450335SG")),
            Some("RB413450335SG".into())
        );
        assert_eq!(last_word("trackingNumber"), "number");
        assert_eq!(last_word("valid"), "valid");
    }

    #[test]
    fn recall_finds_facts_by_any_named_value_across_processes_and_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let call = Call {
            category: "Movies".into(),
            tool: "m".into(),
            api: "search".into(),
            arguments: "{}".into(),
        };
        let many: Vec<Value> = (0..40)
            .map(|i| json!({"id": format!("tt{i:04}"), "title": format!("Film {i}"), "note": "n".repeat(150)}))
            .collect();
        let reply = ToolReply::new(String::new(), json!({"items": many}), None);
        let writer = EntityMemory::open(Some(dir.path()));
        writer.remember(&call, &Map::new(), &reply);
        let written = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        writer.remember(&call, &Map::new(), &reply);
        assert_eq!(
            std::fs::read_to_string(dir.path().join(FILE)).unwrap(),
            written,
            "a reply seen again adds no line"
        );
        // Another process's memory reads the same file.
        let reader = EntityMemory::open(Some(dir.path()));
        let found = reader.recall(&args(json!({"ids": "tt0003, tt0004"})));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(render(&found).contains("Film 3"));
        let all: Vec<String> = (0..40).map(|i| format!("tt{i:04}")).collect();
        let capped = reader.recall(&args(json!({"ids": all})));
        assert!(capped.len() <= MAX_FACTS_SHOWN);
        assert!(render(&capped).len() <= MAX_FACTS_CHARS + MAX_FACTS_SHOWN);
        assert_eq!(render(&[]), "none");
    }
}
