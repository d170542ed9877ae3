//! The JSON schema of a reply shaped like an API's template, so an LLM simulator's output follows the
//! documented shape (StableToolBench asks GPT to "follow the template"; we enforce it): sent as
//! `response_format: json_schema` to endpoints, turned into a grammar for the embedded model, and
//! checked again on the reply.

use serde_json::{Map, Value, json};

use super::simulate::carries_data;

/// Templates bigger than this many nodes are not turned into a schema (the grammar would be huge);
/// the model then gets plain JSON mode and the reply is still checked.
const MAX_NODES: usize = 300;

/// The schema of the whole simulator reply (`{"error", "response"}`), when the template carries data.
pub fn reply_schema(template: Option<&Value>) -> Option<Value> {
    let t = template.filter(|t| t.is_object() && carries_data(t))?;
    if nodes(t) > MAX_NODES {
        return None;
    }
    Some(json!({
        "type": "object",
        "properties": {"error": {"type": "string"}, "response": template_schema(t)},
        "required": ["error", "response"],
        "additionalProperties": false,
    }))
}

fn nodes(v: &Value) -> usize {
    match v {
        Value::Object(m) => 1 + m.values().map(nodes).sum::<usize>(),
        Value::Array(a) => 1 + a.iter().map(nodes).sum::<usize>(),
        _ => 1,
    }
}

/// ToolBench's template notation (`"str"`, `"int"`, `_list_length`, `"list of str with length 3"`)
/// as a JSON schema: every field required, nothing else allowed (what strict structured output needs).
pub fn template_schema(t: &Value) -> Value {
    match t {
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
                let item = head.map_or(json!({"type": "string"}), template_schema);
                json!({"type": "array", "items": item, "maxItems": 20})
            }
        },
        Value::String(s) => leaf_schema(s),
        Value::Number(n) if n.is_f64() => json!({"type": "number"}),
        Value::Number(_) => json!({"type": "integer"}),
        Value::Bool(_) => json!({"type": "boolean"}),
        Value::Null => json!({"type": ["string", "null"]}),
    }
}

fn leaf_schema(kind: &str) -> Value {
    if let Some(rest) = kind.strip_prefix("list of ") {
        let inner = rest.split(" with length ").next().unwrap_or("str");
        return json!({"type": "array", "items": leaf_schema(inner), "maxItems": 20});
    }
    match kind {
        "str" => json!({"type": "string"}),
        "int" => json!({"type": "integer"}),
        "float" => json!({"type": "number"}),
        "bool" => json!({"type": "boolean"}),
        "NoneType" => json!({"type": ["string", "null"]}),
        "empty list" | "list" => {
            json!({"type": "array", "items": {"type": "string"}, "maxItems": 20})
        }
        "dict" => json!({"type": "object", "properties": {}, "additionalProperties": false}),
        _ => json!({"type": "string"}),
    }
}

/// Why a reply does not follow the template: the template's top-level fields it lacks. `None` when
/// it follows it (or there is no template with data to follow).
pub fn missing_fields(response: &Value, template: Option<&Value>) -> Option<String> {
    let Some(Value::Object(t)) = template.filter(|t| carries_data(t)) else {
        return None;
    };
    let got = response.as_object();
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
        assert_eq!(s["properties"]["n"]["type"], "integer");
        assert_eq!(s["properties"]["tags"]["items"]["type"], "string");
        assert_eq!(
            s["properties"]["items"]["items"]["properties"]["id"]["type"],
            "integer"
        );
        assert!(
            s["properties"]["items"]["items"]["properties"]
                .get("_list_length")
                .is_none()
        );
        assert_eq!(s["required"].as_array().map(Vec::len), Some(8));
        let reply = reply_schema(Some(&t)).unwrap_or_default();
        assert!(crate::llm::gbnf::grammar(&reply).is_ok(), "{reply}");
        // A status-only template gives no schema: the model is free, the schema simulator's shapes apply.
        assert_eq!(reply_schema(Some(&json!({"message": "str"}))), None);
    }

    #[test]
    fn replies_are_checked_against_the_template() {
        let t = json!({"city": "str", "temp": "float"});
        assert_eq!(
            missing_fields(&json!({"city": "Paris", "temp": 12.5}), Some(&t)),
            None
        );
        let why = missing_fields(&json!({"answer": "x"}), Some(&t)).unwrap_or_default();
        assert!(why.contains("city") && why.contains("temp"), "{why}");
        assert_eq!(missing_fields(&json!({"answer": "x"}), None), None);
    }
}
