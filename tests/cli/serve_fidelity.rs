//! `sum2act serve fidelity`: the simulator fidelity table for a data directory.

use crate::common;

/// The number printed after `label` on the line that starts with it.
fn count_after(out: &str, label: &str) -> Option<usize> {
    let line = out.lines().find(|l| l.starts_with(label))?;
    line[label.len()..].split_whitespace().next()?.parse().ok()
}

#[test]
fn prints_the_fidelity_table_for_the_shipped_sample() {
    let out = common::Test::new()
        .arg("--data")
        .arg(common::sample())
        .args(["serve", "fidelity"])
        .run()
        .success()
        .no_panic();
    let text = out.stdout();
    assert!(
        text.contains("(a) agreement with recorded real responses"),
        "{text}"
    );
    let apis = count_after(&text, "(b) one call per API of the queries:").unwrap_or(0);
    assert!(apis > 0, "no API measured:\n{text}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("all ")),
        "{text}"
    );
    assert!(text.contains("over HTTP: p50"), "{text}");
    assert!(
        text.contains("targets met") || text.contains("target missed:"),
        "{text}"
    );

    // `--check` turns a missed target into exit 1, and nothing else. The verdict is read from the
    // same run: the latency target can flip between two runs on a loaded machine.
    let checked = common::Test::new()
        .arg("--data")
        .arg(common::sample())
        .args(["serve", "fidelity", "--check"])
        .run();
    let missed = checked.stdout().contains("target missed:");
    assert_eq!(
        checked.code(),
        Some(if missed { 1 } else { 0 }),
        "{}",
        checked.stdout()
    );
}

#[test]
fn a_missing_data_folder_is_bad_input() {
    common::Test::new()
        .args(["--data", "/definitely/not/here", "serve", "fidelity"])
        .run()
        .failure(2)
        .no_panic();
}
