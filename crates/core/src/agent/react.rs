//! ReAct / CoT@n (ToolLLM's single chain): the model sees the whole history of its calls and their
//! observations, and acts or finishes. `tries` independent chains; the first that gives an answer wins.
//! The step limit counts tree levels as ToolBench does (Thought, Action, Action Input each one level).

use async_trait::async_trait;
use serde_json::json;

use crate::llm::Message;
use crate::llm::Purpose;
use crate::toolbench::Task;

use super::Method;
use super::common::{self, TurnError, harness_observation};
use super::epilogue::{self, Ending, Layout, finish_kind, tool_call_messages};
use super::episode::{Episode, FinishKind, Step};
use super::parse::Action;
use super::{AgentError, AgentOptions, SolveContext, Solver};

pub struct React {
    tries: u32,
}

impl React {
    pub fn new(options: &AgentOptions) -> Self {
        React {
            tries: options.tries.max(1),
        }
    }
}

/// Tree levels one step adds: a thought (when present), the action and its input.
pub(crate) fn levels(step: &Step) -> u32 {
    if step.thought.trim().is_empty() { 2 } else { 3 }
}

#[async_trait]
impl Solver for React {
    fn method(&self) -> Method {
        Method::React
    }

    async fn solve(&self, task: &Task, ctx: &SolveContext) -> Result<Episode, AgentError> {
        let system = common::react_system(ctx)?;
        let mut tries: Vec<Vec<Step>> = Vec::new();
        let (mut finish, mut winner, mut error) = (FinishKind::Limit, None, None);
        for t in 0..self.tries {
            let earlier_steps = tries.iter().map(Vec::len).sum();
            let chain = run_chain(task, ctx, &system, t, earlier_steps).await;
            tries.push(chain.steps);
            finish = chain.finish;
            if chain.finish == FinishKind::GiveAnswer {
                winner = Some(tries.len() - 1);
                break;
            }
            if chain.error.is_some() {
                error = chain.error;
                break;
            }
            // The model ignored a forced Finish: another try would only do the same.
            if chain.harness_ended {
                break;
            }
        }

        // The episode's steps are the winning chain when there is one, else the last try.
        let steps = winner
            .or(tries.len().checked_sub(1))
            .and_then(|w| tries.get(w))
            .cloned()
            .unwrap_or_default();
        let total: usize = tries.iter().map(Vec::len).sum();
        let details = json!({"tries": tries.len(), "total_steps_all_tries": total});
        let ending = Ending {
            finish,
            steps,
            details,
            error,
        };
        let layout = Layout::Tries {
            tries: &tries,
            winner,
        };
        Ok(epilogue::conclude(
            Method::React,
            task,
            ctx,
            &system,
            layout,
            ending,
        ))
    }
}

/// One chain (try) and how it ended.
struct Chain {
    steps: Vec<Step>,
    finish: FinishKind,
    /// The model could not be reached.
    error: Option<String>,
    /// The model ignored a forced Finish and the harness gave up for it.
    harness_ended: bool,
}

/// What one step of a chain came to.
enum StepOutcome {
    /// The action ran and its step was recorded; `Some` when it was a `Finish`.
    Acted(Option<FinishKind>),
    /// No usable action: the chain is pruned (its step recorded).
    Pruned,
    /// The model could not be reached.
    ModelFailed(String),
}

/// Runs try `t` until it finishes, is pruned or reaches the depth limit. Step numbers continue after
/// the `earlier_steps` of the earlier tries.
async fn run_chain(
    task: &Task,
    ctx: &SolveContext,
    system: &str,
    t: u32,
    earlier_steps: usize,
) -> Chain {
    let mut messages = vec![
        Message::system(system.to_string()),
        Message::user(task.query.clone()),
    ];
    let mut chain = Chain {
        steps: Vec::new(),
        finish: FinishKind::Limit,
        error: None,
        harness_ended: false,
    };
    let mut depth = 0;
    while ctx.options.budget.chain_open(chain.steps.len(), depth) && !ctx.llm_calls_spent() {
        let index = (earlier_steps + chain.steps.len() + 1) as u32;
        match step(ctx, &mut messages, &mut chain.steps, index, t).await {
            StepOutcome::Acted(ended) => {
                if let Some(last) = chain.steps.last() {
                    chain.harness_ended |= common::harness_gave_up(last);
                    depth += levels(last);
                }
                if let Some(kind) = ended {
                    chain.finish = kind;
                    break;
                }
            }
            StepOutcome::Pruned => break,
            StepOutcome::ModelFailed(e) => {
                chain.finish = FinishKind::Error;
                chain.error = Some(e);
                break;
            }
        }
    }
    chain
}

/// One step: the model's action (repeats guarded), run, added to the conversation and recorded.
async fn step(
    ctx: &SolveContext,
    messages: &mut Vec<Message>,
    chain: &mut Vec<Step>,
    index: u32,
    t: u32,
) -> StepOutcome {
    let (action, prompt_tokens) =
        match common::turn(ctx, Purpose::React, messages.clone(), 0.0).await {
            Ok(r) => r,
            Err(TurnError::Malformed(e)) => {
                // A reply with no usable action prunes this chain, as an LLM error does in ToolBench.
                ctx.observer.note(&format!(
                    "try {}: unreadable reply ({e}); chain pruned",
                    t + 1
                ));
                let obs = harness_observation("", "", &format!("malformed reply: {e}"));
                chain.push(Step::new(index, &Action::default(), obs, 0));
                return StepOutcome::Pruned;
            }
            Err(TurnError::Llm(e)) => return StepOutcome::ModelFailed(e.to_string()),
        };
    let (action, note) =
        match common::guard_repeat(ctx, Purpose::React, messages.clone(), action, chain).await {
            Ok(r) => r,
            Err(e) => return StepOutcome::ModelFailed(e.to_string()),
        };
    let obs = ctx.act(&action.name, &action.arguments).await;
    // Each try is a new conversation: its call ids start at call_1 (the step index goes on).
    messages.extend(tool_call_messages(
        chain.len() as u32 + 1,
        &action,
        &obs.text,
    ));
    let ended = obs.finish.as_ref().map(finish_kind);
    let mut s = Step::new(index, &action, obs, prompt_tokens);
    s.notes.extend(note);
    epilogue::record(ctx, chain, s);
    StepOutcome::Acted(ended)
}
