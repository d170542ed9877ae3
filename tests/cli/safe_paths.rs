//! Issue 33 item 2: names a user (or a file) gives cannot lead outside the data directory or the run
//! directory. A subset is a plain name: anything with a path in it is refused with exit 2 naming the
//! flag, before anything is read or written. Also item 8's subset file that is a folder.

use crate::common;

use std::path::Path;

use common::{Model, Test};
use serde_json::Value;

/// A query file outside the data directory, and the subset name that would reach it from `data`.
fn evil_query_file(root: &Path) -> String {
    let sample = common::sample_queries("G1_instruction");
    std::fs::write(
        root.join("evil.json"),
        Value::Array(vec![sample[0].clone()]).to_string(),
    )
    .unwrap();
    let depth = common::sample().join("queries").components().count();
    let up = "../".repeat(depth);
    format!(
        "{up}{}",
        root.join("evil")
            .display()
            .to_string()
            .trim_start_matches('/')
    )
}

#[test]
fn a_subset_with_a_path_is_refused_naming_the_flag() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let evil = evil_query_file(dir.path());
    let out = dir.path().join("run");
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .args(["--subsets", &evil, "--out"])
        .arg(&out)
        .run()
        .failure(2)
        .stderr_has("--subsets")
        .stderr_has("a subset is a plain name")
        .no_panic();
    assert!(!out.exists(), "the batch wrote {}", out.display());
    for bad in ["..", "G1/../G1_tool", "/etc/passwd", ".hidden", ""] {
        Test::new()
            .env("OPENAI_BASE_URL", &model.url)
            .run_query("101", bad)
            .arg("--out")
            .arg(&out)
            .run()
            .failure(2)
            .stderr_has("--subset");
    }
    Test::new()
        .args(["eval", "--no-judge", "--subsets", "../x"])
        .arg(&out)
        .run()
        .failure(2)
        .stderr_has("--subsets");
}

#[test]
fn merge_places_files_by_their_folder_not_by_the_subset_their_record_claims() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .args(["--subsets", "G1_instruction", "--limit", "1", "--out"])
        .arg(&run)
        .run()
        .success();
    let file = run.join("G1_instruction/101_sum2act.json");
    let mut answer: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    answer["sum2act"]["subset"] = Value::from("../../escaped");
    std::fs::write(&file, answer.to_string()).unwrap();
    let out = dir.path().join("deep/merged");
    Test::new().arg("merge").arg(&out).arg(&run).run().success();
    assert!(out.join("G1_instruction/101_sum2act.json").is_file());
    assert!(!dir.path().join("escaped").exists());
}

#[test]
fn a_subset_file_that_is_a_folder_is_named_as_such() {
    let data = common::sample_copy(&["queries", "tools"]);
    let subset = data.path().join("queries/G1_instruction.json");
    std::fs::remove_file(&subset).unwrap();
    std::fs::create_dir(&subset).unwrap();
    let out = Test::new()
        .arg("--data")
        .arg(data.path())
        .args([
            "batch",
            "--model",
            "mock",
            "--subsets",
            "G1_instruction",
            "--out",
        ])
        .arg(data.path().join("run"))
        .run()
        .failure(2)
        .stderr_has("G1_instruction.json: is a folder, not a query file");
    assert!(!out.stderr().contains("no such subset"), "{}", out.stderr());
}
