//! The checklist's hooks in the Sum2Act loop: the request's parts (the model's split when the request
//! has several, checked against the request and mended where it dropped an ask, else the request's
//! asks), attributing facts to parts, what a failed call does to them, and lessons from parameter
//! errors.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::llm::Purpose;
use crate::llm::{CompletionRequest, Message};
use crate::prompts::PromptName;
use crate::toolbench::Task;
use crate::toolbench::claims::content_words;
use crate::toolbench::request_asks::asks;
use crate::toolbench::request_parts::{MAX_PART_CHARS, MAX_PARTS};
use crate::toolbench::request_split::checklist_from_split;

use super::grounded::{evidence, states_value, unsupported};
use super::lessons::parameter_lesson;
use super::state::{State, StateUpdate};
use crate::agent::failure::FailureKind;
use crate::agent::parse::{Action, first_json_object};
use crate::agent::reading;
use crate::agent::{AgentError, SolveContext};
use crate::tools::Observation;

/// Longest part the model may write (characters); a part at the limit was cut and is not used.
const MAX_MODEL_PART_CHARS: usize = MAX_PART_CHARS;

/// The parts of the request. Its asks (`request_asks::asks`: what it asks for, framing left out) come
/// first; when there are several (or `--decompose` asks for it), the model splits the request, and its
/// parts are kept when they are made of the request's words (naming nothing it does not) and are not
/// the user's framing, with every ask they dropped added back whole: a split may refine the asks,
/// never lose or invent one.
pub async fn request_parts(
    task: &Task,
    ctx: &SolveContext,
    tools: &str,
) -> Result<Vec<String>, AgentError> {
    let fallback = asks(&task.query);
    if fallback.len() < 2 && !ctx.options.decompose {
        return Ok(fallback);
    }
    let proposed = decompose(task, ctx, tools).await?;
    let made = checklist_from_split(&task.query, &proposed);
    if made.added_back > 0 {
        ctx.observer.note(&format!(
            "the model's split dropped {} ask(s) of the request; added back",
            made.added_back
        ));
    }
    if !made.split_used && !proposed.is_empty() {
        ctx.observer
            .note("the model's split did not hold up against the request; using its asks");
    }
    let parts = made.parts;
    ctx.observer
        .note(&format!("checklist: {}", parts.join(" | ")));
    Ok(parts)
}

/// Asks the model to split the request into parts.
async fn decompose(
    task: &Task,
    ctx: &SolveContext,
    tools: &str,
) -> Result<Vec<String>, AgentError> {
    let prompt = ctx.prompts.render(
        PromptName::Decompose,
        &[("tools", tools), ("query", &task.query)],
    )?;
    let schema = json!({
        "type": "object",
        "properties": {"subtasks": {"type": "array", "items": {"type": "string", "maxLength": MAX_MODEL_PART_CHARS}, "minItems": 1, "maxItems": MAX_PARTS}},
        "required": ["subtasks"]
    });
    let request = CompletionRequest::new(Purpose::Decompose, vec![Message::user(prompt)])
        .with_json_schema("plan", schema)
        .with_max_tokens(ctx.options.max_tokens);
    Ok(match ctx.complete(&request).await {
        Ok(c) => first_json_object(&c.content)
            .and_then(|v| serde_json::from_value::<Vec<String>>(v["subtasks"].clone()).ok())
            .unwrap_or_default(),
        Err(e) => {
            ctx.observer
                .note(&format!("decomposition failed ({e}); using the splitter"));
            Vec::new()
        }
    })
}

/// Attributes the call's `k` new facts to parts. Only facts that state a value the result holds count
/// (not "the search returned no results"). The parts the state manager names as answered completely
/// are answered when the call and its facts hold their words (`Checklist::believed`); the facts also
/// count, in part, for the other parts sharing the most words with them (a FedExCup table the state
/// manager names only for the rankings part holds points too), so a part with facts is never reported
/// as having none.
pub fn attribute_facts(
    state: &mut State,
    action: &Action,
    update: &StateUpdate,
    k: usize,
    obs: &Observation,
    read_chars: usize,
) {
    let observed = reading::recorded_text(obs, read_chars);
    let ev = evidence(
        "",
        &[(action.name.clone(), action.arguments.clone(), observed)],
    );
    let facts: Vec<String> = state.facts[state.facts.len().saturating_sub(k)..]
        .iter()
        .map(|f| f.text.clone())
        .filter(|f| states_value(f, &ev))
        .collect();
    if facts.is_empty() {
        return;
    }
    let parts = state.checklist.parts.len();
    let named: Vec<usize> = update
        .parts
        .iter()
        .filter_map(|&p| (p as usize).checked_sub(1))
        .filter(|&i| i < parts)
        .collect();
    let text = format!("{} {} {}", action.name, action.arguments, facts.join(" "));
    let answered = state.checklist.believed(&named, &text);
    for &i in &answered {
        state.checklist.answer(i, &facts);
    }
    // Partly: the parts the call itself (its API and arguments) is about by their own words. Words its
    // facts or its tool's name share with a part are not enough: a QR code's facts ("the image encodes
    // the link") made "decode the image" partly answered before any decode ran.
    let api = action.name.split("_for_").next().unwrap_or(&action.name);
    let mut touched = state.checklist.touched(api, &action.arguments);
    if touched.is_empty() && answered.is_empty() && state.checklist.parts.len() == 1 {
        touched.push(0);
    }
    for i in touched {
        state.checklist.partly(i, &facts);
    }
}

/// A failed call: the parts it concerned note it and stay open (another tool, other arguments or a
/// retry may still answer them) unless every offered tool for a part has now failed for good. A
/// parameter error also teaches a lesson about the tool's sibling APIs.
pub fn on_failure(
    ctx: &SolveContext,
    state: &mut State,
    action: &Action,
    obs: &Observation,
    reason: &str,
    kind: FailureKind,
) {
    let text = format!("{} {}", action.name, action.arguments);
    let what = format!("{} failed: {reason}", action.name);
    for i in state.checklist.concerned(&text, false) {
        state.checklist.tried(i, &what);
        if kind == FailureKind::Final && tools_exhausted(ctx, state, i) {
            state.checklist.fail(
                i,
                &format!("every offered tool for it failed (last: {what})"),
            );
        }
    }
    let error = format!("{} {}", obs.error, obs.text);
    if let Some(lesson) = parameter_lesson(
        &action.name,
        &action.arguments,
        &error,
        ctx.tools.functions(),
    ) {
        state.add_lesson(&lesson);
    }
}

/// Whether every offered tool that could answer part `i` (those sharing its words; all of them when
/// none does) has failed for good, with any arguments.
fn tools_exhausted(ctx: &SolveContext, state: &State, i: usize) -> bool {
    let functions = ctx.tools.functions();
    let words_of = |name: &str, doc: &str| -> BTreeSet<String> {
        content_words(&format!("{} {doc}", name.replace('_', " ")))
    };
    let mut candidates: Vec<&str> = functions
        .iter()
        .filter(|f| {
            state
                .checklist
                .overlap(i, &words_of(&f.name, f.doc.description()))
                > 0
        })
        .map(|f| f.name.as_str())
        .collect();
    if candidates.is_empty() {
        candidates = functions.iter().map(|f| f.name.as_str()).collect();
    }
    candidates.iter().all(|name| {
        state
            .failures
            .iter()
            .any(|f| f.action == *name && f.kind == FailureKind::Final)
    })
}

/// Drops the state manager's facts that this call's result (with its arguments and the request) does
/// not support, and raw payloads copied as facts; the parts it named are not believed when none of its
/// facts is left.
pub fn drop_unsupported_facts(
    task: &Task,
    action: &Action,
    obs: &Observation,
    read_chars: usize,
    update: &mut StateUpdate,
    notes: &mut Vec<String>,
) {
    // What the state manager read, as the evaluator checks it.
    let observed = reading::recorded_text(obs, read_chars);
    let ev = evidence(
        &task.query,
        &[(action.name.clone(), action.arguments.clone(), observed)],
    );
    let before = update.new_facts.len();
    update
        .new_facts
        .retain(|f| !is_raw_payload(f) && !unsupported(f, &ev));
    let dropped = before - update.new_facts.len();
    if before > 0 && update.new_facts.is_empty() {
        // Parts it said its invented facts answer are not answered.
        update.parts.clear();
    }
    if dropped > 0 {
        notes.push(format!(
            "state manager: {dropped} fact(s) the result does not hold dropped"
        ));
    }
}

/// A JSON payload copied as a fact (`{"error": …}`, a raw result): a fact states something, a dump
/// only says where to look.
fn is_raw_payload(fact: &str) -> bool {
    let t = fact.trim();
    (t.starts_with('{') || t.starts_with('[')) && serde_json::from_str::<Value>(t).is_ok()
        || t.contains("\"error\":")
}

/// Whether `Finish` arguments give an answer (not a give-up, not an invalid Finish without its answer,
/// which fails as it is).
pub fn gives_answer(arguments: &str) -> bool {
    serde_json::from_str::<Value>(arguments).is_ok_and(|v| {
        v["return_type"].as_str() == Some("give_answer") && v["final_answer"].is_string()
    })
}
