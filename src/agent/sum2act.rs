//! The Sum2Act loop ("From Summary to Action"): a *router* proposes one action from the task and a
//! compact *state*; the tool caller runs it; a *state manager* folds the observation into the state
//! (facts found, failed calls and why, corrections). The router never sees raw history, so its prompt
//! stays bounded however many steps the episode takes.

use std::collections::HashSet;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::llm::{CompletionRequest, Message, count_tokens};
use crate::toolbench::{FINISH, Task};
use crate::tools::{Finish, Observation};

use super::checklist::Checklist;
use super::common::{self, Outcome, TurnError, harness_observation};
use super::episode::{Episode, FinishKind, Step};
use super::parse::{Action, call_key, first_json_object};
use super::state::{Applied, State, StateUpdate, clip, update_schema};
use super::sum2act_checklist::{
    drop_unsupported_facts, gives_answer, grounded_finish, learn_from_failure, mark_answered,
    request_parts,
};
use super::{AgentError, AgentOptions, SolveContext, Solver};

pub struct Sum2Act;

impl Sum2Act {
    pub fn new(_options: &AgentOptions) -> Self {
        Sum2Act
    }
}

#[async_trait]
impl Solver for Sum2Act {
    fn method(&self) -> &str {
        "sum2act"
    }

    async fn solve(&self, task: &Task, ctx: &SolveContext) -> Result<Episode, AgentError> {
        Ok(self.solve_from(task, ctx, State::default()).await?.0)
    }
}

impl Sum2Act {
    /// Runs the loop from a given state (an interactive session carries it across requests) and returns
    /// the episode and the state it ended with.
    pub async fn solve_from(
        &self,
        task: &Task,
        ctx: &SolveContext,
        mut state: State,
    ) -> Result<(Episode, State), AgentError> {
        let tools = common::tool_listing(ctx.tools.functions());
        let system = ctx.prompts.render("router_system", &[("tools", &tools)])?;
        let subtasks = request_parts(task, ctx, &tools).await?;
        state.checklist = Checklist::new(&subtasks);
        // An early Finish with open parts is sent back once, naming them.
        let mut nudged = false;
        let mut nudge_now = false;
        let mut steps: Vec<Step> = Vec::new();
        let mut finish = FinishKind::Limit;
        let mut error = None;
        // Consecutive router proposals that were not executed (repeats of failed calls).
        let mut stuck = 0;
        // Calls that returned data: proposing one again means there is nothing new to do.
        let mut answered: HashSet<(String, String)> = HashSet::new();

        for n in 1..=ctx.options.max_steps {
            // 1. Action proposal from the task and the state only. After a repeat, the router is told so
            //    and samples with some temperature (seeded, so runs stay reproducible): greedy decoding
            //    of an unchanged prompt would only repeat itself.
            let user = router_prompt(ctx, task, &state, n - 1, stuck > 0, nudge_now)?;
            nudge_now = false;
            let messages = vec![Message::system(system.clone()), Message::user(user)];
            let temperature = if stuck > 0 { 0.8 } else { 0.0 };
            let (mut action, prompt_tokens, mut notes) =
                match common::turn(ctx, "router", messages.clone(), temperature).await {
                    Ok((a, t)) => (a, t, Vec::new()),
                    Err(TurnError::Malformed(e)) => {
                        state.record_failure(
                            n,
                            "(unreadable reply)",
                            "",
                            &format!("the reply was not a valid action: {e}"),
                        );
                        let obs = harness_observation("", "", &format!("malformed reply: {e}"));
                        let bad = Action::default();
                        push(
                            ctx,
                            &mut steps,
                            n,
                            &bad,
                            obs,
                            &state,
                            0,
                            vec!["malformed router reply".into()],
                        );
                        continue;
                    }
                    Err(TurnError::Llm(e)) => {
                        finish = FinishKind::Error;
                        error = Some(e.to_string());
                        break;
                    }
                };

            // 2. Repeats are caught by the code, not left to the model. Proposing a call whose result is
            //    already in the state means the router has nothing new to do: it is asked to finish.
            //    A call that already failed is not run again; after a few such repeats, it must finish too.
            let key = (action.name.clone(), call_key(&action.arguments));
            let give_up_repeating = stuck + 1 >= MAX_REPEATS;
            let mut forced = false;
            if answered.contains(&key)
                || (give_up_repeating && state.failed_before(&key.0, &key.1).is_some())
            {
                notes.push("no new action proposed; asked the router to finish".into());
                forced = true;
                // A model that ignores the forced Finish does not get to go on: the harness gives up.
                let failed = |a: &Action| state.failed_before(&a.name, &a.arguments).is_some();
                match common::force_finish(ctx, "router", messages, &failed).await {
                    Ok((a, ignored)) => {
                        action = a;
                        notes.extend(ignored);
                    }
                    Err(e) => {
                        finish = FinishKind::Error;
                        error = Some(e.to_string());
                        break;
                    }
                }
            }
            if let Some(earlier) = state.failed_before(&action.name, &action.arguments) {
                let why = format!(
                    "this exact call already failed at step {}: {}",
                    earlier.step, earlier.reason
                );
                state.record_failure(n, &action.name, &action.arguments, "");
                notes.push("repeated a failed call; not executed".into());
                let obs = harness_observation(&action.name, &action.arguments, &why);
                push(
                    ctx,
                    &mut steps,
                    n,
                    &action,
                    obs,
                    &state,
                    prompt_tokens,
                    notes,
                );
                stuck += 1;
                continue;
            }
            stuck = 0;

            // 3. Finish only when every part is answered or failed (one nudge), and only with what the
            //    episode observed.
            if action.name == FINISH && gives_answer(&action.arguments) {
                let open = state.checklist.open();
                if !open.is_empty() && !nudged && !forced && n < ctx.options.max_steps {
                    nudged = true;
                    nudge_now = true;
                    let why = format!(
                        "Finish not run: parts still open: {}",
                        state.checklist.render_open()
                    );
                    notes.push("early Finish with open parts; nudged".into());
                    let obs = harness_observation(&action.name, &action.arguments, &why);
                    push(
                        ctx,
                        &mut steps,
                        n,
                        &action,
                        obs,
                        &state,
                        prompt_tokens,
                        notes,
                    );
                    continue;
                }
                state.checklist.fail_open(if forced {
                    "no further call was found for it"
                } else {
                    "no call answered it before Finish"
                });
                action.arguments =
                    grounded_finish(task, &state, &steps, &action.arguments, &mut notes);
            }

            // 4. Execute.
            let obs = ctx.act(&action.name, &action.arguments).await;
            match &obs.finish {
                Some(Finish::Answer(_)) => finish = FinishKind::GiveAnswer,
                Some(Finish::GiveUp) => finish = FinishKind::GiveUp,
                None => {
                    // 5. Summarise into the state.
                    if obs.failed {
                        let reason = failure_reason(&obs);
                        state.record_failure(n, &action.name, &action.arguments, &reason);
                        learn_from_failure(ctx, &mut state, &action, &obs, &reason);
                    } else {
                        let mut update =
                            summarise(ctx, task, &state, &action, &obs, &mut notes).await?;
                        // A fact the result does not hold was invented by the state manager.
                        drop_unsupported_facts(task, &action, &obs, &mut update, &mut notes);
                        // The code, not the model, knows whether the API answered: a small model sometimes
                        // calls a good result a failure. What the result means is the model's call, but a
                        // result it found nothing in is kept (clipped) rather than lost.
                        if !update.success && !update.failure_reason.is_empty() {
                            notes.push(format!("state manager: {}", update.failure_reason));
                        }
                        update.success = true;
                        if update.new_facts.is_empty() {
                            notes.push("state manager found no facts; kept the raw result".into());
                            update.new_facts = vec![raw_fact(&action, &obs)];
                        }
                        match state.apply(n, &action.name, &action.arguments, &update) {
                            Applied::NothingNew => {
                                notes.push("answered, but nothing new".into());
                                ctx.count_redundant_call();
                            }
                            Applied::NewFacts(k) => mark_answered(&mut state, &action, &update, k),
                            Applied::Failed => {}
                        }
                        answered.insert((action.name.clone(), call_key(&action.arguments)));
                    }
                    state.fit(ctx.options.state_token_budget, count_tokens);
                }
            }
            let done = obs.finish.is_some();
            push(
                ctx,
                &mut steps,
                n,
                &action,
                obs,
                &state,
                prompt_tokens,
                notes,
            );
            if done {
                break;
            }
        }

        if finish == FinishKind::Limit {
            state.checklist.fail_open("the step budget was spent");
        }
        let answer_file = common::chain_answer_file(task, ctx, &steps, finish, &system);
        let router_tokens: Vec<u64> = steps.iter().map(|s| s.prompt_tokens).collect();
        let details = json!({"state": state.to_value(), "subtasks": subtasks, "router_prompt_tokens": router_tokens});
        let episode = common::episode(
            "sum2act",
            task,
            ctx,
            Outcome {
                finish,
                steps,
                details,
                error,
                answer_file,
            },
        );
        Ok((episode, state))
    }
}

/// Consecutive repeats of failed calls after which the router must finish.
const MAX_REPEATS: u32 = 3;

fn router_prompt(
    ctx: &SolveContext,
    task: &Task,
    state: &State,
    step: u32,
    repeated: bool,
    open_parts: bool,
) -> Result<String, AgentError> {
    let notice = if open_parts {
        ctx.prompts.render(
            "router_open_parts",
            &[("open", &state.checklist.render_open())],
        )?
    } else if repeated {
        ctx.prompts.render("router_repeat", &[])?
    } else {
        String::new()
    };
    let checklist = state.checklist.render();
    Ok(ctx.prompts.render(
        "router_user",
        &[
            ("query", &task.query),
            ("checklist", &checklist),
            // The name custom prompt folders from before the checklist use.
            ("subtasks", &checklist),
            ("step", &step.to_string()),
            ("facts", &state.render_facts()),
            ("failures", &state.render_failures()),
            ("redundant", &state.render_redundant()),
            ("notice", &notice),
        ],
    )?)
}

/// Asks the state manager what the observation means. A reply that is not valid JSON falls back to
/// keeping the raw result (clipped) as a fact, so information is never lost to a formatting slip.
async fn summarise(
    ctx: &SolveContext,
    task: &Task,
    state: &State,
    action: &Action,
    obs: &Observation,
    notes: &mut Vec<String>,
) -> Result<StateUpdate, AgentError> {
    let prompt = ctx.prompts.render(
        "state_manager",
        &[
            ("query", &task.query),
            ("checklist", &state.checklist.render()),
            ("facts", &state.render_facts()),
            ("action", &action.name),
            ("arguments", &action.arguments),
            ("observation", &obs.text),
        ],
    )?;
    let request = CompletionRequest::new("state", vec![Message::user(prompt)])
        .with_json_schema("state_update", update_schema())
        .with_max_tokens(ctx.options.max_tokens);
    let parsed = match ctx.complete(&request).await {
        Ok(c) => first_json_object(&c.content)
            .and_then(|v| serde_json::from_value::<StateUpdate>(v).ok()),
        Err(e) => {
            notes.push(format!("state manager unavailable: {e}"));
            None
        }
    };
    Ok(parsed.unwrap_or_else(|| {
        notes.push("state manager reply unreadable".into());
        StateUpdate::default()
    }))
}

/// The raw result of a call as a fact, when the state manager extracted none.
fn raw_fact(action: &Action, obs: &Observation) -> String {
    format!(
        "{} returned: {}",
        action.name,
        clip(&response_text(&obs.response), 280)
    )
}

pub(super) fn failure_reason(obs: &Observation) -> String {
    if obs.error.is_empty() {
        clip(&obs.text, 200)
    } else {
        clip(&obs.error, 200)
    }
}

fn response_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[allow(clippy::too_many_arguments)]
fn push(
    ctx: &SolveContext,
    steps: &mut Vec<Step>,
    index: u32,
    action: &Action,
    observation: Observation,
    state: &State,
    prompt_tokens: u64,
    notes: Vec<String>,
) {
    let step = Step {
        state: Some(state.to_value()),
        notes,
        ..Step::new(index, action, observation, prompt_tokens)
    };
    ctx.observer.step(&step);
    steps.push(step);
}
