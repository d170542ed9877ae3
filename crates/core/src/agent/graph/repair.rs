//! A call withheld because a placeholder was left in its arguments (the model described a value it
//! had not seen: `<id of Rome from call_1 result>`) gets one repair: the model fills those arguments
//! again through the same argument call, now shown what the earlier calls returned, and the call
//! runs again under a new id with the calls that waited for it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::decompose::Subtask;
use super::{Searched, Wiring, fill_missing};
use crate::agent::plan::dag::rename_references;
use crate::agent::plan::execute::{ExecTask, Execution, TaskRun, TaskStatus};
use crate::agent::plan::leftover::leftovers;
use crate::agent::plan::respond::{REPLAN_RESULT_CHARS, results_text};
use crate::agent::{AgentError, SolveContext};

/// One withheld call wired again: its subtask's index and the calls to run (the repaired call
/// first, then those that waited for it).
pub(crate) struct Rewired {
    pub subtask: usize,
    pub tasks: Vec<ExecTask>,
}

/// The withheld calls of `exec` wired again under new ids (from `wiring.next_id`, which moves past
/// them).
pub(crate) async fn rewire(
    ctx: &SolveContext,
    query: &str,
    searched: &[Searched],
    wiring: &mut Wiring,
    exec: &Execution,
    notes: &mut Vec<String>,
) -> Result<Vec<Rewired>, AgentError> {
    let done: Vec<TaskRun> = exec
        .runs
        .iter()
        .filter(|r| r.status == TaskStatus::Done)
        .cloned()
        .collect();
    let results = results_text(&done, REPLAN_RESULT_CHARS);
    let mut out = Vec::new();
    for run in exec.runs.iter().filter(|r| r.status == TaskStatus::NotSent) {
        let owner = wiring.owners.iter().find(|(_, ids)| ids.contains(&run.id));
        let (Some(task), Some((index, _))) = (wiring.tasks.iter().find(|t| t.id == run.id), owner)
        else {
            continue;
        };
        let Some(sub) = searched.get(*index).map(|s| &s.subtask) else {
            continue;
        };
        let sent: Map<String, Value> = serde_json::from_str(&run.arguments).unwrap_or_default();
        let mut params: Vec<String> = Vec::new();
        for l in leftovers(&task.args, &sent) {
            if !params.contains(&l.param) {
                params.push(l.param);
            }
        }
        let mut tasks = renumbered(&chain(wiring, exec, run.id), &mut wiring.next_id);
        let Some(first) = tasks.first_mut() else {
            continue;
        };
        params.iter().for_each(|p| {
            first.args.remove(p);
        });
        notes.push(format!(
            "{} withheld for a placeholder in {params:?}; asked for them again as task {}",
            run.tool, first.id
        ));
        // The same argument call, its subtask followed by what the earlier calls returned.
        let shown = Subtask {
            task: format!("{}\nEarlier results:\n{}", sub.task, results.trim_end()),
            ..sub.clone()
        };
        let missing: Vec<(usize, String)> = params.into_iter().map(|p| (0, p)).collect();
        fill_missing(ctx, query, &shown, &mut tasks, &missing, notes).await?;
        out.push(Rewired {
            subtask: *index,
            tasks,
        });
    }
    Ok(out)
}

/// The withheld task and every task skipped because it waits for it, in wiring order.
fn chain(wiring: &Wiring, exec: &Execution, withheld: u32) -> Vec<ExecTask> {
    let skipped: BTreeSet<u32> = exec
        .runs
        .iter()
        .filter(|r| r.status == TaskStatus::Skipped)
        .map(|r| r.id)
        .collect();
    let mut ids = BTreeSet::from([withheld]);
    let mut out = Vec::new();
    for t in &wiring.tasks {
        let waits = t.deps.iter().any(|d| ids.contains(d));
        if t.id == withheld || (waits && skipped.contains(&t.id)) {
            ids.insert(t.id);
            out.push(t.clone());
        }
    }
    out
}

/// `tasks` under new ids from `next` (moved past them), their dependencies and placeholders renamed.
fn renumbered(tasks: &[ExecTask], next: &mut u32) -> Vec<ExecTask> {
    let mut alias = BTreeMap::new();
    for t in tasks {
        *next = (*next).max(1);
        alias.insert(t.id, *next);
        *next += 1;
    }
    tasks
        .iter()
        .map(|t| {
            let mut t = t.clone();
            t.id = alias.get(&t.id).copied().unwrap_or(t.id);
            for d in &mut t.deps {
                *d = alias.get(d).copied().unwrap_or(*d);
            }
            for v in t.args.values_mut() {
                rename_references(v, &alias);
            }
            t
        })
        .collect()
}

/// Subtasks whose rewired calls all succeeded: they need no fallback.
pub(crate) fn fixed(rewired: &[Rewired], exec: &Execution) -> BTreeSet<usize> {
    rewired
        .iter()
        .filter(|r| {
            r.tasks.iter().all(|t| {
                exec.runs
                    .iter()
                    .any(|run| run.id == t.id && run.status == TaskStatus::Done)
            })
        })
        .map(|r| r.subtask)
        .collect()
}
