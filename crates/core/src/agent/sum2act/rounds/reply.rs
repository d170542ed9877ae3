//! What a round's model call may say, as a JSON schema (a grammar for the embedded model, a
//! `response_format` for an endpoint), and its reading into typed proposals.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::agent::parse::first_json_object;
use crate::agent::plan::schema::per_function;
use crate::request::{MAX_FACT_CHARS, MAX_PARTS};
use crate::toolbench::Function;

/// Calls one round may propose: a request of six parts rarely needs more at once.
pub(super) const MAX_CALLS_PER_ROUND: usize = 8;

/// Facts one round may note.
const MAX_FACTS_PER_ROUND: usize = 16;

/// One proposed call.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Call {
    #[serde(default)]
    pub part: usize,
    #[serde(default)]
    pub tool: String,
    #[serde(default)]
    pub args: Value,
}

/// The first call's reply: the request's parts and the first calls.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Opening {
    #[serde(default)]
    pub parts: Vec<String>,
    /// How the user wants the answer given.
    #[serde(default)]
    pub form: Vec<String>,
    #[serde(default)]
    pub calls: Vec<Call>,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct NotedFact {
    #[serde(default)]
    pub part: usize,
    #[serde(default)]
    pub call: u32,
    #[serde(default)]
    pub fact: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct Failed {
    #[serde(default)]
    pub call: u32,
    #[serde(default)]
    pub why: String,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct NotFound {
    #[serde(default)]
    pub part: usize,
    #[serde(default)]
    pub why: String,
}

/// A later round's reply: what the results gave, then the next calls or the answer.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Round {
    #[serde(default)]
    pub facts: Vec<NotedFact>,
    #[serde(default)]
    pub failed: Vec<Failed>,
    #[serde(default)]
    pub not_found: Vec<NotFound>,
    #[serde(default)]
    pub calls: Vec<Call>,
    #[serde(default)]
    pub answer: Option<String>,
}

/// Reads a reply's JSON object into `T`; `Err` says what was wrong, for the one repair request.
pub(super) fn read<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
    let value = first_json_object(text)
        .or_else(|| serde_json::from_str::<Value>(text.trim()).ok())
        .ok_or("the reply holds no JSON object")?;
    serde_json::from_value(value).map_err(|e| format!("the JSON does not fit the schema: {e}"))
}

fn call_schema(tool: Value, args: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "part": {"type": "integer", "minimum": 1, "maximum": MAX_PARTS},
            "tool": tool,
            "args": args,
        },
        "required": ["part", "tool", "args"],
    })
}

/// A round's calls, each of an offered function (as the plan method's schema has them).
fn calls_schema(functions: &[Function]) -> Value {
    let item = per_function(functions, call_schema);
    json!({"type": "array", "items": item, "maxItems": MAX_CALLS_PER_ROUND})
}

/// `{"parts": [...], "form": [...], "calls": [...]}`.
pub(super) fn opening_schema(functions: &[Function]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "parts": {"type": "array", "items": {"type": "string", "maxLength": 300}, "minItems": 1, "maxItems": MAX_PARTS},
            "form": {"type": "array", "items": {"type": "string", "maxLength": 300}, "maxItems": 3},
            "calls": calls_schema(functions),
        },
        "required": ["parts", "calls"],
    })
}

/// `{"facts", "failed", "not_found", "calls" | "answer"}`.
pub(super) fn round_schema(functions: &[Function]) -> Value {
    let because = |key: &str| {
        json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": {key: {"type": "integer", "minimum": 1}, "why": {"type": "string", "maxLength": 200}},
                "required": [key, "why"],
            },
        })
    };
    json!({
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "part": {"type": "integer", "minimum": 1, "maximum": MAX_PARTS},
                        "call": {"type": "integer", "minimum": 1},
                        "fact": {"type": "string", "maxLength": MAX_FACT_CHARS},
                    },
                    "required": ["part", "call", "fact"],
                },
                "maxItems": MAX_FACTS_PER_ROUND,
            },
            "failed": because("call"),
            "not_found": because("part"),
            "calls": calls_schema(functions),
            "answer": {"type": "string"},
        },
        "required": ["facts"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_reply_reads_with_missing_keys_defaulted() {
        let r: Round =
            read(r#"Here: {"facts": [{"part": 1, "call": 2, "fact": "Lima"}], "answer": "Lima."}"#)
                .unwrap();
        assert_eq!(r.facts[0].fact, "Lima");
        assert!(r.calls.is_empty() && r.failed.is_empty());
        assert_eq!(r.answer.as_deref(), Some("Lima."));
        assert!(read::<Round>("no json").unwrap_err().contains("no JSON"));
        assert!(read::<Opening>(r#"{"parts": "one"}"#).is_err());
    }
}
