//! The runner driven by test jobs: resume, stop levels, job errors, `error` episodes and the
//! setup-error stop.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use async_trait::async_trait;

use super::fail_fast::FAIL_FAST_AFTER;
use super::job::{Job, JobError, Solved};
use super::runner::*;
use super::stop::StopSignal;
use super::summary::EpisodeView;
use crate::agent::{AgentError, Method};
use crate::batch::NoProgress;
use crate::llm::LlmError;
use crate::toolbench::Task;
use serde_json::{Value, json};
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
    fn method(&self) -> Method {
        Method::React
    }

    async fn run(&self, task: &Task, _repeat: u32) -> Result<Solved, JobError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.delay).await;
        if Some(task.query_id) == self.fail_on {
            return Err(JobError::Agent(AgentError::Llm(LlmError::Config(
                "model is gone".into(),
            ))));
        }
        Ok(solved(json!({"answer_generation": {"query": task.query},
            "sum2act": {"method": "react", "model": "m", "subset": task.subset, "query_id": task.query_id,
            "finish": if task.query_id.is_multiple_of(2) { "give_answer" } else { "give_up" },
            "counters": {"llm_calls": 2, "steps": 1}}})))
    }
}

/// A job's answer file with the view of its record, as `Solved::from_episode` builds it.
fn solved(file: Value) -> Solved {
    let view = EpisodeView::from_answer(&file).expect("a test answer file has its record");
    Solved { file, view }
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
    assert!(dir.path().join("A/4_react.json").is_file());
    // A half-written file from a killed run is not a finished query.
    std::fs::write(dir.path().join("B/5_react.json"), "{\"sum2act\": {").unwrap();
    std::fs::write(dir.path().join("B/.5_react.json.999.tmp"), "x").unwrap();
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
    assert_eq!(
        out.fatal.as_deref(),
        Some("LLM configuration: model is gone")
    );
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
    fn method(&self) -> Method {
        Method::React
    }

    async fn run(&self, task: &Task, _repeat: u32) -> Result<Solved, JobError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(2)).await;
        let error = (self.error_on)(task.query_id);
        let tokens = if error && !self.reached { 0 } else { 50 };
        let mut record = json!({"method": "react", "model": "m", "subset": task.subset,
            "query_id": task.query_id, "finish": if error { "error" } else { "give_answer" },
            "counters": {"llm_calls": 1, "prompt_tokens": tokens, "steps": 1}});
        if error {
            record["error"] = json!("LLM endpoint http://x rejected the API key (HTTP 401)");
        }
        Ok(solved(
            json!({"answer_generation": {"query": task.query}, "sum2act": record}),
        ))
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
    assert!(!dir.path().join("B/3_react.json").exists());
    assert!(dir.path().join("B/3_react.error").is_file());
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
    assert!(dir.path().join("B/3_react.json").is_file());
    assert!(!dir.path().join("B/3_react.error").exists());
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
