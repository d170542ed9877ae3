//! The JSON schema of a plan, given to the model as a grammar (the embedded model) or a
//! `response_format` (an OpenAI-compatible endpoint). With few offered functions each task is one
//! branch per function, so tool names and argument names cannot be misspelt; with many, the tool is
//! free text and the selection stage maps it to a function.

use serde_json::{Map, Value, json};

use super::dag::MAX_TASKS;
use crate::toolbench::Function;

/// Functions up to which tool names are spelt out in the schema.
pub(crate) const NAMED_TOOLS_LIMIT: usize = 16;

/// The schema of `{"tasks": [...]}` over `functions`.
pub(crate) fn plan_schema(functions: &[Function]) -> Value {
    let item = per_function(functions, task_schema);
    json!({
        "type": "object",
        "properties": {"tasks": {"type": "array", "items": item, "minItems": 1, "maxItems": MAX_TASKS}},
        "required": ["tasks"],
    })
}

/// The schema of one call of a list over `functions`, `item(tool, args)` making an item from the
/// schemas of its tool and its arguments: with few functions, one branch per function (its name a
/// constant and its arguments its own), so a grammar-bound model cannot misspell a tool or an
/// argument; with many, the tool is free text, mapped to a function after.
pub(crate) fn per_function(functions: &[Function], item: impl Fn(Value, Value) -> Value) -> Value {
    if functions.is_empty() || functions.len() > NAMED_TOOLS_LIMIT {
        return item(
            json!({"type": "string", "maxLength": 120}),
            json!({"type": "object"}),
        );
    }
    let branches: Vec<Value> = functions
        .iter()
        .map(|f| item(json!({"const": f.name}), args_schema(f)))
        .collect();
    json!({"oneOf": branches})
}

fn task_schema(tool: Value, args: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "tool": tool,
            "args": args,
            "dep": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 4},
        },
        "required": ["id", "tool", "args", "dep"],
    })
}

/// A function's arguments; every non-boolean value may also be a placeholder string.
pub(crate) fn args_schema(f: &Function) -> Value {
    let declared = &f.schema["parameters"]["properties"];
    let mut props = Map::new();
    for p in &f.params {
        let ty = declared[p.as_str()]["type"].as_str().unwrap_or("string");
        let schema = match ty {
            "boolean" => json!({"type": "boolean"}),
            "integer" | "number" => json!({"type": [ty, "string"], "maxLength": 200}),
            _ => json!({"type": "string", "maxLength": 200}),
        };
        props.insert(p.clone(), schema);
    }
    json!({"type": "object", "properties": props, "required": f.required})
}
