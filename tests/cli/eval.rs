//! `sum2act eval` and `sum2act compare` end to end: run directories written with the library's
//! answer-file builder, a judge served by a mock OpenAI-compatible endpoint on loopback (the real HTTP
//! client path), reports on disk, caching, converted files, calibration and bad input.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use common::judged::{Behaviour, mock_judge_replying, run_dir};
use serde_json::{Value, json};

/// A judge endpoint: status Solved when the answer mentions a number with "JPY"/"USD", Unsolved
/// otherwise; preference for the answer that contains "BEST". Counts its calls.
fn mock_judge() -> (String, Arc<Behaviour>) {
    mock_judge_replying(|prompt| {
        if let (Some(a), Some(b)) = (prompt.find("Answer A:"), prompt.find("Answer B:")) {
            let best = prompt.find("BEST");
            let pick = if best.is_some_and(|i| i > b && i > a) {
                "B"
            } else {
                "A"
            };
            return json!({"reason": "more complete", "better": pick});
        }
        let answer = prompt.split("Final answer:").nth(1).unwrap_or("");
        let solved = answer.contains("JPY") || answer.contains("USD");
        let label = if solved { "Solved" } else { "Unsolved" };
        json!({"reason": "checked the facts", "answer_status": label})
    })
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn eval_scores_a_run_and_reruns_from_the_cache() {
    let (url, judge) = mock_judge();
    let tmp = tempfile::tempdir().unwrap();
    let run = run_dir(
        tmp.path(),
        "react",
        &[
            (101, Some("250 EUR is 42,230 JPY.")),
            (102, Some("I could not convert it.")),
            (103, None),
        ],
    );
    let eval = || {
        common::Test::new()
            .arg("eval")
            .arg(&run)
            .tooleval_judge(&url)
            .args(["--votes", "3"])
            .run()
            .success()
    };
    let out = eval()
        .stdout_has(
            "pass rate by mock-judge (tooleval judge) — agreement not measured, 3 votes per query",
        )
        .stdout_has("the judge's pass rate is not the headline")
        .stdout_has("missing answers count as failures")
        .stderr_has(&format!(
            "judging 2 answers of {} with mock-judge…",
            run.display()
        ));
    assert!(out.stdout().contains("33.3 ± 0.0"), "{}", out.stdout());
    assert_eq!(
        judge.calls.load(Ordering::SeqCst),
        6,
        "two answers × three votes; query 103 is decided by rule"
    );
    let report = read(&run.join("eval/pass_rate.json"));
    assert_eq!(report["pass_rate"]["overall"]["by_rule"], 1);
    assert_eq!(report["judge"]["model"], "mock-judge");
    let q103 = report["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["query_id"] == 103)
        .unwrap()
        .clone();
    assert_eq!(q103["source"], "rule");
    assert_eq!(report["metrics"][0]["avg_llm_calls"], 2.0);
    let log = std::fs::read_to_string(run.join("eval/judge_log.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 6);
    assert!(
        log.contains("\"prompt_hash\"")
            && log.contains("checked the facts")
            && log.contains("mock-judge")
    );
    let converted = read(&run.join("eval/converted/G1_instruction.json"));
    assert_eq!(converted["101"]["answer"]["method"], "react");
    for f in ["pass_rate.csv", "verdicts.csv", "metrics.csv"] {
        assert!(run.join("eval").join(f).is_file(), "{f}");
    }

    // Re-running is free and identical.
    eval()
        .stdout_has("6 answered from the log this time")
        .no_panic();
    let again = read(&run.join("eval/pass_rate.json"));
    assert_eq!(judge.calls.load(Ordering::SeqCst), 6);
    assert_eq!(report, again);
}

#[test]
fn compare_reports_win_rate_with_intervals() {
    let (url, judge) = mock_judge();
    let tmp = tempfile::tempdir().unwrap();
    let a = run_dir(
        tmp.path(),
        "react",
        &[
            (101, Some("250 EUR is 42,230 JPY.")),
            (102, Some("It is some yen.")),
            (103, None),
            (104, Some("same")),
        ],
    );
    let b = run_dir(
        tmp.path(),
        "sum2act",
        &[
            (101, Some("I could not do it.")),
            (102, Some("BEST: about forty thousand yen")),
            (103, Some("250 EUR = 42,230 JPY")),
            (104, Some("same")),
        ],
    );
    let out = common::Test::new()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .tooleval_judge(&url)
        .args(["--rounds", "3", "--resamples", "2000"])
        .run()
        .success()
        .stdout_has("sum2act (candidate) vs react (reference)")
        .stdout_has("ties count 0")
        .stdout_has("judge mock-judge (tooleval judge): agreement with human labels NOT MEASURED")
        .stdout_has(
            "judge mock-judge (preference judge): agreement with human labels NOT MEASURED",
        );
    let dir = b.join("eval/compare_react");
    let c = read(&dir.join("compare.json"));
    let overall = &c["overall"];
    // 101: reference Solved, candidate not → loss. 102: neither solved → judge prefers BEST → win.
    // 103: reference gave up, candidate solved → win. 104: identical → tie.
    assert_eq!(
        (
            overall["wins"].as_u64(),
            overall["losses"].as_u64(),
            overall["ties"].as_u64()
        ),
        (Some(2), Some(1), Some(1)),
        "{}",
        out.stdout()
    );
    assert_eq!(overall["win_rate"]["estimate"], 50.0);
    assert!(
        overall["win_rate"]["low"].as_f64().unwrap() <= 50.0
            && overall["win_rate"]["high"].as_f64().unwrap() >= 50.0
    );
    assert!(overall["win_p_value"].as_f64().unwrap() > 0.5);
    let prefs = std::fs::read_to_string(dir.join("preferences.csv")).unwrap();
    assert!(
        prefs.contains("G1_instruction,102,win,0,3,judge judge judge"),
        "{prefs}"
    );
    assert!(dir.join("compare.csv").is_file());
    let before = judge.calls.load(Ordering::SeqCst);
    common::Test::new()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .tooleval_judge(&url)
        .args(["--resamples", "2000"])
        .run()
        .success();
    assert_eq!(
        judge.calls.load(Ordering::SeqCst),
        before,
        "the second comparison is answered from the judge log"
    );
    assert_eq!(read(&dir.join("compare.json")), c);
}

#[test]
fn compare_says_what_it_is_judging() {
    let (url, _) = mock_judge();
    let tmp = tempfile::tempdir().unwrap();
    let a = run_dir(
        tmp.path(),
        "react",
        &[
            (101, Some("250 EUR is 42,230 JPY.")),
            (102, Some("some yen")),
        ],
    );
    let b = run_dir(
        tmp.path(),
        "sum2act",
        &[(101, Some("no idea")), (102, Some("BEST: many yen"))],
    );
    let out = common::Test::new()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .tooleval_judge(&url)
        .args(["--rounds", "3", "--resamples", "100"])
        .run()
        .success()
        .stdout_has("sum2act (candidate) vs react (reference)");
    // stderr is not a terminal here: no bar, one line per judging pass, in the order they run.
    let err = out.stderr();
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("judging")).collect();
    let (a, b) = (a.display(), b.display());
    assert_eq!(
        lines,
        [
            format!("judging 2 answers of {a} with mock-judge…"),
            format!("judging 2 answers of {b} with mock-judge…"),
            format!("judging 3 preference rounds of {b} against {a} with mock-judge…"),
        ],
        "{err}"
    );
    assert!(!err.contains('\r'), "no bar drawn off a terminal: {err:?}");
}

#[test]
fn converted_files_ids_and_labels() {
    let (url, _) = mock_judge();
    let tmp = tempfile::tempdir().unwrap();
    let run = run_dir(
        tmp.path(),
        "react",
        &[
            (101, Some("250 EUR is 42,230 JPY.")),
            (102, Some("no idea")),
        ],
    );
    common::Test::new()
        .arg("eval")
        .arg(&run)
        .arg("--no-judge")
        .run()
        .success()
        .stdout_has("judge-free metrics");
    let converted = tmp.path().join("G1_instruction.json");
    std::fs::copy(run.join("eval/converted/G1_instruction.json"), &converted).unwrap();
    let ids = tmp.path().join("ids.json");
    std::fs::write(&ids, r#"{"101": 0, "102": 0, "105": 0}"#).unwrap();
    let labels = tmp.path().join("labels.json");
    std::fs::write(
        &labels,
        r#"{"101": "Solved", "102": "Solved", "105": "Unsolved"}"#,
    )
    .unwrap();
    let out = common::Test::new()
        .arg("eval")
        .arg("--converted")
        .arg(&converted)
        .arg("--ids")
        .arg(&ids)
        .arg("--labels")
        .arg(&labels)
        .tooleval_judge(&url)
        .args(["--json"])
        .run()
        .success();
    let v: Value = serde_json::from_str(&out.stdout()).unwrap();
    let overall = &v["pass_rate"]["overall"];
    assert_eq!(
        (overall["queries"].as_u64(), overall["missing"].as_u64()),
        (Some(3), Some(1))
    );
    assert!((overall["pass_rate"].as_f64().unwrap() - 100.0 / 3.0).abs() < 1e-6);
    assert_eq!(overall["pass_rate_without_missing"], 50.0);
    let cal = &v["judge"]["agreement"];
    assert_eq!(cal["n"], 3);
    assert_eq!(cal["confusion"], json!([[1, 1, 0], [0, 1, 0]]));
    assert!((cal["accuracy"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
    // The next run shows the measured agreement next to the pass rate.
    common::Test::new()
        .arg("eval")
        .arg("--converted")
        .arg(&converted)
        .tooleval_judge(&url)
        .run()
        .success()
        .stdout_has("agreement 66.7%, kappa");
}

#[test]
fn bad_input_exits_2_without_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-run");
    common::Test::new()
        .arg("eval")
        .arg(&missing)
        .arg("--no-judge")
        .run()
        .failure(2)
        .no_panic()
        .stderr_has("no-run");
    let run = run_dir(tmp.path(), "react", &[(101, Some("x"))]);
    let labels = tmp.path().join("labels.json");
    std::fs::write(&labels, r#"{"101": "Maybe"}"#).unwrap();
    common::Test::new()
        .arg("eval")
        .arg(&run)
        .arg("--labels")
        .arg(&labels)
        .args(["--base-url", "http://127.0.0.1:9/v1", "--judge", "m"])
        .run()
        .no_panic()
        .failure(2)
        .stderr_has("labels.json");
    let broken = tmp.path().join("broken.json");
    std::fs::write(&broken, "{\"1\": {\"answer\": 5}}").unwrap();
    common::Test::new()
        .arg("eval")
        .arg("--converted")
        .arg(&broken)
        .arg("--no-judge")
        .run()
        .failure(2)
        .no_panic()
        .stderr_has("broken.json");
}

/// Issue 33 item 14: the tool metrics take each query's relevant APIs from the data the run was made
/// from (its run.json), not silently from the default data set; queries whose relevant APIs are not
/// found are named.
#[test]
fn tool_metrics_use_the_runs_own_data_and_say_what_they_miss() {
    let data = common::sample_copy(&["queries", "tools"]);
    // A subset only this data set has.
    std::fs::rename(
        data.path().join("queries/G1_instruction.json"),
        data.path().join("queries/G9_own.json"),
    )
    .unwrap();
    let model = common::Model::start(0);
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    common::Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .arg("--data")
        .arg(data.path())
        .batch_mock()
        .args(["--subsets", "G9_own", "--limit", "3", "--out"])
        .arg(&run)
        .run()
        .success();
    common::Test::new()
        .args(["eval", "--no-judge"])
        .arg(&run)
        .run()
        .success()
        .stdout_has("3/3");
    // The run's data is gone: the metrics that need relevant APIs say which queries they lack.
    drop(data);
    let out = common::Test::new()
        .args(["eval", "--no-judge"])
        .arg(&run)
        .run()
        .success()
        .stdout_has("0/3");
    assert!(
        out.stdout()
            .contains("G9_own: 3 of 3 queries have no relevant APIs in"),
        "{}",
        out.stdout()
    );
}
