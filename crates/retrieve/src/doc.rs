//! The searchable text of an API: its names and description expanded with what else the catalogue
//! knows about it. ToolBench tool files have terse (often empty) descriptions, so parameter names,
//! parameter defaults (example requests: `messi`, `10010`) and the field names of the template
//! response (`venue_name`, `line_up`) carry much of the signal.

use serde_json::Value;

use sum2act_core::toolbench::{Tool, ToolApi};

/// One field of the index with its text for one API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DocField {
    Category,
    ToolName,
    ToolDescription,
    ApiName,
    ApiDescription,
    ParamNames,
    ParamDescriptions,
    ParamDefaults,
    ResponseFields,
}

impl DocField {
    pub const ALL: [DocField; 9] = [
        DocField::Category,
        DocField::ToolName,
        DocField::ToolDescription,
        DocField::ApiName,
        DocField::ApiDescription,
        DocField::ParamNames,
        DocField::ParamDescriptions,
        DocField::ParamDefaults,
        DocField::ResponseFields,
    ];

    /// The tantivy field name.
    pub fn name(self) -> &'static str {
        match self {
            DocField::Category => "category",
            DocField::ToolName => "tool_name",
            DocField::ToolDescription => "tool_description",
            DocField::ApiName => "api_name",
            DocField::ApiDescription => "api_description",
            DocField::ParamNames => "param_names",
            DocField::ParamDescriptions => "param_descriptions",
            DocField::ParamDefaults => "param_defaults",
            DocField::ResponseFields => "response_fields",
        }
    }
}

/// The expanded text of one API, field by field.
#[derive(Debug, Clone)]
pub struct ApiText {
    pub fields: Vec<(DocField, String)>,
    /// Tool name and API name, for the word-pair field.
    pub names: String,
}

impl ApiText {
    /// `examples`: requests an LLM imagined for the API (see `examples`), read as more description.
    pub fn of(tool: &Tool, api: &ToolApi, examples: &[String]) -> Self {
        let params: Vec<_> = api
            .required_parameters
            .iter()
            .chain(&api.optional_parameters)
            .collect();
        let join = |parts: Vec<String>| parts.join(" ");
        let mut response = Vec::new();
        if let Some(t) = &api.template_response {
            response_fields(t, &mut response, 0);
        }
        let fields = vec![
            (DocField::Category, tool.category.replace('_', " ")),
            (DocField::ToolName, tool.file.tool_name.clone()),
            (DocField::ToolDescription, tool.description().to_string()),
            (DocField::ApiName, api.name.clone()),
            (
                DocField::ApiDescription,
                std::iter::once(&api.description)
                    .chain(examples)
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            (
                DocField::ParamNames,
                join(params.iter().map(|p| p.name.clone()).collect()),
            ),
            (
                DocField::ParamDescriptions,
                join(params.iter().map(|p| p.description.clone()).collect()),
            ),
            (
                DocField::ParamDefaults,
                join(params.iter().map(|p| p.default_text()).collect()),
            ),
            (DocField::ResponseFields, response.join(" ")),
        ];
        ApiText {
            fields,
            names: format!("{}\n{}", api.name, tool.file.tool_name),
        }
    }

    pub fn get(&self, field: DocField) -> &str {
        self.fields
            .iter()
            .find(|(f, _)| *f == field)
            .map_or("", |(_, t)| t.as_str())
    }
}

/// Collects the keys of a template response. Some templates are JSON text (sometimes cut off):
/// parse it when possible, else pick out the quoted keys.
fn response_fields(value: &Value, out: &mut Vec<String>, depth: usize) {
    if depth > 16 {
        return;
    }
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if !k.starts_with("_list_length") {
                    out.push(k.clone());
                }
                response_fields(v, out, depth + 1);
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| response_fields(v, out, depth + 1)),
        Value::String(s) if depth == 0 => match serde_json::from_str::<Value>(s) {
            Ok(parsed) if !parsed.is_string() => response_fields(&parsed, out, depth + 1),
            _ => quoted_keys(s, out),
        },
        _ => {}
    }
}

/// `"key":` occurrences in a JSON text that does not parse.
fn quoted_keys(text: &str, out: &mut Vec<String>) {
    let mut rest = text;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else { break };
        let key = &after[..end];
        let tail = after[end + 1..].trim_start();
        if tail.starts_with(':') && !key.is_empty() && key.len() < 64 {
            out.push(key.to_string());
        }
        rest = &after[end + 1..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn response_keys_from_objects_lists_and_text() {
        let mut out = Vec::new();
        response_fields(
            &json!({"date": "str", "line_up": [{"name": "str", "_list_length": 2}]}),
            &mut out,
            0,
        );
        assert_eq!(out, ["date", "line_up", "name"]);
        let mut out = Vec::new();
        response_fields(
            &json!("{\"title\": \"x\", \"items\": [{\"price\": 1"),
            &mut out,
            0,
        );
        assert_eq!(out, ["title", "items", "price"]);
        let mut out = Vec::new();
        response_fields(&json!("{\"ok\": true}"), &mut out, 0);
        assert_eq!(out, ["ok"]);
    }
}
