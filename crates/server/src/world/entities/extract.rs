//! The facts one reply fixes: its records that carry an identifier, and its main record under the
//! identifiers its call names.

use serde_json::{Map, Value};

use super::{Fact, MAX_FACTS_PER_REPLY, MAX_FIELDS, MAX_NESTED_CHARS, MAX_VALUE_CHARS, identifier};
use crate::pyrepr::decode_recorded;
use sum2act_core::toolbench::naming::squash;

/// The facts one reply fixes (see the module doc). A record under an error wrapper describes the
/// failure, not an entity (an `error.code` of `1` is no entity `1`); a call's identifier gets the
/// main record only when the reply contains it (a reply about another id is not this one's).
pub fn extract(api: &str, args: &Map<String, Value>, response: &Value) -> Vec<Fact> {
    let response = decode_recorded(response);
    let arguments = Value::Object(args.clone());
    let fact = |key: &str, value: String, path: &str, record: Map<String, Value>| Fact {
        value,
        key: key.to_string(),
        path: path.to_string(),
        api: api.to_string(),
        arguments: arguments.clone(),
        record,
    };
    let mut out = Vec::new();
    if let Some((path, main)) = main_record(&response) {
        for (k, v) in args {
            if let Some(value) = identifier(k, v).filter(|id| contains(&response, id)) {
                out.push(fact(k, value, &path, main.clone()));
            }
        }
    }
    let mut stack = vec![(String::new(), &response)];
    while let Some((path, v)) = stack.pop() {
        match v {
            Value::Object(m) => {
                let record = fields(m, true);
                for (k, x) in m {
                    if let Some(value) = identifier(k, x)
                        && record.len() > 1
                    {
                        let f = fact(k, value, &path, record.clone());
                        if !out.contains(&f) {
                            out.push(f);
                        }
                    }
                }
                let inner = m.iter().filter(|(k, _)| !about_a_failure(k));
                stack.extend(inner.rev().map(|(k, x)| (child(&path, k), x)));
            }
            Value::Array(a) => stack.extend(a.iter().rev().map(|x| (format!("{path}[]"), x))),
            _ => {}
        }
        if out.len() >= MAX_FACTS_PER_REPLY {
            break;
        }
    }
    out.truncate(MAX_FACTS_PER_REPLY);
    out
}

/// The reply's own record (see [`main_record`]), as the world check reads a reply's echo of its call.
pub(crate) fn own_record(response: &Value) -> Option<Map<String, Value>> {
    main_record(&decode_recorded(response)).map(|(_, record)| record)
}

/// The path of field `k` of the record at `path` (`meta.total`, `results[].title`).
fn child(path: &str, k: &str) -> String {
    if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    }
}

/// A field that holds what went wrong (`error`, `errors`, `Error`, `exception`, `fault`).
fn about_a_failure(k: &str) -> bool {
    matches!(
        squash(k).as_str(),
        "error" | "errors" | "err" | "exception" | "fault" | "innererror"
    )
}

/// Whether a scalar of the reply is `id` (case and spaces aside).
fn contains(v: &Value, id: &str) -> bool {
    match v {
        Value::String(s) => s.trim().eq_ignore_ascii_case(id),
        Value::Number(n) => n.to_string() == id,
        Value::Array(a) => a.iter().any(|x| contains(x, id)),
        Value::Object(m) => m.values().any(|x| contains(x, id)),
        _ => false,
    }
}

/// The reply's own record and its path: its fields, or those of a wrapper that is its only field
/// (`{"result": {...}}`). A wrapper beside a list (`{"data": [...], "meta": {...}}`) is the list's
/// context, not the entity: its fields are not lifted out as the entity's.
fn main_record(v: &Value) -> Option<(String, Map<String, Value>)> {
    let mut v = v;
    let mut path = String::new();
    for _ in 0..3 {
        let m = v.as_object()?;
        if !fields(m, false).is_empty() {
            return Some((path, fields(m, true)));
        }
        let mut present = m.iter().filter(|(_, x)| !x.is_null());
        match (present.next(), present.next()) {
            (Some((k, only @ Value::Object(_))), None) if !about_a_failure(k) => {
                path = child(&path, k);
                v = only;
            }
            _ => return None,
        }
    }
    None
}

/// A record's facts: its short scalar fields and, with `nested`, its short nested values (an order's
/// items and address, which a later call about the same order must not change), less the ones that
/// change with every request (clocks, request ids).
fn fields(m: &Map<String, Value>, nested: bool) -> Map<String, Value> {
    m.iter()
        .filter(|(k, _)| !volatile(k))
        .filter(|(_, v)| match v {
            Value::String(s) => !s.trim().is_empty() && s.chars().count() <= MAX_VALUE_CHARS,
            Value::Number(_) | Value::Bool(_) => true,
            Value::Array(a) if a.is_empty() => false,
            Value::Object(o) if o.is_empty() => false,
            inner @ (Value::Array(_) | Value::Object(_)) => {
                nested && inner.to_string().chars().count() <= MAX_NESTED_CHARS
            }
            Value::Null => false,
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
            | "processedtime"
            | "processingtime"
            | "responsetime"
            | "executiontime"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_list_s_meta_is_no_entity_and_a_reply_without_the_id_fixes_nothing_about_it() {
        // Issue 42: `meta` fields were lifted out of their wrapper as the named id's record, and a
        // reply was attached to an id it does not contain (USD recorded for a call made with EUR).
        let reply = json!({"data": [{"code": "tt77x1", "name": "Euro zone", "currency": "USD"}],
                           "meta": {"total": 1, "page": 1}});
        let facts = extract(
            "Finance/fx/rates",
            &args(json!({"base_id": "EUR123"})),
            &reply,
        );
        assert!(facts.iter().all(|f| f.value != "EUR123"), "{facts:?}");
        assert!(
            facts.iter().all(|f| !f.record.contains_key("total")),
            "{facts:?}"
        );
        assert_eq!(facts[0].path, "data[]");
        // A wrapper that is the reply's only field is the entity's, under its path.
        let one = extract(
            "Movies/m/title",
            &args(json!({"id": "tt0999"})),
            &json!({"result": {"id": "tt0999", "title": "Salt Road"}}),
        );
        assert_eq!(
            (one[0].key.as_str(), one[0].path.as_str()),
            ("id", "result")
        );
    }

    #[test]
    fn an_error_s_code_is_no_entity() {
        // Issue 42: an error code `1` and an `error` code were taken for entities.
        let reply = json!({"error": {"code": 1, "message": "Invalid API key", "id": "e-77812x"},
                           "Error": {"Code": "error", "RequestId": "a7f3c2e1-94b8"}});
        assert!(extract("Data/d/a", &Map::new(), &reply).is_empty());
        let status = json!({"code": 1, "status": "ok", "name": "x"});
        assert!(extract("Data/d/a", &Map::new(), &status).is_empty());
    }
}
