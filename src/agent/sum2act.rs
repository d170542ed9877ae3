//! The Sum2Act loop ("From Summary to Action"): a *router* proposes one action from the task and a
//! compact *state*; the tool caller runs it; a *state manager* folds the observation into the state
//! (facts found, failed calls and why, corrections). The router never sees raw history, so its prompt
//! stays bounded however many steps the episode takes.

use std::collections::HashSet;
use std::ops::ControlFlow;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::llm::{Message, count_tokens};
use crate::toolbench::{FINISH, Task};
use crate::tools::Observation;

use super::Method;
use super::checklist::Checklist;
use super::common::{self, TurnError, harness_observation};
use super::epilogue::{self, Ending, Layout, finish_kind};
use super::episode::{Episode, FinishKind, Step};
use super::failure::FailureKind;
use super::parse::{Action, call_key};
use super::reading;
use super::state::State;
use super::sum2act_answer::{Draft, final_arguments};
use super::sum2act_checklist::{gives_answer, request_parts};
use super::sum2act_summary::{Summary, summarise};
use super::{AgentError, AgentOptions, SolveContext, Solver};

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
        let mut run = Run::start(task, ctx, state).await?;
        let (mut finish, mut error) = (FinishKind::Limit, None);
        for n in 1..=ctx.options.max_steps {
            match run.step(n).await? {
                StepOutcome::Next => {}
                StepOutcome::Finished(kind) => {
                    finish = kind;
                    break;
                }
                StepOutcome::ModelFailed(e) => {
                    finish = FinishKind::Error;
                    error = Some(e);
                    break;
                }
            }
        }
        Ok(run.conclude(finish, error))
    }
}

/// What one step of the loop came to.
enum StepOutcome {
    /// The loop goes on: an action ran, or the step was recorded without running anything.
    Next,
    /// `Finish` ran: the episode ended with an answer or a give-up.
    Finished(FinishKind),
    /// The model could not be reached: the episode ends in `error`.
    ModelFailed(String),
}

/// The router's action for one step as it goes through the stages, with what the harness noted.
struct Proposal {
    action: Action,
    /// The router's conversation, kept to force a `Finish` with it.
    messages: Vec<Message>,
    prompt_tokens: u64,
    notes: Vec<String>,
    /// The harness made the router finish (it had nothing new to do).
    forced: bool,
}

/// Hands a stage's proposal on to the next stage, or ends the step with the stage's outcome.
macro_rules! proceed {
    ($stage:expr) => {
        match $stage {
            ControlFlow::Continue(proposal) => proposal,
            ControlFlow::Break(outcome) => return Ok(outcome),
        }
    };
}

/// One Sum2Act episode in progress.
struct Run<'a> {
    task: &'a Task,
    ctx: &'a SolveContext,
    system: String,
    subtasks: Vec<String>,
    state: State,
    steps: Vec<Step>,
    /// An early Finish, or a repeat of an answered call, with parts open is sent back once, naming them.
    nudged: bool,
    nudge_now: bool,
    /// The answer of the Finish the nudge sent back: the final answer must not lose its values.
    draft: Option<String>,
    /// Consecutive router proposals that were not executed (repeats of failed calls).
    stuck: u32,
    /// Calls that returned data: proposing one again means there is nothing new to do.
    answered: HashSet<(String, String)>,
}

impl<'a> Run<'a> {
    /// The router's system prompt and the request's parts as the state's checklist.
    async fn start(
        task: &'a Task,
        ctx: &'a SolveContext,
        mut state: State,
    ) -> Result<Run<'a>, AgentError> {
        let tools = common::tool_listing(ctx.tools.functions());
        let system = ctx.prompts.render("router_system", &[("tools", &tools)])?;
        let subtasks = request_parts(task, ctx, &tools).await?;
        state.checklist = Checklist::new(&subtasks);
        Ok(Run {
            task,
            ctx,
            system,
            subtasks,
            state,
            steps: Vec::new(),
            nudged: false,
            nudge_now: false,
            draft: None,
            stuck: 0,
            answered: HashSet::new(),
        })
    }

    /// One step: propose → guard → gate a `Finish` → execute and summarise.
    async fn step(&mut self, n: u32) -> Result<StepOutcome, AgentError> {
        let proposal = proceed!(self.propose(n).await?);
        let proposal = proceed!(self.guard(n, proposal).await);
        let proposal = proceed!(self.gate_finish(n, proposal).await?);
        self.execute(n, proposal).await
    }

    /// 1. Propose: the router picks one action from the task and the state only. After a repeat it
    ///    is told so and samples with some temperature (seeded, so runs stay reproducible): greedy
    ///    decoding of an unchanged prompt would only repeat itself.
    async fn propose(&mut self, n: u32) -> Result<ControlFlow<StepOutcome, Proposal>, AgentError> {
        let repeated = self.stuck > 0;
        let user = router_prompt(
            self.ctx,
            self.task,
            &self.state,
            n - 1,
            repeated,
            self.nudge_now,
        )?;
        self.nudge_now = false;
        let messages = vec![Message::system(self.system.clone()), Message::user(user)];
        let temperature = if repeated { 0.8 } else { 0.0 };
        match common::turn(self.ctx, "router", messages.clone(), temperature).await {
            Ok((action, prompt_tokens)) => Ok(ControlFlow::Continue(Proposal {
                action,
                messages,
                prompt_tokens,
                notes: Vec::new(),
                forced: false,
            })),
            Err(TurnError::Malformed(e)) => {
                self.state.record_failure(
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
                self.record(n, unreadable, obs);
                Ok(ControlFlow::Break(StepOutcome::Next))
            }
            Err(TurnError::Llm(e)) => {
                Ok(ControlFlow::Break(StepOutcome::ModelFailed(e.to_string())))
            }
        }
    }

    /// 2. Guard: repeats are caught by the code, not left to the model. Proposing a call whose result
    ///    is already in the state means the router has nothing new to do: it is asked to finish. A
    ///    call that already failed is not run again (a retry of a timeout or a 429 is not a repeat);
    ///    after a few such repeats, it must finish too.
    async fn guard(&mut self, n: u32, mut p: Proposal) -> ControlFlow<StepOutcome, Proposal> {
        let key = (p.action.name.clone(), call_key(&p.action.arguments));
        if self.answered.contains(&key) && self.may_nudge(n) {
            // Parts are still open: the one nudge names them instead of ending the episode (a small
            // router repeats its first call rather than turning to the next part).
            return self.nudge(
                n,
                p,
                "repeated a call whose result is in the state",
                "call repeated with parts open; nudged",
            );
        }
        let give_up_repeating = self.stuck + 1 >= MAX_REPEATS;
        if self.answered.contains(&key)
            || (give_up_repeating && self.state.blocks_repeat(&key.0, &key.1).is_some())
        {
            p.notes
                .push("no new action proposed; asked the router to finish".into());
            p.forced = true;
            // A model that ignores the forced Finish does not get to go on: the harness gives up.
            let state = &self.state;
            let failed = |a: &Action| state.failed_before(&a.name, &a.arguments).is_some();
            let messages = std::mem::take(&mut p.messages);
            match common::force_finish(self.ctx, "router", messages, &failed).await {
                Ok((a, ignored)) => {
                    p.action = a;
                    p.notes.extend(ignored);
                }
                Err(e) => return ControlFlow::Break(StepOutcome::ModelFailed(e.to_string())),
            }
        }
        if let Some(earlier) = self
            .state
            .blocks_repeat(&p.action.name, &p.action.arguments)
        {
            let why = format!(
                "this exact call already failed at step {}: {}",
                earlier.step, earlier.reason
            );
            let kind = earlier.kind;
            self.state
                .record_failure(n, &p.action.name, &p.action.arguments, "", kind);
            p.notes.push("repeated a failed call; not executed".into());
            let obs = harness_observation(&p.action.name, &p.action.arguments, &why);
            self.record(n, p, obs);
            self.stuck += 1;
            return ControlFlow::Break(StepOutcome::Next);
        }
        self.stuck = 0;
        ControlFlow::Continue(p)
    }

    /// 3. A `Finish` with an answer runs only when every part is answered or failed (one nudge), and
    ///    only with what the episode observed.
    async fn gate_finish(
        &mut self,
        n: u32,
        mut p: Proposal,
    ) -> Result<ControlFlow<StepOutcome, Proposal>, AgentError> {
        if p.action.name != FINISH || !gives_answer(&p.action.arguments) {
            return Ok(ControlFlow::Continue(p));
        }
        if !p.forced && self.may_nudge(n) {
            self.draft = answer_text(&p.action.arguments);
            return Ok(self.nudge(
                n,
                p,
                "Finish not run",
                "early Finish with open parts; nudged",
            ));
        }
        self.state.checklist.settle(if p.forced {
            "no further call was found for it"
        } else {
            "no call answered it before Finish"
        });
        let draft = Draft {
            task: self.task,
            state: &self.state,
            steps: &self.steps,
            earlier: self.draft.as_deref(),
        };
        p.action.arguments =
            final_arguments(self.ctx, &draft, &p.action.arguments, &mut p.notes).await?;
        Ok(ControlFlow::Continue(p))
    }

    /// Whether the episode's one nudge is left and worth giving: parts nothing was found for remain,
    /// and steps too.
    fn may_nudge(&self, n: u32) -> bool {
        !self.nudged
            && !self.state.checklist.unanswered().is_empty()
            && n < self.ctx.options.max_steps
    }

    /// The proposal is not run: the step records why, and the next router prompt names the open parts.
    fn nudge(
        &mut self,
        n: u32,
        mut p: Proposal,
        what: &str,
        note: &str,
    ) -> ControlFlow<StepOutcome, Proposal> {
        self.nudged = true;
        self.nudge_now = true;
        let why = format!(
            "{what}: parts still open: {}",
            self.state.checklist.render_open()
        );
        p.notes.push(note.into());
        let obs = harness_observation(&p.action.name, &p.action.arguments, &why);
        self.record(n, p, obs);
        ControlFlow::Break(StepOutcome::Next)
    }

    /// 4. Execute the action; a `Finish` ends the episode, anything else is summarised into the state.
    ///    The step records the observation as the state manager read it (up to the read cap), not at
    ///    the tool caller's cut.
    async fn execute(&mut self, n: u32, mut p: Proposal) -> Result<StepOutcome, AgentError> {
        let mut obs = self.ctx.act(&p.action.name, &p.action.arguments).await;
        let outcome = match &obs.finish {
            Some(f) => StepOutcome::Finished(finish_kind(f)),
            None => {
                obs.text = reading::recorded_text(&obs, self.ctx.options.observation_read_chars);
                let (ctx, task, state) = (self.ctx, self.task, &mut self.state);
                let summary = summarise(ctx, task, state, n, &p.action, &obs, &mut p.notes).await?;
                if summary == Summary::Answered {
                    let key = (p.action.name.clone(), call_key(&p.action.arguments));
                    self.answered.insert(key);
                }
                state.fit(ctx.options.state_token_budget, count_tokens);
                StepOutcome::Next
            }
        };
        self.record(n, p, obs);
        Ok(outcome)
    }

    /// The step recorder: the proposal, what came of it and the state after it.
    fn record(&mut self, n: u32, p: Proposal, observation: Observation) {
        let step = Step {
            state: Some(self.state.to_value()),
            notes: p.notes,
            ..Step::new(n, &p.action, observation, p.prompt_tokens)
        };
        epilogue::record(self.ctx, &mut self.steps, step);
    }

    /// The episode and the state it ended with.
    fn conclude(mut self, finish: FinishKind, error: Option<String>) -> (Episode, State) {
        if finish == FinishKind::Limit {
            self.state.checklist.settle("the step budget was spent");
        }
        let router_tokens: Vec<u64> = self.steps.iter().map(|s| s.prompt_tokens).collect();
        let details = json!({"state": self.state.to_value(), "subtasks": self.subtasks, "router_prompt_tokens": router_tokens});
        let ending = Ending {
            finish,
            steps: self.steps,
            details,
            error,
        };
        let episode = epilogue::conclude(
            "sum2act",
            self.task,
            self.ctx,
            &self.system,
            Layout::Chain,
            ending,
        );
        (episode, self.state)
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

/// The answer text of `Finish` arguments that give one.
fn answer_text(arguments: &str) -> Option<String> {
    serde_json::from_str::<Value>(arguments)
        .ok()
        .and_then(|v| v["final_answer"].as_str().map(str::to_string))
        .filter(|a| !a.trim().is_empty())
}
