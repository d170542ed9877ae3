//! From a request to what the engine runs: the chat prompt in the model's template, its tokens, the
//! output mode and the grammar that enforces it.

use llama_cpp_2::model::LlamaChatMessage;
use llama_cpp_2::sampling::LlamaSampler;
use serde_json::{Value, json};

use super::Prepared;
use super::engine::{Engine, Output};
use super::schema::{action_schema, bounded_schema};
use crate::llm::{CompletionRequest, LlmError, Message, ResponseFormat, Role, ToolChoice};

impl Engine<'_> {
    /// Turns a request into prompt tokens, an output mode, an optional grammar and a token cap.
    pub(super) fn prepare(&mut self, request: &CompletionRequest) -> Result<Prepared, LlmError> {
        let use_tools = !request.tools.is_empty() && request.tool_choice != ToolChoice::None;
        let (output, schema) = if use_tools {
            (Output::Action, Some(action_schema(request)?))
        } else {
            match &request.response_format {
                ResponseFormat::Text => (Output::Text, None),
                ResponseFormat::JsonObject => (Output::Json, Some(json!({"type": "object"}))),
                ResponseFormat::JsonSchema { schema, .. } => {
                    (Output::Json, Some(bounded_schema(schema)))
                }
            }
        };
        let text = self.render_prompt(request, use_tools)?;
        // The template already wrote the special tokens; parse them as such.
        let prompt = self.model.vocab().tokenize(text.as_bytes(), true, true);
        if prompt.is_empty() {
            return Err(LlmError::InvalidResponse("the prompt is empty".into()));
        }
        if prompt.len() + 1 > self.n_ctx {
            return Err(LlmError::ContextOverflow {
                prompt_tokens: prompt.len() as u64,
                context: self.n_ctx as u64,
            });
        }
        let max_new = (request.max_tokens.max(1) as usize).min(self.n_ctx - prompt.len());
        let grammar = match schema {
            Some(s) => Some(self.grammar(&s)?),
            None => None,
        };
        Ok(Prepared {
            prompt,
            output,
            grammar,
            max_new,
        })
    }

    fn grammar(&mut self, schema: &Value) -> Result<LlamaSampler, LlmError> {
        let gbnf = crate::llm::gbnf::grammar(schema)
            .map_err(|e| LlmError::Local(format!("no grammar for the requested output: {e}")))?;
        if let Some(g) = self.grammars.get(&gbnf) {
            return Ok(g.clone());
        }
        let sampler = LlamaSampler::grammar(self.model, &gbnf, "root")
            .map_err(|e| LlmError::Local(format!("invalid grammar from the JSON schema: {e}")))?;
        if self.grammars.len() > 64 {
            self.grammars.clear();
        }
        self.grammars.insert(gbnf, sampler.clone());
        Ok(sampler)
    }

    /// The chat prompt in the model's own template. Tool calls and results are written in our JSON
    /// action format, which small models follow more reliably than their native tool tags.
    fn render_prompt(
        &self,
        request: &CompletionRequest,
        use_tools: bool,
    ) -> Result<String, LlmError> {
        let prompt_err = |e: crate::prompts::PromptError| LlmError::Local(e.to_string());
        let mut messages: Vec<(String, String)> = Vec::new();
        let mut system: Vec<String> = Vec::new();
        for m in &request.messages {
            match m.role {
                Role::System => system.push(m.content.clone()),
                Role::User => messages.push(("user".into(), m.content.clone())),
                Role::Assistant => messages.push(("assistant".into(), assistant_text(m))),
                Role::Tool => {
                    let name = m.name.clone().unwrap_or_default();
                    let text = self
                        .prompts
                        .render(
                            "llm_local_tool_result",
                            &[("name", &name), ("content", &m.content)],
                        )
                        .map_err(prompt_err)?;
                    messages.push(("user".into(), text));
                }
            }
        }
        let mut system = system.join("\n\n");
        if use_tools && !request.tools_described {
            let tools: Vec<String> = request
                .tools
                .iter()
                .map(|t| t.get("function").unwrap_or(t).to_string())
                .collect();
            let format_name = if request.tool_choice == ToolChoice::Auto {
                "llm_local_format_call_or_reply"
            } else {
                "llm_local_format_call"
            };
            let format = self.prompts.render(format_name, &[]).map_err(prompt_err)?;
            system = self
                .prompts
                .render(
                    "llm_local_tools",
                    &[
                        ("system", &system),
                        ("tools", &tools.join("\n")),
                        ("format", &format),
                    ],
                )
                .map_err(prompt_err)?
                .trim()
                .to_string();
        }
        let mut chat = Vec::new();
        if !system.is_empty() {
            chat.push(("system".to_string(), system));
        }
        chat.extend(messages);
        let chat = chat
            .into_iter()
            .map(|(role, content)| LlamaChatMessage::new(role, content))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                LlmError::InvalidResponse(format!("a message cannot be sent to the model: {e}"))
            })?;
        self.model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| LlmError::Local(format!("chat template failed: {e}")))
    }
}

/// An assistant turn as the model would have written it.
fn assistant_text(m: &Message) -> String {
    match m.tool_calls.first() {
        Some(call) => {
            let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or(json!({}));
            json!({"thought": m.content, "name": call.name, "arguments": arguments}).to_string()
        }
        None => m.content.clone(),
    }
}
