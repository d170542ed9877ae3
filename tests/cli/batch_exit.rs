//! Issue 42 item 12: a batch ends when its last query does. With a zero-latency model the whole
//! sample takes well under a second of work; every batch used to wait about 10 s more after its last
//! query (the embedded tool server's shutdown waiting out the client's idle keep-alive connections) before
//! printing its summary.

use std::time::{Duration, Instant};

use crate::common::{Model, Test};

#[test]
fn a_batch_prints_its_summary_when_its_last_query_ends() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .args(["--concurrency", "8", "--out"])
        .arg(dir.path().join("run"))
        .run()
        .success()
        .stdout_has("run directory:");
    let took = started.elapsed();
    // The work is a second or two in a debug build on a busy machine; the wait was 10 s on top.
    assert!(
        took < Duration::from_secs(7),
        "the batch took {took:?} for a zero-latency model"
    );
}
