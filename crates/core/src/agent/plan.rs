//! Plan-and-execute (HuggingGPT's four stages on API tasks): one model call plans every call of the
//! task as a dependency graph, the plan is validated (one repair round), capabilities are mapped to
//! functions, the graph runs with independent calls in parallel and placeholders resolved from real
//! outputs, failures get one re-planning round, and one last call writes the answer.

pub(crate) mod dag;
pub(crate) mod execute;
pub(crate) mod ground;
pub(crate) mod leftover;
pub(crate) mod placeholder;
pub(crate) mod respond;
pub(crate) mod schema;
pub(crate) mod select;

use std::collections::BTreeSet;
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{Value, json};

use self::dag::{Plan, Problem, find_function};
use self::execute::{ExecTask, Execution, Placeholders, TaskRun};
use self::placeholder::Outputs;
use self::select::Selection;
use super::Method;
use super::common;
use super::epilogue::{self, Ending, Layout, finish_kind};
use super::episode::{Episode, FinishKind, Step};
use super::parse::{Action, first_json_object};
use super::{AgentError, AgentOptions, SolveContext, Solver};
use crate::llm::Purpose;
use crate::llm::{CompletionRequest, Message};
use crate::prompts::PromptName;
use crate::text::clip;
use crate::toolbench::Task;

pub(crate) struct Planner {
    parallel: usize,
}

impl Planner {
    pub(crate) fn new(options: &AgentOptions) -> Self {
        Planner {
            parallel: options.parallel.max(1),
        }
    }
}

#[async_trait]
impl Solver for Planner {
    fn method(&self) -> Method {
        Method::Plan
    }

    async fn solve(&self, task: &Task, ctx: &SolveContext) -> Result<Episode, AgentError> {
        let started = Instant::now();
        let mut progress = Progress::default();
        let error = model_failure(self.stages(task, ctx, started, &mut progress).await)?;
        progress.details["parallel"] = json!(self.parallel);
        Ok(conclude(Method::Plan, PromptName::Plan, task, ctx, progress, error).await)
    }
}

/// The model's failure as the episode's error, the stages' progress kept; other errors fail the
/// episode.
pub(crate) fn model_failure(outcome: Result<(), AgentError>) -> Result<Option<String>, AgentError> {
    match outcome {
        Ok(()) => Ok(None),
        Err(AgentError::Llm(e)) => Ok(Some(e.to_string())),
        Err(e) => Err(e),
    }
}

/// What an episode of a planning method has so far; kept when the model fails half-way.
#[derive(Default)]
pub(crate) struct Progress {
    pub runs: Vec<TaskRun>,
    pub finish: Option<(Action, u64, Vec<String>)>,
    pub details: Value,
    /// Calls whose arguments still held a placeholder just before sending (the episode's counter).
    pub unresolved: u64,
}

impl Planner {
    async fn stages(
        &self,
        task: &Task,
        ctx: &SolveContext,
        started: Instant,
        progress: &mut Progress,
    ) -> Result<(), AgentError> {
        progress.details = json!({});
        let tools = common::tool_listing(ctx.tools.functions());
        let prompt = ctx.prompts.render(
            PromptName::Plan,
            &[
                ("tools", &tools),
                ("query", &task.query),
                (
                    "assume_missing",
                    &ctx.assume_missing(PromptName::AssumeMissing)?,
                ),
            ],
        )?;
        let messages = vec![Message::user(prompt)];
        let first = plan_round(
            ctx,
            Purpose::Plan,
            messages.clone(),
            &BTreeSet::new(),
            &task.query,
        )
        .await?;
        let exec = self
            .run_plan(ctx, &first.plan, started, &Outputs::new())
            .await;
        progress.details["plan"] = first.record(&exec);
        progress.runs.extend(exec.runs.iter().cloned());
        progress.unresolved += exec.unresolved;

        // One re-planning round when anything failed, with the failures and what worked.
        if !exec.failed().is_empty() {
            let next_id = progress.runs.iter().map(|r| r.id).max().unwrap_or(0) + 1;
            let replan = ctx.prompts.render(
                PromptName::PlanReplan,
                &[
                    (
                        "failures",
                        &respond::results_text(
                            &exec.failed().into_iter().cloned().collect::<Vec<_>>(),
                            respond::REPLAN_RESULT_CHARS,
                        ),
                    ),
                    (
                        "results",
                        &respond::results_text(
                            &done_runs(&exec.runs),
                            respond::REPLAN_RESULT_CHARS,
                        ),
                    ),
                    ("next_id", &next_id.to_string()),
                ],
            )?;
            let mut messages = messages;
            messages.push(Message::assistant(first.plan.prompt_text()));
            messages.push(Message::user(replan));
            let external: BTreeSet<u32> = progress.runs.iter().map(|r| r.id).collect();
            let second = plan_round(ctx, Purpose::Replan, messages, &external, &task.query).await?;
            let again = self
                .run_plan(ctx, &second.plan, started, &exec.outputs)
                .await;
            progress.details["replan"] = second.record(&again);
            progress.runs.extend(execute::second_round(&again.runs));
            progress.unresolved += again.unresolved;
        }
        let (action, tokens, note) = respond::respond(ctx, &task.query, &progress.runs).await?;
        progress.finish = Some((action, tokens, note.into_iter().collect()));
        Ok(())
    }

    async fn run_plan(
        &self,
        ctx: &SolveContext,
        plan: &Plan,
        started: Instant,
        earlier: &Outputs,
    ) -> Execution {
        let tasks = exec_tasks(plan, ctx);
        execute::execute(ctx, &tasks, self.parallel, &Placeholders, started, earlier).await
    }
}

/// The plan's tasks with their tools resolved to offered function names.
fn exec_tasks(plan: &Plan, ctx: &SolveContext) -> Vec<ExecTask> {
    plan.tasks
        .iter()
        .map(|t| ExecTask {
            id: t.id,
            tool: find_function(ctx.tools.functions(), &t.tool)
                .map_or_else(|| t.tool.clone(), |f| f.name.clone()),
            args: t.args.clone(),
            deps: t.dep.clone(),
        })
        .collect()
}

fn done_runs(runs: &[TaskRun]) -> Vec<TaskRun> {
    runs.iter()
        .filter(|r| r.status == execute::TaskStatus::Done)
        .cloned()
        .collect()
}

/// One planning round (a plan and at most one repair).
pub(crate) struct PlanRound {
    pub plan: Plan,
    /// Each reply with its problems.
    pub log: Vec<Value>,
    pub selections: Vec<Selection>,
    /// Tasks dropped because the repaired plan was still wrong there.
    pub pruned: Vec<u32>,
    /// Tasks dropped because they repeated an earlier task's call.
    pub deduplicated: Vec<u32>,
}

impl PlanRound {
    /// The plan, its dependency graph and how it ran, for the episode record.
    pub(crate) fn record(&self, exec: &Execution) -> Value {
        let levels = self.plan.levels().unwrap_or_default();
        json!({
            "tasks": self.plan.to_value(),
            "rounds": self.log,
            "selections": self.selections,
            "pruned": self.pruned,
            "deduplicated": self.deduplicated,
            "dag": {"edges": self.plan.edges(), "levels": levels},
            "runs": exec.runs,
            "overlaps": exec.overlaps(),
            "calls_ms": exec.runs.iter().filter(|r| r.called()).map(|r| r.end_ms - r.start_ms).sum::<u64>(),
            "wall_ms": wall(&exec.runs),
        })
    }
}

/// From the first call's start to the last call's end.
fn wall(runs: &[TaskRun]) -> u64 {
    let called = runs.iter().filter(|r| r.called());
    let start = called.clone().map(|r| r.start_ms).min().unwrap_or(0);
    let end = called.map(|r| r.end_ms).max().unwrap_or(0);
    end.saturating_sub(start)
}

/// Asks for a plan, validates it, and gives a bad one one repair round; problems left after the
/// repair remove the tasks at fault (and their dependants).
pub(crate) async fn plan_round(
    ctx: &SolveContext,
    purpose: Purpose,
    messages: Vec<Message>,
    external: &BTreeSet<u32>,
    query: &str,
) -> Result<PlanRound, AgentError> {
    let mut round = PlanRound {
        plan: Plan::default(),
        log: Vec::new(),
        selections: Vec::new(),
        pruned: Vec::new(),
        deduplicated: Vec::new(),
    };
    let (raw, mut plan, mut problems) =
        ask_plan(ctx, purpose.clone(), &messages, external, query, &mut round).await?;
    if problems.iter().any(Problem::needs_repair) {
        let listed: Vec<String> = problems.iter().map(|p| format!("- {p}")).collect();
        let repair = ctx.prompts.render(
            PromptName::PlanRepair,
            &[
                ("problems", &listed.join("\n")),
                ("plan", &clip(&raw, 1500)),
            ],
        )?;
        let mut again = messages;
        again.push(Message::assistant(clip(&raw, 1500)));
        again.push(Message::user(repair));
        ctx.observer.note(&format!(
            "plan has problems ({}); asking for a repair",
            listed.join(" ")
        ));
        (_, plan, problems) =
            ask_plan(ctx, purpose.repair(), &again, external, query, &mut round).await?;
    }
    let mut bad: BTreeSet<u32> = problems
        .iter()
        .filter(|p| !p.tolerable())
        .filter_map(Problem::task)
        .collect();
    for p in &problems {
        if let Problem::Cycle { tasks } = p {
            bad.extend(tasks.iter().copied());
        }
    }
    if problems.iter().any(|p| {
        matches!(
            p,
            Problem::Malformed { .. } | Problem::Empty | Problem::TooMany { .. }
        )
    }) {
        plan = Plan::default();
    }
    round.pruned = plan.prune(&bad).into_iter().collect();
    round.plan = plan;
    Ok(round)
}

/// One planning call: the reply text, the plan (tools selected) and its problems.
async fn ask_plan(
    ctx: &SolveContext,
    purpose: Purpose,
    messages: &[Message],
    external: &BTreeSet<u32>,
    query: &str,
    round: &mut PlanRound,
) -> Result<(String, Plan, Vec<Problem>), AgentError> {
    let request = CompletionRequest::new(purpose.clone(), messages.to_vec())
        .with_json_schema("plan", schema::plan_schema(ctx.tools.functions()))
        .with_max_tokens(ctx.options.max_tokens.max(PLAN_TOKENS));
    let reply = ctx.complete(&request).await?;
    let raw = reply.content.clone();
    let parsed = first_json_object(&raw)
        .or_else(|| serde_json::from_str::<Value>(raw.trim()).ok())
        .ok_or(Problem::Malformed {
            reason: "no JSON object in the reply".into(),
        })
        .and_then(|v| Plan::parse(&v));
    let (plan, problems) = match parsed {
        Ok(mut plan) => {
            round
                .selections
                .extend(select::select_tools(ctx, &mut plan).await?);
            let dropped = plan.dedupe();
            if !dropped.is_empty() {
                ctx.observer
                    .note(&format!("{purpose}: dropped repeated tasks {dropped:?}"));
                round.deduplicated.extend(dropped);
            }
            let mut problems = plan.validate(ctx.tools.functions(), external);
            problems.extend(ground::made_up_ids(&plan, ctx.tools.functions(), query));
            (plan, problems)
        }
        Err(p) => (Plan::default(), vec![p]),
    };
    ctx.observer.note(&format!(
        "{purpose}: {} tasks, {} problems",
        plan.tasks.len(),
        problems.len()
    ));
    round.log.push(json!({
        "purpose": purpose,
        "reply": clip(&raw, 2000),
        "problems": problems,
    }));
    Ok((raw, plan, problems))
}

/// Tokens a plan may take: a plan of several calls does not fit the per-action default.
const PLAN_TOKENS: u32 = 768;

/// Builds the episode of a planning method: every call made, in the order the plan allows them (by
/// round, dependency level, then task number: the start times of calls made at once are not
/// repeatable, and a replay must give the same episode), then `Finish`.
/// `prompt` names the template recorded as the answer file's system prompt.
pub(crate) async fn conclude(
    method: Method,
    prompt: PromptName,
    task: &Task,
    ctx: &SolveContext,
    progress: Progress,
    error: Option<String>,
) -> Episode {
    let mut runs: Vec<&TaskRun> = progress
        .runs
        .iter()
        .filter(|r| r.observation.is_some())
        .collect();
    runs.sort_by_key(|r| (r.order, r.id));
    let mut steps: Vec<Step> = Vec::new();
    for r in runs {
        let Some(mut obs) = r.observation.clone() else {
            continue;
        };
        // Recorded as the answer call read it, so what the answer states can be checked against it.
        obs.text = super::reading::recorded_text(&obs, ctx.options.budget.observation_chars);
        let action = Action {
            thought: format!("task {}", r.id),
            name: r.tool.clone(),
            arguments: r.arguments.clone(),
        };
        let mut step = Step::new(steps.len() as u32 + 1, &action, obs, 0);
        step.notes = r.notes.clone();
        epilogue::record(ctx, &mut steps, step);
    }
    let mut finish = if error.is_some() {
        FinishKind::Error
    } else {
        FinishKind::Limit
    };
    if let Some((action, tokens, notes)) = progress.finish {
        let obs = ctx.act(&action.name, &action.arguments).await;
        finish = obs.finish.as_ref().map_or(FinishKind::Limit, finish_kind);
        let mut step = Step::new(steps.len() as u32 + 1, &action, obs, tokens);
        step.notes = notes;
        epilogue::record(ctx, &mut steps, step);
    }
    // The template as recorded, with the budget's policy in it (the other placeholders stay).
    let policy = ctx
        .assume_missing(PromptName::AssumeMissing)
        .unwrap_or_default();
    let system = ctx
        .prompts
        .template(prompt)
        .unwrap_or_default()
        .replace("{assume_missing}", &policy);
    let ending = Ending {
        finish,
        steps,
        details: progress.details,
        error,
    };
    let mut episode = epilogue::conclude(method, task, ctx, &system, Layout::Chain, ending);
    episode.counters.unresolved_placeholders = progress.unresolved;
    episode
}

#[cfg(test)]
mod tests;
