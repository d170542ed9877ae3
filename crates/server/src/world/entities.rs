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
use sum2act_core::tools::ToolReply;

mod extract;
mod ident;
mod recall;

pub use extract::extract;
pub(crate) use extract::own_record;
use ident::names_identifier;
pub use ident::{id_field, identifier, identifier_argument, weak_identifier};

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
/// A nested value (an order's `items`, its `shippingAddress`) is kept when its JSON is this short.
const MAX_NESTED_CHARS: usize = 320;
/// Identifiers this short, or all digits and this short, name different things in different places
/// (a hole `12`, a year `2015`): they match only under an identifier's name (see [`EntityMemory::recall`]).
const WEAK_ID_CHARS: usize = 5;

/// What one reply fixed about one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// The identifier as it appeared.
    pub value: String,
    /// The field or argument it appeared under (empty in facts written before it was kept).
    #[serde(default)]
    pub key: String,
    /// Where the record sits in the reply (`results[]`, `meta`; empty: the reply itself), so a
    /// recalled fact says what it belongs to.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// `category/tool/api` of the call whose reply fixed it.
    pub api: String,
    /// That call's arguments.
    pub arguments: Value,
    /// The record's scalar fields and short nested values.
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
}

/// The facts as prompt lines (`none` when there are none).
pub fn render(facts: &[Fact]) -> String {
    if facts.is_empty() {
        return "none".to_string();
    }
    facts.iter().map(render_one).collect::<Vec<_>>().join("\n")
}

/// One line, never cut inside a value: fields are dropped from the end until it fits. The record is
/// shown under its path in the reply (`meta`, `results[]`), so its fields keep what they belong to.
fn render_one(f: &Fact) -> String {
    let mut record = f.record.clone();
    let under = match (f.path.as_str(), f.key.as_str()) {
        (_, "") => String::new(),
        ("", key) => format!("`{key}` "),
        (path, key) => format!("`{path}.{key}` "),
    };
    loop {
        let line = format!(
            "- `{}` ({under}in a reply of {} to {}): {}",
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

/// Every scalar value of the arguments (lists and comma-separated lists split), as a call names them,
/// with the argument it was under.
pub fn named_values(args: &Map<String, Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack: Vec<(&String, &Value)> = args.iter().collect();
    while let Some((key, v)) = stack.pop() {
        match v {
            // One character names something only under an identifier's name (`"id": "1"`).
            Value::String(s) => out.extend(
                s.split(',')
                    .map(str::trim)
                    .filter(|p| p.chars().count() >= 2 || (!p.is_empty() && names_identifier(key)))
                    .map(|p| (key.clone(), p.to_string())),
            ),
            Value::Number(n) => out.push((key.clone(), n.to_string())),
            Value::Array(a) => stack.extend(a.iter().map(|x| (key, x))),
            Value::Object(m) => stack.extend(m.values().map(|x| (key, x))),
            _ => {}
        }
    }
    out
}

/// `category/tool` of a `category/tool/api` label.
pub fn tool_of(api: &str) -> &str {
    api.rsplit_once('/').map_or(api, |(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::ident::last_word;
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
            &json!({"data": {"code": "GHI789", "status": "delivered", "city": "Lyon", "timestamp": "2024-01-01"}}),
        );
        assert_eq!(track.len(), 2, "{track:?}");
        assert_eq!(track[0].value, "GHI789");
        assert_eq!(track[0].path, "data");
        assert_eq!(
            Value::Object(track[0].record.clone()),
            json!({"code": "GHI789", "status": "delivered", "city": "Lyon"})
        );
    }

    #[test]
    fn a_record_keeps_its_short_nested_values() {
        // Agent requests 71-161: order 1042's items and ship-to differed between the order list and
        // the order detail; the facts had kept only the scalar fields.
        let list = json!([{"id": 1042, "userId": 17, "status": "processing",
            "items": [{"productId": 311, "name": "Wireless Mouse", "quantity": 1, "price": 24.99}],
            "shippingAddress": {"name": "Daniel Reyes", "city": "Portland"},
            "history": "x".repeat(400).chars().map(|c| json!(c.to_string())).collect::<Vec<_>>()}]);
        let facts = extract("Tools/shop/get_user_orders", &Map::new(), &list);
        let order = facts.iter().find(|f| f.value == "1042").unwrap();
        assert_eq!(order.key, "id");
        assert_eq!(order.record["items"][0]["name"], "Wireless Mouse");
        assert_eq!(order.record["shippingAddress"]["name"], "Daniel Reyes");
        assert!(
            order.record.get("history").is_none(),
            "a long list is not a fact"
        );
        // The detail call names the order: the list's record, items included, is recalled.
        let memory = EntityMemory::open(None);
        let call = Call {
            category: "Tools".into(),
            tool: "shop".into(),
            api: "get_user_orders".into(),
            arguments: "{}".into(),
        };
        memory.remember(
            &call,
            &Map::new(),
            &ToolReply::new(String::new(), list, None),
        );
        let found = memory.recall("Tools/shop/get_order", &args(json!({"is_id": "1042"})));
        assert!(render(&found).contains("Wireless Mouse"), "{found:?}");
    }

    #[test]
    fn a_short_number_matches_only_where_the_call_names_an_identifier() {
        let memory = EntityMemory::open(None);
        let remember = |api: &str, reply: Value| {
            let (category, rest) = api.split_once('/').unwrap_or_default();
            let (tool, name) = rest.split_once('/').unwrap_or_default();
            let call = Call {
                category: category.into(),
                tool: tool.into(),
                api: name.into(),
                arguments: "{}".into(),
            };
            memory.remember(
                &call,
                &Map::new(),
                &ToolReply::new(String::new(), reply, None),
            );
        };
        remember(
            "Sports/golf/scorecards",
            json!({"holes": [{"holeId": 12, "par": 4, "holeScore": 3}]}),
        );
        remember(
            "Travel/flixbus/stations",
            json!([{"id": 2015, "name": "Paris (Bercy Seine)", "city_id": 1371}]),
        );
        remember(
            "Travel/flixbus/cities",
            json!([{"id": "CHI4567X", "name": "Chicago"}]),
        );
        // Simulator requests 256 and 285: a shop's `itemsperpage` 12 and a movie `year` 2015.
        let shop = args(json!({"keyword": "sofa", "curpage": 1, "itemsperpage": 12}));
        assert!(memory.recall("eCommerce/shop/search", &shop).is_empty());
        let movies = args(json!({"year": "2015", "genre": "Comedy"}));
        assert!(memory.recall("Movies/m/fetch", &movies).is_empty());
        // Named as an identifier: the same tool, or the same field name in another tool.
        let station = args(json!({"station_id": 2015}));
        assert_eq!(memory.recall("Travel/flixbus/schedule", &station).len(), 1);
        let hole = args(json!({"holeId": "12"}));
        assert_eq!(memory.recall("Sports/other/hole", &hole).len(), 1);
        assert!(
            memory
                .recall("Sports/other/hole", &args(json!({"id": "12"})))
                .is_empty()
        );
        // An identifier-like token matches under any name.
        let q = args(json!({"q": "chi4567x"}));
        assert_eq!(memory.recall("Travel/other/search", &q).len(), 1);
    }

    #[test]
    fn dates_prose_and_plain_words_are_not_identifiers() {
        assert_eq!(identifier("date", &json!("2023-06-15")), None);
        assert_eq!(identifier("q", &json!("thriller")), None);
        assert_eq!(identifier("name", &json!("Lionel Messi")), None);
        assert_eq!(identifier("url", &json!("https://a.b/c123x")), None);
        assert_eq!(identifier("valid", &json!(true)), None);
        assert_eq!(identifier("id", &json!(28003)), Some("28003".into()));
        assert_eq!(identifier("id", &json!(5)), Some("5".into()));
        assert_eq!(identifier("page", &json!(5)), None);
        assert_eq!(
            identifier("trackingNumber", &json!("GHI")),
            Some("GHI".into())
        );
        assert_eq!(
            identifier("x", &json!("RB413450335SG")),
            Some("RB413450335SG".into())
        );
        assert_eq!(identifier("status_code", &json!(200)), None);
        assert_eq!(identifier("code", &json!(404)), None);
        assert_eq!(identifier("code", &json!("FR")), None);
        assert_eq!(identifier("code", &json!("ABC")), Some("ABC".into()));
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
        let found = reader.recall("Movies/m/title", &args(json!({"ids": "tt0003, tt0004"})));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(render(&found).contains("Film 3"));
        let all: Vec<String> = (0..40).map(|i| format!("tt{i:04}")).collect();
        let capped = reader.recall("Movies/m/title", &args(json!({"ids": all})));
        assert!(capped.len() <= MAX_FACTS_SHOWN);
        assert!(render(&capped).len() <= MAX_FACTS_CHARS + MAX_FACTS_SHOWN);
        assert_eq!(render(&[]), "none");
    }
}
