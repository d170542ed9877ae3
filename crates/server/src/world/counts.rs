//! A simulated reply's counts made to agree with the list beside them, after simulation and the same
//! way every time (issue 42: "results: 167" in a reply that lists 13). In a record with one list, a
//! count of what the reply returns (`results`, `count`, `itemCount`) is the list's length unless the
//! reply says more pages follow (then it may be a total, but not less than the list); a total
//! (`total`, `totalResults`) is never less than the list.

use serde_json::{Map, Value};
use sum2act_core::toolbench::naming::squash;

/// What a count field counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Count {
    /// The items of this reply (`results`, `count`, `num_items`).
    Returned,
    /// All matching items, of which the reply may show a page (`total`, `totalResults`).
    Total,
}

/// One count changed: its field, the value it had and the list's length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixed {
    pub field: String,
    pub was: u64,
    pub now: u64,
}

/// Makes every count of `reply` agree with its list (see the module doc); the counts changed.
pub fn reconcile(reply: &mut Value) -> Vec<Fixed> {
    let mut fixed = Vec::new();
    walk(reply, &mut fixed);
    fixed
}

fn walk(v: &mut Value, fixed: &mut Vec<Fixed>) {
    match v {
        Value::Object(m) => {
            reconcile_record(m, fixed);
            m.values_mut().for_each(|x| walk(x, fixed));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| walk(x, fixed)),
        _ => {}
    }
}

/// The counts of one record with one list, or one non-empty list beside empty ones (an `errors: []`);
/// with two, which one a count is of is unknown.
fn reconcile_record(m: &mut Map<String, Value>, fixed: &mut Vec<Fixed>) {
    let lists: Vec<(&String, usize)> = m
        .iter()
        .filter_map(|(k, v)| Some((k, v.as_array()?.len())))
        .collect();
    let full: Vec<(&String, usize)> = lists.iter().copied().filter(|(_, n)| *n > 0).collect();
    let (list, len) = match (lists.as_slice(), full.as_slice()) {
        ([only], _) | (_, [only]) => *only,
        _ => return,
    };
    let (list, len) = (squash(list), len as u64);
    let paged = more_pages(m);
    let counts: Vec<(String, Count)> = m
        .keys()
        .filter_map(|k| Some((k.clone(), count_kind(k, &list)?)))
        .collect();
    for (k, kind) in counts {
        let Some(was) = m.get(&k).and_then(count_value) else {
            continue;
        };
        let now = match (kind, paged) {
            (Count::Returned, false) => len,
            _ => was.max(len),
        };
        if now != was {
            let as_text = m.get(&k).is_some_and(Value::is_string);
            let value = match as_text {
                true => Value::String(now.to_string()),
                false => Value::from(now),
            };
            m.insert(k.clone(), value);
            fixed.push(Fixed { field: k, was, now });
        }
    }
}

/// What field `k` counts, beside a list named `list` (squashed).
fn count_kind(k: &str, list: &str) -> Option<Count> {
    let k = squash(k);
    let returned = matches!(
        k.as_str(),
        "results"
            | "count"
            | "resultcount"
            | "resultscount"
            | "numresults"
            | "numberofresults"
            | "returned"
            | "returnedcount"
            | "itemcount"
            | "itemscount"
    ) || k == format!("{list}count")
        || k == format!("num{list}")
        || k == format!("numberof{list}");
    let total = matches!(
        k.as_str(),
        "total" | "totalresults" | "totalcount" | "totalitems" | "totalhits" | "nbhits"
    ) || k == format!("total{list}");
    match (returned && k != list, total) {
        (true, _) => Some(Count::Returned),
        (false, true) => Some(Count::Total),
        _ => None,
    }
}

/// A count as a whole number, also when written as text (`"167"`).
fn count_value(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Whether the record (or its paging record) says more pages follow: a `next` link or cursor, a
/// `has_more` flag, or more than one page.
fn more_pages(m: &Map<String, Value>) -> bool {
    m.iter().any(|(k, v)| match (squash(k).as_str(), v) {
        ("next" | "nextpage" | "nextcursor" | "cursor" | "nextpagetoken", v) => {
            !v.is_null() && v != &Value::Bool(false) && v.as_str() != Some("")
        }
        ("hasmore" | "hasnext" | "hasnextpage" | "more", Value::Bool(b)) => *b,
        ("totalpages" | "pages" | "pagecount" | "lastpage", v) => {
            count_value(v).is_some_and(|n| n > 1)
        }
        ("paging" | "pagination" | "meta" | "pageinfo", Value::Object(inner)) => more_pages(inner),
        ("offset" | "start" | "page", v) => count_value(v).is_some_and(|n| n > 1),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_count_beside_a_list_agrees_with_it() {
        // Issue 42: "results: 167" beside 13 fixtures, one page.
        let items: Vec<Value> = (0..13).map(|i| json!({"id": i})).collect();
        let mut reply = json!({"results": 167, "paging": {"current": 1, "total": 1},
                               "response": items, "errors": []});
        let fixed = reconcile(&mut reply);
        assert_eq!(reply["results"], 13, "{fixed:?}");
        assert_eq!(fixed.len(), 1);
        // The same reply comes out the same way again.
        assert!(reconcile(&mut reply).is_empty());
        // A count written as text stays text; a count of the named list agrees too.
        let mut nested = json!({"data": {"itemCount": "4", "items": [1, 2]}});
        reconcile(&mut nested);
        assert_eq!(nested["data"]["itemCount"], "2");
    }

    #[test]
    fn a_total_of_many_pages_is_kept_but_never_below_the_list() {
        let mut paged = json!({"count": 82, "next": "https://swapi.dev/api/people/?page=2",
                               "results": [1, 2, 3]});
        assert!(reconcile(&mut paged).is_empty());
        let mut total = json!({"total": 500, "items": [1, 2]});
        assert!(reconcile(&mut total).is_empty());
        let mut short = json!({"totalResults": 1, "movies": [1, 2, 3]});
        reconcile(&mut short);
        assert_eq!(short["totalResults"], 3);
        // Two lists: which one is counted is unknown, nothing changes.
        let mut two = json!({"count": 9, "a": [1], "b": [2, 3]});
        assert!(reconcile(&mut two).is_empty());
    }
}
