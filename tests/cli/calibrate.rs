//! `sum2act calibrate`: the judge's agreement with hand labels over several runs, both modes, on one
//! half of the labels (halves fixed by query id); per-method pass rates beside the labelled rates; the
//! preference judge against paired labels; `--save` into a registry that `eval` then takes its
//! default judge mode and its printed agreement from.

use crate::common;

use std::path::{Path, PathBuf};

use common::judged::{mock_judge, run_dir};
use serde_json::{Value, json};

/// Two runs (react, dfsdt) of queries 101..=112; the mock judge calls an answer with "JPY" solved.
fn runs(root: &Path) -> (PathBuf, PathBuf) {
    let react: Vec<(u64, Option<&str>)> = (101..=112)
        .map(|id| {
            let a = if id % 3 == 0 {
                "I could not convert it."
            } else {
                "250 EUR is 42,230 JPY."
            };
            (id, Some(a))
        })
        .collect();
    let dfsdt: Vec<(u64, Option<&str>)> = (101..=112)
        .map(|id| (id, Some("250 EUR makes 42,230 JPY.")))
        .collect();
    (
        run_dir(root, "react", &react),
        run_dir(root, "dfsdt", &dfsdt),
    )
}

/// Labels for both runs: every react answer as the judge sees it except 101 and 102; every dfsdt answer
/// Solved except 104 (the labeller found the rate was stale).
fn labels(root: &Path) -> PathBuf {
    let mut entries = Vec::new();
    for id in 101..=112u64 {
        let judged_solved = id % 3 != 0;
        let react = if id <= 102 {
            !judged_solved
        } else {
            judged_solved
        };
        for (method, solved) in [("react", react), ("dfsdt", id != 104)] {
            entries.push(
                json!({"subset": "G1_instruction", "query_id": id, "method": method,
                "model": "agent-model", "label": if solved { "Solved" } else { "Unsolved" }}),
            );
        }
    }
    let path = root.join("labels.json");
    std::fs::write(&path, json!({"format": 2, "labels": entries}).to_string()).unwrap();
    path
}

fn calibrate(url: &str, runs: &[&Path], labels: &Path, out: &Path) -> common::Test {
    let mut t = common::Test::new().arg("calibrate");
    for r in runs {
        t = t.arg(r);
    }
    t.arg("--labels").arg(labels).arg("--out").arg(out).args([
        "--base-url",
        url,
        "--judge",
        "mock-judge",
        "--votes",
        "1",
    ])
}

fn measured(report: &Value, mode: &str) -> Value {
    report["measurements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mode"] == mode)
        .unwrap_or_else(|| panic!("no {mode} in {report}"))
        .clone()
}

#[test]
fn both_modes_are_measured_per_method_and_the_halves_partition_the_labels() {
    let (url, _) = mock_judge();
    let tmp = tempfile::tempdir().unwrap();
    let (react, dfsdt) = runs(tmp.path());
    let labels = labels(tmp.path());
    let out = tmp.path().join("cal");
    let text = calibrate(&url, &[&react, &dfsdt], &labels, &out)
        .run()
        .success()
        .no_panic()
        .stdout_has("against")
        .stdout_has("(all labels)")
        .stdout_has("per method");
    let stdout = text.stdout();
    assert!(
        stdout.contains("evidence") && stdout.contains("tooleval"),
        "{stdout}"
    );
    let all: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("calibration.json")).unwrap())
            .unwrap();
    let evidence = measured(&all, "evidence");
    // 24 labels; the judge disagrees on react 101, 102 and dfsdt 104.
    assert_eq!(evidence["calibration"]["n"], 24);
    assert!((evidence["calibration"]["accuracy"].as_f64().unwrap() - 21.0 / 24.0).abs() < 1e-9);
    let methods = evidence["methods"].as_array().unwrap();
    let dfsdt_rate = methods.iter().find(|m| m["method"] == "dfsdt").unwrap();
    assert_eq!(dfsdt_rate["n"], 12);
    assert!((dfsdt_rate["labelled"].as_f64().unwrap() - 1100.0 / 12.0).abs() < 1e-9);
    assert_eq!(dfsdt_rate["judged"], 100.0);
    // The two halves are disjoint and together make every label.
    let mut n = 0;
    for split in ["calibrate", "report"] {
        let o = tmp.path().join(split);
        let t = calibrate(&url, &[&react, &dfsdt], &labels, &o)
            .args(["--split", split, "--json"])
            .run()
            .success();
        let v: Value = serde_json::from_str(&t.stdout()).unwrap();
        assert_eq!(v["split"], split);
        n += measured(&v, "tooleval")["calibration"]["n"]
            .as_u64()
            .unwrap();
    }
    assert_eq!(n, 24);
}

#[test]
fn saved_figures_choose_the_eval_default_mode_and_are_printed_beside_the_pass_rate() {
    let (url, _) = mock_judge();
    let tmp = tempfile::tempdir().unwrap();
    let (react, dfsdt) = runs(tmp.path());
    let labels = labels(tmp.path());
    let registry = tmp.path().join("registry.json");
    for split in ["calibrate", "report"] {
        calibrate(&url, &[&react, &dfsdt], &labels, &tmp.path().join(split))
            .args(["--split", split, "--save"])
            .arg(&registry)
            .run()
            .success()
            .stdout_has("recorded in");
    }
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&registry).unwrap()).unwrap();
    let entries = saved["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 4, "two modes × two halves");
    assert!(entries.iter().all(|e| e["judge_model"] == "mock-judge"
        && e["prompts"].as_object().is_some_and(|p| !p.is_empty())));
    // Without --judge-mode, eval takes the mode of the best calibrate-half agreement and prints the
    // report-half figure beside the pass rate, naming the labels.
    let out = common::Test::new()
        .arg("eval")
        .arg(&react)
        .args(["--base-url", &url, "--judge", "mock-judge", "--votes", "1"])
        .arg("--calibration")
        .arg(&registry)
        .run()
        .success()
        .stdout_has("chosen by the best measured agreement")
        .stdout_has("(report half)");
    assert!(
        out.stdout().contains("labels.json"),
        "the label set is named: {}",
        out.stdout()
    );
    let flagged = common::Test::new()
        .arg("eval")
        .arg(&react)
        .args(["--base-url", &url, "--judge", "mock-judge", "--votes", "1"])
        .args(["--judge-mode", "tooleval"])
        .arg("--calibration")
        .arg(&registry)
        .run()
        .success();
    assert!(
        flagged
            .stdout()
            .starts_with("judge mock-judge: tooleval mode, set by --judge-mode"),
        "{}",
        flagged.stdout()
    );
}

#[test]
fn the_preference_judge_is_measured_against_paired_labels() {
    let (url, _) = mock_judge();
    let tmp = tempfile::tempdir().unwrap();
    let (react, dfsdt) = runs(tmp.path());
    let labels = labels(tmp.path());
    // react 105 and 108 say they could not convert; dfsdt gives the amount: people prefer dfsdt (b),
    // and so does the mock judge, whichever answer the seeded shuffle shows first.
    let side = |m: &str| json!({"method": m, "model": "agent-model"});
    let pairs = json!({"format": 1, "pairs": [
        {"subset": "G1_instruction", "query_id": 105, "a": side("react"), "b": side("dfsdt"), "preferred": "b"},
        {"subset": "G1_instruction", "query_id": 108, "a": side("react"), "b": side("dfsdt"), "preferred": "b"},
        {"subset": "G1_instruction", "query_id": 101, "a": side("react"), "b": side("dfsdt"), "preferred": "tie"},
        {"subset": "G1_instruction", "query_id": 999, "a": side("react"), "b": side("dfsdt"), "preferred": "a"}
    ]});
    let file = tmp.path().join("pairs.json");
    std::fs::write(&file, pairs.to_string()).unwrap();
    let out = calibrate(&url, &[&react, &dfsdt], &labels, &tmp.path().join("p"))
        .arg("--pairs")
        .arg(&file)
        .args(["--judge-mode", "evidence"])
        .run()
        .success()
        .stdout_has("preference judge on 2 paired labels: agreement 100.0%")
        .stdout_has("1 labelled ties, 0 stale and 1 missing pairs left out");
    assert!(
        !out.stdout().contains("tooleval "),
        "--judge-mode limits the modes"
    );
    std::fs::write(&file, "{\"format\": 1, \"pairs\": [{\"subset\": \"G1\"}]}").unwrap();
    calibrate(&url, &[&react], &labels, &tmp.path().join("bad"))
        .arg("--pairs")
        .arg(&file)
        .run()
        .failure(2)
        .no_panic()
        .stderr_has("pairs.json");
    calibrate(&url, &[&react], &labels, &tmp.path().join("bad"))
        .args(["--split", "half"])
        .run()
        .failure(2)
        .stderr_has("--split")
        .stderr_has("calibrate, report, all");
    let other = tmp.path().join("other.json");
    std::fs::write(
        &other,
        json!({"format": 2, "labels": [{"subset": "G3_instruction", "query_id": 1, "label": "Solved"}]})
            .to_string(),
    )
    .unwrap();
    calibrate(&url, &[&react], &other, &tmp.path().join("none"))
        .run()
        .failure(2)
        .stderr_has("no label of");
}

#[test]
fn a_missing_registry_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let run = run_dir(
        tmp.path(),
        "react",
        &[(101, Some("250 EUR is 42,230 JPY."))],
    );
    common::Test::new()
        .arg("eval")
        .arg(&run)
        .args(["--base-url", "http://127.0.0.1:9/v1", "--judge", "m"])
        .arg("--calibration")
        .arg(tmp.path().join("nope.json"))
        .run()
        .failure(2)
        .no_panic()
        .stderr_has("nope.json");
}
