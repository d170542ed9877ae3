//! What the harness adds to an MCP tool call over stdio (target: at most 2 ms at the median).
//!
//! Two copies of the same server, `serve --mcp`'s code (the shipped sample's APIs, a call answered
//! from its response cache), each a child process on stdio: this bench binary started again in
//! server mode, so nothing else needs building. One is called directly with the MCP SDK's client
//! (`call_tool`: the transport, the server and its answer: "the server's own time"); the other
//! through the harness (`ToolCaller::call`: argument parsing and checks, rate-limit and timeout
//! wrappers, file handles, the reply made into an observation). Calls alternate between the two,
//! so both see the same machine load; the difference of the medians is the harness's time.
//!
//! `cargo bench --bench mcp [-- --calls N]`; exits 1 when the target is missed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value, json};

use sum2act_core::tools::mcp::{McpHub, McpOptions, McpSpec, McpTransport};
use sum2act_core::tools::{HttpSource, ToolConfig, ToolEnv};
use sum2act_server::mcp::{CatalogueMcp, serve_stdio};
use sum2act_server::sample_api;

const TARGET_MS: f64 = 2.0;
/// Set in the child: serve the sample over stdio instead of measuring.
const SERVE_ENV: &str = "SUM2ACT_BENCH_MCP_SERVE";
/// A call the sample's response cache answers.
const TOOL: &str = "search_recipes_for_recipe_box";

fn arguments() -> Map<String, Value> {
    let Value::Object(m) = json!({"ingredient": "chickpeas"}) else {
        unreachable!()
    };
    m
}

fn flag(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1).cloned()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len().max(1) - 1) as f64 * p).round() as usize;
    sorted.get(i).map_or(0.0, |d| ms(*d))
}

/// The child: `serve --mcp` over the sample, schema simulation behind the cache, no faults.
async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    serve_stdio(CatalogueMcp::new(Arc::new(sample_api()?))).await?;
    Ok(())
}

fn this_binary() -> Result<String, Box<dyn std::error::Error>> {
    Ok(std::env::current_exe()?.to_string_lossy().into_owned())
}

async fn measure(calls: usize) -> Result<bool, Box<dyn std::error::Error>> {
    // Direct: the SDK's client on one child.
    let mut cmd = tokio::process::Command::new(this_binary()?);
    cmd.env(SERVE_ENV, "1").kill_on_drop(true);
    let direct = ().serve(rmcp::transport::TokioChildProcess::new(cmd)?).await?;
    // Through the harness: the hub and a caller on another child (the virtual source is never called).
    let spec = McpSpec {
        name: Some("bench".into()),
        transport: McpTransport::Stdio {
            program: this_binary()?,
            args: Vec::new(),
            env: [(SERVE_ENV.to_string(), "1".to_string())].into(),
        },
    };
    let hub = Arc::new(McpHub::connect(&[spec], &McpOptions::default()).await?);
    let unused = Arc::new(HttpSource::new("http://127.0.0.1:9/virtual", None)?);
    let env = ToolEnv::new(unused, ToolConfig::default()).with_mcp(hub.clone());
    let caller = env.caller(hub.functions().to_vec());
    let name = format!("mcp__bench__{TOOL}");
    let text = Value::Object(arguments()).to_string();

    let (mut raw, mut harness) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for i in 0..calls + calls / 10 {
        let t = Instant::now();
        let r = direct
            .call_tool(CallToolRequestParams::new(TOOL).with_arguments(arguments()))
            .await?;
        let d_raw = t.elapsed();
        let t = Instant::now();
        let obs = caller.call(&name, &text).await;
        let d_harness = t.elapsed();
        if r.is_error == Some(true)
            || obs.failed
            || obs.source != sum2act_core::tools::ReplySource::Mcp
        {
            return Err(format!("the call failed: {r:?} / {obs:?}").into());
        }
        // The first tenth warms both up.
        if i >= calls / 10 {
            raw.push(d_raw);
            harness.push(d_harness);
        }
    }
    let _ = direct.cancel().await;
    hub.shutdown().await;

    raw.sort();
    harness.sort();
    let mean = |v: &[Duration]| v.iter().map(|d| ms(*d)).sum::<f64>() / v.len().max(1) as f64;
    println!(
        "MCP tool call over stdio ({calls} calls each, alternating; `{TOOL}`, answered from the cache)"
    );
    println!(
        "{:<34} {:>9} {:>9} {:>9}",
        "", "p50 ms", "p90 ms", "mean ms"
    );
    for (label, v) in [
        ("SDK client (server's own time)", &raw),
        ("harness (ToolCaller::call)", &harness),
    ] {
        println!(
            "{label:<34} {:>9.3} {:>9.3} {:>9.3}",
            percentile(v, 0.5),
            percentile(v, 0.9),
            mean(v)
        );
    }
    let added = percentile(&harness, 0.5) - percentile(&raw, 0.5);
    println!(
        "harness time added per call: {added:.3} ms at the median, {:.3} ms on average (target <= {TARGET_MS} ms)",
        mean(&harness) - mean(&raw)
    );
    Ok(added <= TARGET_MS)
}

fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    if std::env::var_os(SERVE_ENV).is_some() {
        return match runtime.block_on(serve()) {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench server: {e}");
                std::process::ExitCode::from(1)
            }
        };
    }
    let calls = flag("--calls")
        .and_then(|n| n.parse().ok())
        .unwrap_or(500usize)
        .max(10);
    match runtime.block_on(measure(calls)) {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("target missed");
            std::process::ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(1)
        }
    }
}
