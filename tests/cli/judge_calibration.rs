//! The judge's agreement with the hand labels of the shipped reference run, guarded with recorded judge
//! replies (`--replay`): a change to the rules, the claim check, the split or the prompts that moves a
//! verdict shows up here, without a model. Labels: eval/labels/sample_G1_instruction_sum2act_0.5b.json.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

const RUN: &str = "eval/reference/sample-G1_instruction-sum2act-qwen0.5b";
const LABELS: &str = "eval/labels/sample_G1_instruction_sum2act_0.5b.json";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `eval --json` of the reference run in `mode`, from recordings only, with a fresh copy of `log`.
fn eval(mode: &str, tmp: &Path, log: Option<&Path>) -> Value {
    let out = tmp.join(mode);
    std::fs::create_dir_all(&out).unwrap();
    let judge_log = out.join("judge_log.jsonl");
    if let Some(log) = log {
        std::fs::copy(log, &judge_log).unwrap();
    }
    let outcome = common::Test::new()
        .arg("eval")
        .arg(root().join(RUN))
        .arg("--out")
        .arg(&out)
        .arg("--judge-log")
        .arg(&judge_log)
        .arg("--replay")
        .arg(root().join(RUN).join("eval/judge_recordings"))
        .args(["--judge-mode", mode, "--votes", "1", "--json", "--labels"])
        .arg(root().join(LABELS))
        .run()
        .success()
        .no_panic();
    serde_json::from_str(&outcome.stdout()).unwrap()
}

fn solved_queries(report: &Value) -> f64 {
    report["pass_rate"]["overall"]["pass_rate"]
        .as_f64()
        .unwrap()
        * 6.0
        / 100.0
}

#[test]
fn evidence_judge_agreement_on_the_shipped_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let report = eval("evidence", tmp.path(), None);
    let agreement = &report["judge"]["agreement"];
    assert_eq!(agreement["n"], 6);
    // Re-recorded with the embedded 0.5B judge after issue 34 (the rubric prompt, whole observations),
    // and after issue 41 (one vote; the called APIs shown) with the same confusion:
    // it answers no to every part question, so it agrees only on the three Unsolved labels (50%,
    // kappa 0). Before, it answered yes to all of them (66.7%, kappa 0.33, with 105 Unsolved by the
    // part_backed rule). Docs: docs/evaluation.md §8.
    assert_eq!(
        agreement["confusion"],
        serde_json::json!([[0, 3, 0], [0, 3, 0]]),
        "{agreement}"
    );
    // The hand labels say 3 of 6; the 0.5B judge says none.
    assert!(solved_queries(&report).abs() < 1e-9);
    let q105 = report["queries"].as_array().map(|q| q.len());
    assert_eq!(
        q105, None,
        "--json prints the summary, not the per-query verdicts"
    );
}

#[test]
fn tooleval_judge_agreement_on_the_shipped_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let log = root().join(RUN).join("eval/judge_log.jsonl");
    let report = eval("tooleval", tmp.path(), Some(&log));
    let agreement = &report["judge"]["agreement"];
    // The holistic 0.5B judge, one vote, re-recorded after issue 41 (whole replies, the closed rubric;
    // again with the called APIs shown and a short or "cut off" list Unsure at first look: unchanged):
    // 2 of 6 Solved, one of them against an Unsolved label, one Solved label called Solved (agreement
    // 50%, kappa 0). After issue 34, with three votes: 5 of 6 Solved (33.3%, kappa -0.33).
    assert_eq!(
        agreement["confusion"],
        serde_json::json!([[1, 2, 0], [1, 2, 0]])
    );
    assert!(agreement["kappa"].as_f64().unwrap().abs() < 1e-9);
    assert!((solved_queries(&report) - 2.0).abs() < 1e-9);
}
