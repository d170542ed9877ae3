//! Arguments of a tool call: lenient parsing of what a model wrote, checks against the API's declared
//! parameters (shared by the caller and the server so both say the same thing), and the canonical
//! form used as a cache key.

use serde_json::{Map, Value};

use crate::toolbench::ApiDoc;
use crate::toolbench::naming::param_name;

/// Parses a model's argument string into an object. `""` is `{}` (as the StableToolBench server does); a
/// JSON string that itself holds an object (double-encoded arguments, a common model slip) is unwrapped.
pub(crate) fn parse_arguments(raw: &str) -> Result<Map<String, Value>, String> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Ok(Map::new());
    }
    if let Some(obj) = super::observation::parse_lenient_object(trimmed) {
        return Ok(obj);
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::String(inner)) => match super::observation::parse_lenient_object(&inner) {
            Some(obj) => Ok(obj),
            None => Err("the arguments are a JSON string, not a JSON object".to_string()),
        },
        Ok(Value::Null) => Ok(Map::new()),
        Ok(other) => Err(format!(
            "the arguments must be a JSON object of parameter names to values, got {}",
            json_kind(&other)
        )),
        Err(e) => Err(format!("the arguments are not valid JSON ({e})")),
    }
}

/// A request body's `tool_input`: a JSON text or an object.
pub fn input_object(input: &Value) -> Result<Map<String, Value>, String> {
    match input {
        Value::Object(m) => Ok(m.clone()),
        Value::String(s) => parse_arguments(s),
        Value::Null => Ok(Map::new()),
        other => Err(format!(
            "tool_input must be a JSON object or a JSON text, got {}",
            json_kind(other)
        )),
    }
}

/// A JSON value's kind as an error names it (`a string`, `an object`).
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What is wrong with a call's parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamProblems {
    pub missing: Vec<String>,
    pub unknown: Vec<String>,
    /// Every parameter name the API accepts (as the model sees them).
    pub accepted: Vec<String>,
}

impl ParamProblems {
    pub(crate) fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.unknown.is_empty()
    }

    /// A message in the style of a real API's complaint, naming the parameters.
    pub fn message(&self) -> String {
        let quote = |v: &[String]| {
            v.iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        if !self.missing.is_empty() {
            parts.push(format!(
                "missing required parameter(s): {}",
                quote(&self.missing)
            ));
        }
        if !self.unknown.is_empty() {
            let accepted = if self.accepted.is_empty() {
                "this API takes no parameters".to_string()
            } else {
                format!("accepted: {}", self.accepted.join(", "))
            };
            parts.push(format!(
                "unexpected parameter(s): {} ({accepted})",
                quote(&self.unknown)
            ));
        }
        parts.join("; ")
    }
}

/// Checks arguments against an API doc. A parameter counts as given under its standardised name (what
/// the function schema shows) or its original one (what StableToolBench clients sometimes send).
pub fn check_params(doc: &ApiDoc, args: &Map<String, Value>) -> ParamProblems {
    let mut problems = ParamProblems::default();
    let mut known: Vec<(String, String)> = Vec::new();
    for p in doc.required() {
        let std = param_name(&p.name);
        if !args.contains_key(&std) && !args.contains_key(&p.name) {
            problems.missing.push(std.clone());
        }
        known.push((std, p.name.clone()));
    }
    for p in doc.optional() {
        known.push((param_name(&p.name), p.name.clone()));
    }
    for key in args.keys() {
        if !known.iter().any(|(s, o)| s == key || o == key) {
            problems.unknown.push(key.clone());
        }
    }
    problems.accepted = known.into_iter().map(|(s, _)| s).collect();
    problems
}

/// The arguments under the API's own parameter names: the function schema shows ToolBench's standardised
/// names (`statid` for `statId`), but the simulator reads the API's documentation, where a name it was
/// not given looks like a missing parameter to complain about (a strong-model simulator did). Names that
/// are not a declared parameter's standardised form are kept as given.
pub fn with_declared_names(doc: &ApiDoc, args: &Map<String, Value>) -> Map<String, Value> {
    let declared: Vec<&str> = doc
        .required()
        .iter()
        .chain(doc.optional())
        .map(|p| p.name.as_str())
        .collect();
    args.iter()
        .map(|(key, value)| {
            let original = declared
                .iter()
                .find(|d| *d != key && param_name(d) == *key && !args.contains_key(**d));
            (
                original.map_or(key.as_str(), |d| *d).to_string(),
                value.clone(),
            )
        })
        .collect()
}

/// Checks arguments against declared names taken as they are (an MCP tool's input schema):
/// `required` must be present, anything outside `params` is unknown.
pub(crate) fn check_declared(
    required: &[String],
    params: &[String],
    args: &Map<String, Value>,
) -> ParamProblems {
    ParamProblems {
        missing: required
            .iter()
            .filter(|r| !args.contains_key(*r))
            .cloned()
            .collect(),
        unknown: args
            .keys()
            .filter(|k| !params.contains(k))
            .cloned()
            .collect(),
        accepted: params.to_vec(),
    }
}

/// The response cache's key.
pub use crate::toolbench::canonical::canonical_json;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolbench::Param;

    fn doc() -> ApiDoc {
        let p = |n: &str| Param {
            name: n.into(),
            kind: "STRING".into(),
            description: String::new(),
            default: Value::Null,
        };
        ApiDoc {
            category_name: "Data".into(),
            tool_name: "T".into(),
            api_name: "a".into(),
            api_description: None,
            required_parameters: Some(vec![p("name"), p("id")]),
            optional_parameters: Some(vec![p("page")]),
            method: None,
            template_response: None,
        }
    }

    #[test]
    fn parses_lenient_forms() {
        assert_eq!(parse_arguments("").ok(), Some(Map::new()));
        assert_eq!(parse_arguments("{\"a\": 1}").ok().map(|m| m.len()), Some(1));
        assert_eq!(
            parse_arguments("\"{\\\"a\\\": 1}\"").ok().map(|m| m.len()),
            Some(1)
        );
        assert!(parse_arguments("{a: 1").is_err());
        assert!(parse_arguments("[1]").unwrap_err().contains("an array"));
    }

    #[test]
    fn declared_names_are_taken_as_they_are() {
        let (req, all) = (
            vec!["id".to_string()],
            vec!["id".to_string(), "x".to_string()],
        );
        let p = check_declared(&req, &all, &parse_arguments(r#"{"x": 1, "y": 2}"#).unwrap());
        assert_eq!(p.missing, vec!["id"]);
        assert_eq!(p.unknown, vec!["y"]);
        assert!(check_declared(&req, &all, &parse_arguments(r#"{"id": 1}"#).unwrap()).is_empty());
    }

    #[test]
    fn names_missing_and_unknown() {
        let args = parse_arguments(r#"{"name": "x", "color": "red"}"#).unwrap();
        let p = check_params(&doc(), &args);
        assert_eq!(p.missing, vec!["is_id"]);
        assert_eq!(p.unknown, vec!["color"]);
        assert!(p.message().contains("'is_id'"), "{}", p.message());
        let ok = parse_arguments(r#"{"name": "x", "id": 3}"#).unwrap();
        assert!(check_params(&doc(), &ok).is_empty());
    }

    #[test]
    fn the_simulator_gets_the_apis_own_parameter_names() {
        let mut d = doc();
        d.required_parameters = Some(vec![Param {
            name: "statId".into(),
            kind: "STRING".into(),
            description: String::new(),
            default: Value::Null,
        }]);
        let given = parse_arguments(r#"{"statid": "186", "year": 2022, "page": 2}"#).unwrap();
        let named = with_declared_names(&d, &given);
        assert_eq!(named.get("statId"), Some(&Value::from("186")));
        assert!(!named.contains_key("statid"));
        // Undeclared names and names already in the API's form stay as given.
        assert_eq!(named.get("year"), Some(&Value::from(2022)));
        assert_eq!(named.get("page"), Some(&Value::from(2)));
        let both = parse_arguments(r#"{"statid": "1", "statId": "2"}"#).unwrap();
        assert_eq!(with_declared_names(&d, &both), both);
    }
}
