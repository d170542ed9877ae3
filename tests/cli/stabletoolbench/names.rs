//! Issue 33 item 16: its environment names work as ours do: `SERVICE_URL` (its client's tool server)
//! for `--tool-server`, `OPENAI_API_BASE` for `--base-url`; ours win when both are set.

use crate::common;

use super::SUBSET;

fn batch(out: &std::path::Path) -> common::Test {
    common::Test::new()
        .batch_mock()
        .args(["--subsets", SUBSET, "--limit", "1", "--out"])
        .arg(out)
}

#[test]
fn its_environment_names_are_read_as_aliases() {
    let model = common::Model::start(0);
    let tmp = tempfile::tempdir().unwrap();
    batch(&tmp.path().join("a"))
        .env("OPENAI_API_BASE", &model.url)
        .run()
        .success()
        .stdout_has("1 new");
    // Its tool server name: nothing listens there, which the check before the run says.
    batch(&tmp.path().join("b"))
        .env("OPENAI_API_BASE", &model.url)
        .env("SERVICE_URL", "http://127.0.0.1:1/virtual")
        .run()
        .failure(2)
        .stderr_has("http://127.0.0.1:1/virtual");
    // Ours win.
    batch(&tmp.path().join("c"))
        .env("OPENAI_BASE_URL", &model.url)
        .env("OPENAI_API_BASE", "http://127.0.0.1:1/v1")
        .run()
        .success();
}
