//! When two views of one identifier's record agree (the world-consistency check, `consistency`), and
//! which differences the two calls themselves explain. Each rule is a reason a difference is not a
//! contradiction, found by reading the flagged pairs of the strong-model reference world (besides
//! `consistency`'s: two records whose identifier fields differ are two entities or two pages):
//!
//! - a record met in two replies of one API whose calls name two different entities (a `STANDARD`
//!   shipping service of product A and of product B) is part of two answers ([`about_other_entities`]);
//! - lists of dated items are windows of a series: two windows agree on the dates both show
//!   ([`agree`]: one store's hours for Wednesday, and for Wednesday and Thursday);
//! - a label with its group in front (`Attack - Right Winger`) is the same label (`Right Winger`);
//! - a short number names a row of one collection: two APIs of one tool listing different collections
//!   (`cities`, `stations`) number them apart ([`same_collection`]);
//! - a field about the reply itself (its hash, request id, latency) is no field of the entity
//!   ([`about_the_reply`]).

use serde_json::{Map, Value};

use super::entities::identifier_argument;
use sum2act_core::toolbench::naming::tokens;

/// Two calls of one API that name two different entities (an identifier argument of one name with two
/// values: `store_id` 1122 and 3255), where the shared `value` is neither: a record met in both replies
/// is part of each entity's answer (its shipping service, its store's stock), and may differ by entity.
pub fn about_other_entities(
    value: &str,
    (api_a, args_a): (&str, &Map<String, Value>),
    (api_b, args_b): (&str, &Map<String, Value>),
) -> bool {
    if api_a != api_b {
        return false;
    }
    let text = |v: &Value| match v {
        Value::String(s) => s.trim().to_lowercase(),
        other => other.to_string(),
    };
    args_a.iter().any(|(k, va)| {
        let Some(vb) = args_b.get(k) else {
            return false;
        };
        identifier_argument(k, va)
            && identifier_argument(k, vb)
            && text(va) != text(vb)
            && text(va) != value
            && text(vb) != value
    })
}

/// A field whose value depends on the list or period the API reports (a player's rank and points in
/// the FedExCup and in the world ranking): replies of two APIs may differ there without contradicting.
pub fn relative(k: &str) -> bool {
    tokens(k).iter().any(|w| {
        matches!(
            w.as_str(),
            "rank" | "ranking" | "position" | "points" | "score" | "events"
        )
    })
}

/// Whether two APIs of one tool (their names, `cities` and `stations`, `get_user_orders` and `get_order`)
/// list one collection: they share a word of their names, asking words and plurals aside. A short
/// number (a city `1374`, a station `1374`) is a row of one collection, so it pairs only there.
pub fn same_collection(a_api: &str, b_api: &str) -> bool {
    let name = |api: &str| api.rsplit('/').next().unwrap_or(api).to_string();
    let theirs = collection_words(&name(b_api));
    let ours = collection_words(&name(a_api));
    ours.is_empty() || theirs.is_empty() || ours.iter().any(|w| theirs.contains(w))
}

/// The words of a name that say which things it is about, as stems (`get_statuses` → `status`,
/// `list_of_all_exercises` → `exercis`, `station_id` → `station`).
pub fn collection_words(name: &str) -> Vec<String> {
    tokens(name)
        .into_iter()
        .filter(|w| w.len() > 2 && !GENERIC_API_WORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// A word's stem, one for its singular and plural (`statuses`/`status`, `movies`/`movie`,
/// `categories`/`category`, `titles`/`title` → `status`, `movi`, `categori`, `titl`).
fn stem(w: &str) -> String {
    let drop_s = |w: &str| -> String {
        match w.strip_suffix('s') {
            Some(s) if !w.ends_with("ss") && !w.ends_with("us") => s.to_string(),
            _ => w.to_string(),
        }
    };
    let w = match w.strip_suffix("ies") {
        Some(s) => format!("{s}i"),
        None => drop_s(w),
    };
    let w = drop_s(w.strip_suffix('e').unwrap_or(&w));
    let consonant_y =
        w.len() > 2 && w.ends_with('y') && !w[..w.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    match consonant_y {
        true => format!("{}i", &w[..w.len() - 1]),
        false => w,
    }
}

/// Words of API names that say how, not what (`get_…`, `list_all_…`, `…_by_id`, `search_…`).
const GENERIC_API_WORDS: &[&str] = &[
    "all", "api", "by", "details", "fetch", "find", "for", "get", "info", "list", "search", "the",
    "v1", "v2", "v3", "ids", "single", "one", "detail", "data", "results", "result", "items",
];

/// A field that describes the reply rather than the entity (its hash, a request or trace id, how long
/// it took, when it was processed or generated: issue 42's `processedTime`): two replies about one
/// entity differ there by nature.
pub fn about_the_reply(k: &str) -> bool {
    tokens(k).iter().any(|w| {
        matches!(
            w.as_str(),
            "hash"
                | "etag"
                | "checksum"
                | "signature"
                | "request"
                | "trace"
                | "took"
                | "latency"
                | "elapsed"
                | "processed"
                | "processing"
                | "timestamp"
                | "generated"
                | "fetched"
                | "retrieved"
                | "server"
        )
    })
}

/// Whether two views of one field agree: scalars are the [`same`]; objects on the keys both show (a
/// list's record may show fewer fields than the detail's); lists of dated items on the dates both show;
/// other lists item by item, of equal length.
pub fn agree(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.iter().all(|(k, v)| y.get(k).is_none_or(|w| agree(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => match (dated(x), dated(y)) {
            (Some(dx), Some(dy)) => dx
                .iter()
                .all(|(d, v)| dy.iter().filter(|(e, _)| e == d).all(|(_, w)| agree(v, w))),
            _ => x.len() == y.len() && x.iter().zip(y).all(|(v, w)| agree(v, w)),
        },
        _ => same(a, b),
    }
}

/// A list whose every item is a record with a `date` field: the items by date.
fn dated(items: &[Value]) -> Option<Vec<(String, &Value)>> {
    if items.is_empty() {
        return None;
    }
    items
        .iter()
        .map(|item| {
            let date = item.get("date")?.as_str()?;
            Some((date.trim().to_string(), item))
        })
        .collect()
}

/// Equal as a reader compares them: numbers by value, text without case or surrounding spaces, a label
/// with its group in front (`Attack - Right Winger`) as the label.
pub fn same(a: &Value, b: &Value) -> bool {
    let text = |v: &Value| match v {
        Value::String(s) => s.trim().to_lowercase(),
        other => other.to_string(),
    };
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(1.0),
        _ => {
            let (x, y) = (text(a), text(b));
            let grouped = |long: &str, short: &str| {
                long.split_once(" - ")
                    .is_some_and(|(_, label)| label.trim() == short)
            };
            x == y || grouped(&x, &y) || grouped(&y, &x)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn records_of_replies_about_two_entities_and_dated_windows_and_grouped_labels() {
        let a = args(json!({"store_id": "1122", "tcin": "12935487"}));
        let b = args(json!({"store_id": "3255", "tcin": "13402587"}));
        assert!(about_other_entities(
            "standard",
            ("x/t/f", &a),
            ("x/t/f", &b)
        ));
        assert!(!about_other_entities(
            "standard",
            ("x/t/f", &a),
            ("x/t/g", &b)
        ));
        assert!(!about_other_entities("1122", ("x/t/f", &a), ("x/t/f", &b)));
        let wed = json!({"date": "2024-06-12", "open": "08:00"});
        let thu = json!({"date": "2024-06-13", "open": "08:00"});
        let fri = json!({"date": "2024-06-14", "open": "07:00"});
        assert!(agree(&json!([wed]), &json!([wed, thu])));
        assert!(agree(&json!([wed]), &json!([fri])));
        let wed_late = json!({"date": "2024-06-12", "open": "09:00"});
        assert!(!agree(&json!([wed, thu]), &json!([wed_late])));
        // Undated lists still compare item by item.
        assert!(!agree(&json!([1, 2]), &json!([1])));
        assert!(same(
            &json!("Attack - Right Winger"),
            &json!("right winger")
        ));
        assert!(!same(
            &json!("Attack - Left Winger"),
            &json!("Right Winger")
        ));
    }

    #[test]
    fn short_numbers_pair_within_one_collection_and_reply_fields_are_not_compared() {
        assert!(!same_collection(
            "Travel/flixbus/cities",
            "Travel/flixbus/stations"
        ));
        assert!(same_collection(
            "Shop/onboarding/get_user_orders",
            "Shop/onboarding/get_order"
        ));
        assert!(same_collection(
            "Fit/exercisedb/list_by_equipment_exercises",
            "Fit/exercisedb/list_of_all_exercises"
        ));
        assert!(same_collection(
            "Movies/imdb/get",
            "Movies/imdb/title_details"
        ));
        assert!(about_the_reply("response_hash") && about_the_reply("requestId"));
        assert!(!about_the_reply("title") && !about_the_reply("order_status"));
    }
}
