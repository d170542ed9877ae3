//! ControlLLM's task decomposition: the request split into subtasks, each with the values it needs
//! from the request (inputs) and what it must produce (outputs), as JSON. A reply that cannot be
//! read leaves the whole request as one subtask without inputs.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::agent::parse::first_json_object;
use crate::agent::{AgentError, SolveContext};
use crate::llm::Purpose;
use crate::llm::{CompletionRequest, Message};
use crate::prompts::PromptName;
use crate::text::clip;
use crate::tools::graph::{gives, kind_of};

/// Subtasks one request is split into at most.
pub(crate) const MAX_SUBTASKS: usize = 4;

/// A value the request gives a subtask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Input {
    pub name: String,
    pub value: String,
}

/// One subtask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Subtask {
    pub task: String,
    #[serde(default)]
    pub inputs: Vec<Input>,
    #[serde(default)]
    pub outputs: Vec<String>,
}

impl Subtask {
    /// The request's value for a resource kind, if this subtask was given one: of that kind, else one
    /// that fills it ("video id" for a bare `id`, see [`gives`]).
    pub(crate) fn input(&self, kind: &str) -> Option<&str> {
        let exact = self.inputs.iter().find(|i| kind_of(&i.name) == kind);
        exact
            .or_else(|| self.inputs.iter().find(|i| gives(&kind_of(&i.name), kind)))
            .map(|i| i.value.as_str())
    }
}

/// Splits the request; `tools` is the tool listing shown to the model.
pub(crate) async fn decompose(
    ctx: &SolveContext,
    query: &str,
    tools: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Subtask>, AgentError> {
    let prompt = ctx.prompts.render(
        PromptName::GraphDecompose,
        &[("tools", tools), ("query", query)],
    )?;
    let request = CompletionRequest::new(Purpose::Decompose, vec![Message::user(prompt)])
        .with_json_schema("subtasks", schema())
        .with_max_tokens(ctx.options.max_tokens.max(512));
    let reply = ctx.complete(&request).await?;
    let parsed = first_json_object(&reply.content)
        .map(|v| parse(&v))
        .unwrap_or_default();
    if parsed.is_empty() {
        notes.push("decomposition unreadable; the request is one subtask".into());
        return Ok(vec![Subtask {
            task: query.to_string(),
            inputs: Vec::new(),
            outputs: Vec::new(),
        }]);
    }
    Ok(parsed)
}

fn schema() -> Value {
    let short = |n: u32| json!({"type": "string", "maxLength": n});
    json!({
        "type": "object",
        "properties": {"subtasks": {"type": "array", "minItems": 1, "maxItems": MAX_SUBTASKS, "items": {
            "type": "object",
            "properties": {
                "task": short(200),
                "inputs": {"type": "array", "maxItems": 4, "items": {
                    "type": "object",
                    "properties": {"name": short(40), "value": short(120)},
                    "required": ["name", "value"],
                }},
                "outputs": {"type": "array", "maxItems": 3, "items": short(40)},
            },
            "required": ["task", "inputs", "outputs"],
        }}},
        "required": ["subtasks"],
    })
}

/// Reads subtasks leniently: inputs as a list of `{name, value}` or as one object.
pub(crate) fn parse(v: &Value) -> Vec<Subtask> {
    let list = v
        .get("subtasks")
        .unwrap_or(v)
        .as_array()
        .cloned()
        .unwrap_or_default();
    list.iter()
        .take(MAX_SUBTASKS)
        .filter_map(|s| {
            let task = s.get("task").and_then(Value::as_str)?.trim();
            if task.is_empty() {
                return None;
            }
            Some(Subtask {
                task: clip(task, 200),
                inputs: inputs(s.get("inputs")),
                outputs: s
                    .get("outputs")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(|x| clip(x, 40))
                            .collect()
                    })
                    .unwrap_or_default(),
            })
        })
        .collect()
}

fn inputs(v: Option<&Value>) -> Vec<Input> {
    let text = |v: &Value| match v {
        Value::String(s) => clip(s, 120),
        other => clip(&other.to_string(), 120),
    };
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|i| {
                Some(Input {
                    name: i.get("name")?.as_str()?.to_string(),
                    value: text(i.get("value")?),
                })
            })
            .collect(),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| Input {
                name: k.clone(),
                value: text(v),
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_input_forms() {
        let s = parse(&json!({"subtasks": [
            {"task": "find the movie", "inputs": [{"name": "title", "value": "The Matrix"}], "outputs": ["movie_id"]},
            {"task": "weather", "inputs": {"City": "Paris"}, "outputs": []},
            {"task": ""},
        ]}));
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].input("title"), Some("The Matrix"));
        assert_eq!(s[1].input("city"), Some("Paris"));
        assert_eq!(s[0].outputs, vec!["movie_id"]);
    }

    #[test]
    fn an_identifier_named_by_what_it_identifies_fills_a_bare_id() {
        // G2_instruction 4746: "fund ID" STU321 for Mutual Fund NAV's `ID` (ToolBench's `is_id`).
        let s = parse(&json!({"subtasks": [
            {"task": "NAV of STU321", "inputs": [{"name": "fund ID", "value": "STU321"}, {"name": "date", "value": "today"}]},
        ]}));
        assert_eq!(s[0].input(&kind_of("is_id")), Some("STU321"));
        assert_eq!(s[0].input("date"), Some("today"));
        assert_eq!(s[0].input("city_id"), None);
    }
}
