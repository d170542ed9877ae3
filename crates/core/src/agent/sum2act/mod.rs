//! The Sum2Act loop ("From Summary to Action"): a *router* proposes one action from the task and a
//! compact *state*; the tool caller runs it; a *state manager* folds the observation into the state
//! (facts found, failed calls and why, corrections). The router never sees raw history, so its prompt
//! stays bounded however many steps the episode takes.
//!
//! With `--rounds` the loop is `rounds/`: one model call per round reads the round's results and
//! proposes the next calls or the answer (the state manager and the router in one call).
//!
//! This file is the loop; each stage of a step has a file beside it:
//! 1. propose: `router.rs`;
//! 2. guard against repeats (and the one nudge while parts are open), forcing a `Finish` when there is
//!    nothing new to do: `guard.rs`;
//! 3. gate a `Finish` (an early one spends the nudge), making its answer final and grounded: `answer.rs`,
//!    `grounded.rs`;
//! 4. execute: the tool caller (`SolveContext::act`);
//! 5. summarise into the state: `state_manager.rs` (with `parts.rs`, the checklist's hooks, and
//!    `lessons.rs`), over `state.rs` and `checklist.rs`;
//! 6. finish: the episode ends when `Finish` runs (an answer or a give-up, the model's or the
//!    harness's), when the router's model cannot be reached (the state manager's failing is only a
//!    noted failure), or when the step budget is spent; `run.rs` records each step and concludes the
//!    episode. An `AgentError` (a prompt that cannot be rendered) ends it with no episode.

mod answer;
pub mod checklist;
mod fold;
mod grounded;
mod guard;
mod lessons;
mod parts;
mod rounds;
pub(crate) mod router;
mod run;
pub mod state;
mod state_manager;

#[cfg(test)]
mod checklist_tests;
#[cfg(test)]
mod dev_tests;
#[cfg(test)]
mod keeps_tests;

use async_trait::async_trait;

use crate::agent::epilogue::finish_kind;
use crate::agent::episode::{Episode, FinishKind};
use crate::agent::{AgentError, AgentOptions, Method, SolveContext, Solver};
use crate::toolbench::Task;

use run::{Run, Stage, StepOutcome};
pub use state::State;

pub struct Sum2Act;

impl Sum2Act {
    pub fn new(_options: &AgentOptions) -> Self {
        Sum2Act
    }
}

#[async_trait]
impl Solver for Sum2Act {
    fn method(&self) -> Method {
        Method::Sum2act
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
        state: State,
    ) -> Result<(Episode, State), AgentError> {
        // In rounds, the episode's memory is its request model; a session keeps its facts across
        // requests in the state.
        if ctx.options.rounds {
            let mut state = state;
            let episode = rounds::solve(task, ctx, &mut state).await?;
            return Ok((episode, state));
        }
        let mut run = Run::start(task, ctx, state).await?;
        for n in 1..=ctx.options.budget.max_steps {
            if ctx.llm_calls_spent() {
                break;
            }
            match step(&mut run, n).await? {
                StepOutcome::Next => {}
                StepOutcome::Finished(kind) => return Ok(run.conclude(kind, None)),
                StepOutcome::ModelFailed(e) => return Ok(run.conclude(FinishKind::Error, Some(e))),
            }
        }
        Ok(run.conclude(FinishKind::Limit, None))
    }
}

/// One step: each stage either hands the proposal on or ends the step (having recorded why).
async fn step(run: &mut Run<'_>, n: u32) -> Result<StepOutcome, AgentError> {
    // 1. Propose: the router picks one action from the task and the state.
    let p = match router::propose(run, n).await? {
        Stage::Go(p) => p,
        Stage::Done(outcome) => return Ok(outcome),
    };
    // 2. Guard: a repeat is not run again; with nothing new to do, the router must finish.
    let p = match guard::check(run, n, p).await {
        Stage::Go(p) => p,
        Stage::Done(outcome) => return Ok(outcome),
    };
    // 3. Gate a Finish: only with every part answered or failed, and only with what was observed.
    let mut p = match answer::gate(run, n, p).await? {
        Stage::Go(p) => p,
        Stage::Done(outcome) => return Ok(outcome),
    };
    // 4. Execute the action.
    let mut obs = run.ctx.act(&p.action.name, &p.action.arguments).await;
    // 5. Summarise: the state manager folds the observation into the state; or, when the action was
    // `Finish`, 6. finish: the episode ends with an answer or a give-up.
    let outcome = match &obs.finish {
        Some(f) => StepOutcome::Finished(finish_kind(f)),
        None => match run.summarise(n, &p.action, &mut obs, &mut p.notes).await? {
            Some(e) => StepOutcome::ModelFailed(e),
            None => StepOutcome::Next,
        },
    };
    run.record(n, p, obs);
    Ok(outcome)
}
