//! `export` writes what StableToolBench's converter reads, for all three methods.

use super::*;
use crate::common;
use std::path::{Path, PathBuf};

#[test]
fn export_writes_what_its_converter_reads_for_all_three_methods() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = [
        (cot_run(tmp.path(), "sum2act"), "CoT@1"),
        (cot_run(tmp.path(), "react"), "CoT@1"),
        (dfs_run(tmp.path()), "DFS_woFilter_w2"),
    ];
    for (run, method) in &runs {
        let out = tmp.path().join("export").join(run.file_name().unwrap());
        common::Test::new()
            .args(["export", "--format", "stabletoolbench", "--out"])
            .arg(&out)
            .arg(run)
            .run()
            .success()
            .stdout_has("exported 3 answer files")
            .stdout_has(&format!("--method {method}"));
        let dir = out.join(SUBSET);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        names.sort();
        assert_eq!(names, [1, 2, 3].map(|i| format!("{i}_{method}.json")));
        for (i, name) in names.iter().enumerate() {
            // Its converter: files containing --method, query id = the part before the first `_`.
            assert!(
                name.contains(method) && name.split('_').next().unwrap().parse::<u64>().is_ok()
            );
            let file = read(&dir.join(name));
            its_converter_accepts(&file, method).unwrap_or_else(|e| panic!("{name}: {e}"));
            // The model's argument order is what the answer file records (query 3 made no call).
            assert!(
                i == 2
                    || serde_json::to_string(&file)
                        .unwrap()
                        .contains(&serde_json::to_string(MODEL_ARGS).unwrap())
            );
        }
        // Our own evaluator reads the export too, with the same verdicts by rule.
        let metrics = common::Test::new()
            .arg("eval")
            .arg(&out)
            .arg("--no-judge")
            .arg("--json")
            .run()
            .success();
        let v: Value = serde_json::from_str(&metrics.stdout()).unwrap();
        let m = &v["metrics"][0];
        assert_eq!(m["answered"], 3, "{}", metrics.stdout());
        assert!(
            (m["finish_rate"].as_f64().unwrap() - 100.0 / 3.0).abs() < 1e-6,
            "{m}"
        );
    }
    // The give-up of the DFS run is valid data: it now carries the messages of its path.
    let give_up = read(
        &tmp.path()
            .join("export/dfsdt")
            .join(SUBSET)
            .join("2_DFS_woFilter_w2.json"),
    );
    let msgs = &give_up["answer_generation"]["train_messages"][0];
    assert_eq!(
        msgs[2]["tool_calls"][0]["function"]["arguments"],
        MODEL_ARGS
    );
    assert_eq!(msgs[4]["tool_calls"][0]["function"]["arguments"], GIVE_UP);
    // A run without a manifest, or an output onto itself, is bad input.
    let (run, _) = &runs[0];
    common::Test::new()
        .args(["export", "--out"])
        .arg(run)
        .arg(run)
        .run()
        .failure(2)
        .no_panic();
    common::Test::new()
        .args(["export", "--out"])
        .arg(tmp.path().join("x"))
        .arg(tmp.path())
        .run()
        .failure(2)
        .stderr_has("run.json");
}

/// A batch of `method` over the sample's G1_instruction with the scripted model; its run directory.
fn batch_run(root: &Path, method: &str, model: &str) -> PathBuf {
    let run = root.join(format!("{method}-run"));
    common::Test::new()
        .env("OPENAI_BASE_URL", model)
        .batch_mock()
        .args([
            "--subsets",
            SUBSET,
            "--limit",
            "3",
            "--method",
            method,
            "--out",
        ])
        .arg(&run)
        .run();
    run
}

#[test]
fn plan_and_graph_runs_export_as_chains_its_converter_reads() {
    let model = common::Model::start(0);
    let tmp = tempfile::tempdir().unwrap();
    for method in ["plan", "graph"] {
        let run = batch_run(tmp.path(), method, &model.url);
        let out = tmp.path().join(format!("{method}-stb"));
        common::Test::new()
            .args(["export", "--out"])
            .arg(&out)
            .arg(&run)
            .run()
            .success()
            .stdout_has("exported 3 answer files")
            .stdout_has("--method CoT@1");
        for id in [101, 102, 103] {
            let file = read(&out.join(SUBSET).join(format!("{id}_CoT@1.json")));
            its_converter_accepts(&file, "CoT@1").unwrap_or_else(|e| panic!("{method} {id}: {e}"));
        }
    }
}

#[test]
fn an_export_without_answer_files_fails_saying_why() {
    // Every episode ends in error after the model's first reply: `.error` records only.
    let model = crate::hardening::endpoint(|req| {
        if common::mock_openai::later_turn(req) {
            return (400, json!({"error": {"message": "model overloaded"}}));
        }
        (200, common::mock_openai::reply(req))
    });
    let tmp = tempfile::tempdir().unwrap();
    let run = batch_run(tmp.path(), "sum2act", &model.url);
    let out = common::Test::new()
        .args(["export", "--out"])
        .arg(tmp.path().join("stb"))
        .arg(&run)
        .run()
        .failure(1)
        .stderr_has("no answer files to export")
        .stderr_has("3 error records")
        .no_panic();
    assert!(!out.stdout().contains("method ``"), "{}", out.stdout());
}

#[test]
fn the_printed_commands_name_paths_its_scripts_use_as_is() {
    let tmp = tempfile::tempdir().unwrap();
    let run = cot_run(tmp.path(), "react");
    let out = tmp.path().join("stb");
    let shown = common::Test::new()
        .args(["export", "--out"])
        .arg(&out)
        .arg(&run)
        .run()
        .success()
        .stdout();
    let out = out.canonicalize().unwrap();
    let converted = out.join("converted/react");
    // Its converter writes where its evaluator reads: {converted}/{model}/{subset}.json.
    assert!(
        shown.contains(&format!(
            "python convert_to_answer_format.py --answer_dir {} --method CoT@1 --output {}",
            out.join(SUBSET).display(),
            converted.join(format!("{SUBSET}.json")).display()
        )),
        "{shown}"
    );
    assert!(
        shown.contains(&format!(
            "python eval_pass_rate.py --converted_answer_path {} --reference_model react",
            out.join("converted").display()
        )),
        "{shown}"
    );
    assert!(shown.contains(&format!("--test_set {SUBSET}")), "{shown}");
    assert!(
        shown.contains("cd StableToolBench/toolbench/tooleval"),
        "{shown}"
    );
    // The folders its scripts open for writing (they do not create them) are there.
    assert!(converted.is_dir() && out.join("pass_rate").is_dir());
}

#[test]
fn a_second_run_exported_into_the_same_folder_is_refused_not_merged() {
    let tmp = tempfile::tempdir().unwrap();
    // sum2act and react both export as CoT@1: the same file names.
    let first = cot_run(tmp.path(), "sum2act");
    let second = cot_run(tmp.path(), "react");
    let out = tmp.path().join("stb");
    let export = |run: &Path| {
        common::Test::new()
            .args(["export", "--out"])
            .arg(&out)
            .arg(run)
            .run()
    };
    export(&first).success();
    let before = std::fs::read(out.join(SUBSET).join("1_CoT@1.json")).unwrap();
    export(&second)
        .failure(2)
        .stderr_has("already holds the export of run")
        .stderr_has("sum2act")
        .stderr_has("_CoT@1.json")
        .stderr_has("its own --out")
        .no_panic();
    assert_eq!(
        std::fs::read(out.join(SUBSET).join("1_CoT@1.json")).unwrap(),
        before,
        "the first run's answers were overwritten"
    );
    // Exporting the first run again is a re-export, and a DFS run's names do not collide.
    export(&first).success();
    export(&dfs_run(tmp.path())).success();
}

#[test]
fn exporting_a_path_that_does_not_exist_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    common::Test::new()
        .args(["export", "--out"])
        .arg(tmp.path().join("stb"))
        .arg(tmp.path().join("no-such-run"))
        .run()
        .failure(2)
        .stderr_has("no-such-run: does not exist");
}
