//! One budget for every method, as a user meets it: `run.json` records the budget each method ran
//! under, and `compare`, `report` and `settings` refuse runs that differ in more than the method or
//! the model, naming the settings.

use crate::common;

use std::path::Path;

use common::{Model, Test};
use serde_json::Value;

fn batch(model: &Model, out: &Path, method: &str, extra: &[&str]) {
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .args([
            "--subsets",
            "G1_category",
            "--limit",
            "1",
            "--method",
            method,
        ])
        .args(extra)
        .arg("--out")
        .arg(out)
        .run()
        .success();
}

fn manifest(run: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap()
}

#[test]
fn every_method_records_the_same_budget_by_default() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let mut budgets = Vec::new();
    for method in ["sum2act", "react", "dfsdt", "plan", "graph"] {
        let run = dir.path().join(method);
        batch(&model, &run, method, &[]);
        let m = manifest(&run);
        let b = m["budget"].clone();
        assert_eq!(b["preset"], "equal", "{method}: {b}");
        assert_eq!(b["observation_chars"], 16384, "{method}");
        assert!(
            b["reads"].as_str().unwrap().contains("16384"),
            "{method}: {b}"
        );
        assert!(b["prompts"].as_object().is_some_and(|p| !p.is_empty()));
        // Only the method's own options are listed: DFSDT's width is not a ReAct option.
        assert_eq!(
            m["agent"].get("width").is_some(),
            method == "dfsdt",
            "{method}"
        );
        assert!(m["tools"]["timeout_s"].is_number(), "{}", m["tools"]);
        budgets.push(b);
    }
    let limits = |b: &Value| {
        [
            "observation_chars",
            "max_steps",
            "max_tool_calls",
            "max_llm_calls",
            "assume_missing",
        ]
        .map(|k| b[k].clone())
    };
    assert!(budgets.iter().all(|b| limits(b) == limits(&budgets[0])));
    // The methods compare without a word.
    let runs: Vec<_> = ["sum2act", "react", "dfsdt", "plan", "graph"]
        .iter()
        .map(|m| dir.path().join(m))
        .collect();
    Test::new()
        .arg("settings")
        .args(&runs)
        .run()
        .success()
        .stdout_has("5 runs compare method");
}

#[test]
fn runs_under_different_budgets_are_refused_with_the_settings_named() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let (react, sum2act) = (dir.path().join("react"), dir.path().join("sum2act"));
    batch(&model, &react, "react", &["--budget", "toolbench"]);
    batch(&model, &sum2act, "sum2act", &[]);
    assert_eq!(manifest(&react)["budget"]["preset"], "toolbench");
    assert_eq!(manifest(&react)["budget"]["observation_chars"], 1024);
    for cmd in ["compare", "report", "settings"] {
        let judge: &[&str] = if cmd == "compare" {
            &["--judge", "mock", "--base-url", &model.url]
        } else {
            &[]
        };
        Test::new()
            .arg(cmd)
            .arg(&react)
            .arg(&sum2act)
            .args(judge)
            .run()
            .failure(2)
            .stderr_has("budget.observation_chars: 1024 | 16384")
            .stderr_has("budget.assume_missing: false | true")
            .stderr_has("--allow-differences");
    }
    // Told to go on, the differences are still named.
    Test::new()
        .args(["report"])
        .arg(&react)
        .arg(&sum2act)
        .arg("--allow-differences")
        .args(["--out"])
        .arg(dir.path().join("r.html"))
        .run()
        .success()
        .stderr_has("budget.observation_chars: 1024 | 16384");
}

#[test]
fn one_flag_sets_what_every_method_reads() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("react");
    // StableToolBench's flag name still works and is the budget's observation characters.
    batch(&model, &run, "react", &["--max-observation-length", "2048"]);
    let b = manifest(&run)["budget"].clone();
    assert_eq!(b["observation_chars"], 2048);
    assert_eq!(b["preset"], "equal");
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .args(["--budget", "generous", "--out"])
        .arg(dir.path().join("x"))
        .run()
        .failure(2)
        .stderr_has("--budget");
}
