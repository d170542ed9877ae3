//! Files between steps through the binary: a tiny MCP server of the test (streamable HTTP) draws an
//! image and speaks audio; the harness stores them beside the answer file and shows handles; a later
//! call that passes `<file-1>` reaches the server as the file's absolute path (the server reads it);
//! an unknown handle is refused without a call; the answer file lists the files and the HTML report
//! embeds them.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use common::Test;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

use crate::hardening::endpoint;

/// A 1×1 PNG.
const PNG: [u8; 69] = [
    137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0,
    0, 0, 144, 119, 83, 222, 0, 0, 0, 12, 73, 68, 65, 84, 120, 156, 99, 248, 207, 192, 0, 0, 3, 1,
    1, 0, 201, 254, 146, 239, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130,
];

/// A WAV header with no samples.
fn wav() -> Vec<u8> {
    let mut w = b"RIFF".to_vec();
    w.extend(36u32.to_le_bytes());
    w.extend(b"WAVEfmt ");
    w.extend([
        16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x80, 0x3e, 0, 0, 2, 0, 16, 0,
    ]);
    w.extend(b"data");
    w.extend(0u32.to_le_bytes());
    w
}

/// The test's MCP server: `draw` (an image), `measure` (reads the image file it is given), `speak`
/// (audio).
#[derive(Clone)]
struct Studio;

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    let Value::Object(m) = schema else {
        unreachable!("schemas here are objects")
    };
    Tool::new(name.to_string(), description.to_string(), Arc::new(m))
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl ServerHandler for Studio {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let text = json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
        let image = json!({"type": "object", "properties": {"image": {"type": "string", "description": "an absolute path"}}, "required": ["image"]});
        Ok(ListToolsResult::with_all_items(vec![
            tool("draw", "Draws text as an image.", text.clone()),
            tool("measure", "Size of an image file.", image),
            tool("speak", "Reads text aloud.", text),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let result = match request.name.as_ref() {
            "draw" => CallToolResult::success(vec![
                ContentBlock::text(r#"{"width": 1, "height": 1}"#),
                ContentBlock::image(b64(&PNG), "image/png"),
            ]),
            "speak" => CallToolResult::success(vec![ContentBlock::audio(b64(&wav()), "audio/wav")]),
            _ => {
                let path = args["image"].as_str().unwrap_or("").to_string();
                match std::fs::read(&path) {
                    Ok(bytes) => CallToolResult::success(vec![ContentBlock::text(
                        json!({"bytes": bytes.len(), "png": bytes.starts_with(&PNG[..8]), "absolute": Path::new(&path).is_absolute()})
                            .to_string(),
                    )]),
                    Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("{path}: {e}"))]),
                }
            }
        };
        Ok(result.into())
    }
}

/// Serves `Studio` over streamable HTTP on loopback; its URL.
fn studio() -> String {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let service = StreamableHttpService::new(
        || Ok(Studio),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let addr = common::http::serve_on_thread(axum::Router::new().nest_service("/mcp", service));
    format!("studio=http://{addr}/mcp")
}

/// The function calls of the conversation so far.
pub(crate) fn calls_so_far(req: &Value) -> usize {
    req["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["tool_calls"].as_array().is_some_and(|c| !c.is_empty()))
        .count()
}

/// The last `<file-N>` handle a tool result shows.
pub(crate) fn handle_in(req: &Value) -> Option<String> {
    let results: Vec<&Value> = req["messages"]
        .as_array()?
        .iter()
        .filter(|m| m["role"] == "tool" || m["role"] == "function")
        .collect();
    let text = serde_json::to_string(&results).ok()?;
    let at = text.rfind("<file-")?;
    let end = text[at..].find('>')?;
    Some(text[at..at + end + 1].to_string())
}

/// A model that measures an unknown handle, draws, measures the handle it was shown, speaks, and
/// finishes.
fn script(req: &Value) -> (u16, Value) {
    let (name, args) = match calls_so_far(req) {
        0 => ("mcp__studio__measure", json!({"image": "<file-9>"})),
        1 => ("mcp__studio__draw", json!({"text": "hello"})),
        2 => (
            "mcp__studio__measure",
            json!({"image": handle_in(req).unwrap_or_default()}),
        ),
        3 => ("mcp__studio__speak", json!({"text": "hello"})),
        _ => (
            "Finish",
            json!({"return_type": "give_answer", "final_answer": "drawn, measured, spoken"}),
        ),
    };
    (200, common::mock_openai::call_reply(name, &args))
}

#[test]
fn a_file_from_one_tool_reaches_another_by_handle_and_the_report_shows_it() {
    let model = endpoint(script);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    crate::mcp::batch_101_react(&model.url, &studio(), &out)
        .success()
        .no_panic();
    let path = out.join("G1_instruction/101_react.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let steps = file["sum2act"]["steps"].as_array().unwrap();
    let obs = |i: usize| steps[i]["observation"].clone();

    // An unknown handle is refused by the harness, naming it.
    assert_eq!(obs(0)["failed"], true);
    assert!(
        obs(0)["error"]
            .as_str()
            .unwrap()
            .contains("unknown file handle <file-9>"),
        "{}",
        obs(0)
    );
    // The image is a file beside the answer file, shown to the model as a handle.
    let drawn = obs(1);
    assert_eq!(drawn["response"][1]["file"], "<file-1>", "{drawn}");
    assert_eq!(drawn["response"][1]["bytes"], 69);
    assert!(drawn["text"].as_str().unwrap().contains("<file-1>"));
    let stored = out.join("G1_instruction/101_react.resources/file-1.png");
    assert_eq!(std::fs::read(&stored).unwrap(), PNG);
    // The handle reached the server as that file's absolute path.
    assert_eq!(
        steps[2]["arguments"],
        json!({"image": "<file-1>"}).to_string()
    );
    assert_eq!(
        obs(2)["response"],
        json!({"bytes": 69, "png": true, "absolute": true}),
        "{}",
        obs(2)
    );
    // Audio too; the answer file and the record list both files.
    assert_eq!(obs(3)["response"]["file"], "<file-2>");
    let listed: Vec<&str> = file["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["handle"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["<file-1>", "<file-2>"]);
    assert_eq!(file["sum2act"]["resources"][1]["kind"], "audio");
    assert_eq!(file["sum2act"]["resources"][1]["mime_type"], "audio/wav");

    // A merged copy carries the files, and its report finds them beside the answer file.
    let merged = dir.path().join("merged");
    Test::new()
        .arg("merge")
        .arg(&merged)
        .arg(&out)
        .run()
        .success();
    assert_eq!(
        std::fs::read(merged.join("G1_instruction/101_react.resources/file-1.png")).unwrap(),
        PNG
    );
    std::fs::remove_dir_all(&out).unwrap();
    Test::new().arg("report").arg(&merged).run().success();
    let html = std::fs::read_to_string(merged.join("report.html")).unwrap();
    assert!(
        html.contains(&format!("data:image/png;base64,{}", b64(&PNG))),
        "no embedded image"
    );
    assert!(
        html.contains(&format!("data:audio/wav;base64,{}", b64(&wav()))),
        "no embedded audio"
    );
}
