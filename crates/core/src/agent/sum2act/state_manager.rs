//! Step 5 of the Sum2Act loop, summarisation: the state manager reads the whole observation (up to
//! `--observation-read-chars`, large values by reference), its facts are checked against what the API
//! returned, and the update is merged into the state and its checklist. A failed call is recorded with
//! its reason and kind (a timeout may be retried), never as a fact.

use crate::llm::LlmError;
use crate::llm::Purpose;
use crate::llm::{CompletionRequest, Message};
use crate::prompts::PromptName;
use crate::toolbench::Task;
use crate::tools::Observation;

use super::fold;
use super::parts::{attribute_facts, drop_unsupported_facts, on_failure};
use super::state::{Applied, State, StateUpdate, update_schema};
use crate::agent::failure::{self, FailureKind};
use crate::agent::parse::{Action, first_json_object};
use crate::agent::reading::{self, Reading};
use crate::agent::{AgentError, SolveContext};
use crate::text::clip;

/// What summarising a call came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Summary {
    /// The call returned data the state now holds (or already held).
    Answered,
    /// The call failed, or returned nothing usable.
    Failed,
    /// The state manager's model could not be reached: the episode ends, as when the router's cannot
    /// (the call itself worked; it is not recorded as failed).
    ModelFailed(String),
}

/// What asking the state manager came to.
enum Asked {
    Update(StateUpdate),
    /// It answered, but not with a state update.
    Unreadable,
    /// Its model could not be reached.
    Unavailable(String),
}

/// Folds the observation of step `n` into the state.
pub async fn summarise(
    ctx: &SolveContext,
    task: &Task,
    state: &mut State,
    n: u32,
    action: &Action,
    obs: &Observation,
    notes: &mut Vec<String>,
) -> Result<Summary, AgentError> {
    if obs.failed {
        let kind = failure::classify(obs);
        let reason = failure_reason(obs);
        state.record_failure(n, &action.name, &action.arguments, &reason, kind);
        on_failure(ctx, state, action, obs, &reason, kind);
        return Ok(Summary::Failed);
    }
    let mut reading = reading::read(obs, n, ctx.options.budget.observation_chars);
    let by_code = fold::as_fact(action, &reading, ctx.options.fold_chars.0);
    let folded = by_code.is_some();
    let mut update = match by_code {
        Some(fact) => {
            notes.push("small plain result folded by code (no state-manager call)".into());
            // Every part is named, as a state manager may name them: `attribute_facts` believes
            // those whose words the call and its result hold (`Checklist::believed`).
            let parts = (1..=state.checklist.parts.len() as u32).collect();
            StateUpdate {
                success: true,
                new_facts: vec![fact],
                parts,
                ..StateUpdate::default()
            }
        }
        None => match ask_state_manager(ctx, task, state, action, &reading, notes).await? {
            Asked::Update(u) => u,
            Asked::Unavailable(e) => return Ok(Summary::ModelFailed(e)),
            Asked::Unreadable => {
                return Ok(unreadable(state, n, action));
            }
        },
    };
    if !folded {
        // It says the result answers parts but wrote no fact stating it (a small model does): the
        // result's own values are kept, whole, as one fact (never a cut dump; not in place of facts
        // it dropped).
        if update.success && update.new_facts.is_empty() && !update.parts.is_empty() {
            notes.push(
                "state manager named parts but wrote no fact; kept the result's values".into(),
            );
            update.new_facts.push(reading.result_fact(&action.name, n));
        }
        // A fact the result does not hold was invented by the state manager.
        drop_unsupported_facts(
            task,
            action,
            obs,
            ctx.options.budget.observation_chars,
            &mut update,
            notes,
        );
        // A small model sometimes calls a good result a failure: facts it found win over its verdict.
        if !update.success && !update.new_facts.is_empty() {
            notes.push(format!("state manager: {}", update.failure_reason));
            update.success = true;
        }
    }
    let outcome = match state.apply(n, &action.name, &action.arguments, &update) {
        Applied::NothingNew => {
            notes.push("answered, but nothing new".into());
            ctx.count_redundant_call();
            Summary::Answered
        }
        Applied::NewFacts(k) => {
            if folded {
                state.mark_by_code(k);
            }
            attribute_facts(
                state,
                action,
                &update,
                k,
                obs,
                ctx.options.budget.observation_chars,
            );
            Summary::Answered
        }
        Applied::Failed => {
            // The API answered, but with nothing usable (an error payload, no data): never a fact.
            notes.push(format!("state manager: {}", update.failure_reason));
            on_failure(
                ctx,
                state,
                action,
                obs,
                &update.failure_reason,
                FailureKind::Final,
            );
            Summary::Failed
        }
    };
    // Values the new facts name by reference stay with the state, whole, for the final answer.
    let named: Vec<_> = reading
        .values
        .into_iter()
        .filter(|v| state.facts.iter().any(|f| f.text.contains(&v.reference())))
        .collect();
    state.values.extend(named);
    Ok(outcome)
}

/// The state manager answered about a call that worked, but not with a state update: the call is
/// recorded as one to read again (a transient failure), saying that its reply was the unreadable part.
fn unreadable(state: &mut State, n: u32, action: &Action) -> Summary {
    let reason = "the call worked, but the state manager's reply about its result was unreadable";
    state.record_failure(
        n,
        &action.name,
        &action.arguments,
        reason,
        FailureKind::Transient,
    );
    Summary::Failed
}

/// Asks the state manager what the observation means (an unreadable reply and an unreachable model
/// are noted).
async fn ask_state_manager(
    ctx: &SolveContext,
    task: &Task,
    state: &State,
    action: &Action,
    reading: &Reading,
    notes: &mut Vec<String>,
) -> Result<Asked, AgentError> {
    let prompt = ctx.prompts.render(
        PromptName::StateManager,
        &[
            ("query", &task.query),
            ("checklist", &state.checklist.render()),
            ("facts", &state.render_facts()),
            ("action", &action.name),
            ("arguments", &action.arguments),
            ("observation", &reading.text),
            ("values", &reading.legend()),
        ],
    )?;
    // Facts carry whole lists and several values: the answer budget, not the step budget.
    let request = CompletionRequest::new(Purpose::State, vec![Message::user(prompt)])
        .with_json_schema("state_update", update_schema())
        .with_max_tokens(ctx.options.answer_max_tokens);
    let parsed = match ctx.complete(&request).await {
        Ok(c) => first_json_object(&c.content)
            .and_then(|v| serde_json::from_value::<StateUpdate>(v).ok()),
        // A reply that came but was cut or malformed is unreadable; any other error is the model's.
        Err(LlmError::Truncated { .. } | LlmError::InvalidResponse(_)) => None,
        Err(e) => {
            notes.push(format!("state manager unavailable: {e}"));
            return Ok(Asked::Unavailable(e.to_string()));
        }
    };
    Ok(match parsed {
        Some(u) => Asked::Update(u),
        None => {
            notes.push("state manager reply unreadable".into());
            Asked::Unreadable
        }
    })
}

/// Why a call failed, as the state records it.
pub fn failure_reason(obs: &Observation) -> String {
    if obs.error.is_empty() {
        clip(&obs.text, 200)
    } else {
        clip(&obs.error, 200)
    }
}
