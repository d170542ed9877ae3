//! The LLM judge: a pass-rate label for an answer (with a second look at the whole trajectory when the
//! first is Unsure) and a preference between two answers. Replies are constrained to a JSON schema; every
//! call is logged and cached by [`JudgeCache`].

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::cache::{JudgeCache, JudgeRecord, cache_key, input_hash, parse_reply};
use super::{EvalError, JudgeMode, Label};
use sum2act_core::llm::{CompletionRequest, LlmClient, Message};
use sum2act_core::prompts::{PromptName, Prompts, short_hash};

/// Prompt templates (prompts/*.md) the judge uses.
pub const ANSWER_PROMPT: PromptName = PromptName::JudgeAnswer;
pub const TRAJECTORY_PROMPT: PromptName = PromptName::JudgeTrajectory;
pub const PREFER_PROMPT: PromptName = PromptName::JudgePrefer;

/// The judge's sampling temperature (`--judge-temperature`).
pub const DEFAULT_JUDGE_TEMPERATURE: f32 = 0.2;
/// Seed of the judge's first vote and of the bootstrap over queries (`--seed`).
pub const DEFAULT_JUDGE_SEED: u64 = 42;

/// Sampling of the judge. Votes differ by seed, so N votes are N independent, reproducible samples.
#[derive(Debug, Clone)]
pub struct JudgeOptions {
    pub temperature: f32,
    pub seed: u64,
    pub max_tokens: u32,
    /// Longest final answer shown to the judge (characters).
    pub max_answer_chars: usize,
    /// Longest single observation shown to the judge (characters), whole up to this.
    pub max_observation_chars: usize,
    /// Most characters of one prompt's request, answer and observations together: the judge model's
    /// context ([`prompt_chars_for_context`] for the embedded one).
    pub max_prompt_chars: usize,
    /// Attempts at getting a parseable verdict before recording the call as unusable.
    pub attempts: u32,
    /// Which judge the calls serve (stamped on every logged verdict).
    pub mode: JudgeMode,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        JudgeOptions {
            temperature: DEFAULT_JUDGE_TEMPERATURE,
            seed: DEFAULT_JUDGE_SEED,
            max_tokens: 256,
            max_answer_chars: 8_000,
            max_observation_chars: DEFAULT_OBSERVATION_CHARS,
            max_prompt_chars: DEFAULT_PROMPT_CHARS,
            attempts: 3,
            mode: JudgeMode::Evidence,
        }
    }
}

/// Default of [`JudgeOptions::max_observation_chars`].
pub const DEFAULT_OBSERVATION_CHARS: usize = 16_000;
/// Default of [`JudgeOptions::max_prompt_chars`]: about 30k tokens, within any current endpoint
/// model's context.
pub const DEFAULT_PROMPT_CHARS: usize = 100_000;
/// Room kept in a prompt for its template and the reply.
const PROMPT_RESERVE_CHARS: usize = 3_000;

/// The prompt budget of a judge model with a context of `tokens` (the embedded model): the context
/// less the reply and the template, at 2.5 characters per token (JSON and digits tokenize densely).
pub fn prompt_chars_for_context(tokens: u32, max_reply_tokens: u32) -> usize {
    let usable = tokens.saturating_sub(max_reply_tokens).saturating_sub(600);
    (usable as usize) * 5 / 2
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

/// What one part question shows the judge.
pub struct PartQuestion<'a> {
    pub query: &'a str,
    pub part: &'a str,
    pub answer: &'a str,
    /// What each called API is ([`super::api_docs::apis_called`]; empty without offered functions).
    pub apis: &'a str,
    /// Every call and its observation ([`super::observations::render`]).
    pub results: &'a str,
    /// The answer's concrete values found in no observation, argument or the request ("none").
    pub unmatched: &'a str,
    /// The query the question is about (for the log).
    pub ctx: &'a str,
}

/// Prompts of the evidence judge.
pub const SPLIT_PROMPT: PromptName = PromptName::JudgeSplit;
pub const PART_PROMPT: PromptName = PromptName::JudgePart;
/// Longest raw reply kept in the log.
const MAX_RAW_CHARS: usize = 600;

/// Hashes of the judge's prompt templates, by name: what a measured agreement depends on.
pub fn prompt_hashes(prompts: &Prompts) -> std::collections::BTreeMap<String, String> {
    [
        ANSWER_PROMPT,
        TRAJECTORY_PROMPT,
        PREFER_PROMPT,
        SPLIT_PROMPT,
        PART_PROMPT,
    ]
    .iter()
    .filter_map(|n| {
        prompts
            .template(*n)
            .ok()
            .map(|t| (n.to_string(), short_hash(t)))
    })
    .collect()
}

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

    /// The characters left for observations in a prompt that also shows `texts` (request, answer,
    /// part), shared by `sides` answers (2 for a preference).
    pub fn evidence_budget(&self, texts: &[&str], sides: usize) -> usize {
        let shown: usize = texts
            .iter()
            .map(|t| t.chars().count().min(self.options.max_answer_chars))
            .sum();
        let left = self
            .options
            .max_prompt_chars
            .saturating_sub(shown + PROMPT_RESERVE_CHARS);
        (left / sides.max(1)).max(1_000)
    }

    /// Hashes of the judge's prompt templates (for reports).
    pub fn prompt_hashes(&self) -> Vec<(String, String)> {
        prompt_hashes(&self.prompts).into_iter().collect()
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
        self.status("answer_status", ANSWER_PROMPT, &vars, vote, ctx)
            .await
    }

    /// Label with the whole trajectory in view (the re-check of an Unsure): the called APIs as
    /// offered (`apis`, [`super::api_docs::apis_called`]), then the calls.
    pub async fn trajectory_status(
        &self,
        query: &str,
        answer: &str,
        (apis, trajectory): (&str, &str),
        vote: u32,
        ctx: &str,
    ) -> Result<Verdict, EvalError> {
        let answer = super::input::cut(answer, self.options.max_answer_chars);
        let vars = [
            ("query", query),
            ("answer", answer.as_ref()),
            ("apis", apis),
            ("trajectory", trajectory),
        ];
        self.status("trajectory_status", TRAJECTORY_PROMPT, &vars, vote, ctx)
            .await
    }

    /// A pass-rate label (`answer_status`: Solved, Unsolved or Unsure).
    async fn status(
        &self,
        kind: &str,
        prompt: PromptName,
        vars: &[(&str, &str)],
        vote: u32,
        ctx: &str,
    ) -> Result<Verdict, EvalError> {
        let reading = Reading::one_of("answer_status", &["Solved", "Unsolved", "Unsure"]);
        let reply = self.ask(kind, prompt, vars, reading, vote, ctx).await?;
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
        let reading = Reading::one_of("better", &["A", "B"]);
        let reply = self
            .ask("preference", PREFER_PROMPT, &vars, reading, round, ctx)
            .await?;
        Ok((reply.verdict.map(|v| v == "A"), reply.reason))
    }

    /// The parts of a request, as the judge splits it (vote 0 only: one split per query and judge model,
    /// kept in the log), checked by the request model (`sum2act_core::request`). One attempt: an
    /// unusable split falls back to the whole request, so retrying would only cost time. `None` when
    /// the reply was unusable.
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
            // The request model Sum2Act reads requests with checks the judge's split too, the same
            // way in every language.
            let ok = sum2act_core::request::checked_parts(query, &parts)?;
            serde_json::to_string(&ok).ok()
        };
        let reply = self
            .call(Call {
                kind: "split",
                prompt: SPLIT_PROMPT,
                vars: &[("query", query)],
                reading: Reading {
                    schema,
                    extract: Box::new(extract),
                },
                attempts: 1,
                vote: 0,
                ctx,
            })
            .await?;
        Ok(reply
            .verdict
            .and_then(|v| serde_json::from_str::<Vec<String>>(&v).ok()))
    }

    /// Whether the answer delivers `part` of the request by the rubric, given every call and its
    /// observation (`results`) and the answer's values found in none of them (`unmatched`).
    pub async fn part_covered(&self, ask: PartQuestion<'_>, vote: u32) -> Result<Reply, EvalError> {
        let answer = super::input::cut(ask.answer, self.options.max_answer_chars);
        let vars = [
            ("query", ask.query),
            ("part", ask.part),
            ("answer", answer.as_ref()),
            ("apis", ask.apis),
            ("results", ask.results),
            ("unmatched", ask.unmatched),
        ];
        let ctx = ask.ctx;
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
        let reading = Reading {
            schema,
            extract: Box::new(extract),
        };
        self.ask("part", PART_PROMPT, &vars, reading, vote, ctx)
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

    /// A judge call with the configured attempts.
    async fn ask(
        &self,
        kind: &str,
        prompt: PromptName,
        vars: &[(&str, &str)],
        reading: Reading<'_>,
        vote: u32,
        ctx: &str,
    ) -> Result<Reply, EvalError> {
        self.call(Call {
            kind,
            prompt,
            vars,
            reading,
            attempts: self.options.attempts,
            vote,
            ctx,
        })
        .await
    }

    /// One judge call through the cache: the reply must parse as JSON from which `extract` takes the
    /// verdict; after `attempts` tries without one, the call is logged as unusable with its raw reply.
    async fn call(&self, call: Call<'_>) -> Result<Reply, EvalError> {
        let template = self.prompts.template(call.prompt)?;
        let prompt_hash = short_hash(template);
        let rendered = self.prompts.render(call.prompt, call.vars)?;
        let mut parts: Vec<&str> = vec![call.kind];
        for (k, v) in call.vars {
            parts.push(k);
            parts.push(v);
        }
        let input_hash = input_hash(&parts);
        let key = cache_key(&self.model, &prompt_hash, &input_hash, call.vote);
        if let Some(hit) = self.lock_cache()?.get(&key) {
            let verdict = Some(hit.verdict).filter(|v| !v.is_empty());
            return Ok(Reply {
                verdict,
                reason: hit.reason,
                raw: hit.raw,
            });
        }
        let mut got = self.attempt(&call, &rendered).await?;
        if got.verdict.is_none() && got.reason.is_empty() {
            got.reason = "unusable judge reply".into();
        }
        let record = JudgeRecord {
            key,
            kind: call.kind.to_string(),
            model: self.model.clone(),
            mode: self.options.mode.as_str().to_string(),
            prompt: call.prompt.to_string(),
            prompt_hash,
            input_hash,
            vote: call.vote,
            verdict: got.verdict.clone().unwrap_or_default(),
            reason: got.reason.clone(),
            raw: if got.verdict.is_none() {
                got.raw.clone()
            } else {
                String::new()
            },
            query: call.ctx.to_string(),
            prompt_tokens: got.prompt_tokens,
            completion_tokens: got.completion_tokens,
            elapsed_ms: got.elapsed_ms,
        };
        tracing::info!(
            "judge {} {} vote {}: {} ({})",
            call.kind,
            call.ctx,
            call.vote,
            record.verdict,
            super::input::cut(&record.reason, 120)
        );
        self.lock_cache()?.insert(record)?;
        if got.verdict.is_some() {
            got.raw.clear();
        }
        Ok(Reply {
            verdict: got.verdict,
            reason: got.reason,
            raw: got.raw,
        })
    }

    /// Asks the model up to `call.attempts` times (each attempt its own seed) until a reply has a
    /// verdict.
    async fn attempt(&self, call: &Call<'_>, rendered: &str) -> Result<Attempts, EvalError> {
        let mut got = Attempts::default();
        for attempt in 0..call.attempts.max(1) {
            let mut request = CompletionRequest::new(
                sum2act_core::llm::purpose::Purpose::Judge,
                vec![Message::user(rendered.to_string())],
            )
            .with_json_schema(schema_name(call.kind), call.reading.schema.clone())
            .with_temperature(self.options.temperature)
            .with_max_tokens(self.options.max_tokens);
            request.seed = Some(
                self.options
                    .seed
                    .wrapping_add(u64::from(call.vote) * 1000)
                    .wrapping_add(u64::from(attempt)),
            );
            let started = std::time::Instant::now();
            let completion = self.llm.complete(&request).await?;
            got.elapsed_ms += started.elapsed().as_millis() as u64;
            got.prompt_tokens += completion.usage.prompt_tokens;
            got.completion_tokens += completion.usage.completion_tokens;
            let parsed = parse_reply(&completion.content);
            let found = parsed.as_ref().and_then(|v| (call.reading.extract)(v));
            got.reason = parsed
                .as_ref()
                .and_then(|v| v.get("reason"))
                .and_then(Value::as_str)
                .map(|r| super::input::cut(r, 400).to_string())
                .unwrap_or_default();
            if found.is_some() {
                got.verdict = found;
                break;
            }
            got.raw = super::input::cut(&completion.content, MAX_RAW_CHARS).to_string();
            tracing::warn!(
                "{}: unusable judge reply to {} (attempt {}): {}",
                call.ctx,
                call.kind,
                attempt + 1,
                got.raw
            );
        }
        Ok(got)
    }

    fn lock_cache(&self) -> Result<std::sync::MutexGuard<'_, JudgeCache>, EvalError> {
        self.cache
            .lock()
            .map_err(|_| EvalError::Other("judge log lock poisoned".into()))
    }
}

/// One judge call: what is asked, and how its verdict is read from the reply.
struct Call<'a> {
    kind: &'a str,
    prompt: PromptName,
    vars: &'a [(&'a str, &'a str)],
    reading: Reading<'a>,
    attempts: u32,
    vote: u32,
    /// The query the call is about (for the log).
    ctx: &'a str,
}

/// The name of the reply's JSON schema: what the reply is (a list of parts is no verdict).
fn schema_name(kind: &str) -> &'static str {
    match kind {
        "split" => "parts",
        _ => "verdict",
    }
}

/// Takes the verdict out of a parsed reply, `None` when it has none.
type Extract<'a> = Box<dyn Fn(&Value) -> Option<String> + Send + Sync + 'a>;

/// How a call's verdict is read: the JSON schema the reply is held to, and the verdict taken from it.
struct Reading<'a> {
    schema: Value,
    extract: Extract<'a>,
}

impl<'a> Reading<'a> {
    /// A verdict in `field`, one of `allowed` (case-insensitive), after a short reason.
    fn one_of(field: &'a str, allowed: &'a [&'a str]) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "reason": {"type": "string", "maxLength": 300},
                field: {"type": "string", "enum": allowed},
            },
            "required": ["reason", field],
            "additionalProperties": false,
        });
        let extract = move |v: &Value| -> Option<String> {
            let s = v.get(field)?.as_str()?;
            allowed
                .iter()
                .find(|a| a.eq_ignore_ascii_case(s.trim()))
                .map(|a| a.to_string())
        };
        Reading {
            schema,
            extract: Box::new(extract),
        }
    }
}

/// What the attempts at one call came to.
#[derive(Default)]
struct Attempts {
    verdict: Option<String>,
    reason: String,
    /// The last unusable raw reply.
    raw: String,
    prompt_tokens: u64,
    completion_tokens: u64,
    elapsed_ms: u64,
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
