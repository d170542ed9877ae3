//! The concurrent runner: bounded by a semaphore (the LLM and tool limiters bound it further), each
//! query's answer file written atomically the moment it finishes, so a crash loses at most the
//! queries in flight and a rerun skips everything already on disk.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::Semaphore;
use tokio::task::{JoinError, JoinSet};

use super::fail_fast::{FailFast, ToolOutage};
use super::job::{Job, JobError, Solved};
use super::plan::answer_path_repeat;
use super::stop::StopSignal;
use super::summary::{EpisodeView, read_answer_file};
use super::{BatchError, Progress};
use crate::toolbench::DataError;
use crate::toolbench::Task;
use crate::toolbench::answer::{ErrorCause, FinishKind};
use crate::toolbench::io::write_json_atomic;
use serde_json::Value;

#[derive(Debug, Clone)]
pub struct BatchOptions {
    pub run_dir: PathBuf,
    /// Queries in flight at once.
    pub concurrency: usize,
    /// Runs of each query (`--repeats`, at least 1): repeat 0 keeps the ToolBench file name, repeat
    /// `r > 0` is stored beside it as `{query_id}_{method}.r{r}.json` (see [`answer_path_repeat`]).
    pub repeats: u32,
}

/// A query that failed without an answer file, and why (the job error's message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedQuery {
    pub subset: String,
    pub query_id: u64,
    pub error: String,
}

/// What happened.
#[derive(Debug, Clone, Default)]
pub struct BatchOutcome {
    /// Queries solved by this invocation.
    pub ran: usize,
    /// Queries skipped because their answer file was already there.
    pub resumed: usize,
    /// Queries that failed without an answer file.
    pub failed: Vec<FailedQuery>,
    /// Queries never started (stop requested or a fatal error).
    pub not_started: usize,
    /// Queries abandoned in flight by a second Ctrl-C.
    pub abandoned: usize,
    /// Ctrl-C (or another stop request) ended the batch early.
    pub interrupted: bool,
    /// The error that stopped the batch.
    pub fatal: Option<String>,
    /// The first episodes all failed with this same error before reaching the model (a rejected
    /// key, an unknown model, an endpoint that is not there; or a model that is there but times
    /// out): the batch stopped.
    pub setup_error: Option<String>,
    /// Whose failure `setup_error` is: the setup's (exit code 2) or an outage's (1).
    pub setup_cause: Option<ErrorCause>,
    /// Episodes of this invocation that ended in `error` (kept as `.error` files, not as answers).
    pub errors: usize,
    /// Of those, episodes whose tool server could not be reached.
    pub unreachable: usize,
    /// Episodes in a row could not reach the tool server (this error): the batch stopped.
    pub tool_outage: Option<String>,
    /// Every selected query with an answer file (resumed and new), in selection order.
    pub episodes: Vec<EpisodeView>,
    pub wall_s: f64,
}

impl BatchOutcome {
    /// Every selected query has its answer file.
    #[cfg(test)]
    pub(crate) fn complete(&self) -> bool {
        self.failed.is_empty()
            && self.errors == 0
            && self.setup_error.is_none()
            && self.tool_outage.is_none()
            && self.not_started == 0
            && self.abandoned == 0
            && self.fatal.is_none()
    }
}

/// Result of one spawned query.
type Done = (usize, Result<EpisodeView, JobError>);

/// Runs `tasks` (already selected and sharded) with `job`, skipping those already finished in
/// `options.run_dir`.
pub async fn run_batch(
    tasks: &[Task],
    job: Arc<dyn Job>,
    options: &BatchOptions,
    progress: Arc<dyn Progress>,
    stop: &StopSignal,
) -> Result<BatchOutcome, BatchError> {
    let started = Instant::now();
    let run_dir = &options.run_dir;
    std::fs::create_dir_all(run_dir).map_err(|e| BatchError::io(run_dir, e))?;
    let (mut tally, todo) = Tally::resume(tasks, job.method().name(), options);
    progress.start(&tally.per_subset());
    tally.fail_fast = FailFast::new(todo.len());
    let mut running = launch(&todo, &mut tally, job, options, progress.clone(), stop).await;
    drain(&mut running, &mut tally, stop).await;
    progress.end();
    let mut outcome = tally.outcome;
    outcome.interrupted = stop.level() >= 1;
    outcome.episodes = tally.found.into_iter().flatten().collect();
    outcome.wall_s = started.elapsed().as_secs_f64();
    Ok(outcome)
}

/// What each unit of the batch (a query and repeat) came to so far.
struct Tally<'a> {
    tasks: &'a [Task],
    /// One unit per (query, repeat), repeats of a query side by side.
    units: Vec<(usize, u32)>,
    /// The episode of each unit, once it has an answer file.
    found: Vec<Option<EpisodeView>>,
    outcome: BatchOutcome,
    fail_fast: FailFast,
    outage: ToolOutage,
}

impl<'a> Tally<'a> {
    /// The units with their answer files already on disk (resumed), and the indices of those to run.
    fn resume(tasks: &'a [Task], method: &str, options: &BatchOptions) -> (Self, Vec<usize>) {
        let units: Vec<(usize, u32)> = (0..tasks.len())
            .flat_map(|t| (0..options.repeats.max(1)).map(move |r| (t, r)))
            .collect();
        let mut tally = Tally {
            tasks,
            found: vec![None; units.len()],
            units,
            outcome: BatchOutcome::default(),
            fail_fast: FailFast::new(0),
            outage: ToolOutage::new(),
        };
        let mut todo = Vec::new();
        let mut cleaned = BTreeSet::new();
        for (i, &(t, repeat)) in tally.units.iter().enumerate() {
            let task = &tasks[t];
            if cleaned.insert(task.subset.as_str()) {
                remove_stale_temp_files(&options.run_dir.join(&task.subset));
            }
            let path = answer_path_repeat(
                &options.run_dir,
                &task.subset,
                task.query_id,
                method,
                repeat,
            );
            // An `error` episode in an answer file (written by an older version) is run again too.
            match read_answer_file(&path) {
                Some((_, mut view)) if !view.finish.is(FinishKind::Error) => {
                    view.subset = task.subset.clone();
                    view.query_id = task.query_id;
                    tally.found[i] = Some(view);
                    tally.outcome.resumed += 1;
                }
                _ => todo.push(i),
            }
        }
        (tally, todo)
    }

    /// (subset, units, units already answered) per subset, for the progress display.
    fn per_subset(&self) -> Vec<(String, usize, usize)> {
        let mut per_subset: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for (i, &(t, _)) in self.units.iter().enumerate() {
            let entry = per_subset.entry(self.tasks[t].subset.as_str()).or_default();
            entry.0 += 1;
            entry.1 += usize::from(self.found[i].is_some());
        }
        per_subset
            .iter()
            .map(|(s, (n, d))| (s.to_string(), *n, *d))
            .collect()
    }

    /// Whether no more queries may be launched.
    fn stopped(&self, stop: &StopSignal) -> bool {
        stop.level() >= 1
            || self.outcome.fatal.is_some()
            || self.outcome.setup_error.is_some()
            || self.outcome.tool_outage.is_some()
    }

    /// Records one finished (or crashed) query.
    fn collect(&mut self, done: Result<Done, JoinError>) {
        let outcome = &mut self.outcome;
        match done {
            Ok((i, Ok(view))) => {
                if view.finish.is(FinishKind::Error) {
                    outcome.errors += 1;
                }
                if view.counters.unreachable_tool_calls > 0 {
                    outcome.unreachable += 1;
                }
                if let Some((e, cause)) = self.fail_fast.record(&view)
                    && outcome.setup_error.is_none()
                {
                    outcome.setup_error = Some(e);
                    outcome.setup_cause = cause;
                }
                if let Some(e) = self.outage.record(&view) {
                    outcome.tool_outage.get_or_insert(e);
                }
                self.found[i] = Some(view);
                outcome.ran += 1;
            }
            Ok((i, Err(e))) => {
                let task = &self.tasks[self.units[i].0];
                outcome.failed.push(FailedQuery {
                    subset: task.subset.clone(),
                    query_id: task.query_id,
                    error: e.to_string(),
                });
                outcome.fatal.get_or_insert(e.to_string());
            }
            Err(e) if e.is_cancelled() => {}
            Err(e) => {
                let message = format!("a query task crashed: {e}");
                outcome.fatal.get_or_insert(message);
            }
        }
    }
}

/// Launches the units of `todo`, at most `options.concurrency` at once, until they are all launched
/// or a stop, a fatal error or a setup error says otherwise.
async fn launch(
    todo: &[usize],
    tally: &mut Tally<'_>,
    job: Arc<dyn Job>,
    options: &BatchOptions,
    progress: Arc<dyn Progress>,
    stop: &StopSignal,
) -> JoinSet<Done> {
    let semaphore = Arc::new(Semaphore::new(options.concurrency.max(1)));
    let mut running: JoinSet<Done> = JoinSet::new();
    let mut launched = 0usize;
    for &i in todo {
        let permit = tokio::select! {
            biased;
            _ = stop.reached(1) => break,
            permit = semaphore.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        while let Some(done) = running.try_join_next() {
            tally.collect(done);
        }
        if tally.stopped(stop) {
            break;
        }
        let (t, repeat) = tally.units[i];
        let task = tally.tasks[t].clone();
        let path = answer_path_repeat(
            &options.run_dir,
            &task.subset,
            task.query_id,
            job.method().name(),
            repeat,
        );
        let job = job.clone();
        let progress = progress.clone();
        launched += 1;
        running.spawn(async move {
            let result = solve_one(&task, repeat, &path, job.as_ref(), progress.as_ref()).await;
            drop(permit);
            (i, result)
        });
    }
    tally.outcome.not_started = todo.len() - launched;
    running
}

/// Collects the queries in flight; a second stop abandons them.
async fn drain(running: &mut JoinSet<Done>, tally: &mut Tally<'_>, stop: &StopSignal) {
    loop {
        tokio::select! {
            biased;
            _ = stop.reached(2) => {
                tally.outcome.abandoned = running.len();
                running.abort_all();
                while let Some(done) = running.join_next().await {
                    // A query that completed while being aborted still counts.
                    if let Ok(done) = done {
                        tally.outcome.abandoned = tally.outcome.abandoned.saturating_sub(1);
                        tally.collect(Ok(done));
                    }
                }
                break;
            }
            done = running.join_next() => match done {
                Some(done) => tally.collect(done),
                None => break,
            },
        }
    }
}

/// Solves one query and writes its answer file; the write is the only side effect.
async fn solve_one(
    task: &Task,
    repeat: u32,
    path: &Path,
    job: &dyn Job,
    progress: &dyn Progress,
) -> Result<EpisodeView, JobError> {
    let result = job
        .run(task, repeat)
        .await
        .and_then(|solved| store(task, path, solved));
    match &result {
        Ok(view) => progress.finished(view),
        Err(e) => progress.failed(&task.subset, task.query_id, &e.to_string()),
    }
    result
}

/// Writes a solved query's answer file (see [`keep_episode`]).
fn store(task: &Task, path: &Path, solved: Solved) -> Result<EpisodeView, JobError> {
    let Solved { file, mut view } = solved;
    keep_episode(path, &file, &view)?;
    view.subset = task.subset.clone();
    view.query_id = task.query_id;
    Ok(view)
}

/// Writes an episode's answer file at `path` (the rule of `batch` and `run`) and returns where it
/// went. An episode that ended in `error` is written beside it as `{query_id}_{method}.error`
/// instead, so it is not taken for a result and a rerun solves the query again; an answer removes
/// the `.error` file an earlier failure left.
pub fn keep_episode(path: &Path, file: &Value, view: &EpisodeView) -> Result<PathBuf, DataError> {
    let error_file = path.with_extension("error");
    if view.finish.is(FinishKind::Error) {
        write_json_atomic(&error_file, file)?;
        return Ok(error_file);
    }
    write_json_atomic(path, file)?;
    let _ = std::fs::remove_file(&error_file);
    Ok(path.to_path_buf())
}

/// Removes temp files left by a process killed mid-write (`.NAME.PID.tmp`).
fn remove_stale_temp_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with('.') && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(&path);
        }
    }
}
