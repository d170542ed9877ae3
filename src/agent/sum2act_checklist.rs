//! The checklist's hooks in the Sum2Act loop: the request's parts (the model's split when the request
//! has several, checked against the request, else the deterministic splitter), marking parts from the
//! state manager's update, lessons from parameter errors, and the grounded final answer.

use serde_json::{Value, json};

use crate::llm::{CompletionRequest, Message};
use crate::toolbench::Task;
use crate::toolbench::request_parts::{split_fallback, validate_split};

use super::episode::Step;
use super::grounded_answer::{evidence, ground, unsupported};
use super::lessons::parameter_lesson;
use super::parse::{Action, first_json_object};
use super::state::{State, StateUpdate};
use super::{AgentError, SolveContext};
use crate::tools::Observation;

/// The parts of the request. The deterministic splitter runs first; when it finds more than one part
/// (or `--decompose` asks for it), the model splits the request, and its parts are kept only when they
/// are made of the request's words (a small model answers instead of splitting).
pub async fn request_parts(
    task: &Task,
    ctx: &SolveContext,
    tools: &str,
) -> Result<Vec<String>, AgentError> {
    let fallback = split_fallback(&task.query);
    if fallback.len() < 2 && !ctx.options.decompose {
        return Ok(fallback);
    }
    // A tool name ("search_trips_for_flixbus") is a plan step, not a part of the request.
    let proposed: Vec<String> = decompose(task, ctx, tools)
        .await?
        .into_iter()
        .filter(|p| !p.split_whitespace().any(|w| w.contains('_')))
        .collect();
    let parts = match validate_split(&task.query, &proposed) {
        Some(parts) => parts,
        None => {
            if !proposed.is_empty() {
                ctx.observer.note(
                    "the model's split did not hold up against the request; using the splitter",
                );
            }
            fallback
        }
    };
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
    let prompt = ctx
        .prompts
        .render("decompose", &[("tools", tools), ("query", &task.query)])?;
    let schema = json!({
        "type": "object",
        "properties": {"subtasks": {"type": "array", "items": {"type": "string", "maxLength": 200}, "minItems": 1, "maxItems": 5}},
        "required": ["subtasks"]
    });
    let request = CompletionRequest::new("decompose", vec![Message::user(prompt)])
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

/// Marks the parts the call's `k` new facts answer: those the state manager named that the call shares
/// the most words with, else those the call shares the most words with.
pub fn mark_answered(state: &mut State, action: &Action, update: &StateUpdate, k: usize) {
    let facts: Vec<String> = state.facts[state.facts.len().saturating_sub(k)..]
        .iter()
        .map(|f| f.text.clone())
        .collect();
    let parts = state.checklist.parts.len();
    let mut named: Vec<usize> = update
        .parts
        .iter()
        .filter_map(|&p| (p as usize).checked_sub(1))
        .filter(|&i| i < parts)
        .collect();
    let text = format!("{} {} {}", action.name, action.arguments, facts.join(" "));
    named = if named.is_empty() {
        state.checklist.concerned(&text, true)
    } else {
        state.checklist.narrow(&named, &text)
    };
    for i in named {
        state.checklist.answer(i, &facts);
    }
}

/// A failed call fails the parts it concerned (a later answer still wins) and, for a parameter error,
/// teaches a lesson about the tool's sibling APIs.
pub fn learn_from_failure(
    ctx: &SolveContext,
    state: &mut State,
    action: &Action,
    obs: &Observation,
    reason: &str,
) {
    let text = format!("{} {}", action.name, action.arguments);
    for i in state.checklist.concerned(&text, false) {
        state
            .checklist
            .fail(i, &format!("{} failed: {reason}", action.name));
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

/// Drops the state manager's facts that this call's result (with its arguments and the request) does
/// not support; the raw result is kept instead when none is left, and the parts it named are then
/// attributed by the code.
pub fn drop_unsupported_facts(
    task: &Task,
    action: &Action,
    obs: &Observation,
    update: &mut StateUpdate,
    notes: &mut Vec<String>,
) {
    // What the agent saw (the observation text, cut as the model got it), as the evaluator checks it.
    let observed = obs.text.clone();
    let ev = evidence(
        &task.query,
        &[(action.name.clone(), action.arguments.clone(), observed)],
    );
    let before = update.new_facts.len();
    update.new_facts.retain(|f| !unsupported(f, &ev));
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

/// Whether `Finish` arguments give an answer (not a give-up, not an invalid Finish without its answer,
/// which fails as it is).
pub fn gives_answer(arguments: &str) -> bool {
    serde_json::from_str::<Value>(arguments).is_ok_and(|v| {
        v["return_type"].as_str() == Some("give_answer") && v["final_answer"].is_string()
    })
}

/// The `Finish` arguments with the final answer grounded in what the episode observed.
pub fn grounded_finish(
    task: &Task,
    state: &State,
    steps: &[Step],
    arguments: &str,
    notes: &mut Vec<String>,
) -> String {
    let Ok(Value::Object(mut args)) = serde_json::from_str::<Value>(arguments) else {
        return arguments.to_string();
    };
    let answer = args
        .get("final_answer")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let calls: Vec<(String, String, String)> = steps
        .iter()
        .filter(|s| !s.observation.failed && s.observation.finish.is_none())
        .map(|s| {
            let observed = s.observation.text.clone();
            (
                format!("step {} {}", s.index, s.action),
                s.arguments.clone(),
                observed,
            )
        })
        .collect();
    // The facts that answer a part (all facts when there is no checklist): a result no part asked for
    // does not belong in the answer.
    let facts: Vec<String> = if state.checklist.is_empty() {
        state.facts.iter().map(|f| f.text.clone()).collect()
    } else {
        state.checklist.answer_facts()
    };
    let cleaned = ground(
        &answer,
        &task.query,
        &evidence(&task.query, &calls),
        &state.checklist,
        &facts,
    );
    notes.extend(cleaned.notes());
    if cleaned.answer == answer {
        return arguments.to_string();
    }
    args.insert("final_answer".into(), Value::String(cleaned.answer));
    Value::Object(args).to_string()
}
