//! Issue 33 item 4: one writer per run directory. A second `batch` on the same `--out` (or a `merge`
//! into it) exits 2 naming the process that holds it; a lock left by a process that died is taken
//! over, and the rerun resumes.

use crate::common;

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use common::{Model, Test};

fn slow_batch(model: &Model, out: &Path) -> Test {
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .args(["--subsets", "G1_instruction", "--concurrency", "1", "--out"])
        .arg(out)
}

/// Starts a batch and waits until it holds its run directory (its manifest is written after the lock
/// is taken).
fn holding(model: &Model, out: &Path) -> Child {
    let child = slow_batch(model, out).spawn();
    let started = Instant::now();
    while !out.join("run.json").is_file() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "batch never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn a_second_batch_on_the_same_run_directory_is_refused() {
    let model = Model::start(300);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut first = holding(&model, &out);
    let refused = slow_batch(&model, &out)
        .run()
        .failure(2)
        .stderr_has("another sum2act process")
        .stderr_has(&format!("pid {}", first.id()))
        .stderr_has("--out")
        .no_panic();
    assert!(!refused.stdout().contains("new"), "{}", refused.stdout());
    // A merge into it is refused too, while the batch runs.
    Test::new()
        .arg("merge")
        .arg(&out)
        .arg(dir.path().join("other"))
        .run()
        .failure(2)
        .stderr_has("another sum2act process");
    assert!(first.wait().unwrap().success());
    // Once the first has finished, the same command runs (and finds everything done).
    slow_batch(&model, &out)
        .run()
        .success()
        .stdout_has("0 new, 6 resumed");
}

#[test]
fn the_lock_of_a_killed_batch_is_taken_over_and_the_rerun_resumes() {
    let model = Model::start(300);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut first = holding(&model, &out);
    first.kill().unwrap();
    first.wait().unwrap();
    slow_batch(&model, &out)
        .run()
        .success()
        .stdout_has("6 answer files");
}
