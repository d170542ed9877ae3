//! API doc → OpenAI function schema, with ToolBench's naming rules and quirks (ToolBench `toolbench/utils.py` `standardize`/`change_name` and `api_json_to_openai_json` in `rapidapi.py`), and the
//! binding from a function name back to the (category, tool, api) the tool server understands.

use serde_json::{Map, Value, json};

use super::model::ApiDoc;
use super::naming::{MAX_DESCRIPTION, first_chars, function_name, param_name, pure_api_name};

/// Name of the function that ends an episode.
pub const FINISH: &str = "Finish";

/// Who answers a function's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// An API of the ToolBench catalogue, called over the `/virtual` protocol.
    #[default]
    Virtual,
    /// A tool of an MCP server: `tool` is the server's name, `api` the tool's own name, `doc`
    /// describes it for the methods that read docs, and `schema` is the server's input schema.
    Mcp,
}

/// A function offered to the model, and what it calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    /// The name the model sees (`{api}_for_{tool}`, last 64 characters).
    pub name: String,
    /// The OpenAI function object `{name, description, parameters}`.
    pub schema: Value,
    pub category: String,
    /// ToolBench's `standard_tool_name`.
    pub tool: String,
    /// The standardised API name sent to the server.
    pub api: String,
    /// Parameter names (standardised) that must be present.
    pub required: Vec<String>,
    /// Every parameter name (standardised) the API declares, required first.
    pub params: Vec<String>,
    pub doc: ApiDoc,
    pub backend: Backend,
}

impl Function {
    /// Builds the function for an API doc; `standard_tool_name` is the tool file's base name.
    pub fn from_doc(doc: &ApiDoc, standard_tool_name: &str) -> Self {
        let name = function_name(&doc.api_name, standard_tool_name);
        let mut description = format!(
            "This is the subfunction for tool \"{standard_tool_name}\", you can use this tool."
        );
        let api_desc = doc.description().trim();
        if !api_desc.is_empty() {
            let replaced = api_desc.replace(&doc.api_name, &name);
            description.push_str(&format!(
                "The description of this function is: \"{}\"",
                first_chars(&replaced, MAX_DESCRIPTION)
            ));
        }
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut optional = Vec::new();
        let mut params = Vec::new();
        // QUIRK kept for comparable numbers: optional parameters only appear when the API has at
        // least one required parameter (`api_json_to_openai_json`).
        if !doc.required().is_empty() {
            for p in doc.required() {
                let key = param_name(&p.name);
                properties.insert(key.clone(), param_schema(p));
                required.push(key.clone());
                params.push(key);
            }
            for p in doc.optional() {
                let key = param_name(&p.name);
                properties.insert(key.clone(), param_schema(p));
                optional.push(key.clone());
                params.push(key);
            }
        }
        let schema = json!({
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "optional": optional,
            }
        });
        Function {
            name,
            schema,
            category: doc.category_name.clone(),
            tool: standard_tool_name.to_string(),
            api: pure_api_name(&doc.api_name),
            required,
            params,
            doc: doc.clone(),
            backend: Backend::Virtual,
        }
    }
}

fn param_schema(p: &super::model::Param) -> Value {
    let mut v = json!({
        "type": p.schema_type(),
        "description": first_chars(&p.description, MAX_DESCRIPTION),
    });
    let default = p.default_text();
    if !default.is_empty() {
        v["example_value"] = p.default.clone();
    }
    v
}

/// The `Finish` function, appended after the API functions.
pub(crate) fn finish_schema() -> Value {
    json!({
        "name": FINISH,
        "description": "Call this when you are done: give the final answer, or give up and restart if the task cannot be solved with the results so far. Always call it at the end.",
        "parameters": {
            "type": "object",
            "properties": {
                "return_type": {"type": "string", "enum": ["give_answer", "give_up_and_restart"]},
                "final_answer": {"type": "string", "description": "The complete answer for the user, with every fact they asked for. Required when return_type is give_answer."}
            },
            "required": ["return_type"]
        }
    })
}

/// The function list of a task: one per API (in order) plus `Finish` last.
pub(crate) fn function_schemas(functions: &[Function]) -> Vec<Value> {
    functions
        .iter()
        .map(|f| f.schema.clone())
        .chain(std::iter::once(finish_schema()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolbench::model::Param;

    fn param(name: &str, kind: &str, default: &str) -> Param {
        Param {
            name: name.into(),
            kind: kind.into(),
            description: "d".into(),
            default: Value::String(default.into()),
        }
    }

    fn doc(required: Vec<Param>, optional: Vec<Param>) -> ApiDoc {
        ApiDoc {
            category_name: "Data".into(),
            tool_name: "TheClique".into(),
            api_name: "Transfermarkt search".into(),
            api_description: Some("Search by name. Transfermarkt search finds players.".into()),
            required_parameters: Some(required),
            optional_parameters: Some(optional),
            method: Some("GET".into()),
            template_response: None,
        }
    }

    #[test]
    fn schema_has_toolbench_shape() {
        let f = Function::from_doc(
            &doc(
                vec![param("name", "STRING", "messi"), param("id", "NUMBER", "")],
                vec![],
            ),
            "theclique",
        );
        assert_eq!(f.name, "transfermarkt_search_for_theclique");
        assert_eq!(f.api, "transfermarkt_search");
        let params = &f.schema["parameters"];
        assert_eq!(params["required"], json!(["name", "is_id"]));
        assert_eq!(params["properties"]["is_id"]["type"], "integer");
        assert_eq!(params["properties"]["name"]["example_value"], "messi");
        assert!(params["properties"]["is_id"].get("example_value").is_none());
        let desc = f.schema["description"].as_str().unwrap_or_default();
        assert!(
            desc.contains("transfermarkt_search_for_theclique finds players"),
            "{desc}"
        );
    }

    #[test]
    fn optional_params_dropped_without_required() {
        let f = Function::from_doc(&doc(vec![], vec![param("channel_name", "STRING", "")]), "t");
        assert_eq!(f.schema["parameters"]["properties"], json!({}));
        let f = Function::from_doc(
            &doc(
                vec![param("q", "STRING", "")],
                vec![param("channel_name", "STRING", "")],
            ),
            "t",
        );
        assert_eq!(f.schema["parameters"]["optional"], json!(["channel_name"]));
    }

    #[test]
    fn description_is_cut() {
        let mut d = doc(vec![], vec![]);
        d.api_description = Some("x".repeat(1000));
        let f = Function::from_doc(&d, "t");
        let desc = f.schema["description"].as_str().unwrap_or_default();
        assert!(desc.ends_with(&format!("\"{}\"", "x".repeat(256))));
    }
}
