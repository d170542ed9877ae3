//! `sum2act batch` end to end: the real binary over the shipped sample, the embedded tool server, and
//! a scripted OpenAI-compatible model on loopback. Resume, kill -9 midway, shards and merge.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Model, Test};
use serde_json::Value;

fn batch(model: &Model, out: &Path, extra: &[&str]) -> Test {
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .arg("--out")
        .arg(out)
        .args(extra)
}

/// Answer files of a run directory as `subset/file`.
fn answer_files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for sub in entries.flatten().filter(|e| e.path().is_dir()) {
        let Ok(files) = std::fs::read_dir(sub.path()) else {
            continue;
        };
        for f in files.flatten() {
            let name = f.file_name().to_string_lossy().to_string();
            out.insert(format!("{}/{}", sub.file_name().to_string_lossy(), name));
        }
    }
    out
}

/// Queries in the shipped sample (the sample may grow; tests must not hard-code its size).
fn sample_total() -> usize {
    std::fs::read_dir(common::sample().join("queries"))
        .unwrap()
        .flatten()
        .map(|f| read_json(&f.path()).as_array().map_or(0, Vec::len))
        .sum()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn batch_completes_writes_manifest_and_resumes() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let first = batch(
        &model,
        &out,
        &[
            "--subsets",
            "G1_instruction,G2_category",
            "--limit",
            "3",
            "--concurrency",
            "4",
        ],
    )
    .run()
    .success()
    .no_panic()
    .stdout_has("G1_instruction")
    .stdout_has("total")
    .stdout_has("6 new, 0 resumed")
    .stdout_has("tool replies by source");
    let files = answer_files(&out);
    assert_eq!(files.len(), 6, "{files:?}\n{}", first.stdout());
    assert!(
        files.iter().all(|f| f.ends_with("_sum2act.json")),
        "{files:?}"
    );
    for f in &files {
        let v = read_json(&out.join(f));
        assert!(
            v["answer_generation"].is_object(),
            "{f}: ToolBench answer file"
        );
        assert_eq!(v["sum2act"]["method"], "sum2act", "{f}");
        assert!(
            v["sum2act"]["counters"]["llm_calls"].as_u64().unwrap_or(0) >= 1,
            "{f}"
        );
    }
    let manifest = read_json(&out.join("run.json"));
    assert_eq!(manifest["method"], "sum2act");
    assert!(
        manifest["model"].as_str().unwrap_or("").contains("mock"),
        "{manifest}"
    );
    assert_eq!(
        manifest["subsets"],
        serde_json::json!(["G1_instruction", "G2_category"])
    );
    assert!(!manifest["prompts"].as_object().unwrap().is_empty());
    assert!(out.join("summary.json").is_file());
    // Provenance: every episode's tool replies counted by source, in the summary.
    let provenance = &read_json(&out.join("summary.json"))["provenance"];
    assert_eq!(provenance["episodes"], 6, "{provenance}");
    let calls = provenance["tool_calls"].as_u64().unwrap_or(0);
    let by_source: u64 = provenance["by_source"]
        .as_object()
        .map(|m| m.values().filter_map(Value::as_u64).sum())
        .unwrap_or(0);
    assert!(calls >= 6 && by_source == calls, "{provenance}");

    let before: Vec<_> = files
        .iter()
        .map(|f| std::fs::metadata(out.join(f)).unwrap().modified().unwrap())
        .collect();
    batch(
        &model,
        &out,
        &["--subsets", "G1_instruction,G2_category", "--limit", "3"],
    )
    .run()
    .success()
    .stdout_has("0 new, 6 resumed");
    let after: Vec<_> = files
        .iter()
        .map(|f| std::fs::metadata(out.join(f)).unwrap().modified().unwrap())
        .collect();
    assert_eq!(before, after, "finished queries are not rewritten");

    // A larger limit runs only the new queries.
    batch(
        &model,
        &out,
        &["--subsets", "G1_instruction,G2_category", "--limit", "4"],
    )
    .run()
    .success()
    .stdout_has("2 new, 6 resumed");

    // Another method into the same directory is refused, and says how to proceed.
    batch(
        &model,
        &out,
        &["--subsets", "G1_instruction", "--method", "react"],
    )
    .run()
    .failure(2)
    .stderr_has("--force");
}

#[test]
fn bad_flags_are_clear_errors() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    batch(&model, &out, &["--shard", "3/3"])
        .run()
        .failure(2)
        .stderr_has("--shard 3/3");
    batch(&model, &out, &["--shard", "auto/2"])
        .run()
        .failure(2)
        .stderr_has("JOB_COMPLETION_INDEX");
    batch(&model, &out, &["--subsets", "G9_nothing"])
        .run()
        .failure(2)
        .stderr_has("G9_nothing");
    batch(&model, &out, &["--concurrency", "0"])
        .run()
        .failure(2)
        .no_panic();
    // The judge's votes are checked before any query runs (the run's eval no longer re-parses them).
    batch(&model, &out, &["--eval", "--votes", "0"])
        .run()
        .failure(2)
        .stderr_has("--votes");
    assert!(
        !out.exists(),
        "nothing is written before the flags are checked"
    );
}

#[test]
fn killed_run_resumes_with_exactly_one_answer_file_per_query() {
    // A slow model, so the run is surely killed midway.
    let model = Model::start(150);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sum2act"))
        .env_remove("SUM2ACT_DATA")
        .env_remove("SUM2ACT_CONFIG")
        .env("OPENAI_BASE_URL", &model.url)
        .args([
            "batch",
            "--model",
            "mock",
            "--progress",
            "off",
            "--concurrency",
            "2",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while answer_files(&out)
        .iter()
        .filter(|f| f.ends_with(".json") && !f.contains("/."))
        .count()
        == 0
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no answer file appeared"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "batch ended before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let total = sample_total();
    let partial = answer_files(&out)
        .into_iter()
        .filter(|f| !f.contains("/."))
        .count();
    assert!(
        partial >= 1 && partial < total,
        "killed midway: {partial} files"
    );

    // The rerun needs no slow model: a fast one resumes the same run.
    drop(model);
    batch(&Model::start(0), &out, &["--concurrency", "8"])
        .run()
        .success()
        .stdout_has(&format!("{total} answer files"));
    let files = answer_files(&out);
    assert!(
        files.iter().all(|f| !f.contains("/.")),
        "no temp files left: {files:?}"
    );
    let mut ids = BTreeSet::new();
    for f in &files {
        let (subset, name) = f.split_once('/').unwrap();
        let qid = name.split('_').next().unwrap();
        assert!(
            ids.insert((subset.to_string(), qid.to_string())),
            "two files for {subset} {qid}"
        );
        assert!(
            read_json(&out.join(f))["sum2act"].is_object(),
            "{f} is complete"
        );
    }
    assert_eq!(ids.len(), total, "every sample query has its answer file");
}

#[test]
fn shards_are_disjoint_cover_everything_and_merge() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let mut shard_dirs: Vec<PathBuf> = Vec::new();
    let mut seen = BTreeSet::new();
    for i in 0..3 {
        let out = dir.path().join(format!("shard{i}"));
        let shard = format!("{i}/3");
        batch(&model, &out, &["--shard", &shard, "--concurrency", "4"])
            .run()
            .success()
            .stdout_has(&format!("shard {shard}"));
        for f in answer_files(&out) {
            assert!(seen.insert(f.clone()), "{f} is in two shards");
        }
        assert_eq!(read_json(&out.join("run.json"))["shard"], shard.as_str());
        shard_dirs.push(out);
    }
    let total = sample_total();
    assert_eq!(seen.len(), total, "shards cover the sample");

    // The index may come from a Kubernetes Indexed Job. Three queries, so each index takes a different
    // one: index 1 takes the second (202), which is also the first G1_category query of shard 1/3 above.
    let auto = dir.path().join("auto1");
    batch(
        &model,
        &auto,
        &[
            "--shard",
            "auto/3",
            "--subsets",
            "G1_category",
            "--limit",
            "3",
        ],
    )
    .env("JOB_COMPLETION_INDEX", "1")
    .run()
    .success();
    let first_of_shard_1 = answer_files(&shard_dirs[1])
        .into_iter()
        .find(|f| f.starts_with("G1_category/"))
        .unwrap();
    assert_eq!(answer_files(&auto), BTreeSet::from([first_of_shard_1]));

    let merged = dir.path().join("merged");
    Test::new()
        .arg("merge")
        .arg(&merged)
        .args(&shard_dirs)
        .run()
        .success()
        .stdout_has(&format!("{total} answer files copied"))
        .stdout_has("total");
    assert_eq!(answer_files(&merged), seen);
    let manifest = read_json(&merged.join("run.json"));
    assert_eq!(manifest["method"], "sum2act");
    assert!(manifest["shard"].is_null());
    assert_eq!(manifest["merged_from"].as_array().map(Vec::len), Some(3));

    // Merging again is idempotent; a run of another method is refused.
    Test::new()
        .arg("merge")
        .arg(&merged)
        .args(&shard_dirs)
        .run()
        .success()
        .stdout_has(&format!("0 answer files copied, {total} already there"));
    let react = dir.path().join("react");
    batch(
        &model,
        &react,
        &["--method", "react", "--subsets", "G1_tool", "--limit", "1"],
    )
    .run()
    .success();
    Test::new()
        .arg("merge")
        .arg(dir.path().join("mixed"))
        .arg(&shard_dirs[0])
        .arg(&react)
        .run()
        .failure(2)
        .stderr_has("different methods");
    Test::new()
        .arg("merge")
        .arg(dir.path().join("x"))
        .arg(dir.path())
        .run()
        .failure(2)
        .stderr_has("run.json");
}

#[test]
fn eval_flag_judges_the_finished_run() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    batch(
        &model,
        &out,
        &[
            "--subsets",
            "G1_tool",
            "--limit",
            "2",
            "--eval",
            "--votes",
            "1",
        ],
    )
    .run()
    .success()
    .no_panic()
    .stdout_has("2 new, 0 resumed");
    let pass = read_json(&out.join("eval/pass_rate.json"));
    assert_eq!(pass["queries"].as_array().map(Vec::len), Some(2), "{pass}");
    // Evaluation outputs beside the answer files are not mistaken for answers on resume.
    batch(&model, &out, &["--subsets", "G1_tool", "--limit", "2"])
        .run()
        .success()
        .stdout_has("0 new, 2 resumed");
    let report = dir.path().join("r.html");
    Test::new()
        .arg("report")
        .arg(&out)
        .arg("--out")
        .arg(&report)
        .run()
        .success()
        .stdout_has("1 with judge results");
}

#[test]
fn ctrl_c_stops_gracefully_and_the_run_resumes() {
    let model = Model::start(150);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let child = Command::new(env!("CARGO_BIN_EXE_sum2act"))
        .env_remove("SUM2ACT_DATA")
        .env_remove("SUM2ACT_CONFIG")
        .env("OPENAI_BASE_URL", &model.url)
        .args([
            "batch",
            "--model",
            "mock",
            "--progress",
            "plain",
            "--concurrency",
            "2",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while answer_files(&out).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no answer file appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("stopping"), "{stderr}");
    assert!(
        stdout.contains("rerun the same command to resume"),
        "{stdout}"
    );
    assert!(
        !stderr.contains("[failed]"),
        "in-flight queries finished cleanly: {stderr}"
    );
    let done = answer_files(&out);
    assert!(done.iter().all(|f| !f.contains("/.")), "{done:?}");
    for f in &done {
        assert!(
            read_json(&out.join(f))["sum2act"]["finish"] == "give_answer",
            "{f} finished normally"
        );
    }
    let total = sample_total();
    assert!(done.len() < total);
    drop(model);
    batch(&Model::start(0), &out, &["--concurrency", "8"])
        .run()
        .success()
        .stdout_has(&format!(
            "{} new, {} resumed",
            total - done.len(),
            done.len()
        ));
}
