//! Issue 33 item 8: messages that say what happened. A batch whose episodes all ended in error does
//! not speak of answer files; a tool reply over the size cap is named as such, not as "not JSON". (A
//! subset file that is a folder: `safe_paths.rs`.)

use crate::common;
use crate::hardening::endpoint;

use common::Test;
use serde_json::json;

#[test]
fn an_all_error_batch_counts_error_records_not_answer_files() {
    // The model answers the first turn of every query, then fails (HTTP 400, not retried).
    let model = endpoint(|req| {
        if common::mock_openai::later_turn(req) {
            return (400, json!({"error": {"message": "model overloaded"}}));
        }
        (200, common::mock_openai::reply(req))
    });
    let dir = tempfile::tempdir().unwrap();
    let out = Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .args(["--subsets", "G1_instruction", "--out"])
        .arg(dir.path().join("run"))
        .run()
        .failure(1);
    let stdout = out.stdout();
    assert!(
        stdout.contains("(0 answer files, 6 error records;"),
        "{stdout}"
    );
}

#[test]
fn a_tool_reply_over_the_cap_is_named_as_too_large() {
    let huge = format!(
        "{{\"error\": \"\", \"response\": \"{}\"}}",
        "x".repeat(9 << 20)
    );
    let app = axum::Router::new().route(
        "/virtual",
        axum::routing::post(move || {
            let body = huge.clone();
            async move { body }
        }),
    );
    let url = format!("http://{}/virtual", common::http::serve_on_thread(app));
    let model = common::Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let out = Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .run_query("101", "G1_instruction")
        .args(["--tool-server", &url, "--out"])
        .arg(dir.path())
        .run()
        .success();
    let shown = format!("{}{}", out.stdout(), out.stderr());
    assert!(shown.contains("larger than 8 MiB"), "{shown}");
    assert!(!shown.contains("not JSON"), "{shown}");
}
