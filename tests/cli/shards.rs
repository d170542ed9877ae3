//! Issue 33 item 17: `merge` refuses an incomplete set of shards (exit 2, naming the missing slices)
//! unless `--allow-partial`, and `eval` counts a merged run's missing answers against the queries its
//! manifest names (data, subsets, limit, shard), not only against the answers it finds.

use crate::common;

use std::path::{Path, PathBuf};

use common::{Model, Test};

/// Runs shard `i` of `n` over the sample's G1_instruction (6 queries); its run directory.
fn shard(model: &Model, root: &Path, i: u32, n: u32) -> PathBuf {
    let out = root.join(format!("shard-{i}"));
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .args([
            "--subsets",
            "G1_instruction",
            "--shard",
            &format!("{i}/{n}"),
            "--out",
        ])
        .arg(&out)
        .run()
        .success();
    out
}

fn merge(out: &Path, runs: &[&PathBuf]) -> Test {
    Test::new()
        .arg("merge")
        .arg(out)
        .args(runs.iter().map(|r| r.as_os_str()))
}

#[test]
fn merge_refuses_an_incomplete_set_of_shards_unless_allowed() {
    let model = Model::start(0);
    let tmp = tempfile::tempdir().unwrap();
    let shards: Vec<PathBuf> = (0..3).map(|i| shard(&model, tmp.path(), i, 3)).collect();
    let out = tmp.path().join("all");
    merge(&out, &[&shards[0], &shards[2]])
        .run()
        .failure(2)
        .stderr_has("shard 1/3 is missing")
        .stderr_has("--allow-partial")
        .no_panic();
    assert!(
        !out.join("G1_instruction").exists(),
        "a refused merge wrote answers"
    );
    merge(&out, &[&shards[0], &shards[2]])
        .arg("--allow-partial")
        .run()
        .success()
        .stderr_has("shard 1/3 is missing");
    // Eval counts the absent slice's queries as missing (2 of the 6).
    Test::new()
        .args(["eval", "--no-judge"])
        .arg(&out)
        .run()
        .success()
        .stdout_has("G1_instruction         6       2");
    // With every shard, the merge is whole again.
    merge(&out, &[&shards[0], &shards[1], &shards[2]])
        .run()
        .success();
    Test::new()
        .args(["eval", "--no-judge"])
        .arg(&out)
        .run()
        .success()
        .stdout_has("G1_instruction         6       0");
    // Shards of different splits do not make a set.
    let other = shard(&model, &tmp.path().join("other"), 0, 2);
    merge(&tmp.path().join("mixed"), &[&shards[0], &other])
        .run()
        .failure(2)
        .stderr_has("different shard counts");
}

#[test]
fn eval_counts_an_answer_missing_from_a_merged_run() {
    let model = Model::start(0);
    let tmp = tempfile::tempdir().unwrap();
    let shards: Vec<PathBuf> = (0..2).map(|i| shard(&model, tmp.path(), i, 2)).collect();
    let out = tmp.path().join("all");
    merge(&out, &[&shards[0], &shards[1]]).run().success();
    std::fs::remove_file(out.join("G1_instruction/104_sum2act.json")).unwrap();
    Test::new()
        .args(["eval", "--no-judge"])
        .arg(&out)
        .run()
        .success()
        .stdout_has("G1_instruction         6       1");
}

/// Issue 42 item 6: a shard cut short (cancelled, failed, out of time) has its run.json but not every
/// answer; `merge` refuses it, naming the shard and how many answers it lacks, unless `--allow-partial`.
#[test]
fn merge_refuses_a_shard_cut_short_unless_allowed() {
    let model = Model::start(0);
    let tmp = tempfile::tempdir().unwrap();
    let shards: Vec<PathBuf> = (0..2).map(|i| shard(&model, tmp.path(), i, 2)).collect();
    // Shard 1/2 holds 102, 104 and 106 of the 6: as if stopped after its first query.
    for id in [104, 106] {
        std::fs::remove_file(shards[1].join(format!("G1_instruction/{id}_sum2act.json"))).unwrap();
    }
    let out = tmp.path().join("all");
    merge(&out, &[&shards[0], &shards[1]])
        .run()
        .failure(2)
        .stderr_has("shard 1/2")
        .stderr_has("2 of its 3 queries have no answer")
        .stderr_has("--allow-partial")
        .no_panic();
    assert!(
        !out.join("G1_instruction").exists(),
        "a refused merge wrote answers"
    );
    merge(&out, &[&shards[0], &shards[1]])
        .arg("--allow-partial")
        .run()
        .success()
        .stderr_has("2 of its 3 queries have no answer");
}
