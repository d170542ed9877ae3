//! An MCP server's tools as functions the model can call: `mcp__{server}__{tool}` (the MCP clients'
//! usual name spacing; valid for OpenAI function calling: `[A-Za-z0-9_-]`, at most 64 characters,
//! unique), the server's own input schema, and a ToolBench-style doc for the methods that read docs.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::toolbench::naming::{MAX_DESCRIPTION, first_chars};
use crate::toolbench::{ApiDoc, Backend, Function, Param};

/// Category of MCP functions in docs and requests.
pub(crate) const MCP_CATEGORY: &str = "MCP";

/// An input schema larger than this (serialized) is replaced by a bare object schema: a server must
/// not be able to fill the model's context with one tool.
pub(crate) const MAX_SCHEMA_BYTES: usize = 16 * 1024;

/// OpenAI's limit on function names.
const MAX_NAME: usize = 64;

/// The longest server name kept in function names (the tool's name needs the room).
const MAX_SERVER_IN_NAME: usize = 20;

/// `text` with every character outside `[A-Za-z0-9_-]` turned into `_`.
pub(crate) fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A unique function name for `tool` of `server`; `taken` holds the names given so far.
pub(crate) fn function_name(server: &str, tool: &str, taken: &mut HashSet<String>) -> String {
    let server: String = sanitize(server).chars().take(MAX_SERVER_IN_NAME).collect();
    let prefix = format!("mcp__{server}__");
    let tool = sanitize(tool);
    let base: String = format!("{prefix}{tool}").chars().take(MAX_NAME).collect();
    let mut name = base.clone();
    let mut n = 2;
    while taken.contains(&name) {
        let suffix = format!("_{n}");
        let keep = MAX_NAME - suffix.len();
        name = format!("{}{suffix}", base.chars().take(keep).collect::<String>());
        n += 1;
    }
    taken.insert(name.clone());
    name
}

/// The function for one tool of `server`, named `name`.
pub(crate) fn mcp_function(server: &str, name: String, tool: &rmcp::model::Tool) -> Function {
    let description = first_chars(
        tool.description.as_deref().unwrap_or("").trim(),
        MAX_DESCRIPTION * 2,
    )
    .to_string();
    let parameters = input_schema(tool);
    let empty = Map::new();
    let props = parameters["properties"].as_object().unwrap_or(&empty);
    let required: Vec<String> = parameters["required"]
        .as_array()
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .filter(|n| props.contains_key(*n))
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    let optional: Vec<String> = props
        .keys()
        .filter(|k| !required.contains(k))
        .cloned()
        .collect();
    let param = |n: &String| Param {
        name: n.clone(),
        kind: props[n.as_str()]["type"]
            .as_str()
            .unwrap_or("string")
            .to_uppercase(),
        description: first_chars(
            props[n.as_str()]["description"].as_str().unwrap_or(""),
            MAX_DESCRIPTION,
        )
        .to_string(),
        default: props[n.as_str()]
            .get("default")
            .cloned()
            .unwrap_or(Value::Null),
    };
    let doc = ApiDoc {
        category_name: MCP_CATEGORY.to_string(),
        tool_name: server.to_string(),
        api_name: tool.name.to_string(),
        api_description: Some(description.clone()),
        required_parameters: Some(required.iter().map(param).collect()),
        optional_parameters: Some(optional.iter().map(param).collect()),
        method: None,
        template_response: None,
    };
    let shown = if description.is_empty() {
        format!("Tool \"{}\" of the MCP server \"{server}\".", tool.name)
    } else {
        format!(
            "Tool \"{}\" of the MCP server \"{server}\": {description}",
            tool.name
        )
    };
    let schema = json!({"name": name, "description": shown, "parameters": parameters});
    let params = required.iter().chain(&optional).cloned().collect();
    Function {
        name,
        schema,
        category: MCP_CATEGORY.to_string(),
        tool: server.to_string(),
        api: tool.name.to_string(),
        required,
        params,
        doc,
        backend: Backend::Mcp,
    }
}

/// The tool's input schema as an object schema with `properties` (what function calling expects);
/// an oversized one becomes `{"type": "object"}` with a warning.
fn input_schema(tool: &rmcp::model::Tool) -> Value {
    let mut schema = Value::Object((*tool.input_schema).clone());
    let size = serde_json::to_string(&schema).map_or(usize::MAX, |s| s.len());
    if size > MAX_SCHEMA_BYTES {
        tracing::warn!(
            "MCP tool `{}`: input schema of {size} bytes replaced by a bare object schema (limit {MAX_SCHEMA_BYTES})",
            tool.name
        );
        schema = json!({});
    }
    schema["type"] = json!("object");
    if !schema["properties"].is_object() {
        schema["properties"] = json!({});
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn tool(name: &str, schema: Value) -> rmcp::model::Tool {
        let Value::Object(m) = schema else {
            panic!("schema must be an object")
        };
        rmcp::model::Tool::new(name.to_string(), "Reads text.", Arc::new(m))
    }

    #[test]
    fn names_are_spaced_valid_and_unique() {
        let mut taken = HashSet::new();
        assert_eq!(function_name("media", "ocr", &mut taken), "mcp__media__ocr");
        assert_eq!(
            function_name("media", "ocr", &mut taken),
            "mcp__media__ocr_2"
        );
        let long = function_name("a server.name", &"x".repeat(100), &mut taken);
        assert_eq!(long.len(), 64);
        assert!(long.starts_with("mcp__a_server_name__x"));
        let again = function_name("a server.name", &"x".repeat(100), &mut taken);
        assert_eq!(again.len(), 64);
        assert!(again.ends_with("_2"));
        assert!(
            again
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        );
    }

    #[test]
    fn a_tool_becomes_a_function_with_its_own_schema() {
        let t = tool(
            "read text",
            json!({"type": "object", "properties": {
                "image": {"type": "string", "description": "a path"},
                "lang": {"type": "string", "default": "eng"}
            }, "required": ["image", "ghost"]}),
        );
        let f = mcp_function("media", "mcp__media__read_text".into(), &t);
        assert_eq!(f.backend, Backend::Mcp);
        assert_eq!(f.tool, "media");
        assert_eq!(f.api, "read text");
        assert_eq!(f.required, vec!["image"]);
        assert_eq!(f.params, vec!["image", "lang"]);
        assert_eq!(f.schema["name"], "mcp__media__read_text");
        assert_eq!(
            f.schema["parameters"]["properties"]["lang"]["default"],
            "eng"
        );
        assert!(
            f.schema["description"]
                .as_str()
                .unwrap()
                .contains("Reads text.")
        );
        assert_eq!(f.doc.optional()[0].default, json!("eng"));

        let bare = mcp_function("m", "n".into(), &tool("t", json!({})));
        assert_eq!(
            bare.schema["parameters"],
            json!({"type": "object", "properties": {}})
        );
        let big = json!({"type": "object", "properties": {"a": {"description": "x".repeat(MAX_SCHEMA_BYTES)}}});
        let capped = mcp_function("m", "n".into(), &tool("t", big));
        assert!(capped.params.is_empty());
    }
}
