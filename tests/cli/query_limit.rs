//! Issue 33 item 6: a query's text is capped (`MAX_QUERY_BYTES`, 16 KiB): a longer one in a query
//! file or typed on the command line is refused with exit 2 naming the file and field or the limit,
//! before any model call.

use crate::common;

use common::Test;
use serde_json::json;

/// A copy of the shipped sample with a subset `G9_huge` whose second query is `bytes` long.
fn sample_with_long_query(bytes: usize) -> tempfile::TempDir {
    let dir = common::sample_copy(&["queries", "tools"]);
    let sample = common::sample_queries("G1_instruction");
    let mut long = sample[1].clone();
    long["query"] = json!("What is the weather in Lisbon? ".repeat(bytes / 31 + 1));
    std::fs::write(
        dir.path().join("queries/G9_huge.json"),
        json!([sample[0], long]).to_string(),
    )
    .unwrap();
    dir
}

#[test]
fn a_query_over_the_limit_is_refused_naming_file_field_and_limit() {
    let data = sample_with_long_query(1 << 20);
    let out = tempfile::tempdir().unwrap();
    Test::new()
        .arg("--data")
        .arg(data.path())
        .batch_mock()
        .args(["--subsets", "G9_huge", "--out"])
        .arg(out.path().join("run"))
        .run()
        .failure(2)
        .stderr_has("G9_huge.json: `[1].query`")
        .stderr_has("over the limit of 16 KiB")
        .no_panic();
    assert!(!out.path().join("run/G9_huge").exists());
    Test::new()
        .arg("--data")
        .arg(data.path())
        .args(["data", "stats"])
        .run()
        .failure(2)
        .stderr_has("`[1].query`");
}

#[test]
fn a_typed_request_over_the_limit_is_refused() {
    let out = tempfile::tempdir().unwrap();
    Test::new()
        .args(["run", "--model", "mock", "--out"])
        .arg(out.path())
        .arg("x".repeat(20 * 1024))
        .run()
        .failure(2)
        .stderr_has("over the limit of 16 KiB")
        .no_panic();
}
