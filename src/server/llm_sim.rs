//! LLM simulation of an API (StableToolBench's GPT fallback): the API's documentation, a few recorded
//! examples and the arguments go to the configured model, which answers as the API would. Unlike
//! StableToolBench, the parameters are part of the documentation shown, and the reply is constrained
//! to and checked against the template's shape.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::reply_schema::{missing_fields, reply_schema};
use crate::llm::{CompletionRequest, LlmClient, Message, ResponseFormat};
use crate::prompts::Prompts;
use crate::toolbench::ApiDoc;
use crate::tools::{ReplySource, ToolReply};

/// Longest examples text put in the prompt (StableToolBench: 2,048 characters).
const MAX_EXAMPLES_CHARS: usize = 2048;
const ATTEMPTS: usize = 3;

pub struct LlmSimulator {
    llm: Arc<dyn LlmClient>,
}

impl LlmSimulator {
    pub fn new(llm: Arc<dyn LlmClient>) -> Self {
        LlmSimulator { llm }
    }

    /// Asks the model up to three times for a reply that parses; the error names the last problem.
    pub async fn simulate(
        &self,
        tool_description: &str,
        doc: &ApiDoc,
        template: Option<&Value>,
        examples: &[(String, Value)],
        args: &Map<String, Value>,
    ) -> Result<ToolReply, String> {
        let api_doc = json!({
            "tool_name": doc.tool_name,
            "tool_description": tool_description,
            "category": doc.category_name,
            "api_name": doc.api_name,
            "api_description": doc.description(),
            "required_parameters": doc.required(),
            "optional_parameters": doc.optional(),
            "template_response": template,
        });
        let mut shown: Vec<Value> = examples
            .iter()
            .map(|(k, v)| json!({"arguments": k, "reply": v}))
            .collect();
        while shown.len() > 1
            && Value::Array(shown.clone()).to_string().chars().count() > MAX_EXAMPLES_CHARS
        {
            shown.pop();
        }
        let mut examples_text = Value::Array(shown).to_string();
        if examples_text.chars().count() > MAX_EXAMPLES_CHARS {
            examples_text = examples_text.chars().take(MAX_EXAMPLES_CHARS).collect();
        }
        let prompts = Prompts::load().map_err(|e| e.to_string())?;
        let system = prompts
            .render("tool_simulator_system", &[])
            .map_err(|e| e.to_string())?;
        let pretty = serde_json::to_string_pretty(&api_doc).unwrap_or_default();
        let arguments = Value::Object(args.clone()).to_string();
        let user = prompts
            .render(
                "tool_simulator_user",
                &[
                    ("api_doc", &pretty),
                    ("examples", &examples_text),
                    ("arguments", &arguments),
                ],
            )
            .map_err(|e| e.to_string())?;
        let mut request = CompletionRequest::new(
            crate::llm::purpose::TOOL_SIMULATOR,
            vec![Message::system(system), Message::user(user)],
        )
        .with_max_tokens(1024)
        .with_temperature(0.0);
        // Constrained to the template's shape when it has one (json_schema for endpoints, a grammar
        // for the embedded model), and checked again: a reply that ignores the template is retried.
        request.response_format = match reply_schema(template) {
            Some(schema) => ResponseFormat::JsonSchema {
                name: "tool_reply".into(),
                schema,
            },
            None => ResponseFormat::JsonObject,
        };
        let mut last = String::new();
        for _ in 0..ATTEMPTS {
            match self.llm.complete(&request).await {
                Ok(c) => match parse_reply(&c.content) {
                    Ok(reply) => match missing_fields(&reply.response, template) {
                        None => return Ok(reply),
                        Some(why) => last = why,
                    },
                    Err(e) => last = e,
                },
                Err(e) => last = e.to_string(),
            }
        }
        Err(last)
    }
}

/// The model's text → a reply: fences stripped, a JSON object with a `response` field.
pub fn parse_reply(text: &str) -> Result<ToolReply, String> {
    let t = text.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .map_or(t, |s| s.trim_end().strip_suffix("```").unwrap_or(s))
        .trim();
    let value: Value =
        serde_json::from_str(t).map_err(|e| format!("the simulator's reply is not JSON: {e}"))?;
    let Value::Object(mut obj) = value else {
        return Err("the simulator's reply is not a JSON object".to_string());
    };
    let response = obj
        .remove("response")
        .ok_or_else(|| "the simulator's reply has no `response`".to_string())?;
    let error = match obj.remove("error") {
        Some(Value::String(s)) => s,
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    Ok(ToolReply {
        error,
        response,
        source: Some(ReplySource::Llm),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fenced_replies() {
        let r = parse_reply("```json\n{\"error\": \"\", \"response\": {\"a\": 1}}\n```").unwrap();
        assert_eq!(r.response, json!({"a": 1}));
        assert_eq!(r.source, Some(ReplySource::Llm));
        assert!(parse_reply("{\"error\": \"\"}").is_err());
        assert!(parse_reply("sure!").is_err());
    }
}
