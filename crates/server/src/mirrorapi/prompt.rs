//! The user message MirrorAPI was trained on: `API doc:\n{api_doc}\n\nRequest:\n{request}`, both dicts
//! written as Python's `str()` prints them. The API doc keeps the training data's key order; the
//! request is the whole `/virtual` body with `tool_input` as a compact JSON string and `strip: 'filter'`,
//! as in the MirrorAPI-Bench prompts (StableToolBench's own server sends only the arguments there; we
//! follow the benchmark, whose layout the training data is taken to share).

use serde_json::{Map, Value, json};

use crate::pyrepr::to_repr;
use sum2act_core::toolbench::ApiDoc;

/// Arguments never shown to the model (StableToolBench drops the key from the request too).
const HIDDEN_ARGS: &[&str] = &["toolbench_key"];

/// `{'api_name': ..., 'api_description': ..., 'required_parameters': [...], 'optional_parameters':
/// [...], 'tool_description': ..., 'tool_name': ..., 'tool_category': ...}`.
pub fn api_doc(tool_description: &str, doc: &ApiDoc) -> String {
    let params =
        |p: &[sum2act_core::toolbench::Param]| serde_json::to_value(p).unwrap_or(json!([]));
    to_repr(&json!({
        "api_name": doc.api_name,
        "api_description": doc.description(),
        "required_parameters": params(doc.required()),
        "optional_parameters": params(doc.optional()),
        "tool_description": tool_description,
        "tool_name": doc.tool_name,
        "tool_category": doc.category_name,
    }))
}

/// `{'category': ..., 'tool_name': ..., 'api_name': ..., 'tool_input': '{"k":"v"}', 'strip': 'filter'}`.
pub fn request(doc: &ApiDoc, args: &Map<String, Value>) -> String {
    let shown: Map<String, Value> = args
        .iter()
        .filter(|(k, _)| !HIDDEN_ARGS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    to_repr(&json!({
        "category": doc.category_name,
        "tool_name": doc.tool_name,
        "api_name": doc.api_name,
        "tool_input": Value::Object(shown).to_string(),
        "strip": "filter",
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sum2act_core::toolbench::Param;

    fn doc() -> ApiDoc {
        ApiDoc {
            category_name: "Social".into(),
            tool_name: "Clip Finder - mobile".into(),
            api_name: "/v1/search/post".into(),
            api_description: Some("Search videos by text query".into()),
            required_parameters: Some(vec![Param {
                name: "keyword".into(),
                kind: "STRING".into(),
                description: "Query text".into(),
                default: json!("nike"),
            }]),
            optional_parameters: Some(vec![]),
            method: Some("GET".into()),
            template_response: Some(json!({"items": "list"})),
        }
    }

    #[test]
    fn api_doc_is_a_python_dict_in_training_order_without_the_template() {
        let text = api_doc("Unofficial mobile API.", &doc());
        assert_eq!(
            text,
            "{'api_name': '/v1/search/post', 'api_description': 'Search videos by text query', \
             'required_parameters': [{'name': 'keyword', 'type': 'STRING', 'description': 'Query text', \
             'default': 'nike'}], 'optional_parameters': [], 'tool_description': 'Unofficial mobile API.', \
             'tool_name': 'Clip Finder - mobile', 'tool_category': 'Social'}"
        );
    }

    #[test]
    fn request_carries_the_arguments_as_a_compact_json_string() {
        let mut args = Map::new();
        args.insert("keyword".into(), json!("sneakers"));
        args.insert("count".into(), json!(10));
        args.insert("toolbench_key".into(), json!("secret"));
        let text = request(&doc(), &args);
        assert_eq!(
            text,
            "{'category': 'Social', 'tool_name': 'Clip Finder - mobile', 'api_name': '/v1/search/post', \
             'tool_input': '{\"keyword\":\"sneakers\",\"count\":10}', 'strip': 'filter'}"
        );
    }
}
