//! A finished generation as a [`Completion`]: text, JSON, or the JSON action read back as a tool call.

use serde_json::Value;

use super::GenStats;
use super::engine::{Active, Engine, Output};
use sum2act_core::llm::openai::validate;
use sum2act_core::llm::{Completion, LlmError, ToolCall, Usage};

impl Engine<'_> {
    pub(super) fn completion(&self, a: &Active, stats: &GenStats) -> Result<Completion, LlmError> {
        let mut bytes = Vec::new();
        let vocab = self.model.vocab();
        for &t in &a.generated {
            vocab.token_to_piece_into(t, &mut bytes, false, None);
        }
        let text = String::from_utf8_lossy(&bytes).trim().to_string();
        let truncated = a.generated.len() >= a.max_new;
        let finish_reason = Some(if truncated { "length" } else { "stop" }.to_string());
        let usage = Usage {
            prompt_tokens: stats.prompt_tokens,
            completion_tokens: stats.generated_tokens,
        };
        let mut completion = Completion {
            content: text.clone(),
            tool_calls: Vec::new(),
            usage,
            model: self.model_id.clone(),
            finish_reason,
            elapsed_ms: (stats.queue_ms + stats.prefill_ms + stats.decode_ms) as u64,
            cost_usd: 0.0,
        };
        if a.output == Output::Action {
            let v: Value = serde_json::from_str(&text).map_err(|e| {
                if truncated {
                    return LlmError::Truncated {
                        max_tokens: a.max_new as u32,
                        content: text.clone(),
                    };
                }
                let preview: String = text.chars().take(200).collect();
                LlmError::InvalidResponse(format!("tool-call reply is not JSON ({e}): {preview}"))
            })?;
            let thought = v["thought"].as_str().unwrap_or_default().to_string();
            match v["name"].as_str() {
                Some(name) => {
                    completion.content = thought;
                    completion.tool_calls.push(ToolCall {
                        id: format!(
                            "call_{}",
                            stats.prompt_tokens ^ (stats.generated_tokens << 20)
                        ),
                        name: name.to_string(),
                        arguments: v
                            .get("arguments")
                            .map_or_else(|| "{}".to_string(), Value::to_string),
                    });
                    completion.finish_reason = Some("tool_calls".into());
                }
                None => completion.content = v["content"].as_str().unwrap_or(&thought).to_string(),
            }
        }
        validate(&completion, &a.request)?;
        Ok(completion)
    }
}
