//! Issue 33 item 3: credentials in an endpoint's URL (user:password@host, `api-key`, `key`, `token`
//! query parameters) never reach a log line (even at -vv), a message, an `.error` file, a manifest or
//! a report. The model and tool server still get them: the requests work.

use crate::common;
use crate::hardening::endpoint;

use std::path::Path;

use common::Test;
use serde_json::json;

const SECRET: &str = "SeCrEt-4711";

/// `http://user:SECRET@host:port/path?api-key=SECRET&x=1` from `http://host:port/path`.
fn with_secrets(url: &str, param: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    format!("{scheme}://user:{SECRET}@{rest}?{param}={SECRET}&x=1")
}

/// Every file under `dir` that holds the secret.
fn files_with_secret(dir: &Path) -> Vec<String> {
    let mut hits = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if std::fs::read(&path)
                .map(|b| String::from_utf8_lossy(&b).contains(SECRET))
                .unwrap_or(false)
            {
                hits.push(path.display().to_string());
            }
        }
    }
    hits
}

fn assert_clean(out: &common::Outcome, dir: &Path) {
    let shown = format!("{}{}", out.stdout(), out.stderr());
    assert!(!shown.contains(SECRET), "printed: {shown}");
    assert!(shown.contains("***"), "nothing redacted shown: {shown}");
    let hits = files_with_secret(dir);
    assert!(hits.is_empty(), "written to {hits:?}");
}

#[test]
fn a_key_in_an_unreachable_base_url_is_never_shown_or_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = Test::new()
        .args([
            "-vv",
            "run",
            "--query-id",
            "101",
            "--subset",
            "G1_instruction",
        ])
        .args(["--model", "m", "--llm-retries", "1", "--base-url"])
        .arg(with_secrets("http://127.0.0.1:1/v1", "api-key"))
        .arg("--out")
        .arg(dir.path())
        .run()
        .failure(2)
        .stderr_has("never answered")
        .no_panic();
    assert!(
        dir.path()
            .join("G1_instruction/101_sum2act.error")
            .is_file()
    );
    assert_clean(&out, dir.path());
}

#[test]
fn keys_in_model_and_tool_server_urls_stay_out_of_logs_runs_and_reports() {
    // The model answers its first calls, then fails every router turn: error episodes after replies.
    let model = endpoint(|req| {
        if common::mock_openai::later_turn(req) {
            return (400, json!({"error": {"message": "model overloaded"}}));
        }
        (200, common::mock_openai::reply(req))
    });
    let served = Test::new().args(["serve", "--port", "0"]).serve();
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = Test::new()
        .args(["-vv", "batch", "--model", "mock", "--progress", "plain"])
        .args(["--subsets", "G1_instruction", "--limit", "2", "--base-url"])
        .arg(with_secrets(&model.url, "key"))
        .arg("--tool-server")
        .arg(with_secrets(&served.url, "token"))
        .arg("--out")
        .arg(&run)
        .run()
        .failure(1)
        .stderr_has("ended in error")
        .no_panic();
    assert!(run.join("run.json").is_file());
    assert!(
        common::run_files(&run, "G1_instruction")
            .iter()
            .any(|f| f.ends_with(".error")),
        "no error episode"
    );
    assert_clean(&out, &run);
    let report = dir.path().join("report.html");
    Test::new()
        .arg("report")
        .arg(&run)
        .arg("--out")
        .arg(&report)
        .run()
        .success();
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(!html.contains(SECRET), "the report holds the key");
}
