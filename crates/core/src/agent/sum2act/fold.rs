//! Step 5's shortcut: a small plain result is folded into the state by code, as it is, with no
//! state-manager call. Most ToolBench replies are a few hundred characters of JSON (the median result the
//! state manager read in the equal-budget reference runs was 903 characters): a model call that copies
//! their values into facts costs more tokens than the router reading them. Anything that needs judgement
//! (an error payload, an empty result, a large or opaque value kept by reference, prose) still goes to
//! the state manager.

use serde_json::Value;

use crate::agent::parse::Action;
use crate::agent::reading::Reading;

/// Fewest values a folded result states: fewer is a status or an empty answer, which the state manager
/// judges.
const MIN_VALUES: usize = 2;

/// Keys whose non-empty value marks an error payload (`{"message": "You are not subscribed"}`).
const ERROR_KEYS: [&str; 6] = ["error", "errors", "err", "message", "msg", "detail"];

/// The fact that states `action`'s result, when the result is plain JSON of at most `max_chars`
/// (compact, empty values left out): `name {arguments} returned {json}`. `None`: the state manager
/// reads it.
pub fn as_fact(action: &Action, reading: &Reading, max_chars: usize) -> Option<String> {
    if max_chars == 0 || !reading.values.is_empty() {
        return None;
    }
    let value = structured(&reading.shown)?;
    let pruned = pruned(&value)?;
    if values(&pruned) < MIN_VALUES || looks_like_error(&pruned) {
        return None;
    }
    let json = serde_json::to_string(&pruned).ok()?;
    if json.chars().count() > max_chars {
        return None;
    }
    let arguments = match action.arguments.trim() {
        "" | "{}" => String::new(),
        a => format!(" {a}"),
    };
    Some(format!("{}{arguments} returned {json}", action.name))
}

/// The result as JSON: an object or an array, or a string holding one (ToolBench replies are often
/// JSON texts).
fn structured(shown: &Value) -> Option<Value> {
    match shown {
        Value::Object(_) | Value::Array(_) => Some(shown.clone()),
        Value::String(s) => match serde_json::from_str::<Value>(s.trim()) {
            Ok(v @ (Value::Object(_) | Value::Array(_))) => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// `value` without nulls, empty strings, empty lists and empty objects (they state nothing); `None`
/// when nothing is left.
fn pruned(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(s) if s.trim().is_empty() => None,
        Value::Object(map) => {
            let kept: serde_json::Map<String, Value> = map
                .iter()
                .filter_map(|(k, v)| pruned(v).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        Value::Array(items) => {
            let kept: Vec<Value> = items.iter().filter_map(pruned).collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        other => Some(other.clone()),
    }
}

/// How many scalar values `value` holds.
fn values(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.values().map(values).sum(),
        Value::Array(items) => items.iter().map(values).sum(),
        _ => 1,
    }
}

/// An object of a few keys, one of them an error key with a value (a status such as `{"status":
/// "fail", "message": "…"}`); or a `success`/`status` flag saying it failed.
fn looks_like_error(value: &Value) -> bool {
    let Value::Object(map) = value else {
        return false;
    };
    let small = map.len() <= 3;
    let error_key = map
        .keys()
        .any(|k| ERROR_KEYS.contains(&k.to_ascii_lowercase().as_str()));
    let failed_flag = map.iter().any(|(k, v)| {
        matches!(k.to_ascii_lowercase().as_str(), "success" | "status" | "ok")
            && matches!(v, Value::Bool(false))
            || v.as_str().is_some_and(|s| {
                matches!(
                    s.to_ascii_lowercase().as_str(),
                    "error" | "fail" | "failed" | "failure"
                )
            })
    });
    small && error_key || failed_flag
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::reading::read;
    use crate::tools::{Observation, ReplySource};
    use serde_json::json;

    fn fact(response: Value) -> Option<String> {
        let obs = Observation {
            error: String::new(),
            response,
            source: ReplySource::Cache,
            failed: false,
            ..crate::agent::common::harness_observation("f", "{}", "")
        };
        let action = Action {
            name: "get_weather_for_weather".into(),
            arguments: r#"{"city":"Lisbon"}"#.into(),
            ..Action::default()
        };
        as_fact(&action, &read(&obs, 1, 16_384), 1_200)
    }

    #[test]
    fn a_small_json_result_is_one_fact_of_itself_without_empty_values() {
        let f = fact(json!({"city": "Lisbon", "temp": 21.4, "alerts": [], "note": null})).unwrap();
        assert_eq!(
            f,
            r#"get_weather_for_weather {"city":"Lisbon"} returned {"city":"Lisbon","temp":21.4}"#
        );
        // A JSON text is read as JSON.
        let f = fact(json!("{\"city\": \"Porto\", \"temp\": 18}")).unwrap();
        assert!(f.ends_with(r#"returned {"city":"Porto","temp":18}"#), "{f}");
    }

    #[test]
    fn what_needs_judgement_goes_to_the_state_manager() {
        // Error payloads, failure flags and statuses.
        assert_eq!(
            fact(json!({"message": "You are not subscribed to this API."})),
            None
        );
        assert_eq!(fact(json!({"error": "bad id", "code": 400})), None);
        assert_eq!(
            fact(json!({"success": false, "data": {"a": 1, "b": 2}})),
            None
        );
        assert_eq!(
            fact(json!({"status": "error", "reason": "quota", "x": 1})),
            None
        );
        // Empty or nearly empty results.
        assert_eq!(fact(json!({"results": [], "total": 0})), None);
        assert_eq!(fact(json!([])), None);
        // Prose and large results.
        assert_eq!(fact(json!("The service is down for maintenance.")), None);
        let big: Vec<Value> = (0..200)
            .map(|i| json!({"id": i, "name": format!("item {i}")}))
            .collect();
        assert_eq!(fact(json!({ "items": big })), None);
        // A result with an opaque value (kept by reference) needs the state manager's legend.
        let image = "iVBORw0KGgo".repeat(40);
        assert_eq!(fact(json!({"image": image, "w": 10})), None);
    }

    #[test]
    fn nothing_is_folded_past_the_limit_or_with_the_limit_at_zero() {
        let obs = Observation {
            error: String::new(),
            response: json!({"city": "Lisbon", "temp": 21}),
            source: ReplySource::Cache,
            failed: false,
            ..crate::agent::common::harness_observation("f", "{}", "")
        };
        let reading = read(&obs, 1, 16_384);
        let action = Action {
            name: "w".into(),
            ..Action::default()
        };
        assert_eq!(as_fact(&action, &reading, 0), None);
        assert_eq!(as_fact(&action, &reading, 10), None);
        assert_eq!(
            as_fact(&action, &reading, 100).as_deref(),
            Some(r#"w returned {"city":"Lisbon","temp":21}"#)
        );
    }

    #[test]
    fn a_message_among_many_values_is_data() {
        let f = fact(json!({"message": "ok", "city": "Lisbon", "temp": 21, "wind": 3}));
        assert!(f.is_some());
    }
}
