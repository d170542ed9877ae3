//! One Sum2Act episode in progress: what the stages share (the task, the state, the steps so far, the
//! guard's memory), the step recorder, and the episode it concludes to.

use std::collections::{HashSet, VecDeque};

use serde_json::json;

use crate::agent::epilogue::{self, Ending, Layout};
use crate::agent::episode::{Episode, FinishKind, Step};
use crate::agent::parse::{Action, call_key};
use crate::agent::{AgentError, Method, SolveContext, ToolDocs, common, reading};
use crate::llm::{Message, count_tokens};
use crate::prompts::PromptName;
use crate::toolbench::Task;
use crate::tools::Observation;

use super::checklist::Checklist;
use super::parts::request_parts;
use super::state::State;
use super::state_manager::{Summary, summarise};

/// What one step of the loop came to.
pub(super) enum StepOutcome {
    /// The loop goes on: an action ran, or the step was recorded without running anything.
    Next,
    /// `Finish` ran: the episode ended with an answer or a give-up.
    Finished(FinishKind),
    /// The model could not be reached: the episode ends in `error`.
    ModelFailed(String),
}

/// What a stage did with the router's proposal: hand it to the next stage (`Go`), or end the step
/// there (`Done`): the stage recorded the step and the loop goes on (`Done(Next)`: a repeat not run, a
/// refused Finish, an unreadable reply), or the episode ends.
pub(super) enum Stage {
    Go(Proposal),
    Done(StepOutcome),
}

/// The router's action for one step as it goes through the stages, with what the harness noted.
pub(super) struct Proposal {
    pub action: Action,
    /// The router's conversation, kept to force a `Finish` with it.
    pub messages: Vec<Message>,
    pub prompt_tokens: u64,
    pub notes: Vec<String>,
    /// The harness made the router finish (it had nothing new to do).
    pub forced: bool,
}

/// One Sum2Act episode in progress.
pub(super) struct Run<'a> {
    pub task: &'a Task,
    pub ctx: &'a SolveContext,
    /// The router's system prompt (the tools offered).
    pub system: String,
    /// The request's parts as the checklist started (the answer file's `subtasks`; the checklist in
    /// `state` tracks each part's status).
    pub subtasks: Vec<String>,
    pub state: State,
    pub steps: Vec<Step>,
    /// The answer of the Finish the nudge sent back: the final answer must not lose its values.
    pub draft: Option<String>,
    /// What the guard remembers across steps (answered calls, repeats, the one nudge).
    pub guard: Guard,
    /// Further calls of the router's last reply, run one per step before the router is asked again
    /// (independent parts called at once), with the reply's conversation.
    pub queued: VecDeque<Action>,
    pub queued_messages: Vec<Message>,
}

/// What the guard (`guard.rs`) remembers across the steps of an episode.
#[derive(Default)]
pub(super) struct Guard {
    /// Calls that returned data: proposing one again means there is nothing new to do.
    pub answered: HashSet<(String, String)>,
    /// Consecutive router proposals that were not executed (repeats of failed calls).
    pub stuck: u32,
    /// The episode's one nudge.
    pub nudge: Nudge,
}

/// Where the episode's one nudge stands.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum Nudge {
    /// Not given yet.
    #[default]
    Unused,
    /// Just given: the next router prompt names the open parts.
    Due,
    /// Given and shown to the router.
    Spent,
}

impl<'a> Run<'a> {
    /// The router's system prompt and the request's parts as the state's checklist.
    pub async fn start(
        task: &'a Task,
        ctx: &'a SolveContext,
        mut state: State,
    ) -> Result<Run<'a>, AgentError> {
        // With the docs in the offered functions, the system prompt does not list the tools again.
        let tools = match ctx.options.tool_docs {
            ToolDocs::Listed => common::tool_listing(ctx.tools.functions()),
            ToolDocs::Schemas => {
                "(offered as functions, each with its description and arguments)\n".into()
            }
        };
        let assume_missing = ctx.assume_missing(PromptName::AssumeMissingRouter)?;
        // What the state holds: facts only, or small results as the APIs returned them too.
        let state_intro = ctx.prompts.render(
            if ctx.options.fold_chars > 0 {
                PromptName::RouterStateResults
            } else {
                PromptName::RouterStateSummarised
            },
            &[],
        )?;
        let calls = ctx.prompts.render(
            if ctx.options.calls_at_once {
                PromptName::RouterCallsTogether
            } else {
                PromptName::RouterCallsOne
            },
            &[("assume_missing", &assume_missing), ("state", &state_intro)],
        )?;
        // `assume_missing` too, for a custom router prompt written before `{calls}`.
        let system = ctx.prompts.render(
            PromptName::RouterSystem,
            &[
                ("tools", &tools),
                ("calls", &calls),
                ("assume_missing", &assume_missing),
            ],
        )?;
        let subtasks = request_parts(task, ctx, &tools).await?;
        state.checklist = Checklist::new(&subtasks);
        Ok(Run {
            task,
            ctx,
            system,
            subtasks,
            state,
            steps: Vec::new(),
            draft: None,
            guard: Guard::default(),
            queued: VecDeque::new(),
            queued_messages: Vec::new(),
        })
    }

    /// Step 5: the state manager reads the observation (up to the read cap, which the step then
    /// records) and folds it into the state, which is then fitted to its token budget. `Some`: the
    /// state manager's model could not be reached (the episode ends there).
    pub async fn summarise(
        &mut self,
        n: u32,
        action: &Action,
        obs: &mut Observation,
        notes: &mut Vec<String>,
    ) -> Result<Option<String>, AgentError> {
        obs.text = reading::recorded_text(obs, self.ctx.options.budget.observation_chars);
        let (ctx, task, state) = (self.ctx, self.task, &mut self.state);
        let summary = summarise(ctx, task, state, n, action, obs, notes).await?;
        if let Summary::ModelFailed(e) = summary {
            return Ok(Some(e));
        }
        if summary == Summary::Answered {
            let key = (action.name.clone(), call_key(&action.arguments));
            self.guard.answered.insert(key);
        }
        state.fit(ctx.options.state_token_budget, count_tokens);
        Ok(None)
    }

    /// The step recorder: the proposal, what came of it and the state after it.
    pub fn record(&mut self, n: u32, p: Proposal, observation: Observation) {
        let step = Step {
            state: Some(self.state.to_value()),
            notes: p.notes,
            ..Step::new(n, &p.action, observation, p.prompt_tokens)
        };
        epilogue::record(self.ctx, &mut self.steps, step);
    }

    /// The episode and the state it ended with.
    pub fn conclude(mut self, finish: FinishKind, error: Option<String>) -> (Episode, State) {
        if finish == FinishKind::Limit {
            self.state.credit_unattributed();
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
            Method::Sum2act,
            self.task,
            self.ctx,
            &self.system,
            Layout::Chain,
            ending,
        );
        (episode, self.state)
    }
}
