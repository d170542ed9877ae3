//! The concurrent runner: bounded by a semaphore (the LLM and tool limiters bound it further), each
//! query's answer file written atomically the moment it finishes, so a crash loses at most the
//! queries in flight and a rerun skips everything already on disk.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;

use super::plan::answer_path_repeat;
use super::summary::{EpisodeView, read_answer_file};
use super::{BatchError, Progress};
use crate::toolbench::Task;
use crate::toolbench::answer::FinishKind;
use crate::toolbench::io::write_json_atomic;

/// A setup problem that makes further queries pointless (a prompt that cannot render, a model that
/// is gone); the batch stops launching queries when a job returns one.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct JobError(pub String);

/// Solves one query and returns its answer file (ToolBench answer file plus the `sum2act` record).
#[async_trait]
pub trait Job: Send + Sync {
    /// The method name used in answer-file names.
    fn method(&self) -> &str;
    /// Solves repeat `repeat` of `task` (0 for the first run, which must behave as without repeats).
    async fn run(&self, task: &Task, repeat: u32) -> Result<Value, JobError>;
}

#[derive(Debug, Clone)]
pub struct BatchOptions {
    pub run_dir: PathBuf,
    /// Queries in flight at once.
    pub concurrency: usize,
    /// Runs of each query (`--repeats`, at least 1): repeat 0 keeps the ToolBench file name, repeat
    /// `r > 0` is stored beside it as `{query_id}_{method}.r{r}.json` (see [`answer_path_repeat`]).
    pub repeats: u32,
}

/// The batch stops as a setup error when its first episodes (this many, or all of them when fewer
/// are to run) all ended in the same error without ever getting a reply from the model.
pub const FAIL_FAST_AFTER: usize = 3;

/// What happened.
#[derive(Debug, Clone, Default)]
pub struct BatchOutcome {
    /// Queries solved by this invocation.
    pub ran: usize,
    /// Queries skipped because their answer file was already there.
    pub resumed: usize,
    /// Queries that failed without an answer file: (subset, query id, error).
    pub failed: Vec<(String, u64, String)>,
    /// Queries never started (stop requested or a fatal error).
    pub not_started: usize,
    /// Queries abandoned in flight by a second Ctrl-C.
    pub abandoned: usize,
    /// Ctrl-C (or another stop request) ended the batch early.
    pub interrupted: bool,
    /// The error that stopped the batch.
    pub fatal: Option<String>,
    /// The first episodes all failed with this same error before reaching the model (a rejected
    /// key, an unknown model, an endpoint that is not there): the batch stopped; exit code 2.
    pub setup_error: Option<String>,
    /// Episodes of this invocation that ended in `error` (kept as `.error` files, not as answers).
    pub errors: usize,
    /// Every selected query with an answer file (resumed and new), in selection order.
    pub episodes: Vec<EpisodeView>,
    pub wall_s: f64,
}

impl BatchOutcome {
    /// Every selected query has its answer file.
    pub fn complete(&self) -> bool {
        self.failed.is_empty()
            && self.errors == 0
            && self.setup_error.is_none()
            && self.not_started == 0
            && self.abandoned == 0
            && self.fatal.is_none()
    }
}

/// A two-level stop request: level 1 stops launching queries (in-flight ones finish), level 2
/// abandons the ones in flight. Ctrl-C raises it one level per press.
#[derive(Clone, Default)]
pub struct StopSignal {
    level: Arc<AtomicU8>,
    notify: Arc<Notify>,
}

impl StopSignal {
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the level by one and returns the new level.
    pub fn escalate(&self) -> u8 {
        let level = self.level.fetch_add(1, Ordering::SeqCst).saturating_add(1);
        self.notify.notify_waiters();
        level
    }

    pub fn level(&self) -> u8 {
        self.level.load(Ordering::SeqCst)
    }

    /// Resolves once the level reaches `level`.
    pub async fn reached(&self, level: u8) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.level() >= level {
                return;
            }
            notified.await;
        }
    }

    /// Escalates on every Ctrl-C (and SIGTERM, which Kubernetes sends before killing a pod) and
    /// tells the user what happens next.
    pub fn listen_ctrl_c(&self, progress: Arc<dyn Progress>) -> tokio::task::JoinHandle<()> {
        let stop = self.clone();
        tokio::spawn(async move {
            #[cfg(unix)]
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            loop {
                #[cfg(unix)]
                let signalled = match term.as_mut() {
                    Some(t) => tokio::select! {
                        r = tokio::signal::ctrl_c() => r.is_ok(),
                        r = t.recv() => r.is_some(),
                    },
                    None => tokio::signal::ctrl_c().await.is_ok(),
                };
                #[cfg(not(unix))]
                let signalled = tokio::signal::ctrl_c().await.is_ok();
                if !signalled {
                    break;
                }
                match stop.escalate() {
                    1 => progress.note(
                        "stopping: no new queries; waiting for those in flight (Ctrl-C again to abandon them)",
                    ),
                    _ => progress.note("abandoning the queries in flight; rerun the same command to resume"),
                }
            }
        })
    }
}

/// Result of one spawned query.
type Done = (usize, Result<EpisodeView, JobError>);

/// Watches the first episodes for a setup error shared by all of them.
struct FailFast {
    /// Episodes that must agree before the batch stops.
    needed: usize,
    /// The error of the first episodes and how many had it; `None` once any episode did otherwise.
    streak: Option<(String, usize)>,
    decided: bool,
}

impl FailFast {
    fn new(todo: usize) -> Self {
        FailFast {
            needed: FAIL_FAST_AFTER.min(todo).max(1),
            streak: None,
            decided: false,
        }
    }

    /// Records one finished episode; returns the setup error once the first ones all agree.
    fn record(&mut self, view: &EpisodeView) -> Option<String> {
        if self.decided {
            return None;
        }
        let error = view.error.clone().unwrap_or_default();
        let same = match &mut self.streak {
            _ if !view.never_reached_model() => false,
            None => {
                self.streak = Some((error, 1));
                true
            }
            Some((first, n)) if *first == error => {
                *n += 1;
                true
            }
            Some(_) => false,
        };
        if !same {
            self.decided = true;
            return None;
        }
        match &self.streak {
            Some((e, n)) if *n >= self.needed => {
                self.decided = true;
                Some(e.clone())
            }
            _ => None,
        }
    }
}

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
    let method = job.method().to_string();

    let mut outcome = BatchOutcome::default();
    // One unit per (query, repeat), repeats of a query side by side.
    let units: Vec<(usize, u32)> = (0..tasks.len())
        .flat_map(|t| (0..options.repeats.max(1)).map(move |r| (t, r)))
        .collect();
    let mut found: Vec<Option<EpisodeView>> = vec![None; units.len()];
    let mut todo = Vec::new();
    let mut per_subset: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut cleaned = std::collections::BTreeSet::new();
    for (i, &(t, repeat)) in units.iter().enumerate() {
        let task = &tasks[t];
        let path = answer_path_repeat(run_dir, &task.subset, task.query_id, &method, repeat);
        if cleaned.insert(task.subset.as_str()) {
            remove_stale_temp_files(&run_dir.join(&task.subset));
        }
        let entry = per_subset.entry(task.subset.as_str()).or_default();
        entry.0 += 1;
        // An `error` episode in an answer file (written by an older version) is run again too.
        match read_answer_file(&path) {
            Some((_, mut view)) if !view.finish.is(FinishKind::Error) => {
                view.subset = task.subset.clone();
                view.query_id = task.query_id;
                found[i] = Some(view);
                entry.1 += 1;
                outcome.resumed += 1;
            }
            _ => todo.push(i),
        }
    }
    let subsets: Vec<(String, usize, usize)> = per_subset
        .iter()
        .map(|(s, (n, d))| (s.to_string(), *n, *d))
        .collect();
    progress.start(&subsets);

    let mut fail_fast = FailFast::new(todo.len());
    let semaphore = Arc::new(Semaphore::new(options.concurrency.max(1)));
    let mut running: JoinSet<Done> = JoinSet::new();
    let mut launched = 0usize;
    for &i in &todo {
        let permit = tokio::select! {
            biased;
            _ = stop.reached(1) => break,
            permit = semaphore.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        while let Some(done) = running.try_join_next() {
            collect(
                done,
                tasks,
                &units,
                &mut found,
                &mut outcome,
                &mut fail_fast,
            );
        }
        if stop.level() >= 1 || outcome.fatal.is_some() || outcome.setup_error.is_some() {
            break;
        }
        let (t, repeat) = units[i];
        let task = tasks[t].clone();
        let path = answer_path_repeat(run_dir, &task.subset, task.query_id, &method, repeat);
        let job = job.clone();
        let progress = progress.clone();
        launched += 1;
        running.spawn(async move {
            let result = solve_one(&task, repeat, &path, job.as_ref(), progress.as_ref()).await;
            drop(permit);
            (i, result)
        });
    }
    outcome.not_started = todo.len() - launched;

    loop {
        tokio::select! {
            biased;
            _ = stop.reached(2) => {
                outcome.abandoned = running.len();
                running.abort_all();
                while let Some(done) = running.join_next().await {
                    // A query that completed while being aborted still counts.
                    if let Ok(done) = done {
                        outcome.abandoned = outcome.abandoned.saturating_sub(1);
                        collect(Ok(done), tasks, &units, &mut found, &mut outcome, &mut fail_fast);
                    }
                }
                break;
            }
            done = running.join_next() => match done {
                Some(done) => collect(done, tasks, &units, &mut found, &mut outcome, &mut fail_fast),
                None => break,
            },
        }
    }
    progress.end();
    outcome.interrupted = stop.level() >= 1;
    outcome.episodes = found.into_iter().flatten().collect();
    outcome.wall_s = started.elapsed().as_secs_f64();
    Ok(outcome)
}

/// Solves one query and writes its answer file; the write is the only side effect. An episode that
/// ended in `error` is written as `{query_id}_{method}.error` instead, so it is not taken for a
/// result and a rerun solves the query again.
async fn solve_one(
    task: &Task,
    repeat: u32,
    path: &std::path::Path,
    job: &dyn Job,
    progress: &dyn Progress,
) -> Result<EpisodeView, JobError> {
    let result = job.run(task, repeat).await.and_then(|file| {
        let mut view = EpisodeView::from_answer(&file).ok_or_else(|| {
            JobError(format!(
                "query {}: the method returned an answer file without its `sum2act` record",
                task.query_id
            ))
        })?;
        let error_file = path.with_extension("error");
        if view.finish.is(FinishKind::Error) {
            write_json_atomic(&error_file, &file).map_err(|e| JobError(e.to_string()))?;
        } else {
            write_json_atomic(path, &file).map_err(|e| JobError(e.to_string()))?;
            let _ = std::fs::remove_file(&error_file);
        }
        view.subset = task.subset.clone();
        view.query_id = task.query_id;
        Ok(view)
    });
    match &result {
        Ok(view) => progress.finished(view),
        Err(e) => progress.failed(&task.subset, task.query_id, &e.0),
    }
    result
}

fn collect(
    done: Result<Done, tokio::task::JoinError>,
    tasks: &[Task],
    units: &[(usize, u32)],
    found: &mut [Option<EpisodeView>],
    outcome: &mut BatchOutcome,
    fail_fast: &mut FailFast,
) {
    match done {
        Ok((i, Ok(view))) => {
            if view.finish.is(FinishKind::Error) {
                outcome.errors += 1;
            }
            if let Some(e) = fail_fast.record(&view) {
                outcome.setup_error.get_or_insert(e);
            }
            found[i] = Some(view);
            outcome.ran += 1;
        }
        Ok((i, Err(e))) => {
            let task = &tasks[units[i].0];
            outcome
                .failed
                .push((task.subset.clone(), task.query_id, e.0.clone()));
            outcome.fatal.get_or_insert(e.0);
        }
        Err(e) if e.is_cancelled() => {}
        Err(e) => {
            let message = format!("a query task crashed: {e}");
            outcome.fatal.get_or_insert(message);
        }
    }
}

/// Removes temp files left by a process killed mid-write (`.NAME.PID.tmp`).
fn remove_stale_temp_files(dir: &std::path::Path) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::NoProgress;
    use serde_json::json;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    /// Answers every query after `delay`, failing the query with id `fail_on`.
    struct TestJob {
        delay: Duration,
        fail_on: Option<u64>,
        calls: AtomicUsize,
    }

    #[async_trait]
    impl Job for TestJob {
        fn method(&self) -> &str {
            "test"
        }

        async fn run(&self, task: &Task, _repeat: u32) -> Result<Value, JobError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(self.delay).await;
            if Some(task.query_id) == self.fail_on {
                return Err(JobError("model is gone".into()));
            }
            Ok(json!({"answer_generation": {"query": task.query},
                "sum2act": {"method": "test", "model": "m", "subset": task.subset, "query_id": task.query_id,
                "finish": if task.query_id.is_multiple_of(2) { "give_answer" } else { "give_up" },
                "counters": {"llm_calls": 2, "steps": 1}}}))
        }
    }

    fn tasks(n: u64) -> Vec<Task> {
        (0..n)
            .map(|i| Task {
                subset: if i % 2 == 0 { "A".into() } else { "B".into() },
                query_id: i,
                query: format!("q{i}"),
                functions: Vec::new(),
                relevant: Vec::new(),
            })
            .collect()
    }

    fn job(delay_ms: u64, fail_on: Option<u64>) -> Arc<TestJob> {
        Arc::new(TestJob {
            delay: Duration::from_millis(delay_ms),
            fail_on,
            calls: AtomicUsize::new(0),
        })
    }

    fn files(dir: &std::path::Path) -> usize {
        ["A", "B"]
            .iter()
            .map(|s| {
                std::fs::read_dir(dir.join(s))
                    .map(|d| d.count())
                    .unwrap_or(0)
            })
            .sum()
    }

    #[tokio::test]
    async fn runs_all_then_resume_skips_them() {
        let dir = tempfile::tempdir().unwrap();
        let options = BatchOptions {
            run_dir: dir.path().to_path_buf(),
            concurrency: 3,
            repeats: 1,
        };
        let t = tasks(10);
        let first = run_batch(
            &t,
            job(1, None),
            &options,
            Arc::new(NoProgress),
            &StopSignal::new(),
        )
        .await
        .unwrap();
        assert_eq!((first.ran, first.resumed), (10, 0));
        assert!(first.complete());
        assert_eq!(files(dir.path()), 10);
        assert!(dir.path().join("A/4_test.json").is_file());
        // A half-written file from a killed run is not a finished query.
        std::fs::write(dir.path().join("B/5_test.json"), "{\"sum2act\": {").unwrap();
        std::fs::write(dir.path().join("B/.5_test.json.999.tmp"), "x").unwrap();
        let again = job(1, None);
        let second = run_batch(
            &t,
            again.clone(),
            &options,
            Arc::new(NoProgress),
            &StopSignal::new(),
        )
        .await
        .unwrap();
        assert_eq!((second.ran, second.resumed), (1, 9));
        assert_eq!(again.calls.load(Ordering::SeqCst), 1);
        assert_eq!(second.episodes.len(), 10);
        assert_eq!(files(dir.path()), 10, "stale temp file removed");
    }

    #[tokio::test]
    async fn stop_lets_in_flight_finish_and_launches_nothing_new() {
        let dir = tempfile::tempdir().unwrap();
        let options = BatchOptions {
            run_dir: dir.path().to_path_buf(),
            concurrency: 2,
            repeats: 1,
        };
        let stop = StopSignal::new();
        let s2 = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(30)).await;
            s2.escalate();
        });
        let t = tasks(20);
        let out = run_batch(&t, job(50, None), &options, Arc::new(NoProgress), &stop)
            .await
            .unwrap();
        assert!(out.interrupted);
        assert_eq!(out.ran, 2, "the two in flight finished");
        assert_eq!(out.not_started, 18);
        assert_eq!(files(dir.path()), 2);
    }

    #[tokio::test]
    async fn second_stop_abandons_in_flight_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let options = BatchOptions {
            run_dir: dir.path().to_path_buf(),
            concurrency: 4,
            repeats: 1,
        };
        let stop = StopSignal::new();
        let s2 = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            s2.escalate();
            s2.escalate();
        });
        let out = run_batch(
            &tasks(8),
            job(5_000, None),
            &options,
            Arc::new(NoProgress),
            &stop,
        )
        .await
        .unwrap();
        assert_eq!((out.ran, out.abandoned, out.not_started), (0, 4, 4));
        assert_eq!(files(dir.path()), 0, "nothing half-written");
    }

    #[tokio::test]
    async fn a_job_error_stops_the_batch() {
        let dir = tempfile::tempdir().unwrap();
        let options = BatchOptions {
            run_dir: dir.path().to_path_buf(),
            concurrency: 1,
            repeats: 1,
        };
        let out = run_batch(
            &tasks(10),
            job(1, Some(3)),
            &options,
            Arc::new(NoProgress),
            &StopSignal::new(),
        )
        .await
        .unwrap();
        assert_eq!(out.fatal.as_deref(), Some("model is gone"));
        assert_eq!(out.ran, 3);
        assert_eq!(out.failed.len(), 1);
        assert!(out.not_started >= 5);
        assert!(!out.complete());
    }

    /// Ends the episodes of the queries `error_on` selects in `error` (never reaching the model when
    /// `reached` is false), answers the others.
    struct ErrorJob {
        error_on: fn(u64) -> bool,
        reached: bool,
        calls: AtomicUsize,
    }

    #[async_trait]
    impl Job for ErrorJob {
        fn method(&self) -> &str {
            "test"
        }

        async fn run(&self, task: &Task, _repeat: u32) -> Result<Value, JobError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(2)).await;
            let error = (self.error_on)(task.query_id);
            let tokens = if error && !self.reached { 0 } else { 50 };
            let mut record = json!({"method": "test", "model": "m", "subset": task.subset,
                "query_id": task.query_id, "finish": if error { "error" } else { "give_answer" },
                "counters": {"llm_calls": 1, "prompt_tokens": tokens, "steps": 1}});
            if error {
                record["error"] = json!("LLM endpoint http://x rejected the API key (HTTP 401)");
            }
            Ok(json!({"answer_generation": {"query": task.query}, "sum2act": record}))
        }
    }

    fn error_job(error_on: fn(u64) -> bool, reached: bool) -> Arc<ErrorJob> {
        Arc::new(ErrorJob {
            error_on,
            reached,
            calls: AtomicUsize::new(0),
        })
    }

    fn options(dir: &std::path::Path, concurrency: usize) -> BatchOptions {
        BatchOptions {
            run_dir: dir.to_path_buf(),
            concurrency,
            repeats: 1,
        }
    }

    #[tokio::test]
    async fn error_episodes_are_not_answers_and_a_plain_rerun_retries_them() {
        let dir = tempfile::tempdir().unwrap();
        let t = tasks(6);
        let first = run_batch(
            &t,
            error_job(|q| q == 3, true),
            &options(dir.path(), 2),
            Arc::new(NoProgress),
            &StopSignal::new(),
        )
        .await
        .unwrap();
        assert_eq!(first.errors, 1);
        assert!(first.setup_error.is_none());
        assert!(!first.complete());
        assert!(!dir.path().join("B/3_test.json").exists());
        assert!(dir.path().join("B/3_test.error").is_file());
        // The error file is not an answer file for the readers of run directories.
        let (answers, unreadable) = crate::batch::summary::scan_run_dir(dir.path()).unwrap();
        assert_eq!((answers.len(), unreadable.len()), (5, 0));
        let again = error_job(|_| false, true);
        let second = run_batch(
            &t,
            again.clone(),
            &options(dir.path(), 2),
            Arc::new(NoProgress),
            &StopSignal::new(),
        )
        .await
        .unwrap();
        assert_eq!((second.ran, second.resumed, second.errors), (1, 5, 0));
        assert_eq!(again.calls.load(Ordering::SeqCst), 1);
        assert!(dir.path().join("B/3_test.json").is_file());
        assert!(!dir.path().join("B/3_test.error").exists());
        assert!(second.complete());
    }

    #[tokio::test]
    async fn the_same_setup_error_on_the_first_episodes_stops_the_batch() {
        let dir = tempfile::tempdir().unwrap();
        let job = error_job(|_| true, false);
        let out = run_batch(
            &tasks(40),
            job.clone(),
            &options(dir.path(), 2),
            Arc::new(NoProgress),
            &StopSignal::new(),
        )
        .await
        .unwrap();
        let e = out.setup_error.clone().unwrap_or_default();
        assert!(e.contains("401"), "{e}");
        assert!(job.calls.load(Ordering::SeqCst) <= FAIL_FAST_AFTER + 2);
        assert!(out.not_started >= 35);
        assert_eq!(
            files(dir.path()),
            out.errors,
            "only .error files were written"
        );
    }

    #[tokio::test]
    async fn errors_after_a_success_or_after_reaching_the_model_do_not_stop_the_batch() {
        type Case = (fn(u64) -> bool, bool);
        let cases: [Case; 2] = [(|q| q > 0, false), (|_| true, true)];
        for (error_on, reached) in cases {
            let dir = tempfile::tempdir().unwrap();
            let out = run_batch(
                &tasks(8),
                error_job(error_on, reached),
                &options(dir.path(), 1),
                Arc::new(NoProgress),
                &StopSignal::new(),
            )
            .await
            .unwrap();
            assert!(out.setup_error.is_none());
            assert_eq!(out.ran, 8);
            assert_eq!(out.errors, if reached { 8 } else { 7 });
        }
    }
}
