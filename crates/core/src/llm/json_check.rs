//! A small JSON-schema checker for the subset our schemas use (`type`, `properties`, `required`,
//! `items`, `enum`, `additionalProperties`, `anyOf`, `minItems`/`maxItems`, `minLength`/`maxLength`).
//! Endpoints and the embedded model enforce schemas themselves; a reply written by hand is checked
//! with this before it is accepted, and every problem is named by its JSON path so a reader can fix it.
//! Keywords outside the subset are ignored (the check is then looser, never wrongly strict).

use serde_json::Value;

/// Most problems listed for one value.
const MAX_PROBLEMS: usize = 10;

/// Every way (up to ten) in which `value` does not match `schema`, as `$.path: what is wrong`.
pub fn problems(value: &Value, schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(value, schema, "$", &mut out);
    out.truncate(MAX_PROBLEMS);
    out
}

fn check(value: &Value, schema: &Value, path: &str, out: &mut Vec<String>) {
    if out.len() >= MAX_PROBLEMS || !schema.is_object() {
        return;
    }
    if let Some(options) = schema["anyOf"].as_array()
        && !options.is_empty()
        && options.iter().all(|s| !problems(value, s).is_empty())
    {
        out.push(format!(
            "{path}: matches none of the allowed shapes (anyOf)"
        ));
        return;
    }
    if let Some(expected) = type_names(&schema["type"])
        && !expected.iter().any(|t| is_type(value, t))
    {
        out.push(format!(
            "{path}: expected {}, got {}",
            expected.join(" or "),
            kind(value)
        ));
        return;
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        out.push(format!("{path}: {value} is not one of {}", list.join(", ")));
    }
    match value {
        Value::Object(map) => check_object(map, schema, path, out),
        Value::Array(items) => check_array(items, schema, path, out),
        Value::String(s) => check_length(s.chars().count(), schema, "characters", path, out),
        _ => {}
    }
}

fn check_object(
    map: &serde_json::Map<String, Value>,
    schema: &Value,
    path: &str,
    out: &mut Vec<String>,
) {
    for key in schema["required"].as_array().into_iter().flatten() {
        if let Some(k) = key.as_str()
            && !map.contains_key(k)
        {
            out.push(format!("{path}: missing required key \"{k}\""));
        }
    }
    let properties = schema["properties"].as_object();
    for (k, v) in map {
        let child = format!("{path}.{k}");
        match properties.and_then(|p| p.get(k)) {
            Some(s) => check(v, s, &child, out),
            None => match &schema["additionalProperties"] {
                Value::Bool(false) => {
                    let known: Vec<&str> = properties
                        .map(|p| p.keys().map(String::as_str).collect())
                        .unwrap_or_default();
                    out.push(format!(
                        "{path}: key \"{k}\" is not allowed (allowed: {})",
                        known.join(", ")
                    ));
                }
                s @ Value::Object(_) => check(v, s, &child, out),
                _ => {}
            },
        }
    }
}

fn check_array(items: &[Value], schema: &Value, path: &str, out: &mut Vec<String>) {
    check_length(items.len(), schema, "items", path, out);
    if schema["items"].is_object() {
        for (i, item) in items.iter().enumerate() {
            check(item, &schema["items"], &format!("{path}[{i}]"), out);
        }
    }
}

/// `minItems`/`maxItems` for arrays, `minLength`/`maxLength` for strings.
fn check_length(n: usize, schema: &Value, unit: &str, path: &str, out: &mut Vec<String>) {
    let (min, max) = if unit == "items" {
        ("minItems", "maxItems")
    } else {
        ("minLength", "maxLength")
    };
    if let Some(lo) = schema[min].as_u64()
        && (n as u64) < lo
    {
        out.push(format!("{path}: {n} {unit}, at least {lo} required"));
    }
    if let Some(hi) = schema[max].as_u64()
        && (n as u64) > hi
    {
        out.push(format!("{path}: {n} {unit}, at most {hi} allowed"));
    }
}

/// The `type` keyword as a list of names (it may be one name or several).
fn type_names(t: &Value) -> Option<Vec<&str>> {
    match t {
        Value::String(s) => Some(vec![s.as_str()]),
        Value::Array(a) => Some(a.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

fn is_type(value: &Value, t: &str) -> bool {
    match t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        // A type name outside JSON Schema's list: not ours to refuse.
        _ => true,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "required": ["action", "facts"],
            "additionalProperties": false,
            "properties": {
                "action": {"type": "string", "enum": ["call", "finish"]},
                "facts": {"type": "array", "maxItems": 2, "items": {
                    "type": "object", "required": ["name"],
                    "properties": {"name": {"type": "string", "maxLength": 5}, "n": {"type": ["integer", "null"]}}
                }}
            }
        })
    }

    #[test]
    fn a_matching_value_has_no_problems() {
        let v =
            json!({"action": "call", "facts": [{"name": "a", "n": 3}, {"name": "b", "n": null}]});
        assert!(problems(&v, &schema()).is_empty());
    }

    #[test]
    fn every_problem_is_named_by_its_path() {
        let v = json!({"action": "go", "facts": [{"n": 1.5}, {"name": "toolong"}, {"name": "x"}], "extra": 1});
        let p = problems(&v, &schema());
        let expect = [
            "$.action: \"go\" is not one of \"call\", \"finish\"",
            "$.facts: 3 items, at most 2 allowed",
            "$.facts[0]: missing required key \"name\"",
            "$.facts[0].n: expected integer or null, got number",
            "$.facts[1].name: 7 characters, at most 5 allowed",
            "$: key \"extra\" is not allowed (allowed: action, facts)",
        ];
        for e in expect {
            assert!(p.iter().any(|x| x == e), "missing {e:?} in {p:#?}");
        }
        assert_eq!(
            problems(&json!([1]), &schema()),
            vec!["$: expected object, got array"]
        );
        assert_eq!(
            problems(&json!({}), &schema()),
            vec![
                "$: missing required key \"action\"",
                "$: missing required key \"facts\""
            ]
        );
    }

    #[test]
    fn any_of_and_unknown_keywords() {
        let s = json!({"anyOf": [{"type": "string"}, {"type": "integer"}], "format": "odd"});
        assert!(problems(&json!("x"), &s).is_empty());
        assert!(problems(&json!(2), &s).is_empty());
        assert_eq!(
            problems(&json!(true), &s),
            vec!["$: matches none of the allowed shapes (anyOf)"]
        );
        assert!(problems(&json!(1), &json!({"type": "NUMBER"})).is_empty());
    }
}
