//! The LLM judge: a pass-rate label for an answer (with a second look at the whole trajectory when the
//! first is Unsure) and a preference between two answers. Replies are constrained to a JSON schema; every
//! call is logged and cached by [`JudgeCache`].

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::cache::{JudgeCache, JudgeRecord, cache_key, input_hash, parse_reply};
use super::{EvalError, JudgeMode, Label};
use crate::llm::{CompletionRequest, LlmClient, Message};
use crate::prompts::{Prompts, short_hash};

/// Prompt templates (prompts/*.md) the judge uses.
pub const ANSWER_PROMPT: &str = "judge_answer";
pub const TRAJECTORY_PROMPT: &str = "judge_trajectory";
pub const PREFER_PROMPT: &str = "judge_prefer";

/// Sampling of the judge. Votes differ by seed, so N votes are N independent, reproducible samples.
#[derive(Debug, Clone)]
pub struct JudgeOptions {
    pub temperature: f32,
    pub seed: u64,
    pub max_tokens: u32,
    /// Longest final answer shown to the judge (characters).
    pub max_answer_chars: usize,
    /// Longest trajectory summary shown to the judge (characters).
    pub max_trajectory_chars: usize,
    /// Attempts at getting a parseable verdict before recording the call as unusable.
    pub attempts: u32,
    /// Which judge the calls serve (stamped on every logged verdict).
    pub mode: JudgeMode,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        JudgeOptions {
            temperature: 0.2,
            seed: 42,
            max_tokens: 256,
            max_answer_chars: 1500,
            max_trajectory_chars: 3000,
            attempts: 3,
            mode: JudgeMode::Evidence,
        }
    }
}

/// A pass-rate verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub label: Label,
    pub reason: String,
    /// The judge's raw reply when no attempt gave a usable verdict (the label is then a placeholder
    /// Unsolved, and the vote is counted as an error).
    pub unusable: Option<String>,
}

/// One reply of the judge through the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The validated verdict, `None` when the model never produced one.
    pub verdict: Option<String>,
    pub reason: String,
    /// The last raw reply (kept for unusable ones).
    pub raw: String,
}

/// Prompts of the evidence judge.
pub const SPLIT_PROMPT: &str = "judge_split";
pub const PART_PROMPT: &str = "judge_part";
/// Longest raw reply kept in the log.
const MAX_RAW_CHARS: usize = 600;

/// The judge, on top of any model of the LLM layer.
pub struct Judge {
    llm: Arc<dyn LlmClient>,
    model: String,
    prompts: Prompts,
    cache: Mutex<JudgeCache>,
    options: JudgeOptions,
}

impl Judge {
    pub fn new(
        llm: Arc<dyn LlmClient>,
        prompts: Prompts,
        cache: JudgeCache,
        options: JudgeOptions,
    ) -> Self {
        let model = llm.model_id();
        Judge {
            llm,
            model,
            prompts,
            cache: Mutex::new(cache),
            options,
        }
    }

    pub fn model_id(&self) -> &str {
        &self.model
    }

    pub fn options(&self) -> &JudgeOptions {
        &self.options
    }

    /// Hashes of the judge's prompt templates (for reports).
    pub fn prompt_hashes(&self) -> Vec<(String, String)> {
        [
            ANSWER_PROMPT,
            TRAJECTORY_PROMPT,
            PREFER_PROMPT,
            SPLIT_PROMPT,
            PART_PROMPT,
        ]
        .iter()
        .filter_map(|n| {
            self.prompts
                .template(n)
                .ok()
                .map(|t| (n.to_string(), short_hash(t)))
        })
        .collect()
    }

    /// Label from the final answer alone.
    pub async fn answer_status(
        &self,
        query: &str,
        answer: &str,
        vote: u32,
        ctx: &str,
    ) -> Result<Verdict, EvalError> {
        let answer = super::input::cut(answer, self.options.max_answer_chars);
        let vars = [("query", query), ("answer", answer.as_ref())];
        let reply = self
            .ask(
                "answer_status",
                ANSWER_PROMPT,
                &vars,
                "answer_status",
                &["Solved", "Unsolved", "Unsure"],
                vote,
                ctx,
            )
            .await?;
        Ok(to_verdict(reply))
    }

    /// Label with the whole trajectory in view (the re-check of an Unsure).
    pub async fn trajectory_status(
        &self,
        query: &str,
        answer: &str,
        trajectory: &str,
        vote: u32,
        ctx: &str,
    ) -> Result<Verdict, EvalError> {
        let answer = super::input::cut(answer, self.options.max_answer_chars);
        let vars = [
            ("query", query),
            ("answer", answer.as_ref()),
            ("trajectory", trajectory),
        ];
        let reply = self
            .ask(
                "trajectory_status",
                TRAJECTORY_PROMPT,
                &vars,
                "answer_status",
                &["Solved", "Unsolved", "Unsure"],
                vote,
                ctx,
            )
            .await?;
        Ok(to_verdict(reply))
    }

    /// Which of two answers (as shown: A first) is better: `Some(true)` for A, `Some(false)` for B, `None`
    /// when the judge gave no usable verdict.
    pub async fn prefers_first(
        &self,
        query: &str,
        a: (&str, &str),
        b: (&str, &str),
        round: u32,
        ctx: &str,
    ) -> Result<(Option<bool>, String), EvalError> {
        let n = self.options.max_answer_chars;
        let (answer_a, answer_b) = (super::input::cut(a.0, n), super::input::cut(b.0, n));
        let vars = [
            ("query", query),
            ("answer_a", answer_a.as_ref()),
            ("trajectory_a", a.1),
            ("answer_b", answer_b.as_ref()),
            ("trajectory_b", b.1),
        ];
        let reply = self
            .ask(
                "preference",
                PREFER_PROMPT,
                &vars,
                "better",
                &["A", "B"],
                round,
                ctx,
            )
            .await?;
        Ok((reply.verdict.map(|v| v == "A"), reply.reason))
    }

    /// The parts of a request, as the judge splits it (vote 0 only: one split per query and judge model,
    /// kept in the log). One attempt: an unusable split has a deterministic fallback, so retrying would
    /// only cost time. `None` when the reply was unusable.
    pub async fn split_request(
        &self,
        query: &str,
        ctx: &str,
    ) -> Result<Option<Vec<String>>, EvalError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "parts": {"type": "array", "minItems": 1, "maxItems": super::requirements::MAX_PARTS,
                          "items": {"type": "string", "maxLength": super::requirements::MAX_PART_CHARS}},
            },
            "required": ["parts"],
            "additionalProperties": false,
        });
        let extract = |v: &Value| -> Option<String> {
            let parts: Vec<String> = v
                .get("parts")?
                .as_array()?
                .iter()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect();
            let ok = super::requirements::validate_split(query, &parts)?;
            serde_json::to_string(&ok).ok()
        };
        let reply = self
            .call(
                "split",
                SPLIT_PROMPT,
                &[("query", query)],
                schema,
                &extract,
                1,
                0,
                ctx,
            )
            .await?;
        Ok(reply
            .verdict
            .and_then(|v| serde_json::from_str::<Vec<String>>(&v).ok()))
    }

    /// Whether the answer gives `part` of the request, supported by the excerpts of the results.
    pub async fn part_covered(
        &self,
        query: &str,
        part: &str,
        answer: &str,
        excerpts: &str,
        vote: u32,
        ctx: &str,
    ) -> Result<Reply, EvalError> {
        let answer = super::input::cut(answer, self.options.max_answer_chars);
        let vars = [
            ("query", query),
            ("part", part),
            ("answer", answer.as_ref()),
            ("results", excerpts),
        ];
        // The verdict first: small models that write the reason first talk themselves into it.
        let schema = json!({
            "type": "object",
            "properties": {
                "covered": {"type": "string", "enum": ["yes", "no"]},
                "reason": {"type": "string", "maxLength": 200},
            },
            "required": ["covered", "reason"],
            "additionalProperties": false,
        });
        let extract = |v: &Value| -> Option<String> {
            let s = v.get("covered")?.as_str()?.trim().to_ascii_lowercase();
            matches!(s.as_str(), "yes" | "no").then_some(s)
        };
        let attempts = self.options.attempts;
        self.call(
            "part",
            PART_PROMPT,
            &vars,
            schema,
            &extract,
            attempts,
            vote,
            ctx,
        )
        .await
    }

    /// Saves the judge log.
    pub fn save(&self) -> Result<(), EvalError> {
        match self.cache.lock() {
            Ok(mut c) => c.save(),
            Err(_) => Err(EvalError::Other("judge log lock poisoned".into())),
        }
    }

    /// (records in the log, calls answered from it in this session).
    pub fn cache_stats(&self) -> (usize, u64) {
        self.cache
            .lock()
            .map(|c| (c.len(), c.hits))
            .unwrap_or((0, 0))
    }

    /// A judge call whose verdict is `field`, one of `allowed` (case-insensitive).
    #[allow(clippy::too_many_arguments)]
    async fn ask(
        &self,
        kind: &str,
        prompt: &str,
        vars: &[(&str, &str)],
        field: &str,
        allowed: &[&str],
        vote: u32,
        ctx: &str,
    ) -> Result<Reply, EvalError> {
        let schema = json!({
            "type": "object",
            "properties": {
                "reason": {"type": "string", "maxLength": 300},
                field: {"type": "string", "enum": allowed},
            },
            "required": ["reason", field],
            "additionalProperties": false,
        });
        let extract = |v: &Value| -> Option<String> {
            let s = v.get(field)?.as_str()?;
            allowed
                .iter()
                .find(|a| a.eq_ignore_ascii_case(s.trim()))
                .map(|a| a.to_string())
        };
        let attempts = self.options.attempts;
        self.call(kind, prompt, vars, schema, &extract, attempts, vote, ctx)
            .await
    }

    /// One judge call through the cache: the reply must parse as JSON from which `extract` takes the
    /// verdict; after `attempts` tries without one, the call is logged as unusable with its raw reply.
    #[allow(clippy::too_many_arguments)]
    async fn call(
        &self,
        kind: &str,
        prompt: &str,
        vars: &[(&str, &str)],
        schema: Value,
        extract: &(dyn Fn(&Value) -> Option<String> + Sync),
        attempts: u32,
        vote: u32,
        ctx: &str,
    ) -> Result<Reply, EvalError> {
        let template = self.prompts.template(prompt)?;
        let prompt_hash = short_hash(template);
        let rendered = self.prompts.render(prompt, vars)?;
        let mut parts: Vec<&str> = vec![kind];
        for (k, v) in vars {
            parts.push(k);
            parts.push(v);
        }
        let ih = input_hash(&parts);
        let key = cache_key(&self.model, &prompt_hash, &ih, vote);
        if let Some(hit) = self.lock_cache()?.get(&key) {
            let verdict = Some(hit.verdict).filter(|v| !v.is_empty());
            return Ok(Reply {
                verdict,
                reason: hit.reason,
                raw: hit.raw,
            });
        }
        let mut verdict = None;
        let mut reason = String::new();
        let mut raw = String::new();
        let (mut prompt_tokens, mut completion_tokens, mut elapsed_ms) = (0, 0, 0);
        for attempt in 0..attempts.max(1) {
            let mut request =
                CompletionRequest::new("judge", vec![Message::user(rendered.clone())])
                    .with_json_schema("verdict", schema.clone())
                    .with_temperature(self.options.temperature)
                    .with_max_tokens(self.options.max_tokens);
            request.seed = Some(
                self.options
                    .seed
                    .wrapping_add(u64::from(vote) * 1000)
                    .wrapping_add(u64::from(attempt)),
            );
            let started = std::time::Instant::now();
            let completion = self.llm.complete(&request).await?;
            elapsed_ms += started.elapsed().as_millis() as u64;
            prompt_tokens += completion.usage.prompt_tokens;
            completion_tokens += completion.usage.completion_tokens;
            let parsed = parse_reply(&completion.content);
            let found = parsed.as_ref().and_then(extract);
            reason = parsed
                .as_ref()
                .and_then(|v| v.get("reason"))
                .and_then(Value::as_str)
                .map(|r| super::input::cut(r, 400).to_string())
                .unwrap_or_default();
            if found.is_some() {
                verdict = found;
                break;
            }
            raw = super::input::cut(&completion.content, MAX_RAW_CHARS).to_string();
            tracing::warn!(
                "{ctx}: unusable judge reply to {kind} (attempt {}): {raw}",
                attempt + 1,
            );
        }
        if verdict.is_none() && reason.is_empty() {
            reason = "unusable judge reply".into();
        }
        let record = JudgeRecord {
            key,
            kind: kind.to_string(),
            model: self.model.clone(),
            mode: self.options.mode.as_str().to_string(),
            prompt: prompt.to_string(),
            prompt_hash,
            input_hash: ih,
            vote,
            verdict: verdict.clone().unwrap_or_default(),
            reason: reason.clone(),
            raw: if verdict.is_none() {
                raw.clone()
            } else {
                String::new()
            },
            query: ctx.to_string(),
            prompt_tokens,
            completion_tokens,
            elapsed_ms,
        };
        tracing::info!(
            "judge {kind} {ctx} vote {vote}: {} ({})",
            record.verdict,
            super::input::cut(&record.reason, 120)
        );
        self.lock_cache()?.insert(record)?;
        if verdict.is_some() {
            raw.clear();
        }
        Ok(Reply {
            verdict,
            reason,
            raw,
        })
    }

    fn lock_cache(&self) -> Result<std::sync::MutexGuard<'_, JudgeCache>, EvalError> {
        self.cache
            .lock()
            .map_err(|_| EvalError::Other("judge log lock poisoned".into()))
    }
}

fn to_verdict(reply: Reply) -> Verdict {
    // A judge that never answers in the schema gives an error, not a label: the caller counts it.
    match reply.verdict.as_deref().and_then(Label::parse) {
        Some(label) => Verdict {
            label,
            reason: reply.reason,
            unusable: None,
        },
        None => Verdict {
            label: Label::Unsolved,
            reason: reply.reason,
            unusable: Some(reply.raw),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::scripted::{ScriptedLlm, reply};

    fn judge(llm: Arc<ScriptedLlm>) -> Judge {
        Judge::new(
            llm,
            Prompts::embedded(),
            JudgeCache::memory(),
            JudgeOptions::default(),
        )
    }

    #[tokio::test]
    async fn status_is_schema_constrained_and_cached() {
        let llm = Arc::new(ScriptedLlm::new(|_, _| {
            Ok(reply(
                r#"{"reason": "has the price", "answer_status": "Solved"}"#,
            ))
        }));
        let j = judge(llm.clone());
        let v = j
            .answer_status("price of BTC?", "66,412 USD", 0, "G1/1")
            .await
            .unwrap();
        assert_eq!(v.label, Label::Solved);
        assert_eq!(v.reason, "has the price");
        // Same input and vote: from the cache. Another vote: a new call.
        j.answer_status("price of BTC?", "66,412 USD", 0, "G1/1")
            .await
            .unwrap();
        j.answer_status("price of BTC?", "66,412 USD", 1, "G1/1")
            .await
            .unwrap();
        let seen = llm.requests();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].purpose, "judge");
        assert_ne!(seen[0].seed, seen[1].seed);
        assert!(seen[0].messages[0].content.contains("66,412 USD"));
        assert!(matches!(
            seen[0].response_format,
            crate::llm::ResponseFormat::JsonSchema { .. }
        ));
        assert_eq!(j.cache_stats(), (2, 1));
    }

    #[tokio::test]
    async fn unusable_replies_are_retried_then_errors_with_the_raw_reply() {
        let llm = Arc::new(ScriptedLlm::new(|_, i| {
            Ok(reply(if i == 0 {
                "Solved!"
            } else {
                r#"{"reason": "r", "answer_status": "maybe"}"#
            }))
        }));
        let j = judge(llm.clone());
        let v = j.answer_status("q", "a", 0, "G1/1").await.unwrap();
        assert_eq!(
            v.unusable.as_deref(),
            Some(r#"{"reason": "r", "answer_status": "maybe"}"#)
        );
        assert_eq!(llm.requests().len(), 3);
        // Logged as unusable with its raw reply: the rerun reports the same error without a call.
        let again = j.answer_status("q", "a", 0, "G1/1").await.unwrap();
        assert_eq!(again, v);
        assert_eq!(llm.requests().len(), 3);
    }

    #[tokio::test]
    async fn preference_maps_letters() {
        let llm = Arc::new(ScriptedLlm::new(|_, _| {
            Ok(reply(r#"{"reason": "B is complete", "better": "b"}"#))
        }));
        let j = judge(llm);
        let (first, reason) = j
            .prefers_first("q", ("a1", "t1"), ("a2", "t2"), 0, "G1/1")
            .await
            .unwrap();
        assert_eq!(first, Some(false));
        assert_eq!(reason, "B is complete");
    }

    #[tokio::test]
    async fn llm_errors_propagate() {
        let llm = Arc::new(ScriptedLlm::new(|_, _| {
            Err(crate::llm::LlmError::Timeout(
                std::time::Duration::from_secs(1),
            ))
        }));
        let j = judge(llm);
        assert!(matches!(
            j.answer_status("q", "a", 0, "x").await,
            Err(EvalError::Llm(_))
        ));
    }
}
