//! MCP both ways through the binary: `serve --mcp` (stdio and streamable HTTP) is the MCP server whose
//! tools every method calls with the scripted model, alone (`--tools mcp`) or beside the query's APIs;
//! bad `--mcp` specs and servers that cannot start are exit 2; a server that dies mid-run is a failed
//! call in the episode and exit 1; stdio servers do not outlive the run; and the Python `mcp` client
//! lists and calls `serve --mcp`'s tools when it is installed.

use crate::common;

use std::path::{Path, PathBuf};

use crate::hardening::endpoint;
use common::{Model, Test};
use serde_json::{Value, json};

pub const METHODS: [&str; 5] = ["sum2act", "react", "dfsdt", "plan", "graph"];

/// `sum2act serve --mcp [ARGS]` as an `--mcp` command line.
pub fn serve_mcp_command(args: &str) -> String {
    let bin = env!("CARGO_BIN_EXE_sum2act");
    let quoted = shlex::try_quote(bin).map_or_else(|_| bin.to_string(), |q| q.into_owned());
    format!("{quoted} serve --mcp {args}")
}

/// `run` of sample query 101 (G1_instruction) with the scripted model at `model`, `method` and
/// `extra` flags, writing into `out`.
pub fn run_101(model: &str, method: &str, out: &Path, extra: &[&str]) -> common::Outcome {
    Test::new()
        .env("OPENAI_BASE_URL", model)
        .run_query("101", "G1_instruction")
        .args(["--method", method])
        .args(extra)
        .arg("--out")
        .arg(out)
        .run()
}

/// `batch` of the first G1_instruction query (101) with `react`, the scripted model at `model` and
/// only the tools of the MCP server `spec`, writing into `out`.
pub fn batch_101_react(model: &str, spec: &str, out: &Path) -> common::Outcome {
    Test::new()
        .env("OPENAI_BASE_URL", model)
        .batch_mock()
        .args([
            "--subsets",
            "G1_instruction",
            "--limit",
            "1",
            "--method",
            "react",
        ])
        .args(["--tools", "mcp", "--mcp", spec, "--out"])
        .arg(out)
        .run()
}

fn answer(out: &Path, method: &str) -> Value {
    let path = out.join(format!("G1_instruction/101_{method}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The observations of the answer file's steps that came from MCP tools.
fn mcp_observations(file: &Value) -> Vec<Value> {
    file["sum2act"]["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| s["observation"].clone())
        .filter(|o| o["source"] == "mcp")
        .collect()
}

/// `serve --mcp http` on a free port over `data`.
fn serve_mcp_http(data: &Path) -> common::Served {
    Test::new()
        .args(["serve", "--mcp", "http", "--port", "0", "--data"])
        .arg(data)
        .serve()
}

/// A data directory with one tool of the sample, the weather API query 101 needs: few enough
/// functions that `plan` names them in its schema (so the scripted plan calls one), and words in
/// common with the query (so `graph`'s relevance, which falls back to word overlap with the script,
/// expands it).
pub fn small_catalogue(dir: &Path) -> PathBuf {
    let root = dir.join("data");
    std::fs::create_dir_all(root.join("queries")).unwrap();
    std::fs::create_dir_all(root.join("tools/Weather")).unwrap();
    std::fs::copy(
        common::sample().join("tools/Weather/skycast_weather.json"),
        root.join("tools/Weather/skycast_weather.json"),
    )
    .unwrap();
    root
}

/// The scripted model, made to reach a tool in `plan` and `graph`: a planned task depends on nothing
/// (`dep: [-1]`; the generic script writes `[1]`, a cycle) and a rated tool is rated 5 (the generic
/// script's first enum value, 0, would leave the graph search nothing to expand).
pub fn scripted(req: &Value) -> (u16, Value) {
    let mut reply = common::mock_openai::reply(req);
    if let Some(content) = reply.pointer_mut("/choices/0/message/content")
        && let Ok(mut v) = serde_json::from_str::<Value>(content.as_str().unwrap_or(""))
    {
        for t in v["tasks"].as_array_mut().into_iter().flatten() {
            t["dep"] = json!([-1]);
        }
        for s in v["scores"].as_array_mut().into_iter().flatten() {
            s["score"] = json!(5);
        }
        *content = Value::String(v.to_string());
    }
    (200, reply)
}

/// Every method, with only the tools of the MCP server `spec`: each calls one and gets its answer.
fn every_method_calls_the_server(spec: &str) {
    let model = endpoint(scripted);
    let dir = tempfile::tempdir().unwrap();
    for method in METHODS {
        let out = dir.path().join(method);
        run_101(&model.url, method, &out, &["--tools", "mcp", "--mcp", spec])
            .success()
            .no_panic()
            .stdout_has("functions: mcp__sum2act__");
        let file = answer(&out, method);
        let offered = file["answer_generation"]["function"].to_string();
        assert!(
            offered.contains("mcp__sum2act__current_weather_for_skycast_weather"),
            "{method}: {offered}"
        );
        let called = mcp_observations(&file);
        assert!(
            !called.is_empty(),
            "{method}: no MCP call in {}",
            file["sum2act"]["steps"]
        );
        assert!(
            called.iter().any(|o| o["failed"] == false
                && o["function"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("mcp__sum2act__")),
            "{method}: {called:?}"
        );
    }
}

#[test]
fn every_method_uses_serve_mcp_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let data = small_catalogue(dir.path());
    every_method_calls_the_server(&serve_mcp_command(&format!("--data {}", data.display())));
}

#[test]
fn every_method_uses_serve_mcp_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let data = small_catalogue(dir.path());
    let served = serve_mcp_http(&data);
    assert!(served.url.ends_with("/mcp"), "{}", served.line);
    every_method_calls_the_server(&served.url);
}

#[test]
fn servers_at_once_join_the_querys_apis_under_their_own_names() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let data = small_catalogue(dir.path());
    let http = serve_mcp_http(&data);
    let stdio = serve_mcp_command(&format!("--data {}", data.display()));
    // With MCP servers given, the default tool set is the query's APIs plus theirs. Both servers call
    // themselves `sum2act`: the second one's functions are spaced as `sum2act2`.
    let servers = ["--mcp", stdio.as_str(), "--mcp", http.url.as_str()];
    run_101(&model.url, "react", dir.path(), &servers)
        .success()
        .stdout_has("MCP servers: sum2act (")
        .stdout_has("; sum2act2 (");
    let file = answer(dir.path(), "react");
    let offered: Vec<String> = file["answer_generation"]["function"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap_or("").to_string())
        .collect();
    let at = |prefix: &str| offered.iter().position(|n| n.starts_with(prefix));
    let (first, second) = (at("mcp__sum2act__"), at("mcp__sum2act2__"));
    assert!(
        matches!((first, second), (Some(a), Some(b)) if 0 < a && a < b),
        "{offered:?}"
    );
    // The query's 4 weather APIs, each server's 4, and Finish.
    assert_eq!(offered.len(), 4 + 4 + 4 + 1, "{offered:?}");
    assert_eq!(offered.last().map(String::as_str), Some("Finish"));
    // `query` names the same set as `oracle`.
    let again = dir.path().join("again");
    let mut args = servers.to_vec();
    args.extend(["--tools", "query+mcp"]);
    run_101(&model.url, "react", &again, &args).success();
    assert_eq!(
        answer(&again, "react")["answer_generation"]["function"],
        file["answer_generation"]["function"]
    );
}

#[test]
fn chat_offers_and_calls_mcp_tools() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let data = small_catalogue(dir.path());
    let spec = serve_mcp_command(&format!("--data {}", data.display()));
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .env("XDG_CACHE_HOME", dir.path())
        .args(["chat", "--model", "mock", "--tools", "mcp", "--mcp", &spec])
        .stdin("What is the weather in Lisbon right now?\n/tools\n/quit\n")
        .run()
        .success()
        .no_panic()
        .stdout_has("action:  mcp__sum2act__current_weather_for_skycast_weather")
        .stdout_has("[mcp · code 0 · ok")
        .stdout_has("  mcp__sum2act__forecast_for_skycast_weather");
}

#[test]
fn bad_mcp_setups_are_usage_errors() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["--mcp", "ws://127.0.0.1:1/mcp"], "not supported"),
        (&["--mcp", "a='b"], "unbalanced quotes"),
        (&["--mcp", "/nonexistent/mcp-server --x"], "cannot start it"),
        (
            &["--mcp", "echo not a server"],
            "did not complete the MCP handshake",
        ),
        (&["--tools", "mcp"], "needs MCP servers"),
        (
            &["--mcp", "echo x", "--tools", "oracle"],
            "--tools oracle+mcp",
        ),
    ];
    for (args, says) in cases {
        run_101(&model.url, "react", dir.path(), args)
            .failure(2)
            .no_panic()
            .stderr_has(says);
    }
}

/// A scripted MCP server (POSIX sh): answers the handshake and `tools/list` with one tool, writes its
/// pid to `pid`, and exits with status 3 at the first `tools/call`.
fn dying_server(dir: &Path) -> (String, PathBuf) {
    let pid = dir.join("pid");
    let script = dir.join("dying.sh");
    let text = r#"echo $$ > "$1"
id() { printf '%s' "$1" | sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
while read -r line; do
  case "$line" in
    *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"dying","version":"1"}}}\n' "$(id "$line")";;
    *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}\n' "$(id "$line")";;
    *'"tools/call"'*) echo "out of memory (scripted)" >&2; exit 3;;
  esac
done
"#;
    std::fs::write(&script, text).unwrap();
    (format!("sh {} {}", script.display(), pid.display()), pid)
}

fn process_alive(pid_file: &Path) -> bool {
    let pid = std::fs::read_to_string(pid_file).unwrap_or_default();
    let pid = pid.trim();
    !pid.is_empty() && Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn a_server_that_dies_mid_run_is_a_failed_call_and_exit_1() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let (spec, pid) = dying_server(dir.path());
    let out = dir.path().join("out");
    run_101(
        &model.url,
        "react",
        &out,
        &["--tools", "mcp", "--mcp", &spec],
    )
    .failure(1)
    .no_panic()
    .stderr_has("MCP server `dying`")
    .stderr_has("stopped during the run")
    .stderr_has("exit status: 3");
    let file = answer(&out, "react");
    let steps = file["sum2act"]["steps"].as_array().unwrap();
    let call = &steps[0]["observation"];
    assert_eq!(call["function"], "mcp__dying__echo");
    assert_eq!(call["failed"], true);
    assert!(
        call["error"]
            .as_str()
            .unwrap()
            .contains("out of memory (scripted)"),
        "{call}"
    );
    assert!(!process_alive(&pid));
    // `batch` writes the answer file and exits 1 the same way.
    let run = dir.path().join("batch");
    batch_101_react(&model.url, &spec, &run)
        .failure(1)
        .no_panic()
        .stderr_has("stopped during the run");
    assert_eq!(
        answer(&run, "react")["sum2act"]["steps"][0]["observation"]["failed"],
        true
    );
}

#[test]
fn stdio_servers_do_not_outlive_the_run() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let pid = dir.path().join("pid");
    // `sh` keeps its pid across `exec`, so the file names the server itself.
    let spec = format!(
        "sh -c 'echo $$ > {}; exec {}'",
        pid.display(),
        serve_mcp_command("")
    );
    for method in ["react", "plan"] {
        run_101(
            &model.url,
            method,
            dir.path(),
            &["--tools", "mcp", "--mcp", &spec],
        )
        .success();
        assert!(pid.is_file());
        assert!(
            !process_alive(&pid),
            "{method}: the MCP server outlived the run"
        );
        std::fs::remove_file(&pid).unwrap();
    }
}

/// The interpreter with the Python `mcp` package: `$SUM2ACT_TEST_PYTHON`, else `python3` when it can
/// import `mcp`.
fn python_with_mcp() -> Option<String> {
    let python = std::env::var("SUM2ACT_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(python)
}

const PYTHON_CLIENT: &str = r#"
import asyncio, json, sys
from mcp import Client
from mcp.client.stdio import StdioServerParameters

async def main():
    server = StdioServerParameters(command=sys.argv[1], args=["serve", "--mcp"]) if sys.argv[2] == "stdio" else sys.argv[2]
    async with Client(server) as client:
        listed = await client.list_tools()
        names = [t.name for t in listed.tools]
        result = await client.call_tool("coin_price_for_coinpulse", {"symbol": "BTC"})
        print(json.dumps({"tools": names, "is_error": result.is_error, "text": result.content[0].text}))

asyncio.run(main())
"#;

#[test]
fn the_python_mcp_client_lists_and_calls_serve_mcp() {
    let Some(python) = python_with_mcp() else {
        eprintln!(
            "skipped: no Python with the `mcp` package (pip install mcp; SUM2ACT_TEST_PYTHON=...)"
        );
        return;
    };
    let served = Test::new()
        .args(["serve", "--mcp", "http", "--port", "0"])
        .serve();
    for transport in ["stdio", served.url.as_str()] {
        let out = std::process::Command::new(&python)
            .args([
                "-c",
                PYTHON_CLIENT,
                env!("CARGO_BIN_EXE_sum2act"),
                transport,
            ])
            .env_remove("SUM2ACT_DATA")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{transport}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_str(stdout.trim()).unwrap();
        assert_eq!(
            v["tools"].as_array().map(Vec::len),
            Some(55),
            "{transport}: {v}"
        );
        assert_eq!(v["is_error"], false, "{transport}: {v}");
        assert!(
            v["text"].as_str().unwrap_or("").contains("BTC"),
            "{transport}: {v}"
        );
    }
}
