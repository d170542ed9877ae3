//! Issue 33 item 7: the exit codes the documentation promises. Bad input is 2 wherever it is met (a
//! broken tool file, a tool server URL that is not one, a limit of 0 in a flag or the config file); a
//! model that does not answer in time is an outage of the run, 1, not bad input.

use crate::common;

use std::time::Duration;

use common::{Model, Test};

/// A copy of the shipped sample with one unreadable tool file.
fn sample_with_broken_tool() -> tempfile::TempDir {
    let dir = common::sample_copy(&["queries", "tools"]);
    std::fs::write(dir.path().join("tools/Weather/broken.json"), "{ not json").unwrap();
    dir
}

#[test]
fn a_broken_tool_file_is_bad_input_for_batch_as_for_data_stats() {
    let data = sample_with_broken_tool();
    let model = Model::start(0);
    let out = tempfile::tempdir().unwrap();
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .arg("--data")
        .arg(data.path())
        .batch_mock()
        .args(["--subsets", "G1_instruction", "--out"])
        .arg(out.path().join("run"))
        .run()
        .failure(2)
        .stderr_has("broken.json")
        .no_panic();
    assert!(!out.path().join("run/G1_instruction").exists());
}

#[test]
fn a_tool_server_url_that_is_not_one_is_bad_input() {
    let model = Model::start(0);
    let out = tempfile::tempdir().unwrap();
    for url in ["not a url", "ftp://127.0.0.1/virtual"] {
        Test::new()
            .env("OPENAI_BASE_URL", &model.url)
            .batch_mock()
            .args(["--subsets", "G1_instruction", "--tool-server", url, "--out"])
            .arg(out.path().join("run"))
            .run()
            .failure(2)
            .stderr_has("invalid tool server URL")
            .no_panic();
    }
}

#[test]
fn limits_of_zero_are_refused_naming_the_flag_or_the_field() {
    let out = tempfile::tempdir().unwrap();
    for flag in [
        "--max-steps",
        "--llm-timeout",
        "--max-tokens",
        "--state-budget",
        "--tool-timeout",
    ] {
        Test::new()
            .batch_mock()
            .args([flag, "0", "--out"])
            .arg(out.path())
            .run()
            .failure(2)
            .stderr_has(flag);
    }
    let config = out.path().join("zero.toml");
    std::fs::write(&config, "[budget]\nmax_steps = 0\n").unwrap();
    Test::new()
        .arg("--config")
        .arg(&config)
        .batch_mock()
        .arg("--out")
        .arg(out.path())
        .run()
        .failure(2)
        .stderr_has("`budget.max_steps` must be at least 1");
}

/// An OpenAI-compatible endpoint that never answers in time.
fn silent_model() -> String {
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(|| async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            ""
        }),
    );
    format!("http://{}/v1", common::http::serve_on_thread(app))
}

#[test]
fn a_model_that_times_out_is_a_run_failure_not_bad_input() {
    let url = silent_model();
    let out = tempfile::tempdir().unwrap();
    let slow = |test: Test| {
        test.env("OPENAI_BASE_URL", &url)
            .args(["--llm-timeout", "1", "--llm-retries", "0", "--out"])
            .arg(out.path().join("run"))
    };
    slow(Test::new().run_query("101", "G1_instruction"))
        .run()
        .failure(1)
        .stderr_has("timed out")
        .no_panic();
    slow(
        Test::new()
            .batch_mock()
            .args(["--subsets", "G1_instruction", "--concurrency", "1"]),
    )
    .run()
    .failure(1)
    .stderr_has("timed out")
    .no_panic();
}
