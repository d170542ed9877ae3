//! The ToolBench data model: queries, API docs, tool files. Field names and optionality follow the
//! published files exactly (ToolBench `data/` files as read by `toolbench/inference/Downstream_tasks/rapidapi.py`) so that loading and saving round-trips them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Parameter types seen in ToolBench (case-insensitive); anything else is rejected at load time.
pub(crate) const KNOWN_PARAM_TYPES: [&str; 14] = [
    "STRING",
    "NUMBER",
    "INTEGER",
    "FLOAT",
    "BOOLEAN",
    "ENUM",
    "ARRAY",
    "OBJECT",
    "BINARY",
    "DATE (YYYY-MM-DD)",
    "TIME (24-HOUR HH:MM)",
    "GEOPOINT (LATITUDE, LONGITUDE)",
    "FILE",
    "LIST",
];

/// One parameter of an API (always `name, type, description, default` in ToolBench files).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub default: Value,
}

impl Param {
    pub(crate) fn has_known_type(&self) -> bool {
        let upper = self.kind.to_uppercase();
        KNOWN_PARAM_TYPES.contains(&upper.as_str())
    }

    /// The JSON-schema type ToolBench exposes: NUMBER → integer, STRING → string, BOOLEAN → boolean,
    /// everything else string.
    pub(crate) fn schema_type(&self) -> &'static str {
        match self.kind.as_str() {
            "NUMBER" => "integer",
            "BOOLEAN" => "boolean",
            _ => "string",
        }
    }

    /// The default as text, as Python's `str()` would print it for the usual types.
    pub fn default_text(&self) -> String {
        match &self.default {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// An API doc as it appears in a query's `api_list`. The minimal form names only category, tool and
/// API; the rest is then looked up in the tool catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiDoc {
    pub category_name: String,
    pub tool_name: String,
    pub api_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_parameters: Option<Vec<Param>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional_parameters: Option<Vec<Param>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_response: Option<Value>,
}

impl ApiDoc {
    /// True for the minimal `{category_name, tool_name, api_name}` form.
    pub(crate) fn is_minimal(&self) -> bool {
        self.required_parameters.is_none() && self.optional_parameters.is_none()
    }

    pub fn description(&self) -> &str {
        self.api_description.as_deref().unwrap_or("")
    }

    pub fn required(&self) -> &[Param] {
        self.required_parameters.as_deref().unwrap_or(&[])
    }

    pub fn optional(&self) -> &[Param] {
        self.optional_parameters.as_deref().unwrap_or(&[])
    }

    /// The template response as a JSON value: ToolBench stores some as a JSON text (sometimes cut off,
    /// in which case it is kept as a plain string).
    pub fn template(&self) -> Option<Value> {
        match &self.template_response {
            Some(Value::String(s)) => {
                Some(serde_json::from_str(s).unwrap_or(Value::String(s.clone())))
            }
            Some(v) => Some(v.clone()),
            None => None,
        }
    }
}

/// A query in StableToolBench (and original ToolBench) format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Query {
    pub query: String,
    pub query_id: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_list: Option<Vec<ApiDoc>>,
    #[serde(
        rename = "relevant APIs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub relevant_apis: Option<Vec<[String; 2]>>,
}

impl Query {
    pub fn apis(&self) -> &[ApiDoc] {
        self.api_list.as_deref().unwrap_or(&[])
    }

    pub fn relevant(&self) -> &[[String; 2]] {
        self.relevant_apis.as_deref().unwrap_or(&[])
    }
}

/// One API inside a tool file (`tools/{Category}/{tool}.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolApi {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "default_method")]
    pub method: String,
    #[serde(default)]
    pub required_parameters: Vec<Param>,
    #[serde(default)]
    pub optional_parameters: Vec<Param>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_response: Option<Value>,
    /// Fields of the real toolenv files we do not use (url, code, schema, …), kept for round-trips.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

fn default_method() -> String {
    "GET".to_string()
}

/// A ToolBench tool file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolFile {
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standardized_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub api_list: Vec<ToolApi>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

/// A tool of the catalogue: its file plus where it lives.
#[derive(Debug, Clone)]
pub struct Tool {
    /// The category folder it was loaded from.
    pub category: String,
    /// The file's base name: ToolBench's `standard_tool_name`.
    pub standard_name: String,
    pub file: ToolFile,
}

impl Tool {
    pub fn description(&self) -> &str {
        self.file.tool_description.as_deref().unwrap_or("")
    }

    /// The API doc of one of this tool's APIs in query (`api_list`) form.
    pub fn api_doc(&self, api: &ToolApi) -> ApiDoc {
        ApiDoc {
            category_name: self.category.clone(),
            tool_name: self.file.tool_name.clone(),
            api_name: api.name.clone(),
            api_description: Some(api.description.clone()),
            required_parameters: Some(api.required_parameters.clone()),
            optional_parameters: Some(api.optional_parameters.clone()),
            method: Some(api.method.clone()),
            template_response: api.template_response.clone(),
        }
    }
}
