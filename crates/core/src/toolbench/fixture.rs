//! ApiDoc fixtures for tests: one builder for the GET APIs with string parameters that the agent,
//! tools and graph tests describe. Test-only.

#[cfg(test)]
use serde_json::Value;

use super::{ApiDoc, Param};

/// A STRING parameter.
#[cfg(test)]
pub(crate) fn string_param(name: &str, description: &str, default: Value) -> Param {
    Param {
        name: name.into(),
        kind: "STRING".into(),
        description: description.into(),
        default,
    }
}

/// STRING parameters named `names`, without descriptions, each defaulting to `default`.
#[cfg(test)]
pub(crate) fn string_params(names: &[&str], default: &Value) -> Vec<Param> {
    names
        .iter()
        .map(|n| string_param(n, "", default.clone()))
        .collect()
}

/// A GET API of `tool` with `required` parameters, no optional ones, and neither description nor
/// template response (tests set those they need).
pub fn api_doc(category: &str, tool: &str, api: &str, required: Vec<Param>) -> ApiDoc {
    ApiDoc {
        category_name: category.into(),
        tool_name: tool.into(),
        api_name: api.into(),
        api_description: None,
        required_parameters: Some(required),
        optional_parameters: Some(vec![]),
        method: Some("GET".into()),
        template_response: None,
    }
}

/// A "Movies" function of `tool` with string parameters and an optional `template_response`, as the
/// tool-graph tests build their catalogues.
#[cfg(test)]
pub(crate) fn movie_function(
    tool: &str,
    api: &str,
    params: &[&str],
    template: Option<Value>,
) -> super::Function {
    let doc = ApiDoc {
        api_description: Some(api.into()),
        template_response: template,
        ..api_doc("Movies", tool, api, string_params(params, &Value::Null))
    };
    super::Function::from_doc(&doc, tool)
}
