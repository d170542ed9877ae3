//! Issue 42 items 9–11: `serve --mcp` as the MCP spec has it. A session-closing HTTP `DELETE` is
//! answered 200 (404 for a session that is not there); APIs whose function names clash are served
//! under a numbered name and listed on stderr, not dropped; arguments of the wrong JSON type are a
//! tool error naming the argument; an unknown tool is JSON-RPC error -32602 "Unknown tool".

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::mcp::{McpChild, text};
use crate::common::{Test, sample};

/// A data directory whose one tool is in two categories: every API's name clashes once.
fn clashing_catalogue(dir: &Path) -> PathBuf {
    let root = dir.join("data");
    std::fs::create_dir_all(root.join("queries")).unwrap();
    for category in ["Weather", "Travel"] {
        let folder = root.join("tools").join(category);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(
            sample().join("tools/Weather/skycast_weather.json"),
            folder.join("skycast_weather.json"),
        )
        .unwrap();
    }
    root
}

#[tokio::test(flavor = "multi_thread")]
async fn the_session_closing_delete_is_answered_200_then_404() {
    let served = Test::new()
        .args(["serve", "--mcp", "http", "--port", "0"])
        .serve();
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let reply = http
        .post(&served.url)
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert!(reply.status().is_success(), "{}", reply.status());
    let session = reply.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let delete = || {
        http.delete(&served.url)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
    };
    assert_eq!(delete().await.unwrap().status().as_u16(), 200);
    assert_eq!(delete().await.unwrap().status().as_u16(), 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn clashing_names_are_numbered_and_arguments_type_checked() {
    let dir = tempfile::tempdir().unwrap();
    let data = clashing_catalogue(dir.path());
    let data_arg = data.to_string_lossy().to_string();
    let mcp = McpChild::spawn(&["--data", &data_arg, "serve", "--mcp"], &[]).await;
    let mut names: Vec<String> = mcp
        .client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    names.sort();
    assert_eq!(names.len(), 8, "{names:?}");
    assert!(
        names.contains(&"forecast_for_skycast_weather_2".to_string()),
        "{names:?}"
    );
    mcp.ok("forecast_for_skycast_weather_2", json!({"city": "Paris"}))
        .await;
    let e = mcp
        .err(
            "forecast_for_skycast_weather",
            json!({"city": {"name": "Paris"}}),
        )
        .await;
    assert!(e.contains("`city` must be a string, not an object"), "{e}");
    let bad = mcp
        .call("forecast_for_skycast_weather", json!({"city": 7}))
        .await;
    assert_eq!(bad.is_error, Some(true), "{}", text(&bad));
    assert_eq!(
        mcp.protocol_error("no_such_tool", json!({})).await,
        (-32602, "Unknown tool: no_such_tool".to_string())
    );
    mcp.close().await;
    // The renamed APIs are listed where a person sees them (stdin closed: the server ends at once).
    Test::new()
        .arg("--data")
        .arg(&data)
        .args(["serve", "--mcp"])
        .stdin("")
        .run()
        .stderr_has("4 APIs share their function name")
        .stderr_has("forecast_for_skycast_weather_2 (forecast of skycast_weather;");
}
