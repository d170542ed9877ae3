//! The world-consistency check (`serve fidelity --world DIR`, the fidelity bench's `--world`): pairs of
//! replies in a world folder that mention the same identifier, scored for contradictions (the same id
//! with another title, status or field value), and replies whose record echoes an identifier argument
//! with another value (a tracking result for another code than the one asked).
//!
//! Identifiers and records are read as entity memory reads them (`entities::extract`). A pair counts
//! when the two records share a field besides the identifier and are about one entity: two records
//! whose other identifier fields differ are two entities that share a value (two orders of user `17`,
//! two players' scorecards of tournament `060`, a city and a station of that city). It contradicts
//! when a shared field has another value (nested values compared on what both show; a rank, points or
//! score only within one API, as two rankings may rank one player differently). All-digit identifiers
//! shorter than 9 digits (`28003`) name different things in different tools, so their pairs count only
//! within one tool. Differences the two calls' differing arguments explain are no contradiction
//! (`pair_rules`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Map, Value};

use super::entities::{extract, id_field, identifier, own_record, tool_of};
use super::pair_rules::{
    about_other_entities, about_the_reply, agree, relative, same, same_collection,
};
use super::store::entries;

/// The figures of one world folder.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Consistency {
    /// Stored replies read (error replies left out).
    pub replies: usize,
    /// Identifiers mentioned by at least two replies.
    pub shared_identifiers: usize,
    /// Pairs of replies that mention one identifier with at least one common field.
    pub pairs: usize,
    pub contradicting: usize,
    /// Replies whose record has the field of an identifier argument.
    pub echoes: usize,
    /// Of those, the ones with another value there.
    pub wrong_echoes: usize,
    /// The contradictions, for the reader (the first [`MAX_EXAMPLES`]).
    pub examples: Vec<String>,
}

impl Consistency {
    /// Contradicting pairs in percent of the pairs.
    pub fn contradiction_pct(&self) -> f64 {
        pct(self.contradicting, self.pairs)
    }

    /// The printed part of the fidelity table: eight contradictions, or with `all` every one kept.
    pub fn table(&self, world: &Path, all: bool) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "(d) world consistency: {} ({} replies, {} identifiers mentioned by two or more)",
            world.display(),
            self.replies,
            self.shared_identifiers
        );
        let _ = writeln!(
            out,
            "    pairs of replies sharing an identifier: {}; contradicting: {} ({:.1}%)",
            self.pairs,
            self.contradicting,
            self.contradiction_pct()
        );
        let _ = writeln!(
            out,
            "    replies echoing an identifier argument: {}; with another value: {} ({:.1}%)",
            self.echoes,
            self.wrong_echoes,
            pct(self.wrong_echoes, self.echoes)
        );
        for e in self
            .examples
            .iter()
            .take(if all { MAX_EXAMPLES } else { 8 })
        {
            let _ = writeln!(out, "      contradiction: {e}");
        }
        out
    }
}

/// Contradictions kept for printing (`serve fidelity --world DIR --all-violations` prints them all).
pub const MAX_EXAMPLES: usize = 500;

/// All-digit identifiers shorter than this are row numbers of one service (product `882917` of one
/// demo shop is not product `882917` of another): they pair only within one tool. Longer ones (an
/// ISBN, an EAN) name one thing everywhere.
const GLOBAL_DIGITS: usize = 9;

fn pct(n: usize, d: usize) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}

/// One reply's view of one identifier.
struct Mention {
    reply: usize,
    tool: String,
    api: String,
    /// The call's arguments: an identifier passed in as the context of a query (a store's id for a
    /// product search) is no entity the reply describes.
    args: Map<String, Value>,
    record: Map<String, Value>,
}

/// Reads every reply of the world folder and scores it.
pub fn check(world: &Path) -> Consistency {
    let mut c = Consistency::default();
    let mut by_value: BTreeMap<String, Vec<Mention>> = BTreeMap::new();
    for (i, (_, entry)) in entries(world).into_iter().enumerate() {
        if !entry.error.is_empty() {
            continue;
        }
        c.replies += 1;
        let args = entry.arguments.as_object().cloned().unwrap_or_default();
        let facts = extract(&entry.api, &args, &entry.response);
        count_echoes(&args, &entry.response, &mut c);
        for f in facts {
            let key = f.value.trim().to_lowercase();
            let list = by_value.entry(key).or_default();
            // One mention per reply and entity: its records' fields together, unless they conflict (a
            // search's player and coach who share the slug `lionel-messi` are two entities).
            let one_entity = |m: &Mention| {
                m.record
                    .iter()
                    .all(|(k, v)| f.record.get(k).is_none_or(|w| agree(v, w)))
            };
            match list.iter_mut().find(|m| m.reply == i && one_entity(m)) {
                Some(m) => {
                    for (k, v) in f.record {
                        m.record.entry(k).or_insert(v);
                    }
                }
                None => list.push(Mention {
                    reply: i,
                    tool: tool_of(&f.api).to_string(),
                    api: f.api.clone(),
                    args: args.clone(),
                    record: f.record,
                }),
            }
        }
    }
    // Two records met under two of their values (an order under its id and its user's) are one pair.
    let mut seen = std::collections::HashSet::new();
    // Two replies and one identifier are one pair, however many records of theirs met (a player's
    // four round records of a scorecard against his ranking record); it contradicts if any of them do.
    let mut scored: BTreeMap<(usize, usize, &str), Option<String>> = BTreeMap::new();
    for (value, mentions) in &by_value {
        if mentions.len() < 2 {
            continue;
        }
        c.shared_identifiers += 1;
        let global = value.chars().any(char::is_alphabetic) || value.len() >= GLOBAL_DIGITS;
        for (i, a) in mentions.iter().enumerate() {
            for b in &mentions[i + 1..] {
                let records = (
                    Value::Object(a.record.clone()),
                    Value::Object(b.record.clone()),
                );
                let key = (
                    a.reply,
                    b.reply,
                    records.0.to_string(),
                    records.1.to_string(),
                );
                // Two records of one reply that share a value are two entities (the merge above).
                if a.reply == b.reply
                    || (!global && a.tool != b.tool)
                    || (!global && rows_of_two_collections(value, a, b))
                    || other_queries_in_one_context(value, a, b)
                    || about_other_entities(value, (&a.api, &a.args), (&b.api, &b.args))
                    || !seen.insert(key)
                {
                    continue;
                }
                if let Some(differing) = score_pair(value, a, b) {
                    let slot = scored.entry((a.reply, b.reply, value)).or_default();
                    if slot.is_none() && !differing.is_empty() {
                        *slot = Some(format!(
                            "`{value}` in {} and {}: {}",
                            a.api,
                            b.api,
                            differing.join("; ")
                        ));
                    }
                }
            }
        }
    }
    c.pairs = scored.len();
    c.examples = scored.into_values().flatten().collect();
    c.contradicting = c.examples.len();
    c.examples.truncate(MAX_EXAMPLES);
    c
}

/// A short number that is each record's own `id` in two APIs listing different collections (city
/// `1374` in `cities`, station `1374` in `stations`): two rows that happen to share a number. A named
/// id (`playerId` in a scorecard and a ranking) is one entity's, whatever the APIs' names.
fn rows_of_two_collections(value: &str, a: &Mention, b: &Mention) -> bool {
    let id = Value::String(value.to_string());
    let own_id = |m: &Mention| {
        m.record
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("id") && same(v, &id))
    };
    a.api != b.api && own_id(a) && own_id(b) && !same_collection(&a.api, &b.api)
}

/// Two calls of one API that both pass `value` in but ask otherwise different things (store 1122
/// searched for "pasta" and for "parmesan"; player 28003's profile and his transfers page): their
/// replies answer two questions about one context, so their fields need not agree.
fn other_queries_in_one_context(value: &str, a: &Mention, b: &Mention) -> bool {
    let passes = |args: &Map<String, Value>| {
        args.values().any(|v| match v {
            Value::String(s) => s.trim().eq_ignore_ascii_case(value),
            Value::Number(n) => n.to_string() == value,
            _ => false,
        })
    };
    a.api == b.api && a.args != b.args && passes(&a.args) && passes(&b.args)
}

/// The fields on which two records of one identifier differ; `None` when they are no pair (two entities,
/// or nothing shared besides the identifier).
fn score_pair(value: &str, a: &Mention, b: &Mention) -> Option<Vec<String>> {
    let mut shared = 0;
    let mut differing = Vec::new();
    let id = Value::String(value.to_string());
    for (k, va) in &a.record {
        let Some(vb) = b.record.get(k) else { continue };
        if same(va, &id) && same(vb, &id) {
            continue;
        }
        let identifiers = identifier(k, va).is_some() && identifier(k, vb).is_some();
        if (id_field(k) || identifiers) && !agree(va, vb) {
            // Another identifier differs (an id, a page's path `/lionel-messi/profil/spieler/28003`):
            // two entities or two pages that share `value`, not one seen twice.
            return None;
        }
        if (a.api != b.api && relative(k)) || about_the_reply(k) {
            continue;
        }
        shared += 1;
        if !agree(va, vb) {
            differing.push(format!("{k}: {va} / {vb}"));
        }
    }
    (shared > 0).then_some(differing)
}

/// An identifier argument whose field the reply's own record also has (read from the record itself:
/// a reply with another value there is no fact about the argument's entity).
fn count_echoes(args: &Map<String, Value>, response: &Value, c: &mut Consistency) {
    let Some(record) = own_record(response) else {
        return;
    };
    for (k, v) in args {
        let echoed = identifier(k, v).and_then(|_| record.get(k));
        if let Some(echoed) = echoed {
            c.echoes += 1;
            if !same(echoed, v) {
                c.wrong_echoes += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::store::{Call, Store};
    use serde_json::json;
    use sum2act_core::tools::{ReplySource, ToolReply};

    fn put(store: &Store, api: &str, args: Value, response: Value) {
        let call = Call {
            category: "Movies".into(),
            tool: "imdb".into(),
            api: api.into(),
            arguments: sum2act_core::tools::args::canonical_json(&args),
        };
        store
            .put(
                &call,
                ToolReply::new(String::new(), response, Some(ReplySource::Llm)),
            )
            .unwrap();
    }

    #[test]
    fn the_same_id_with_another_title_is_a_contradiction() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::Dir(dir.path().to_path_buf());
        put(
            &store,
            "search",
            json!({"q": "road"}),
            json!({"results": [{"id": "tt0999", "title": "Salt Road", "year": 2011}]}),
        );
        put(
            &store,
            "title",
            json!({"id": "tt0999"}),
            json!({"id": "tt0999", "title": "The Longest Winter", "year": 2011}),
        );
        put(
            &store,
            "rating",
            json!({"id": "tt0999"}),
            json!({"id": "tt0999", "title": "Salt Road", "rating": 7.1}),
        );
        put(
            &store,
            "track",
            json!({"code": "GHI789"}),
            json!({"code": "XYZ111", "status": "delivered"}),
        );
        let c = check(dir.path());
        assert_eq!(c.replies, 4);
        // search/title contradict on the title; search/rating and title/rating share the title only.
        assert_eq!((c.pairs, c.contradicting), (3, 2), "{c:?}");
        assert!(c.examples[0].contains("Salt Road"), "{:?}", c.examples);
        assert_eq!((c.echoes, c.wrong_echoes), (3, 1), "{c:?}");
        let table = c.table(dir.path(), false);
        assert!(table.contains("contradicting: 2 (66.7%)"), "{table}");
    }

    #[test]
    fn records_of_two_entities_sharing_a_value_are_not_a_pair_and_nested_values_count() {
        // The reference world's false alarms: two orders of user 17, two players' scorecards of
        // tournament 060; and what it missed: order 1042's items differing between list and detail.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::Dir(dir.path().to_path_buf());
        let mouse = json!([{"productId": 311, "name": "Wireless Mouse", "quantity": 1}]);
        put(
            &store,
            "orders",
            json!({}),
            json!([{"id": 1042, "userId": 17, "status": "processing", "items": mouse},
                   {"id": 1038, "userId": 17, "status": "delivered"}]),
        );
        put(
            &store,
            "order",
            json!({"is_id": "1042"}),
            json!({"id": 1042, "userId": 17, "status": "processing", "paymentMethod": "card",
                   "items": [{"productId": 215, "name": "Bluetooth Headphones", "quantity": 1, "price": 29.99}]}),
        );
        put(
            &store,
            "scorecards",
            json!({"playerid": "46046", "tournid": "060"}),
            json!({"playerId": "46046", "tournId": "060", "lastName": "Scheffler", "roundScore": "-5"}),
        );
        put(
            &store,
            "scorecards",
            json!({"playerid": "28237", "tournid": "060"}),
            json!({"playerId": "28237", "tournId": "060", "lastName": "McIlroy", "roundScore": "-3"}),
        );
        let c = check(dir.path());
        // One pair: order 1042 in the list and in the detail, contradicting on its items.
        assert_eq!((c.pairs, c.contradicting), (1, 1), "{c:?}");
        assert!(
            c.examples[0].contains("Bluetooth Headphones"),
            "{:?}",
            c.examples
        );
    }

    #[test]
    fn two_queries_in_one_context_are_not_a_pair_but_one_query_repeated_elsewhere_is() {
        // The dev reference world's false alarms: one store searched for two keywords.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::Dir(dir.path().to_path_buf());
        for (keyword, total) in [("pasta", 387), ("parmesan cheese", 58)] {
            put(
                &store,
                "product_search",
                json!({"store_id": "1122", "keyword": keyword}),
                json!({"store_id": "1122", "keyword": keyword, "total_results": total}),
            );
        }
        // A store's own record met in two other calls must still agree.
        put(
            &store,
            "nearby_stores",
            json!({"zip": "10010"}),
            json!({"stores": [{"store_id": "3255", "name": "Kips Bay", "phone": "212-555-0100"}]}),
        );
        put(
            &store,
            "store_details",
            json!({"store_id": "3255"}),
            json!({"store_id": "3255", "name": "Kips Bay", "phone": "212-555-0199"}),
        );
        let c = check(dir.path());
        assert_eq!((c.pairs, c.contradicting), (1, 1), "{c:?}");
        assert!(c.examples[0].contains("212-555-0199"), "{:?}", c.examples);
    }

    #[test]
    fn two_entities_in_one_reply_and_a_pages_path_and_many_records_of_one_pair() {
        // The dev reference world's false alarms: a search's coach and player share the slug
        // `lionel-messi`; a details page's own path differs from the search's by the page asked; a
        // record inside the answers about two products; and a player's round records against his
        // ranking count as one pair.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::Dir(dir.path().to_path_buf());
        put(
            &store,
            "search",
            json!({"name": "messi"}),
            json!({"Coaches": [{"link": "/lionel-messi/profil/trainer/96128", "name": "Lionel Messi", "slug": "lionel-messi"}],
                   "Players": [{"link": "/lionel-messi/profil/spieler/28003", "name": "Lionel Messi", "slug": "lionel-messi"}]}),
        );
        put(
            &store,
            "details",
            json!({"other": "trainer", "id_talent": "28003", "part_slug": "lionel-messi"}),
            json!({"name": "Lionel Messi", "id": "28003", "slug": "lionel-messi", "link": "/lionel-messi/trainer/spieler/28003"}),
        );
        for (tcin, days) in [("12935487", 3), ("13402587", 6)] {
            put(
                &store,
                "fulfillment",
                json!({"tcin": tcin, "store_id": tcin}),
                json!({"tcin": tcin, "services": [{"shipping_method_id": "STANDARD", "days": days, "name": "Standard"}]}),
            );
        }
        put(
            &store,
            "scorecards",
            json!({"tournid": "060"}),
            json!([{"playerId": "28237", "lastName": "McIlroy", "roundId": 1, "score": "-3"},
                   {"playerId": "28237", "lastName": "McIlroy", "roundId": 2, "score": "-1"}]),
        );
        put(
            &store,
            "ranking",
            json!({}),
            json!([{"playerId": "28237", "lastName": "McIlroy", "rank": 2}]),
        );
        let c = check(dir.path());
        assert_eq!(c.contradicting, 0, "{c:?}");
        // The scorecards and the ranking: one pair, not one per round record.
        assert_eq!(c.pairs, 1, "{c:?}");
    }

    #[test]
    fn a_city_and_a_station_numbered_alike_are_no_pair_and_a_reply_hash_is_no_field() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::Dir(dir.path().to_path_buf());
        put(
            &store,
            "cities",
            json!({}),
            json!([{"id": 1374, "name": "Paris", "country": "FR"}]),
        );
        put(
            &store,
            "stations",
            json!({}),
            json!([{"id": 1374, "name": "Paris (Bercy Seine)", "city_id": 1374, "country": "FR"}]),
        );
        put(
            &store,
            "order_list",
            json!({}),
            json!([{"id": 5, "status": "completed", "response_hash": "a1"}]),
        );
        put(
            &store,
            "order",
            json!({"is_id": "5"}),
            json!({"id": 5, "status": "completed", "response_hash": "b2"}),
        );
        let c = check(dir.path());
        assert_eq!((c.pairs, c.contradicting), (1, 0), "{c:?}");
        // The order's status differing is still a contradiction.
        put(
            &store,
            "order",
            json!({"is_id": 5}),
            json!({"id": 5, "status": "shipped"}),
        );
        assert_eq!(check(dir.path()).contradicting, 1);
    }

    #[test]
    fn reply_metadata_and_error_codes_are_not_the_entity_s_fields() {
        // Issue 42: six of eight counted contradictions compared a reply's own `processedTime`, one
        // took an error code `1` for an entity.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::Dir(dir.path().to_path_buf());
        for (q, at) in [
            ("salt", "2024-05-01T10:00:00Z"),
            ("road", "2024-05-01T10:05:00Z"),
        ] {
            put(
                &store,
                "search",
                json!({"q": q}),
                json!({"results": [{"id": "tt0999", "title": "Salt Road", "processedTime": at, "processed_at": at}]}),
            );
        }
        for key in ["k1", "k2"] {
            put(
                &store,
                "title",
                json!({"key": key}),
                json!({"error": {"code": 1, "message": format!("bad key {key}")}}),
            );
        }
        let c = check(dir.path());
        assert_eq!((c.pairs, c.contradicting), (1, 0), "{c:?}");
    }
}
