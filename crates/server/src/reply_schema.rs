//! The JSON schema of a reply shaped like an API's template, so an LLM simulator's output follows the
//! documented shape (StableToolBench asks GPT to "follow the template"; we enforce it): sent as
//! `response_format: json_schema` to endpoints, turned into a grammar for the embedded model, and
//! checked again on the reply.
//!
//! The schema keeps the template's field names and nesting but not what a single recorded call
//! happened to show: ToolBench writes the template of an API that answers a list as the list's item
//! (`PopularSitesForQuery`: template `{name, score}`, real reply a list of 20 of them), so a template
//! object may also come as a list of such objects; every leaf may be null (real APIs leave fields
//! empty that the recorded call filled); lists may be as long as the template's `_list_length` says
//! (up to 100), not only 20.

use serde_json::{Map, Value, json};

use super::simulate::gives_shape;

/// Templates bigger than this many nodes are not turned into a schema (the grammar would be huge);
/// the model then gets plain JSON mode and the reply is still checked.
const MAX_NODES: usize = 300;
/// Longest list a schema allows (the template's `_list_length` when longer than 20).
const MAX_ITEMS: u64 = 100;
const MIN_MAX_ITEMS: u64 = 20;

/// The schema of the whole simulator reply (`{"error", "response"}`), when the template carries data.
pub fn reply_schema(template: Option<&Value>) -> Option<Value> {
    let t = template.filter(|t| t.is_object() && gives_shape(t))?;
    if nodes(t) > MAX_NODES {
        return None;
    }
    let object = template_schema(t);
    // The prompt tells the simulator to complain as the real API would when the arguments cannot work:
    // that reply must fit the schema too, or strict structured output forbids it.
    let response = json!({"anyOf": [
        object,
        {"type": "array", "items": object, "maxItems": MAX_ITEMS},
        complaint_schema(),
    ]});
    Some(json!({
        "type": "object",
        "properties": {"error": {"type": "string"}, "response": response},
        "required": ["error", "response"],
        "additionalProperties": false,
    }))
}

/// The API's complaint about arguments that cannot work: `{"message": "..."}`, as the prompt's example.
fn complaint_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
        "additionalProperties": false,
    })
}

/// A reply that is only the API's complaint (see [`complaint_schema`]), not a success missing fields.
fn is_complaint(response: &Value) -> bool {
    response
        .as_object()
        .is_some_and(|m| m.len() == 1 && m.get("message").is_some_and(Value::is_string))
}

fn nodes(v: &Value) -> usize {
    match v {
        Value::Object(m) => 1 + m.values().map(nodes).sum::<usize>(),
        Value::Array(a) => 1 + a.iter().map(nodes).sum::<usize>(),
        _ => 1,
    }
}

/// ToolBench's template notation (`"str"`, `"int"`, `_list_length`, `"list of str with length 3"`)
/// as a JSON schema: every field required (possibly null), nothing else allowed (what strict structured
/// output needs).
pub fn template_schema(t: &Value) -> Value {
    match t {
        Value::Object(m) if map_like(m) => {
            let value = m.values().next().map_or(json!({}), template_schema);
            json!({"type": "object", "additionalProperties": value})
        }
        Value::Object(m) => {
            let mut props = Map::new();
            for (k, v) in m.iter().filter(|(k, _)| k.as_str() != "_list_length") {
                props.insert(k.clone(), template_schema(v));
            }
            let required: Vec<Value> = props.keys().map(|k| Value::String(k.clone())).collect();
            json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
        }
        Value::Array(items) => match items.first() {
            // `["list of str with length 3"]` is itself the list.
            Some(Value::String(s)) if s.starts_with("list of ") => leaf_schema(s),
            head => {
                let item = head.map_or(json!({"type": ["string", "null"]}), template_schema);
                let length = head
                    .and_then(|h| h.get("_list_length"))
                    .and_then(Value::as_u64);
                json!({"type": "array", "items": item, "maxItems": max_items(length)})
            }
        },
        Value::String(s) => leaf_schema(s),
        Value::Number(n) if n.is_f64() => json!({"type": ["number", "null"]}),
        Value::Number(_) => json!({"type": ["integer", "null"]}),
        Value::Bool(_) => json!({"type": ["boolean", "null"]}),
        Value::Null => json!({"type": ["string", "null"]}),
    }
}

/// An object of the template that is a map, not a record: its keys are codes, ids or dates (`rates:
/// {EUR, GBP, JPY, CHF}`, `streamingInfo: {us: ...}`, `{"2024-06-12": ...}`) and its values share one
/// shape. The recorded call's keys are not the only ones: a call for `symbols=USD` must be answerable
/// (simulator request 832), so the schema allows any key and requires none.
pub fn map_like(m: &Map<String, Value>) -> bool {
    let entries: Vec<(&String, &Value)> = m
        .iter()
        .filter(|(k, _)| k.as_str() != "_list_length")
        .collect();
    let Some((_, first)) = entries.first() else {
        return false;
    };
    let shape = template_schema(first);
    entries.iter().all(|(k, _)| code_key(k))
        && entries.iter().all(|(_, v)| template_schema(v) == shape)
}

/// A key that is a value, not a field name: digits, a date, an upper-case code (`EUR`, `US`), or a
/// two-letter country or language code (`us`, `de`; not the short words field names use).
fn code_key(k: &str) -> bool {
    let n = k.chars().count();
    let digits = !k.is_empty() && k.chars().all(|c| c.is_ascii_digit());
    let date = n >= 7
        && k.chars().all(|c| c.is_ascii_digit() || c == '-')
        && k.chars().nth(4) == Some('-');
    let upper = (2..=5).contains(&n) && k.chars().all(|c| c.is_ascii_uppercase());
    let country = n == 2
        && k.chars().all(|c| c.is_ascii_lowercase())
        && !matches!(
            k,
            "id" | "no"
                | "to"
                | "at"
                | "by"
                | "in"
                | "is"
                | "it"
                | "on"
                | "or"
                | "of"
                | "as"
                | "if"
                | "do"
                | "go"
                | "up"
                | "dn"
                | "km"
                | "ok"
                | "me"
                | "my"
                | "we"
        );
    digits || date || upper || country
}

fn max_items(template_length: Option<u64>) -> u64 {
    template_length.map_or(MIN_MAX_ITEMS, |n| n.clamp(MIN_MAX_ITEMS, MAX_ITEMS))
}

fn leaf_schema(kind: &str) -> Value {
    if let Some(rest) = kind.strip_prefix("list of ") {
        let mut parts = rest.split(" with length ");
        let inner = parts.next().unwrap_or("str");
        let length = parts.next().and_then(|n| n.trim().parse::<u64>().ok());
        return json!({"type": "array", "items": leaf_schema(inner), "maxItems": max_items(length)});
    }
    let t = match kind {
        "str" => "string",
        "int" => "integer",
        "float" => "number",
        "bool" => "boolean",
        "empty list" | "list" => {
            return json!({"type": "array", "items": {"type": ["string", "null"]}, "maxItems": MIN_MAX_ITEMS});
        }
        "dict" => {
            return json!({"type": ["object", "null"], "properties": {}, "additionalProperties": false});
        }
        _ => "string",
    };
    json!({"type": [t, "null"]})
}

/// Why a reply does not follow the template: the template's top-level fields it lacks (in the reply, or
/// in a list reply's first item). `None` when it follows it (or there is no template with data to follow).
pub fn missing_fields(response: &Value, template: Option<&Value>) -> Option<String> {
    let Some(Value::Object(t)) = template.filter(|t| gives_shape(t)) else {
        return None;
    };
    if map_like(t) {
        return None;
    }
    if is_complaint(response) {
        return None;
    }
    let got = match response {
        Value::Array(items) => items.first().and_then(Value::as_object),
        other => other.as_object(),
    };
    let missing: Vec<&str> = t
        .keys()
        .filter(|k| k.as_str() != "_list_length")
        .filter(|k| !got.is_some_and(|g| g.contains_key(k.as_str())))
        .map(String::as_str)
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "the reply lacks the template's field(s) {}",
            missing.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_become_strict_schemas_with_a_grammar() {
        let t = json!({"name": "str", "n": "int", "x": "float", "ok": "bool", "none": "NoneType",
            "tags": ["list of str with length 3"], "items": [{"id": "int", "_list_length": 4}], "meta": "dict"});
        let s = template_schema(&t);
        assert_eq!(s["properties"]["n"]["type"], json!(["integer", "null"]));
        assert_eq!(
            s["properties"]["tags"]["items"]["type"],
            json!(["string", "null"])
        );
        assert_eq!(
            s["properties"]["items"]["items"]["properties"]["id"]["type"],
            json!(["integer", "null"])
        );
        assert!(
            s["properties"]["items"]["items"]["properties"]
                .get("_list_length")
                .is_none()
        );
        assert_eq!(s["required"].as_array().map(Vec::len), Some(8));
        let reply = reply_schema(Some(&t)).unwrap_or_default();
        assert!(sum2act_local::gbnf::grammar(&reply).is_ok(), "{reply}");
        // A template object may come as a list of such objects; lists as long as the template says.
        assert_eq!(reply["properties"]["response"]["anyOf"][1]["type"], "array");
        // ... and the API's complaint about arguments that cannot work fits it too.
        let complaint = json!({"message": "Invalid value for parameter 'n'"});
        let any_of = &reply["properties"]["response"]["anyOf"];
        assert_eq!(any_of[2]["required"], json!(["message"]));
        assert_eq!(
            sum2act_core::llm::json_check::problems(&complaint, &any_of[2]),
            Vec::<String>::new()
        );
        let long = template_schema(&json!({"rows": [{"a": "str", "_list_length": 81}]}));
        assert_eq!(long["properties"]["rows"]["maxItems"], 81);
        let huge = template_schema(&json!({"rows": ["list of str with length 6387"]}));
        assert_eq!(huge["properties"]["rows"]["maxItems"], 100);
        // A status-only template gives no schema: the model is free, the schema simulator's shapes apply.
        assert_eq!(reply_schema(Some(&json!({"message": "str"}))), None);
    }

    #[test]
    fn a_map_of_codes_pins_no_keys() {
        // Simulator request 832: rates for EUR, GBP, JPY, CHF only, so symbols=USD had no answer.
        let t = json!({"base": "str", "date": "str",
            "rates": {"EUR": "float", "GBP": "float", "JPY": "float", "CHF": "float"},
            "streamingInfo": {"us": [{"service": "str"}]}});
        let s = template_schema(&t);
        let rates = &s["properties"]["rates"];
        assert!(rates.get("required").is_none(), "{rates}");
        assert_eq!(
            rates["additionalProperties"]["type"],
            json!(["number", "null"])
        );
        assert!(s["properties"]["streamingInfo"]["additionalProperties"].is_object());
        let reply = json!({"base": "EUR", "date": "2024-06-12", "rates": {"USD": 1.08},
            "streamingInfo": {"gb": [{"service": "netflix"}]}});
        assert_eq!(
            sum2act_core::llm::json_check::problems(&reply, &s),
            Vec::<String>::new()
        );
        let schema = reply_schema(Some(&t)).unwrap_or_default();
        assert!(sum2act_local::gbnf::grammar(&schema).is_ok(), "{schema}");
        // Records keep their keys: upper-case field names of other shapes, short words.
        let record = template_schema(&json!({"ID": "int", "URL": "str"}));
        assert_eq!(record["additionalProperties"], json!(false));
        let id = template_schema(&json!({"id": "int"}));
        assert_eq!(id["required"], json!(["id"]));
        // A whole reply that is a map is not checked for the recorded keys.
        let fx = json!({"USD": "float", "EUR": "float"});
        assert_eq!(missing_fields(&json!({"JPY": 150.2}), Some(&fx)), None);
    }

    #[test]
    fn replies_are_checked_against_the_template() {
        let t = json!({"city": "str", "temp": "float"});
        assert_eq!(
            missing_fields(&json!({"city": "Paris", "temp": 12.5}), Some(&t)),
            None
        );
        // A complaint is an answer of its own, not a success reply missing the template's fields.
        assert_eq!(
            missing_fields(&json!({"message": "Invalid city"}), Some(&t)),
            None
        );
        let why = missing_fields(&json!({"answer": "x"}), Some(&t)).unwrap_or_default();
        assert!(why.contains("city") && why.contains("temp"), "{why}");
        assert_eq!(missing_fields(&json!({"answer": "x"}), None), None);
        let list = json!([{"city": "Paris", "temp": null}]);
        assert_eq!(missing_fields(&list, Some(&t)), None);
        // An error template gives no shape to check against.
        assert_eq!(
            missing_fields(&json!({"a": 1}), Some(&json!({"err": "str", "msg": "str"}))),
            None
        );
    }
}
