//! A scripted model for unit tests: replies are produced by a closure over the request, so a test can
//! assert on what the model was shown and answer accordingly. Never used by the product.

use std::sync::Mutex;

use async_trait::async_trait;

use super::{Completion, CompletionRequest, LlmClient, LlmError, Usage};

type Script = dyn Fn(&CompletionRequest, usize) -> Result<Completion, LlmError> + Send + Sync;

/// Answers each call with `script(request, call_index)` and keeps every request for inspection.
pub struct ScriptedLlm {
    script: Box<Script>,
    seen: Mutex<Vec<CompletionRequest>>,
}

impl ScriptedLlm {
    pub fn new(
        script: impl Fn(&CompletionRequest, usize) -> Result<Completion, LlmError>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        ScriptedLlm {
            script: Box::new(script),
            seen: Mutex::new(Vec::new()),
        }
    }

    /// Replies with the given contents in order, then errors.
    pub fn from_replies(replies: Vec<String>) -> Self {
        Self::new(move |_, i| match replies.get(i) {
            Some(r) => Ok(reply(r)),
            None => Err(LlmError::InvalidResponse(format!(
                "script has no reply #{i}"
            ))),
        })
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<CompletionRequest> {
        self.seen.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

/// A plain-text completion with token counts estimated from the text length.
pub fn reply(content: &str) -> Completion {
    Completion {
        content: content.to_string(),
        usage: Usage {
            prompt_tokens: 10,
            completion_tokens: (content.len() as u64).div_ceil(4),
        },
        model: "scripted".to_string(),
        ..Completion::default()
    }
}

#[async_trait]
impl LlmClient for ScriptedLlm {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        let index = match self.seen.lock() {
            Ok(mut seen) => {
                seen.push(request.clone());
                seen.len() - 1
            }
            Err(_) => return Err(LlmError::InvalidResponse("script lock poisoned".into())),
        };
        (self.script)(request, index)
    }

    fn model_id(&self) -> String {
        "scripted".to_string()
    }
}
