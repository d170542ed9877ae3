//! `--simulation mirrorapi`: answers with MirrorAPI (Guo et al. 2025, "StableToolBench-MirrorAPI"), a
//! model fine-tuned on 95k real RapidAPI request–response pairs, served by vLLM behind an
//! OpenAI-compatible endpoint. It needs its own prompt format, not ours: a fixed system prompt (the SFT
//! or the chain-of-thought one), then the API doc and the request as Python dicts (see [`prompt`]); no
//! template or examples. Its reply is read by [`reply`]; any failure goes back to the schema simulator.

pub mod prompt;
pub mod reply;

use std::sync::Arc;

use serde_json::{Map, Value};

use sum2act_core::llm::{CompletionRequest, LlmClient, Message};
use sum2act_core::prompts::{PromptName, Prompts};
use sum2act_core::toolbench::ApiDoc;
use sum2act_core::tools::{ReplySource, ToolReply};

/// StableToolBench's `server/main_mirrorapi.py` settings: 2,048 new tokens, temperature 0.1 (its
/// `config_mirrorapi.yml`), seed 42. With a seed, a retry would get the same text back, so one attempt.
const MAX_TOKENS: u32 = 2048;
const TEMPERATURE: f32 = 0.1;
const SEED: u64 = 42;

/// Which of MirrorAPI's two trained modes to ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MirrorMode {
    /// The plain reply `{"error", "response"}`.
    Sft,
    /// `[CHAIN_OF_THOUGHT]`: the model explains the API's mechanism first (slower, more tokens).
    Cot,
}

impl MirrorMode {
    fn system_prompt(self) -> PromptName {
        match self {
            MirrorMode::Sft => PromptName::MirrorapiSystem,
            MirrorMode::Cot => PromptName::MirrorapiCotSystem,
        }
    }
}

pub struct MirrorApiSimulator {
    llm: Arc<dyn LlmClient>,
    mode: MirrorMode,
}

impl MirrorApiSimulator {
    pub fn new(llm: Arc<dyn LlmClient>, mode: MirrorMode) -> Self {
        MirrorApiSimulator { llm, mode }
    }

    /// The chat request for one call: system prompt, then `API doc:\n...\n\nRequest:\n...`.
    pub fn request(
        &self,
        tool_description: &str,
        doc: &ApiDoc,
        args: &Map<String, Value>,
    ) -> Result<CompletionRequest, String> {
        let prompts = Prompts::load().map_err(|e| e.to_string())?;
        // Sent as written: a user may drop StableToolBench's own system prompt in `SUM2ACT_PROMPTS`.
        let system = prompts
            .template(self.mode.system_prompt())
            .map_err(|e| e.to_string())?;
        let api_doc = prompt::api_doc(tool_description, doc);
        let request = prompt::request(doc, args);
        let user = prompts
            .render(
                PromptName::MirrorapiUser,
                &[("api_doc", &api_doc), ("request", &request)],
            )
            .map_err(|e| e.to_string())?;
        let mut req = CompletionRequest::new(
            sum2act_core::llm::purpose::Purpose::ToolSimulator,
            vec![
                Message::system(system.trim_end()),
                Message::user(user.trim_end()),
            ],
        )
        .with_max_tokens(MAX_TOKENS)
        .with_temperature(TEMPERATURE);
        req.seed = Some(SEED);
        Ok(req)
    }

    /// One call to the model; the error says what went wrong (the caller falls back and logs it).
    pub async fn simulate(
        &self,
        tool_description: &str,
        doc: &ApiDoc,
        args: &Map<String, Value>,
    ) -> Result<ToolReply, String> {
        let request = self.request(tool_description, doc, args)?;
        let completion = self
            .llm
            .complete(&request)
            .await
            .map_err(|e| e.to_string())?;
        let parsed = reply::parse_reply(&completion.content).map_err(|e| e.to_string())?;
        if let Some(why) = &parsed.explanation {
            tracing::debug!(target: "sum2act::server", "MirrorAPI mechanism: {}", why.escape_debug());
        }
        Ok(ToolReply::new(
            parsed.error,
            parsed.response,
            Some(ReplySource::Llm),
        ))
    }
}
