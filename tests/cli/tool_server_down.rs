//! Issue 33 item 1: a batch whose tool server cannot be reached is an environment failure, not a
//! run of answers: it exits non-zero naming `--tool-server`, keeps what it ran, and a rerun with the
//! server up runs those queries again. An API's own error answers stay results.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{Model, Test, run_files};

fn batch(model: &Model, out: &Path) -> Test {
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .args(["--subsets", "G1_instruction", "--concurrency", "1", "--out"])
        .arg(out)
}

#[test]
fn a_tool_server_that_never_answers_stops_the_batch_with_exit_2_naming_the_flag() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let done = batch(&model, &out)
        .args(["--tool-server", "http://127.0.0.1:1/virtual"])
        .run()
        .failure(2)
        .stderr_has("--tool-server")
        .stderr_has("http://127.0.0.1:1/virtual")
        .no_panic();
    assert!(!done.stdout().contains("errors 0"), "{}", done.stdout());
    // The server is checked before any query: no model call was spent, no answer written.
    assert!(run_files(&out, "G1_instruction").is_empty());
    assert!(
        done.stderr().contains("Connection refused"),
        "{}",
        done.stderr()
    );

    // With the embedded server, the same command resumes and answers every query.
    batch(&model, &out)
        .run()
        .success()
        .stdout_has("6 new, 0 resumed");
    let written = run_files(&out, "G1_instruction");
    assert!(
        !written.iter().any(|f| f.ends_with(".error")),
        "{written:?}"
    );
}

#[test]
fn a_tool_server_that_goes_away_mid_run_is_an_outage_exit_1() {
    let served = Test::new()
        .args(["serve", "--port", "0", "--fault-latency-ms", "300"])
        .serve();
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let run = {
        let out = out.clone();
        let url = served.url.clone();
        let model_url = model.url.clone();
        std::thread::spawn(move || {
            Test::new()
                .env("OPENAI_BASE_URL", &model_url)
                .batch_mock()
                .args(["--subsets", "G1_instruction", "--concurrency", "1"])
                .args(["--tool-server", &url, "--out"])
                .arg(&out)
                .run()
        })
    };
    let started = Instant::now();
    while !run_files(&out, "G1_instruction")
        .iter()
        .any(|f| f.ends_with(".json"))
    {
        assert!(started.elapsed() < Duration::from_secs(60), "no answer");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(served);
    run.join()
        .unwrap()
        .failure(1)
        .stderr_has("--tool-server")
        .stderr_has("could not be reached")
        .no_panic();
    let written = run_files(&out, "G1_instruction");
    assert!(written.iter().any(|f| f.ends_with(".json")), "{written:?}");
    assert!(written.iter().any(|f| f.ends_with(".error")), "{written:?}");
}

#[test]
fn an_apis_own_error_answers_are_results_not_an_outage() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    batch(&model, &out)
        .args(["--fault-rate", "1", "--fault-mix", "not-working"])
        .run()
        .success()
        .stdout_has("6 new");
    let written = run_files(&out, "G1_instruction");
    assert!(
        !written.iter().any(|f| f.ends_with(".error")),
        "{written:?}"
    );
}
