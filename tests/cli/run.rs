//! `sum2act run` and `sum2act chat` end to end: the real binary, the embedded tool server on loopback,
//! and a deterministic mock model behind the OpenAI-compatible client.

use crate::common;

use common::{Model, Test};
use serde_json::Value;

fn with_mock(test: Test, base_url: &str) -> Test {
    test.env("OPENAI_BASE_URL", base_url)
        .env("SUM2ACT_MODEL", "mock")
}

#[test]
fn run_solves_a_sample_query_and_writes_its_answer_file() {
    let llm = Model::start(0);
    let out = tempfile::tempdir().expect("tempdir");
    let result = with_mock(Test::new(), &llm.url)
        .args([
            "run",
            "--query-id",
            "101",
            "--subset",
            "G1_instruction",
            "--out",
        ])
        .arg(out.path())
        .run()
        .success()
        .stdout_has("── step 1 ──")
        .stdout_has("state:")
        .stdout_has("give_answer");
    let path = out.path().join("G1_instruction/101_sum2act.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), result.stdout()));
    let file: Value = serde_json::from_str(&text).expect("answer file is JSON");
    assert_eq!(file["answer_generation"]["valid_data"], true);
    assert!(
        file["answer_generation"]["final_answer"]
            .as_str()
            .is_some_and(|s| s.contains("give_answer"))
    );
    assert_eq!(file["sum2act"]["finish"], "give_answer");
    // The observation came from the embedded server and says where it came from.
    let source = file["sum2act"]["steps"][0]["observation"]["source"]
        .as_str()
        .unwrap_or("");
    assert!(["cache", "simulated"].contains(&source), "source {source}");
}

#[test]
fn run_takes_a_typed_request_with_retrieved_tools() {
    let llm = Model::start(0);
    let out = tempfile::tempdir().expect("tempdir");
    with_mock(Test::new(), &llm.url)
        .args([
            "run",
            "What is the weather in Lisbon right now?",
            "--method",
            "react",
            "--out",
        ])
        .arg(out.path())
        .run()
        .success()
        .stdout_has("functions:")
        .stdout_has("give_answer");
    assert!(out.path().join("interactive/0_react.json").is_file());
}

#[test]
fn run_rejects_bad_input_with_exit_2() {
    let llm = Model::start(0);
    with_mock(Test::new(), &llm.url)
        .arg("run")
        .run()
        .failure(2)
        .stderr_has("nothing to solve")
        .no_panic();
    with_mock(Test::new(), &llm.url)
        .args(["run", "--query-id", "999999"])
        .run()
        .failure(2)
        .stderr_has("no query with id 999999")
        .no_panic();
    with_mock(Test::new(), &llm.url)
        .args(["run", "--query-id", "101", "--method", "magic"])
        .run()
        .failure(2)
        .stderr_has("--method")
        .no_panic();
    with_mock(Test::new(), &llm.url)
        .args(["run", "hi", "--tools", "retrieved:0"])
        .run()
        .failure(2)
        .stderr_has("tool set")
        .no_panic();
    with_mock(Test::new(), &llm.url)
        .args(["run", "--query-id", "101", "--data", "/nonexistent/data"])
        .run()
        .failure(2)
        .stderr_has("/nonexistent/data")
        .no_panic();
}

#[test]
fn chat_carries_state_and_saves_the_session() {
    let llm = Model::start(0);
    let dir = tempfile::tempdir().expect("tempdir");
    let save = dir.path().join("session.json");
    let input = format!(
        "What is the weather in Lisbon right now?\n/state\n/tools\n/save {}\n/reset\n/state\n/quit\n",
        save.display()
    );
    let out = with_mock(Test::new(), &llm.url)
        .env("XDG_CACHE_HOME", dir.path())
        .arg("chat")
        .stdin(input)
        .run()
        .success()
        .stdout_has("give_answer")
        .stdout_has("state cleared");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&save).expect("saved session"))
            .expect("JSON");
    assert_eq!(
        saved["episodes"].as_array().map(Vec::len),
        Some(1),
        "{}",
        out.stdout()
    );
    assert!(
        saved["state"]["facts"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
    );
}
