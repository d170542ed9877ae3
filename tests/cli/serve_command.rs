//! `sum2act serve` as a process: it answers on loopback until stopped, and `serve import-cache`
//! converts StableToolBench's cache files.

use serde_json::{Value, json};

use crate::common;
use crate::common::tools::data_dir;

#[test]
fn serve_command_answers_on_loopback_until_stopped() {
    let served = common::Test::new()
        .arg("--data")
        .arg(data_dir())
        .args(["serve", "--port", "0", "--fault-rate", "0"])
        .serve();
    let (url, line) = (served.url.clone(), &served.line);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/virtual"),
        "{line}"
    );
    let reply = common::tools::call_unknown(&url, "Nowhere", "no_such_tool", "x");
    drop(served);
    assert_eq!(reply.unwrap().error, "Message error...");
}

#[test]
fn import_cache_converts_python_repr_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("stb/Data/theclique_for_Data");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("transfermarkt_search.json"),
        r#"{"{'name': 'Lionel Messi'}": {"error": "", "response": "Messi"}, "{'name': ": {"error": "", "response": ""}}"#,
    )
    .unwrap();
    let dest = tmp.path().join("ours");
    common::Test::new()
        .arg("serve")
        .arg("import-cache")
        .arg(tmp.path().join("stb"))
        .arg(&dest)
        .run()
        .success()
        .stdout_has("imported 1 entries from 1 files");
    let out: Value = serde_json::from_str(
        &std::fs::read_to_string(dest.join("Data/theclique/transfermarkt_search.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        out,
        json!({"{\"name\":\"Lionel Messi\"}": {"error": "", "response": "Messi"}})
    );
    common::Test::new()
        .args(["serve", "import-cache", "/definitely/not/here", "x"])
        .run()
        .failure(2);
}

/// A POST of `body` to `url`: its status and body.
fn post(url: &str, body: Value) -> (u16, Value) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let resp = reqwest::Client::new()
            .post(url)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    })
}

/// Issue 42 item 5: ToolBench's own client posts to `/rapidapi`: served as `/virtual`; any other path
/// gets the protocol's reply shape saying where the server answers, not an empty 404.
#[test]
fn rapidapi_is_served_and_other_paths_say_where_to_post() {
    let served = common::Test::new()
        .arg("--data")
        .arg(common::sample())
        .args(["serve", "--port", "0"])
        .serve();
    let base = served.url.trim_end_matches("/virtual").to_string();
    let call = json!({"category": "Nowhere", "tool_name": "no_such_tool", "api_name": "x",
                      "tool_input": "{}", "strip": "", "toolbench_key": ""});
    let (status, reply) = post(&format!("{base}/rapidapi"), call.clone());
    assert_eq!(
        (status, &reply["error"]),
        (200, &json!("Message error...")),
        "{reply}"
    );
    let (status, reply) = post(&format!("{base}/api/virtual"), call);
    assert_eq!(status, 404);
    let error = reply["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("POST /api/virtual") && error.contains("POST /virtual"),
        "{reply}"
    );
}

/// Issue 42 item 5: without `--data` the server has only the sample's tools; a caller naming another
/// tool learns that, and how to serve its own.
#[test]
fn without_data_no_such_tool_says_the_sample_is_served() {
    let served = common::Test::new().args(["serve", "--port", "0"]).serve();
    let reply =
        common::tools::call_unknown(&served.url, "Data", "transfermarkt", "search").unwrap();
    let said = reply.response.to_string();
    assert!(said.contains("No such tool"), "{said}");
    assert!(
        said.contains("shipped sample") && said.contains("--data DIR"),
        "{said}"
    );
    // With --data, no such hint.
    let served = common::Test::new()
        .arg("--data")
        .arg(common::sample())
        .args(["serve", "--port", "0"])
        .serve();
    let reply =
        common::tools::call_unknown(&served.url, "Data", "transfermarkt", "search").unwrap();
    assert!(!reply.response.to_string().contains("--data"), "{reply:?}");
}

/// Issue 42 item 5: a port in use is said once, with `--port` to choose another (both this server and
/// StableToolBench's default to 8080); the same for `serve-llm`.
#[test]
fn a_port_in_use_is_said_once_with_the_flag_to_change_it() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let by_hand = tempfile::tempdir().unwrap();
    let by_hand = by_hand.path().to_string_lossy().to_string();
    for command in [
        vec!["serve", "--port", port.as_str()],
        vec![
            "serve-llm",
            "--by-hand",
            by_hand.as_str(),
            "--port",
            port.as_str(),
        ],
    ] {
        let out = common::Test::new()
            .args(&command)
            .run()
            .failure(2)
            .no_panic();
        let err = out.stderr();
        assert_eq!(err.matches("in use").count(), 1, "{command:?}: {err}");
        assert!(err.contains("--port"), "{command:?}: {err}");
    }
}

/// Issue 42 item 5: `serve-llm`'s default port, which is not `serve`'s, shows in the command list
/// as well as in its own help.
#[test]
fn serve_llm_help_shows_its_default_port() {
    let list = common::Test::new().arg("--help").run().success().stdout();
    let entry = list
        .split_once("  serve-llm")
        .and_then(|(_, rest)| rest.split_once("  by-hand"))
        .map(|(entry, _)| entry)
        .unwrap_or_default();
    assert!(entry.contains("8081"), "{list}");
    common::Test::new()
        .args(["serve-llm", "--help"])
        .run()
        .success()
        .stdout_has("[default: 8081]");
}

/// Issue 42 item 4: a folder of tools and caches (no queries) is a tool server's data.
#[test]
fn serve_takes_a_data_folder_without_queries() {
    let data = common::sample_copy(&["tools", "response_cache"]);
    let served = common::Test::new()
        .arg("--data")
        .arg(data.path())
        .args(["serve", "--port", "0"])
        .serve();
    assert!(served.url.ends_with("/virtual"), "{}", served.line);
    // Commands that solve queries still need them, and say so.
    common::Test::new()
        .arg("--data")
        .arg(data.path())
        .args(["data", "stats"])
        .run()
        .failure(2)
        .stderr_has("missing `queries/`");
}
