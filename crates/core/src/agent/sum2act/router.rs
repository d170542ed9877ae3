//! Step 1 of the Sum2Act loop, propose: the router picks one action from the task and the compact
//! state only, never the raw history, so its prompt stays bounded however many steps the episode takes.

use crate::agent::common::{self, TurnError, harness_observation};
use crate::agent::failure::FailureKind;
use crate::agent::parse::Action;
use crate::agent::{AgentError, SolveContext, ToolDocs};
use crate::llm::Message;
use crate::llm::Purpose;
use crate::prompts::PromptName;
use crate::toolbench::{FINISH, Function, Task, finish_schema};
use serde_json::{Map, Value, json};
use std::collections::VecDeque;

use super::run::{Nudge, Proposal, Run, Stage, StepOutcome};
use super::state::State;

/// The router's proposal for step `n`. After a repeat it is told so and samples with some temperature
/// (seeded, so runs stay reproducible): greedy decoding of an unchanged prompt would only repeat
/// itself. An unreadable reply is recorded as a failed step; a model that cannot be reached ends the
/// episode.
pub(super) async fn propose(run: &mut Run<'_>, n: u32) -> Result<Stage, AgentError> {
    if let Some(action) = run.queued.pop_front() {
        return Ok(Stage::Go(Proposal {
            action,
            messages: run.queued_messages.clone(),
            prompt_tokens: 0,
            notes: vec!["a further call of the router's last reply".into()],
            forced: false,
        }));
    }
    let repeated = run.guard.stuck > 0;
    let open_parts = run.guard.nudge == Nudge::Due;
    let user = router_prompt(run.ctx, run.task, &run.state, n - 1, repeated, open_parts)?;
    if open_parts {
        run.guard.nudge = Nudge::Spent;
    }
    let messages = vec![Message::system(run.system.clone()), Message::user(user)];
    let temperature = if repeated { 0.8 } else { 0.0 };
    let docs = run.ctx.options.tool_docs;
    let tools = offered_functions(run.ctx.tools.functions(), docs);
    match common::turn_with_tools(
        run.ctx,
        Purpose::Router,
        messages.clone(),
        temperature,
        tools,
        docs == ToolDocs::Listed,
    )
    .await
    {
        Ok(turn) => {
            let (action, notes) = queue_further_calls(run, turn.action, turn.also, &messages);
            Ok(Stage::Go(Proposal {
                action,
                messages,
                prompt_tokens: turn.prompt_tokens,
                notes,
                forced: false,
            }))
        }
        Err(TurnError::Malformed(e)) => {
            run.state.record_failure(
                n,
                "(unreadable reply)",
                "",
                &format!("the reply was not a valid action: {e}"),
                FailureKind::Fixable,
            );
            let obs = harness_observation("", "", &format!("malformed reply: {e}"));
            let unreadable = Proposal {
                action: Action::default(),
                messages: Vec::new(),
                prompt_tokens: 0,
                notes: vec!["malformed router reply".into()],
                forced: false,
            };
            run.record(n, unreadable, obs);
            Ok(Stage::Done(StepOutcome::Next))
        }
        Err(TurnError::Llm(e)) => Ok(Stage::Done(StepOutcome::ModelFailed(e.to_string()))),
    }
}

/// A reply with several function calls: the tool calls run one per step, in order, before the router
/// is asked again; a `Finish` among tool calls is not run (it was written before their results).
/// Returns the action to run now and what was noted.
fn queue_further_calls(
    run: &mut Run<'_>,
    first: Action,
    also: Vec<Action>,
    messages: &[Message],
) -> (Action, Vec<String>) {
    if also.is_empty() {
        return (first, Vec::new());
    }
    if !run.ctx.options.calls_at_once {
        let note = format!(
            "{} further call(s) of the reply not run (one call per turn)",
            also.len()
        );
        return (first, vec![note]);
    }
    let sent = 1 + also.len();
    let mut calls = std::iter::once(first.clone())
        .chain(also)
        .filter(|a| a.name != FINISH);
    let Some(now) = calls.next() else {
        // Only Finish calls: the first one stands.
        return (first, Vec::new());
    };
    let calls: VecDeque<Action> = calls.collect();
    let mut notes = Vec::new();
    if 1 + calls.len() < sent {
        notes.push(
            "a Finish sent with tool calls was not run (it came before their results)".into(),
        );
    }
    notes.push(format!(
        "the router called {} tools at once",
        1 + calls.len()
    ));
    run.queued = calls;
    run.queued_messages = messages.to_vec();
    (now, notes)
}

/// The functions the router is offered. With the tools listed in its system prompt
/// (`ToolDocs::Listed`: each API's description and example values, `common::tool_listing`) only the
/// names, argument types, argument descriptions and required arguments are left: ToolBench's schemas
/// repeat the listing ("This is the subfunction for tool …"), with empty descriptions and `optional`
/// lists. Otherwise (`ToolDocs::Schemas`) the functions carry it all once: the description the listing
/// would show, and each argument's example value in its description.
pub fn offered_functions(functions: &[Function], docs: ToolDocs) -> Vec<Value> {
    functions
        .iter()
        .map(|f| {
            let mut properties = Map::new();
            if let Some(props) = f.schema["parameters"]["properties"].as_object() {
                for (name, spec) in props {
                    properties.insert(name.clone(), Value::Object(argument(spec, docs)));
                }
            }
            let mut function = json!({
                "name": f.name,
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": f.schema["parameters"]["required"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default(),
                }
            });
            if docs == ToolDocs::Schemas {
                function["description"] = Value::String(common::listed_description(f));
            }
            function
        })
        .chain(std::iter::once(finish_schema()))
        .collect()
}

/// One argument's schema as offered: its type, description, allowed values and item type; with the
/// docs in the schemas, its example value too (whole, or left out when long, as the listing does).
fn argument(spec: &Value, docs: ToolDocs) -> Map<String, Value> {
    let mut kept = Map::new();
    for key in ["type", "description", "enum", "items"] {
        match spec.get(key) {
            Some(Value::String(t)) if t.trim().is_empty() => {}
            Some(v) => {
                kept.insert(key.into(), v.clone());
            }
            None => {}
        }
    }
    if docs == ToolDocs::Schemas
        && let Some(example) = common::listed_example(spec)
    {
        let described = match kept.get("description").and_then(Value::as_str) {
            Some(d) => format!("{} (e.g. {example})", d.trim_end_matches('.')),
            None => format!("e.g. {example}"),
        };
        kept.insert("description".into(), Value::String(described));
    }
    kept
}

/// The router's user prompt: the request, its checklist, the facts and failures so far, how many steps
/// came before, and a notice (the open parts after a nudge, or that the last proposal repeated itself).
fn router_prompt(
    ctx: &SolveContext,
    task: &Task,
    state: &State,
    steps_done: u32,
    repeated: bool,
    open_parts: bool,
) -> Result<String, AgentError> {
    let notice = if open_parts {
        ctx.prompts.render(
            PromptName::RouterOpenParts,
            &[
                ("open", &state.checklist.render_open()),
                (
                    "assume_missing",
                    &ctx.assume_missing(PromptName::AssumeMissingOpenParts)?,
                ),
            ],
        )?
    } else if repeated {
        ctx.prompts.render(PromptName::RouterRepeat, &[])?
    } else {
        String::new()
    };
    let checklist = state.checklist.render();
    Ok(ctx.prompts.render(
        PromptName::RouterUser,
        &[
            ("query", &task.query),
            ("checklist", &checklist),
            // The name custom prompt folders from before the checklist use.
            ("subtasks", &checklist),
            ("step", &steps_done.to_string()),
            ("facts", &state.render_facts()),
            ("failures", &state.render_failures()),
            ("redundant", &state.render_redundant()),
            ("notice", &notice),
        ],
    )?)
}
