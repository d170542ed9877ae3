//! `sum2act eval --judge-mode evidence` (the default) end to end: rules, the claim check, the split into
//! parts and one question per part, against a mock judge endpoint; unusable judges fail loudly; a judge
//! that goes down keeps the votes already made and a rerun resumes.

use crate::common;

use std::path::Path;
use std::sync::atomic::Ordering;

use common::judged::mock_judge;
use serde_json::{Value, json};

fn run_dir(root: &Path, answers: &[(u64, Option<&str>)]) -> std::path::PathBuf {
    common::judged::run_dir(root, "react", answers)
}

/// `eval` of `run` with the mock judge in `mode` (named: the default mode depends on the registry).
fn eval_in(run: &Path, url: &str, mode: &str) -> common::Test {
    common::Test::new().arg("eval").arg(run).args([
        "--base-url",
        url,
        "--judge",
        "mock-judge",
        "--llm-retries",
        "0",
        "--judge-mode",
        mode,
    ])
}

fn eval(run: &Path, url: &str) -> common::Test {
    eval_in(run, url, "evidence")
}

fn query(report: &Value, id: u64) -> &Value {
    report["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["query_id"] == id)
        .unwrap()
}

#[test]
fn evidence_judge_checks_claims_parts_and_rules() {
    let (url, judge) = mock_judge();
    let tmp = tempfile::tempdir().unwrap();
    let run = run_dir(
        tmp.path(),
        &[
            (101, Some("250 EUR is 42,230 JPY as of June 14, 2024.")),
            (102, Some("250 EUR is 39,999 JPY.")),
            (103, None),
            (104, Some("I will convert 250 EUR to JPY (104).")),
        ],
    );
    let out = eval(&run, &url).run().success();
    let stdout = out.stdout();
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some("judge mock-judge: evidence mode, set by --judge-mode")
    );
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("the judge's pass rate is not the headline")),
        "{stdout}"
    );
    assert!(stdout.contains("pass rate by mock-judge (evidence judge) — agreement not measured"));
    assert!(stdout.contains("25.0 ± 0.0"), "{stdout}");
    // Two answers reach the judge: one split each, then one part question per vote.
    assert_eq!(judge.calls.load(Ordering::SeqCst), 2 + 2 * 3);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("eval/pass_rate.json")).unwrap())
            .unwrap();
    assert_eq!(report["judge"]["mode"], "evidence");
    assert!(report["judge"]["prompts"]["judge_part"].is_string());
    let good = query(&report, 101);
    assert_eq!(good["labels"], json!(["Solved", "Solved", "Solved"]));
    let claims = good["evidence"]["claims"].as_array().unwrap();
    let value = claims
        .iter()
        .find(|c| c["claim"]["text"] == "42,230 JPY")
        .unwrap();
    assert_eq!(value["support"]["kind"], "observation");
    assert!(
        value["support"]["excerpt"]
            .as_str()
            .unwrap()
            .contains("42230.0")
    );
    assert_eq!(good["parts"][0]["part"], "convert 250 EUR to JPY");
    let invented = query(&report, 102);
    assert_eq!(invented["labels"][0], "Unsolved");
    assert!(
        invented["reasons"][0]
            .as_str()
            .unwrap()
            .contains("39,999 JPY")
    );
    assert_eq!(query(&report, 103)["rule"], "limit");
    assert_eq!(query(&report, 104)["rule"], "restates_request");
    let overall = &report["pass_rate"]["overall"];
    assert_eq!(overall["answers_with_invented_values"], 1);
    assert_eq!(overall["evidence_backed"], 25.0);
    assert!(overall["ci"]["low"].as_f64().unwrap() <= 25.0);
    let log = std::fs::read_to_string(run.join("eval/judge_log.jsonl")).unwrap();
    assert!(log.contains("\"mode\":\"evidence\"") && log.contains("\"kind\":\"split\""));
}

#[test]
fn unusable_votes_fail_loudly_with_the_raw_reply() {
    let (url, judge) = mock_judge();
    judge.unusable.store(true, Ordering::SeqCst);
    let tmp = tempfile::tempdir().unwrap();
    let run = run_dir(tmp.path(), &[(101, Some("250 EUR is 42,230 JPY."))]);
    for mode in ["evidence", "tooleval"] {
        let out = eval_in(&run, &url, mode)
            .run()
            .failure(1)
            .no_panic()
            .stderr_has("3 of 3 judge votes (100.0%) got no usable verdict")
            .stderr_has("I think it is fine");
        assert!(out.stdout().contains("3/3"), "{}", out.stdout());
    }
}

#[test]
fn an_invalid_evaluation_is_marked_invalid_and_not_charted_as_zero() {
    let (url, judge) = mock_judge();
    judge.unusable.store(true, Ordering::SeqCst);
    let tmp = tempfile::tempdir().unwrap();
    let run = run_dir(
        tmp.path(),
        &[
            (101, Some("250 EUR is 42,230 JPY.")),
            (102, Some("250 EUR makes 42,230 JPY.")),
        ],
    );
    eval(&run, &url).run().failure(1);
    let csv = std::fs::read_to_string(run.join("eval/pass_rate.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let valid = header
        .iter()
        .position(|h| *h == "valid")
        .expect("a valid column");
    let unusable = header.iter().position(|h| *h == "unusable_votes").unwrap();
    for row in lines {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells[valid], "no", "{csv}");
        assert_eq!(cells[unusable], "6/6", "{csv}");
    }
    let page = tmp.path().join("report.html");
    let report = || {
        common::Test::new()
            .arg("report")
            .arg(&run)
            .arg("--out")
            .arg(&page)
            .run()
            .success()
    };
    let out = report()
        .stderr_has("its evaluation is not valid")
        .stderr_has("6 of 6 judge votes");
    assert!(
        out.stdout().contains("0 with judge results"),
        "{}",
        out.stdout()
    );
    let data = common::report_data(&std::fs::read_to_string(&page).unwrap());
    let shown = &data["runs"][0];
    assert_eq!(shown["judged"], false, "charted as judged");
    assert!(shown["judge_invalid"].as_str().unwrap().contains("6 of 6"));
    // Valid again once the judge answers: the same report charts the judge's pass rate.
    judge.unusable.store(false, Ordering::SeqCst);
    std::fs::remove_file(run.join("eval/judge_log.jsonl")).unwrap();
    eval(&run, &url).run().success();
    let csv = std::fs::read_to_string(run.join("eval/pass_rate.csv")).unwrap();
    assert!(csv.lines().skip(1).all(|l| l.ends_with(",yes")), "{csv}");
    report().stdout_has("1 with judge results");
}

#[test]
fn a_judge_that_goes_down_keeps_its_votes_and_a_rerun_resumes() {
    let (url, judge) = mock_judge();
    let tmp = tempfile::tempdir().unwrap();
    let run = run_dir(
        tmp.path(),
        &[
            (101, Some("250 EUR is 42,230 JPY.")),
            (102, Some("250 EUR makes 42,230 JPY.")),
        ],
    );
    *judge.down_for.lock().unwrap() = Some("makes".into());
    eval(&run, &url)
        .args(["--judge-concurrency", "1"])
        .run()
        .failure(1)
        .no_panic();
    let first = judge.calls.load(Ordering::SeqCst);
    assert_eq!(first, 2 + 3, "both splits and the three votes of 101");
    *judge.down_for.lock().unwrap() = None;
    eval(&run, &url)
        .run()
        .success()
        .stdout_has("answered from the log");
    assert_eq!(
        judge.calls.load(Ordering::SeqCst),
        first + 3,
        "only 102's votes are asked again"
    );
}
