//! `sum2act batch --repeats N`: N answer files per query (repeat 0 under its ToolBench name, the
//! others as `.rR.json` beside it), resumable per repeat.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{Model, Test};

fn batch(model: &Model, out: &Path, repeats: &str) -> Test {
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .arg("--out")
        .arg(out)
        .args(["--subsets", "G1_instruction", "--limit", "2"])
        .args(["--repeats", repeats])
}

fn files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|f| f.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn repeats_write_one_file_per_repeat_and_resume_per_repeat() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let first = batch(&model, &out, "3")
        .run()
        .success()
        .no_panic()
        .stdout_has("6 new, 0 resumed");
    let names = files(&out.join("G1_instruction"));
    let plain: Vec<_> = names
        .iter()
        .filter(|n| n.ends_with("_sum2act.json"))
        .collect();
    assert_eq!(plain.len(), 2, "{names:?}\n{}", first.stdout());
    for name in &plain {
        let qid = name.trim_end_matches("_sum2act.json");
        assert!(qid.parse::<u64>().is_ok(), "ToolBench name: {name}");
        for r in 1..3 {
            let repeat = format!("{qid}_sum2act.r{r}.json");
            assert!(names.contains(&repeat), "{repeat} missing: {names:?}");
            let v: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(out.join("G1_instruction").join(&repeat)).unwrap(),
            )
            .unwrap();
            assert!(
                v["answer_generation"].is_object(),
                "{repeat}: an answer file"
            );
        }
    }
    assert_eq!(names.len(), 6, "{names:?}");

    // A rerun skips every finished repeat; a missing one is run again, alone.
    batch(&model, &out, "3")
        .run()
        .success()
        .stdout_has("0 new, 6 resumed");
    let qid = plain[0].trim_end_matches("_sum2act.json").to_string();
    std::fs::remove_file(
        out.join("G1_instruction")
            .join(format!("{qid}_sum2act.r2.json")),
    )
    .unwrap();
    batch(&model, &out, "3")
        .run()
        .success()
        .stdout_has("1 new, 5 resumed");
    assert_eq!(files(&out.join("G1_instruction")).len(), 6);

    // The StableToolBench export holds repeat 0 only: one file per query and method.
    let stb = dir.path().join("stb");
    Test::new()
        .arg("export")
        .arg(&out)
        .args(["--format", "stabletoolbench", "--out"])
        .arg(&stb)
        .run()
        .success()
        .stdout_has("exported 2 answer files");
    let exported = files(&stb.join("G1_instruction"));
    assert_eq!(exported.len(), 2, "{exported:?}");
}

#[test]
fn zero_repeats_is_a_clear_error() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    batch(&model, &dir.path().join("run"), "0")
        .run()
        .failure(2)
        .stderr_has("--repeats");
}

#[test]
fn eval_reports_both_variances_with_their_names() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    batch(&model, &out, "2")
        .run()
        .success()
        .stdout_has("4 new, 0 resumed");
    let eval = Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .arg("eval")
        .arg(&out)
        .args([
            "--judge",
            "mock",
            "--judge-mode",
            "tooleval",
            "--votes",
            "2",
        ])
        .run()
        .success()
        .no_panic()
        .stdout_has("std over the 2 judge votes")
        .stdout_has("bootstrap over queries")
        .stdout_has("pass rate over 2 inference repeats")
        .stdout_has("± = std over inference repeats");
    // Repeat 0 alone is what the per-query tables score (two queries, not four).
    let pass: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("eval/pass_rate.json")).unwrap())
            .unwrap();
    assert_eq!(
        pass["queries"].as_array().map(Vec::len),
        Some(2),
        "{}",
        eval.stdout()
    );
}

#[test]
fn compare_pairs_by_query_and_repeat() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    batch(&model, &a, "3").run().success();
    batch(&model, &b, "2").run().success();
    let cmp = Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args([
            "--judge",
            "mock",
            "--judge-mode",
            "tooleval",
            "--votes",
            "1",
        ])
        .args(["--rounds", "1", "--json"])
        .run()
        .success()
        .no_panic();
    let v: serde_json::Value = serde_json::from_str(&cmp.stdout()).unwrap();
    // Repeats both runs hold (0 and 1), each over the same two queries.
    let repeats = v["repeats"].as_array().cloned().unwrap_or_default();
    assert_eq!(repeats.len(), 2, "{v}");
    for g in &repeats {
        assert_eq!(g["queries"], 2, "{g}");
    }
}
