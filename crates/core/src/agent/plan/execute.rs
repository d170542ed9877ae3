//! Runs a dependency graph of tool calls: a task starts as soon as every task it waits for has
//! finished, independent tasks run at the same time (at most `parallel`, all through the episode's
//! tool caller and so its rate limits), a failed task fails its dependants, and every call's start
//! and end are kept so the record shows which calls overlapped.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde::Serialize;
use serde_json::{Map, Value};

use super::leftover::{self, Settled};
use super::placeholder::{Outputs, output_value};
use crate::agent::SolveContext;
use crate::agent::common::harness_observation;
use crate::tools::Observation;

/// One call to run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ExecTask {
    pub id: u32,
    pub tool: String,
    pub args: Map<String, Value>,
    pub deps: Vec<u32>,
}

/// How a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TaskStatus {
    Done,
    Failed,
    /// Not run: a task it waits for failed.
    Skipped,
    /// Not sent: a placeholder was left in its arguments ([`super::leftover`]).
    NotSent,
}

/// What became of one task.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TaskRun {
    pub id: u32,
    pub tool: String,
    /// The arguments actually sent (placeholders resolved), as JSON text.
    pub arguments: String,
    pub status: TaskStatus,
    /// Milliseconds since the episode started.
    pub start_ms: u64,
    pub end_ms: u64,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub error: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub observation: Option<Observation>,
    /// Where the call stands in the plan: its round (0 the plan, 1 a re-plan or fallback) and its
    /// dependency level in that round. Calls made at once start in no repeatable order, so the
    /// episode lists them by this, then by task number.
    #[serde(skip)]
    pub order: (u32, u32),
}

/// Turns a task's planned arguments into the ones sent, from the outputs so far.
pub(crate) trait Prepare: Sync {
    fn prepare(
        &self,
        task: &ExecTask,
        outputs: &Outputs,
        notes: &mut Vec<String>,
    ) -> Result<Map<String, Value>, String>;

    /// Sees each successful output (a state memory keeps it).
    fn remember(&self, _task: &ExecTask, _output: &Value) {}
}

/// Resolves `<resource-N>` placeholders only.
pub(crate) struct Placeholders;

impl TaskRun {
    /// Whether the call reached the tool caller (a withheld call has a harness observation only).
    pub(crate) fn called(&self) -> bool {
        self.observation.is_some() && self.status != TaskStatus::NotSent
    }
}

impl Prepare for Placeholders {
    fn prepare(
        &self,
        task: &ExecTask,
        outputs: &Outputs,
        notes: &mut Vec<String>,
    ) -> Result<Map<String, Value>, String> {
        super::placeholder::resolve(&task.args, outputs, notes)
    }
}

/// Everything an execution produced.
#[derive(Debug, Clone, Default)]
pub(crate) struct Execution {
    /// In the order the tasks ended.
    pub runs: Vec<TaskRun>,
    /// Outputs of the tasks that succeeded.
    pub outputs: Outputs,
    /// Calls whose arguments still held a placeholder just before sending (filled or withheld).
    pub unresolved: u64,
}

impl Execution {
    /// Pairs of tasks whose calls were in flight at the same time.
    pub(crate) fn overlaps(&self) -> Vec<(u32, u32)> {
        let called: Vec<&TaskRun> = self.runs.iter().filter(|r| r.called()).collect();
        let mut pairs = Vec::new();
        for (i, a) in called.iter().enumerate() {
            for b in &called[i + 1..] {
                if a.start_ms < b.end_ms && b.start_ms < a.end_ms {
                    pairs.push((a.id.min(b.id), a.id.max(b.id)));
                }
            }
        }
        pairs.sort_unstable();
        pairs
    }

    pub(crate) fn failed(&self) -> Vec<&TaskRun> {
        self.runs
            .iter()
            .filter(|r| r.status != TaskStatus::Done)
            .collect()
    }
}

/// Runs `tasks` by their dependencies. `started` is the episode's clock; `earlier` are outputs of
/// tasks that already ran (a re-plan waits for them as for finished tasks).
pub(crate) async fn execute(
    ctx: &SolveContext,
    tasks: &[ExecTask],
    parallel: usize,
    prepare: &dyn Prepare,
    started: Instant,
    earlier: &Outputs,
) -> Execution {
    let parallel = parallel.max(1);
    let mut pending: Vec<&ExecTask> = tasks.iter().collect();
    let mut done: BTreeSet<u32> = earlier.keys().copied().collect();
    let mut failed: BTreeSet<u32> = BTreeSet::new();
    let mut exec = Execution {
        runs: Vec::new(),
        outputs: earlier.clone(),
        unresolved: 0,
    };
    let mut running = FuturesUnordered::new();
    let by_id: BTreeMap<u32, &ExecTask> = tasks.iter().map(|t| (t.id, t)).collect();
    loop {
        skip_failed_dependants(&mut pending, &mut failed, &mut exec, started);
        while running.len() < parallel {
            let Some(pos) = pending
                .iter()
                .position(|t| t.deps.iter().all(|d| done.contains(d)))
            else {
                break;
            };
            let task = pending.remove(pos);
            match ready(task, prepare, &mut exec, started) {
                Ok((arguments, notes)) => {
                    running.push(call(
                        ctx,
                        task.id,
                        task.tool.clone(),
                        arguments,
                        notes,
                        started,
                    ));
                }
                Err(run) => {
                    failed.insert(task.id);
                    exec.runs.push(*run);
                }
            }
        }
        let Some(run) = running.next().await else {
            break;
        };
        if run.status == TaskStatus::Done {
            if let (Some(obs), Some(task)) = (&run.observation, by_id.get(&run.id)) {
                let out = output_value(&obs.response);
                prepare.remember(task, &out);
                exec.outputs.insert(run.id, out);
            }
            done.insert(run.id);
        } else {
            failed.insert(run.id);
        }
        exec.runs.push(run);
    }
    // Anything left waits on a task that never ran (an unknown or cyclic dependency).
    for t in pending {
        let at = ms(started);
        exec.runs
            .push(skipped(t, at, "waits for a task that never ran"));
    }
    // In task order, not completion order: the re-planning and answer prompts list the runs, and a
    // prompt that depends on which parallel call came back first cannot be replayed.
    let levels = levels(tasks);
    for r in &mut exec.runs {
        r.order = (0, levels.get(&r.id).copied().unwrap_or(0));
    }
    exec.runs.sort_by_key(|r| r.id);
    exec
}

/// The arguments to send for `task` (JSON text) and the notes on them, or the run of a task that
/// is not called: its placeholders do not resolve, or one is left in what would be sent.
fn ready(
    task: &ExecTask,
    prepare: &dyn Prepare,
    exec: &mut Execution,
    started: Instant,
) -> Result<(String, Vec<String>), Box<TaskRun>> {
    let mut notes = Vec::new();
    let not_run = |status, arguments: &Map<String, Value>, error, notes, observation| {
        let at = ms(started);
        Box::new(TaskRun {
            id: task.id,
            tool: task.tool.clone(),
            arguments: Value::Object(arguments.clone()).to_string(),
            status,
            start_ms: at,
            end_ms: at,
            error,
            notes,
            observation,
            order: (0, 0),
        })
    };
    let mut args = match prepare.prepare(task, &exec.outputs, &mut notes) {
        Ok(args) => args,
        Err(error) => return Err(not_run(TaskStatus::Failed, &task.args, error, notes, None)),
    };
    match leftover::settle(task, &mut args, &exec.outputs, &mut notes) {
        Ok(settled) => {
            exec.unresolved += u64::from(settled == Settled::Filled);
            Ok((Value::Object(args).to_string(), notes))
        }
        Err(why) => {
            exec.unresolved += 1;
            // Recorded as a step the answer call reads, so it knows why nothing came back.
            let text = Value::Object(args.clone()).to_string();
            let obs = harness_observation(&task.tool, &text, &why);
            Err(not_run(TaskStatus::NotSent, &args, why, notes, Some(obs)))
        }
    }
}

/// The runs of a second round (a re-plan, a fallback): listed after the first round's in the episode.
pub(crate) fn second_round(runs: &[TaskRun]) -> impl Iterator<Item = TaskRun> + '_ {
    runs.iter().cloned().map(|mut r| {
        r.order.0 = 1;
        r
    })
}

/// Each task's dependency level among `tasks`: 0 without a dependency on one of them, else one more
/// than its deepest dependency (a cycle counts once; a dependency outside `tasks` already ran).
fn levels(tasks: &[ExecTask]) -> BTreeMap<u32, u32> {
    let deps: BTreeMap<u32, &[u32]> = tasks.iter().map(|t| (t.id, t.deps.as_slice())).collect();
    fn level(id: u32, deps: &BTreeMap<u32, &[u32]>, seen: &mut Vec<u32>) -> u32 {
        if seen.contains(&id) {
            return 0;
        }
        seen.push(id);
        let below = deps
            .get(&id)
            .into_iter()
            .flat_map(|d| d.iter())
            .filter(|d| deps.contains_key(d))
            .map(|&d| level(d, deps, seen) + 1)
            .max()
            .unwrap_or(0);
        seen.pop();
        below
    }
    deps.keys()
        .map(|&id| (id, level(id, &deps, &mut Vec::new())))
        .collect()
}

fn skip_failed_dependants(
    pending: &mut Vec<&ExecTask>,
    failed: &mut BTreeSet<u32>,
    exec: &mut Execution,
    started: Instant,
) {
    loop {
        let Some(pos) = pending
            .iter()
            .position(|t| t.deps.iter().any(|d| failed.contains(d)))
        else {
            return;
        };
        let t = pending.remove(pos);
        let dep = t
            .deps
            .iter()
            .find(|d| failed.contains(d))
            .copied()
            .unwrap_or_default();
        failed.insert(t.id);
        exec.runs
            .push(skipped(t, ms(started), &format!("task {dep} failed")));
    }
}

fn skipped(t: &ExecTask, at: u64, why: &str) -> TaskRun {
    TaskRun {
        id: t.id,
        tool: t.tool.clone(),
        arguments: Value::Object(t.args.clone()).to_string(),
        status: TaskStatus::Skipped,
        start_ms: at,
        end_ms: at,
        error: why.to_string(),
        notes: Vec::new(),
        observation: None,
        order: (0, 0),
    }
}

async fn call(
    ctx: &SolveContext,
    id: u32,
    tool: String,
    arguments: String,
    notes: Vec<String>,
    started: Instant,
) -> TaskRun {
    let start_ms = ms(started);
    let obs = ctx.act(&tool, &arguments).await;
    let end_ms = ms(started);
    TaskRun {
        id,
        tool,
        arguments,
        status: if obs.failed {
            TaskStatus::Failed
        } else {
            TaskStatus::Done
        },
        start_ms,
        end_ms,
        error: if obs.failed {
            if obs.error.is_empty() {
                crate::text::clip(&obs.text, 200)
            } else {
                crate::text::clip(&obs.error, 200)
            }
        } else {
            String::new()
        },
        notes,
        observation: Some(obs),
        order: (0, 0),
    }
}

fn ms(started: Instant) -> u64 {
    started.elapsed().as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: u32, deps: &[u32]) -> ExecTask {
        ExecTask {
            id,
            tool: format!("t{id}"),
            args: Map::new(),
            deps: deps.to_vec(),
        }
    }

    #[test]
    fn calls_made_at_once_are_ordered_by_dependency_level_then_task() {
        // Task 3 needs nothing and starts with 1; task 2 waits for 1: the episode lists 1, 3, 2
        // whichever of them a clock saw start first. A dependency outside the round already ran.
        let tasks = [
            task(1, &[]),
            task(2, &[1]),
            task(3, &[]),
            task(4, &[2, 9]),
            task(5, &[5]),
        ];
        let levels = levels(&tasks);
        assert_eq!(
            levels.into_iter().collect::<Vec<_>>(),
            [(1, 0), (2, 1), (3, 0), (4, 2), (5, 1)]
        );
        let run = |id: u32, order: (u32, u32)| TaskRun {
            id,
            tool: String::new(),
            arguments: String::new(),
            status: TaskStatus::Done,
            start_ms: 0,
            end_ms: 0,
            error: String::new(),
            notes: Vec::new(),
            observation: None,
            order,
        };
        let again: Vec<TaskRun> = second_round(&[run(6, (0, 0))]).collect();
        assert_eq!(again[0].order, (1, 0));
    }
}
