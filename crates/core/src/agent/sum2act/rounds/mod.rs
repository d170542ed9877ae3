//! Sum2Act in rounds (`--rounds`): one model call per round, the state manager and the router in one.
//!
//! 1. Open: one call splits the request into parts (the request model, `crate::request`, checks them)
//!    and proposes the calls the user's own values allow.
//! 2. Act: the round's calls run, one step each; a repeat of an earlier call is not run again.
//! 3. Summarise and act: one call reads what *this round's* calls returned (earlier results live on
//!    only as facts, so the prompt stays bounded), notes the facts for each part with the call they
//!    came from, the failed calls and the parts no tool can answer, and proposes the next calls or
//!    writes the answer. Back to 2.
//! 4. Finish: the answer the model writes is final; the harness does not refuse it. When the budget
//!    is spent, the last call is told to answer from the facts.

mod reply;

use std::collections::HashMap;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use self::reply::{Call, MAX_CALLS_PER_ROUND, Opening, Round};
use super::state::{Fact as SessionFact, State};
use crate::agent::common::{listed_description, tool_listing};
use crate::agent::epilogue::{self, Ending, Layout, finish_kind};
use crate::agent::episode::{Episode, FinishKind, Step};
use crate::agent::parse::{Action, call_key};
use crate::agent::plan::dag::find_function;
use crate::agent::reading::recorded_text;
use crate::agent::{AgentError, Method, SolveContext};
use crate::llm::{CompletionRequest, Message, Purpose};
use crate::prompts::PromptName;
use crate::request::Request;
use crate::text::clip;
use crate::toolbench::{FINISH, Function, Task};

/// Characters of a call's arguments shown with its result.
const SHOWN_ARGUMENTS: usize = 300;

/// Characters of a tool's description in a round's listing (the opening call reads them whole).
const ROUND_DESCRIPTION: usize = 100;

/// A call that failed, as the next rounds see it.
struct Failure {
    call: u32,
    what: String,
    why: String,
}

/// One Sum2Act episode in rounds.
struct Rounds<'a> {
    task: &'a Task,
    ctx: &'a SolveContext,
    /// What the session's earlier requests found, as the prompts show it.
    earlier: String,
    request: Request,
    steps: Vec<Step>,
    failures: Vec<Failure>,
    /// Every call made, by name and normalised arguments, with its step.
    made: HashMap<(String, String), u32>,
    /// What each round noted (for the episode record).
    log: Vec<Value>,
}

/// A model reply read into `T`, with the call's prompt tokens.
struct Reply<T> {
    value: T,
    tokens: u64,
}

/// Runs one episode in rounds; `session` holds the facts of the session's earlier requests (shown to
/// every call) and gets this episode's.
pub(super) async fn solve(
    task: &Task,
    ctx: &SolveContext,
    session: &mut State,
) -> Result<Episode, AgentError> {
    let earlier = earlier_facts(ctx, session)?;
    let mut run = Rounds {
        task,
        ctx,
        earlier,
        request: Request::default(),
        steps: Vec::new(),
        failures: Vec::new(),
        made: HashMap::new(),
        log: Vec::new(),
    };
    let ending = match run.rounds().await {
        Ok(finish) => (finish, None),
        Err(AgentError::Llm(e)) => (FinishKind::Error, Some(e.to_string())),
        Err(e) => return Err(e),
    };
    session
        .facts
        .extend(run.request.facts.iter().map(|f| SessionFact {
            step: f.call,
            text: f.text.clone(),
            by_code: false,
        }));
    let keep = session.facts.len().saturating_sub(MAX_SESSION_FACTS);
    session.facts.drain(..keep);
    Ok(run.conclude(ending.0, ending.1))
}

/// Facts a session carries to its next request at most (the newest).
const MAX_SESSION_FACTS: usize = 40;

/// The session's facts as the calls read them (`prompts/sum2act_earlier.md`); empty in a batch.
fn earlier_facts(ctx: &SolveContext, session: &State) -> Result<String, AgentError> {
    if session.facts.is_empty() {
        return Ok(String::new());
    }
    let facts: String = session
        .facts
        .iter()
        .map(|f| format!("- {}\n", f.text))
        .collect();
    Ok(ctx
        .prompts
        .render(PromptName::Sum2actEarlier, &[("facts", facts.trim_end())])?)
}

impl Rounds<'_> {
    /// The loop; `Ok` with how it finished.
    async fn rounds(&mut self) -> Result<FinishKind, AgentError> {
        let opening = self.open().await?;
        let mut calls = opening.value.calls;
        let mut tokens = opening.tokens;
        let mut last = false;
        loop {
            let results = self.act(calls, tokens).await;
            if self.ctx.llm_calls_spent() {
                return Ok(FinishKind::Limit);
            }
            last = last || self.no_more_calls();
            let round = self.ask_round(&results, last).await?;
            tokens = round.tokens;
            let round = round.value;
            self.note(&round);
            let answer = round.answer.filter(|a| !a.trim().is_empty());
            if let Some(answer) = answer {
                return Ok(self.finish(Some(answer), tokens).await);
            }
            calls = round.calls;
            if last || self.ctx.llm_calls_spent() {
                return Ok(self.finish(None, tokens).await);
            }
            // Nothing new to call and no answer: the next call must answer.
            last = calls.is_empty();
        }
    }

    /// Step 1: the parts and the first calls.
    async fn open(&mut self) -> Result<Reply<Opening>, AgentError> {
        let tools = listing(self.ctx.tools.functions(), None);
        let prompt = self.ctx.prompts.render(
            PromptName::Sum2actOpen,
            &[
                ("tools", &tools),
                ("earlier", &self.earlier),
                ("query", &self.task.query),
                (
                    "assume_missing",
                    &self.ctx.assume_missing(PromptName::AssumeMissing)?,
                ),
            ],
        )?;
        let opening: Reply<Opening> = ask(
            self.ctx,
            prompt,
            reply::opening_schema(self.ctx.tools.functions()),
        )
        .await?;
        self.request = Request::new(&self.task.query, &opening.value.parts, &opening.value.form);
        let parts: Vec<&str> = self.request.parts.iter().map(|p| p.text.as_str()).collect();
        self.ctx
            .observer
            .note(&format!("checklist: {}", parts.join(" | ")));
        Ok(opening)
    }

    /// Step 2: runs the round's calls, one step each; returns what they returned, as the next call
    /// reads it. `tokens`: the prompt tokens of the call that proposed them (on the first step).
    async fn act(&mut self, calls: Vec<Call>, mut tokens: u64) -> String {
        let mut results = String::new();
        for call in calls.into_iter().take(MAX_CALLS_PER_ROUND) {
            if self.no_more_calls() {
                results.push_str("(the budget allows no more calls this episode)\n");
                break;
            }
            let name = find_function(self.ctx.tools.functions(), &call.tool)
                .map_or_else(|| call.tool.trim().to_string(), |f| f.name.clone());
            if name == FINISH {
                continue;
            }
            let arguments = match &call.args {
                Value::Object(_) => call.args.to_string(),
                _ => "{}".to_string(),
            };
            let key = (name.clone(), call_key(&arguments));
            let shown = format!("{name}({})", clip(&arguments, SHOWN_ARGUMENTS));
            if let Some(earlier) = self.made.get(&key) {
                results.push_str(&format!(
                    "[not run] {shown}: the same call as call {earlier}\n"
                ));
                self.ctx.count_redundant_call();
                continue;
            }
            let n = self.steps.len() as u32 + 1;
            let action = Action {
                thought: format!("part {}", call.part),
                name,
                arguments,
            };
            let mut obs = self.ctx.act(&action.name, &action.arguments).await;
            obs.text = recorded_text(&obs, self.ctx.options.budget.observation_chars);
            if obs.failed {
                self.failures.push(Failure {
                    call: n,
                    what: shown.clone(),
                    why: clip(&obs.error, 200),
                });
            }
            results.push_str(&format!("[call {n}] {shown} ->\n{}\n", obs.text));
            self.made.insert(key, n);
            let mut step = Step::new(n, &action, obs, std::mem::take(&mut tokens));
            step.state = Some(json!(self.request));
            epilogue::record(self.ctx, &mut self.steps, step);
        }
        if results.is_empty() {
            results.push_str("(no calls were made this round)\n");
        }
        results
    }

    /// Whether the budget leaves no room for another call and the Finish after it.
    fn no_more_calls(&self) -> bool {
        let steps_left = self.ctx.options.budget.max_steps as usize > self.steps.len() + 1;
        !steps_left || self.ctx.tool_calls_spent()
    }

    /// Step 3: the round's call.
    async fn ask_round(&self, results: &str, last: bool) -> Result<Reply<Round>, AgentError> {
        let functions = self.ctx.tools.functions();
        let tools = listing(functions, Some(ROUND_DESCRIPTION));
        let last_words = if last {
            self.ctx.prompts.render(PromptName::Sum2actLast, &[])?
        } else {
            String::new()
        };
        let form = if self.request.form.is_empty() {
            String::new()
        } else {
            self.ctx.prompts.render(
                PromptName::Sum2actForm,
                &[("form", &self.request.form.join("; "))],
            )?
        };
        let prompt = self.ctx.prompts.render(
            PromptName::Sum2actRound,
            &[
                ("earlier", &self.earlier),
                ("query", &self.task.query),
                ("parts", &self.request.render_parts()),
                ("form", &form),
                ("facts", &self.request.render_facts()),
                ("failures", &self.render_failures()),
                ("results", results),
                ("tools", &tools),
                (
                    "assume_missing",
                    &self.ctx.assume_missing(PromptName::AssumeMissing)?,
                ),
                ("last", &last_words),
            ],
        )?;
        ask(self.ctx, prompt, reply::round_schema(functions)).await
    }

    fn render_failures(&self) -> String {
        if self.failures.is_empty() {
            return "(none)\n".into();
        }
        self.failures
            .iter()
            .map(|f| format!("- call {}: {}: {}\n", f.call, f.what, f.why))
            .collect()
    }

    /// Folds what the round's call said into the request model: facts of calls that were made,
    /// failures, parts not found.
    fn note(&mut self, round: &Round) {
        let made = self.steps.len() as u32;
        let mut dropped = 0;
        for f in &round.facts {
            let from_a_call = (1..=made).contains(&f.call);
            if !from_a_call || self.request.add_fact(f.part, &f.fact, f.call).is_none() {
                dropped += 1;
            }
        }
        for f in &round.failed {
            let Some(step) = self.steps.get((f.call as usize).wrapping_sub(1)) else {
                continue;
            };
            if !self.failures.iter().any(|x| x.call == f.call) {
                self.failures.push(Failure {
                    call: f.call,
                    what: format!(
                        "{}({})",
                        step.action,
                        clip(&step.arguments, SHOWN_ARGUMENTS)
                    ),
                    why: clip(&f.why, 200),
                });
            }
        }
        for n in &round.not_found {
            self.request.not_found(n.part, &n.why);
        }
        if dropped > 0 {
            self.ctx.observer.note(&format!(
                "{dropped} fact(s) not kept: no such part or call, empty, or already known"
            ));
        }
        self.log.push(json!({
            "facts": round.facts.len(),
            "dropped": dropped,
            "failed": round.failed.len(),
            "not_found": round.not_found.len(),
            "calls": round.calls.len(),
            "answered": round.answer.is_some(),
        }));
    }

    /// Step 4: `Finish` with the model's answer, or a give-up when it wrote none.
    async fn finish(&mut self, answer: Option<String>, tokens: u64) -> FinishKind {
        let arguments = match &answer {
            Some(a) => json!({"return_type": "give_answer", "final_answer": a}),
            None => json!({"return_type": "give_up_and_restart"}),
        };
        let action = Action {
            thought: if answer.is_some() {
                "the answer".into()
            } else {
                "no answer was written".into()
            },
            name: FINISH.into(),
            arguments: arguments.to_string(),
        };
        let obs = self.ctx.act(FINISH, &action.arguments).await;
        let kind = obs.finish.as_ref().map_or(FinishKind::Limit, finish_kind);
        let n = self.steps.len() as u32 + 1;
        let mut step = Step::new(n, &action, obs, tokens);
        step.state = Some(json!(self.request));
        epilogue::record(self.ctx, &mut self.steps, step);
        kind
    }

    fn conclude(self, finish: FinishKind, error: Option<String>) -> Episode {
        let subtasks: Vec<&str> = self.request.parts.iter().map(|p| p.text.as_str()).collect();
        let details = json!({
            "loop": "rounds",
            "subtasks": subtasks,
            "form": self.request.form,
            "request": self.request,
            "rounds": self.log,
        });
        // The opening's template as the answer file records it: as a batch renders it, no session.
        let system = self
            .ctx
            .prompts
            .template(PromptName::Sum2actOpen)
            .unwrap_or_default()
            .replace("{earlier}", "");
        let ending = Ending {
            finish,
            steps: self.steps,
            details,
            error,
        };
        epilogue::conclude(
            Method::Sum2act,
            self.task,
            self.ctx,
            &system,
            Layout::Chain,
            ending,
        )
    }
}

/// One model call for a JSON reply of `schema`, asked once more with what was wrong when the reply
/// does not read; a second bad reply reads as the empty reply (no parts, no calls, no answer).
async fn ask<T: DeserializeOwned + Default>(
    ctx: &SolveContext,
    prompt: String,
    schema: Value,
) -> Result<Reply<T>, AgentError> {
    let mut messages = vec![Message::user(prompt)];
    let mut tokens = 0;
    for attempt in 0..2 {
        let request = CompletionRequest::new(Purpose::Router, messages.clone())
            .with_json_schema("sum2act", schema.clone())
            .with_max_tokens(ctx.options.answer_max_tokens);
        let reply = ctx.complete(&request).await?;
        tokens += reply.usage.prompt_tokens;
        match reply::read::<T>(&reply.content) {
            Ok(value) => return Ok(Reply { value, tokens }),
            Err(why) if attempt == 0 => {
                ctx.observer
                    .note(&format!("unreadable reply: {why}; asked again"));
                messages.push(Message::assistant(clip(&reply.content, 2000)));
                messages.push(Message::user(format!(
                    "That reply could not be read: {why}. Answer again with the JSON object only."
                )));
            }
            Err(why) => ctx.observer.note(&format!("unreadable reply again: {why}")),
        }
    }
    Ok(Reply {
        value: T::default(),
        tokens,
    })
}

/// The tools as a round reads them: one line each, descriptions cut at `description` characters
/// (whole with `None`); `Finish` is not a tool here (the answer is a field of the reply).
fn listing(functions: &[Function], description: Option<usize>) -> String {
    let Some(cut) = description else {
        let full = tool_listing(functions);
        return full
            .lines()
            .filter(|l| !l.starts_with(&format!("- {FINISH}:")))
            .map(|l| format!("{l}\n"))
            .collect();
    };
    functions
        .iter()
        .map(|f| {
            let args: Vec<String> = f
                .params
                .iter()
                .map(|p| {
                    if f.required.contains(p) {
                        p.clone()
                    } else {
                        format!("{p}?")
                    }
                })
                .collect();
            format!(
                "- {}({}): {}\n",
                f.name,
                args.join(", "),
                clip(&listed_description(f), cut)
            )
        })
        .collect()
}

#[cfg(test)]
mod faults_tests;
#[cfg(test)]
mod tests;
