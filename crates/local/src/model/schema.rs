//! JSON-schema rewriting for grammar-constrained output: string length caps, ToolBench parameter
//! schemas cleaned into what the grammar converter accepts, and the action schema of a tool call.

use serde_json::{Value, json};

use sum2act_core::llm::openai::tool_names;
use sum2act_core::llm::{CompletionRequest, LlmError, ToolChoice};

/// Longest thought the grammar lets the model write in a tool call.
const THOUGHT_CHARS: u64 = 120;

/// Longest string the grammar lets the model write where the schema sets no limit: small models
/// otherwise loop forever inside a string.
const MAX_STRING: u64 = 600;

/// Copies a schema, adding `maxLength` to every string without one.
pub fn bounded_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                // Keys under `properties`/`$defs` are names, not schemas; recurse into their values.
                let v = if k == "properties"
                    || k == "$defs"
                    || k == "definitions"
                    || k == "patternProperties"
                {
                    match v {
                        Value::Object(props) => Value::Object(
                            props
                                .iter()
                                .map(|(n, s)| (n.clone(), bounded_schema(s)))
                                .collect(),
                        ),
                        other => other.clone(),
                    }
                } else if k == "enum"
                    || k == "const"
                    || k == "required"
                    || k == "examples"
                    || k == "default"
                {
                    v.clone()
                } else {
                    bounded_schema(v)
                };
                out.insert(k.clone(), v);
            }
            let is_string = out.get("type").is_some_and(|t| t == "string");
            if is_string && !out.contains_key("maxLength") && !out.contains_key("enum") {
                out.insert("maxLength".into(), json!(MAX_STRING));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(bounded_schema).collect()),
        other => other.clone(),
    }
}

/// Keeps only the JSON-schema keywords llama.cpp's converter understands, lower-cases types, and
/// drops what would make a tool's grammar fail (ToolBench parameter schemas are often loose).
fn clean_parameters(schema: &Value) -> Value {
    let Some(obj) = schema.as_object() else {
        return json!({"type": "object"});
    };
    let mut props = serde_json::Map::new();
    if let Some(p) = obj.get("properties").and_then(Value::as_object) {
        for (name, s) in p {
            let ty = s
                .get("type")
                .and_then(Value::as_str)
                .map(str::to_lowercase)
                .unwrap_or_else(|| "string".into());
            let ty = match ty.as_str() {
                "string" | "number" | "integer" | "boolean" | "array" | "object" => ty,
                "float" | "double" => "number".into(),
                "int" => "integer".into(),
                "bool" => "boolean".into(),
                _ => "string".into(),
            };
            let mut clean = serde_json::Map::new();
            clean.insert("type".into(), json!(ty));
            if let Some(e) = s.get("enum").filter(|e| e.is_array()) {
                clean.insert("enum".into(), e.clone());
            }
            props.insert(name.clone(), Value::Object(clean));
        }
    }
    let required: Vec<Value> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter(|n| n.as_str().is_some_and(|n| props.contains_key(n)))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    bounded_schema(&json!({"type": "object", "properties": props, "required": required}))
}

/// The JSON action the model must write when tools are offered: one branch per tool (its own
/// arguments schema), plus a plain reply when the tool choice is `auto`.
pub(super) fn action_schema(request: &CompletionRequest) -> Result<Value, LlmError> {
    let names = tool_names(request);
    let forced = match &request.tool_choice {
        ToolChoice::Function(f) => {
            if !names.contains(f) {
                return Err(LlmError::UnknownTool(f.clone()));
            }
            Some(f.clone())
        }
        _ => None,
    };
    // The thought is written after the call is chosen, so it cannot inform it; uncapped, small models
    // fill it with guessed results (a 0.5B router averaged ~60 tokens of it per call, ~40% of all the
    // tokens it wrote). One short sentence is all the trajectory needs.
    let thought = json!({"type": "string", "maxLength": THOUGHT_CHARS});
    let mut branches = Vec::new();
    for t in &request.tools {
        let f = t.get("function").unwrap_or(t);
        let Some(name) = f["name"].as_str() else {
            continue;
        };
        if forced.as_deref().is_some_and(|n| n != name) {
            continue;
        }
        branches.push(json!({
            "type": "object",
            "properties": {
                "thought": thought,
                "name": {"const": name},
                "arguments": clean_parameters(&f["parameters"]),
            },
            // Name first, so the arguments follow the chosen tool; the thought comes last because small
            // models asked for it first tend to open with a refusal and then give up.
            "required": ["name", "arguments", "thought"],
        }));
    }
    if request.tool_choice == ToolChoice::Auto {
        branches.push(json!({
            "type": "object",
            "properties": {"thought": thought, "content": {"type": "string", "maxLength": 2000}},
            "required": ["content", "thought"],
        }));
    }
    if branches.is_empty() {
        return Err(LlmError::Config(
            "tools were given but none has a name".into(),
        ));
    }
    Ok(if branches.len() == 1 {
        branches.remove(0)
    } else {
        json!({"oneOf": branches})
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_get_a_length_cap() {
        let s = bounded_schema(&json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string", "maxLength": 5}, "type": {"type": "string", "enum": ["x"]}},
        }));
        assert_eq!(s["properties"]["a"]["maxLength"], MAX_STRING);
        assert_eq!(s["properties"]["b"]["maxLength"], 5);
        assert!(s["properties"]["type"].get("maxLength").is_none());
    }

    #[test]
    fn action_schema_has_a_branch_per_tool_and_a_reply() {
        let req = CompletionRequest::new("t", vec![]).with_tools(
            vec![
                json!({"name": "a", "parameters": {"type": "object", "properties": {"q": {"type": "STRING"}}, "required": ["q", "zz"]}}),
                json!({"name": "b", "parameters": {}}),
            ],
            ToolChoice::Auto,
        );
        let s = action_schema(&req).unwrap();
        let branches = s["oneOf"].as_array().unwrap();
        assert_eq!(branches.len(), 3);
        assert_eq!(
            branches[0]["properties"]["arguments"]["properties"]["q"]["type"],
            "string"
        );
        assert_eq!(
            branches[0]["properties"]["arguments"]["required"],
            json!(["q"])
        );
        let forced = CompletionRequest::new("t", vec![])
            .with_tools(req.tools.clone(), ToolChoice::Function("b".into()));
        assert_eq!(
            action_schema(&forced).unwrap()["properties"]["name"]["const"],
            "b"
        );
    }
}
