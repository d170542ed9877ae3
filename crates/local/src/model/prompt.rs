//! From a request to what the engine runs: the chat prompt in the model's template, its tokens, the
//! output mode and the grammar that enforces it.

use llama_cpp_2::model::LlamaChatMessage;
use llama_cpp_2::sampling::LlamaSampler;
use serde_json::{Value, json};

use super::Prepared;
use super::engine::{Engine, Output};
use super::schema::{action_schema, bounded_schema};
use sum2act_core::llm::{CompletionRequest, LlmError, Message, ResponseFormat, Role, ToolChoice};
use sum2act_core::prompts::{PromptError, PromptName, Prompts};

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
        let gbnf = crate::gbnf::grammar(schema)
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
        let prompt_err = |e: sum2act_core::prompts::PromptError| LlmError::Local(e.to_string());
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
                            PromptName::LlmLocalToolResult,
                            &[("name", &name), ("content", &m.content)],
                        )
                        .map_err(prompt_err)?;
                    messages.push(("user".into(), text));
                }
            }
        }
        let system = system_prompt(&self.prompts, request, use_tools, &system.join("\n\n"))
            .map_err(prompt_err)?;
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

/// The system prompt of a request on the grammar path. When tools are offered, the reply format (one
/// JSON object) is stated here and only here: the agents' prompts never name a reply format, because
/// an endpoint with native function calling gets the same prompts and must not be asked for two. Tools
/// the messages already list (`tools_described`) are not listed again.
pub(super) fn system_prompt(
    prompts: &Prompts,
    request: &CompletionRequest,
    use_tools: bool,
    system: &str,
) -> Result<String, PromptError> {
    if !use_tools {
        return Ok(system.to_string());
    }
    let format_name = if request.tool_choice == ToolChoice::Auto {
        PromptName::LlmLocalFormatCallOrReply
    } else {
        PromptName::LlmLocalFormatCall
    };
    let format = prompts.render(format_name, &[])?;
    if request.tools_described {
        return Ok(format!("{system}\n\n{}", format.trim()).trim().to_string());
    }
    let tools: Vec<String> = request
        .tools
        .iter()
        .map(|t| t.get("function").unwrap_or(t).to_string())
        .collect();
    Ok(prompts
        .render(
            PromptName::LlmLocalTools,
            &[
                ("system", system),
                ("tools", &tools.join("\n")),
                ("format", &format),
            ],
        )?
        .trim()
        .to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn router_request(described: bool) -> CompletionRequest {
        let tools = vec![json!({"name": "weather_for_meteo", "parameters": {"type": "object"}})];
        let r = CompletionRequest::new("router", vec![Message::system("You are the router.")])
            .with_tools(tools, ToolChoice::Required);
        if described { r.tools_described() } else { r }
    }

    /// The grammar path states the JSON reply format exactly once, whether or not the agent listed
    /// the tools itself; a request without tools gets no format.
    #[test]
    fn the_reply_format_is_stated_once_on_the_grammar_path() {
        let prompts = Prompts::embedded();
        for described in [true, false] {
            let system = system_prompt(
                &prompts,
                &router_request(described),
                true,
                "You are the router.",
            )
            .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                system.matches("exactly one JSON object").count(),
                1,
                "{system}"
            );
            assert!(system.starts_with("You are the router."), "{system}");
            assert_eq!(system.contains("weather_for_meteo"), !described, "{system}");
        }
        let plain = system_prompt(&prompts, &router_request(true), false, "Summarise.")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plain, "Summarise.");
    }
}
