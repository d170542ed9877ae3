//! Step 2 of the Sum2Act loop, the guard: repeats are caught by the code, not left to the model.
//! Proposing a call whose result is already in the state means the router has nothing new to do: it
//! is asked to finish (`common::force_finish`, shared with the other methods: when the model will not,
//! the harness gives up for it). A call that already failed is not run again (a retry of a timeout or
//! a 429 is not a repeat); after a few such repeats, it must finish too. While parts of the request are
//! open, the episode's one *nudge* sends a repeat back, naming them (the gate, `answer.rs`, spends it on
//! an early `Finish`; `run::Nudge` remembers whether it is spent).

use crate::agent::common::{self, harness_observation};
use crate::agent::parse::{Action, call_key};
use crate::llm::Purpose;

use super::run::{Nudge, Proposal, Run, Stage, StepOutcome};

/// Consecutive repeats of failed calls after which the router must finish.
const MAX_REPEATS: u32 = 3;

/// Checks the proposal for repeats (see the module doc): it goes on unchanged, goes on as a forced
/// `Finish`, or ends the step recorded as not executed.
pub(super) async fn check(run: &mut Run<'_>, n: u32, mut p: Proposal) -> Stage {
    let key = (p.action.name.clone(), call_key(&p.action.arguments));
    let answered = run.guard.answered.contains(&key);
    if answered && may_nudge(run, n) {
        // Parts are still open: the one nudge names them instead of ending the episode (a small
        // router repeats its first call rather than turning to the next part).
        return nudge(
            run,
            n,
            p,
            "repeated a call whose result is in the state",
            "call repeated with parts open; nudged",
        );
    }
    let give_up_repeating = run.guard.stuck + 1 >= MAX_REPEATS;
    if answered || (give_up_repeating && run.state.blocks_repeat(&key.0, &key.1).is_some()) {
        p.notes
            .push("no new action proposed; asked the router to finish".into());
        p.forced = true;
        // A model that ignores the forced Finish does not get to go on: the harness gives up.
        let state = &run.state;
        let failed = |a: &Action| state.failed_before(&a.name, &a.arguments).is_some();
        let messages = std::mem::take(&mut p.messages);
        match common::force_finish(run.ctx, Purpose::Router, messages, &failed).await {
            Ok((a, ignored)) => {
                p.action = a;
                p.notes.extend(ignored);
            }
            Err(e) => return Stage::Done(StepOutcome::ModelFailed(e.to_string())),
        }
    }
    if let Some(earlier) = run.state.blocks_repeat(&p.action.name, &p.action.arguments) {
        let why = format!(
            "this exact call already failed at step {}: {}",
            earlier.step, earlier.reason
        );
        let kind = earlier.kind;
        run.state
            .record_failure(n, &p.action.name, &p.action.arguments, "", kind);
        p.notes.push("repeated a failed call; not executed".into());
        let obs = harness_observation(&p.action.name, &p.action.arguments, &why);
        run.record(n, p, obs);
        run.guard.stuck += 1;
        return Stage::Done(StepOutcome::Next);
    }
    run.guard.stuck = 0;
    Stage::Go(p)
}

/// Whether the episode's one nudge is left and worth giving: parts nothing was found for remain,
/// and steps too; and no result folded by code is unattributed (the router read it and may have
/// found those parts answered: the gate must not refuse an answer the facts give).
pub(super) fn may_nudge(run: &Run<'_>, n: u32) -> bool {
    run.guard.nudge == Nudge::Unused
        && !run.state.checklist.unanswered().is_empty()
        && run.state.unattributed_results().is_empty()
        && n < run.ctx.options.budget.max_steps
}

/// The proposal is not run: the step records why, and the next router prompt names the open parts.
pub(super) fn nudge(run: &mut Run<'_>, n: u32, mut p: Proposal, what: &str, note: &str) -> Stage {
    run.guard.nudge = Nudge::Due;
    let why = format!(
        "{what}: parts still open: {}",
        run.state.checklist.render_open()
    );
    p.notes.push(note.into());
    let obs = harness_observation(&p.action.name, &p.action.arguments, &why);
    run.record(n, p, obs);
    Stage::Done(StepOutcome::Next)
}
