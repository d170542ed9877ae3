//! Tool server performance: simulation time for every API of the data, request latency over loopback
//! HTTP (target: p50 under 5 ms for any API), and throughput under concurrent load.
//!
//! `cargo bench --bench tool_server [-- --data DIR --requests N --concurrency C]`; exits 1 when the
//! latency target is missed or a repeated request answers differently.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Map, Value, json};

use sum2act_core::toolbench::naming::param_name;
use sum2act_core::toolbench::{ApiDoc, Catalog, DataDir};
use sum2act_core::tools::{HttpSource, ToolRequest, ToolSource};
use sum2act_server::simulate::{parse_template, simulate};
use sum2act_server::{ServerOptions, VirtualApi, embedded_api, spawn};

const TARGET_P50_MS: f64 = 5.0;

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

fn default_args(doc: &ApiDoc) -> Map<String, Value> {
    doc.required()
        .iter()
        .map(|p| {
            let v = if p.default.is_null() || p.default == json!("") {
                json!("1")
            } else {
                p.default.clone()
            };
            (param_name(&p.name), v)
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let root = env!("CARGO_MANIFEST_DIR");
    let shared = PathBuf::from(root).join("../shared/toolbench");
    let data = flag(&args, "--data").map(PathBuf::from).unwrap_or_else(|| {
        if shared.join("tools").is_dir() {
            shared
        } else {
            PathBuf::from(root).join("toolbench/sample")
        }
    });
    let requests: usize = flag(&args, "--requests")
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let concurrency: usize = flag(&args, "--concurrency")
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    // `--save-new N`: also time N new calls (each with arguments never seen) with saving on.
    let save_new: Option<usize> = flag(&args, "--save-new").and_then(|s| s.parse().ok());
    let catalog = Arc::new(Catalog::load(&data.join("tools"))?.catalog);
    let docs: Vec<(String, ApiDoc)> = catalog
        .api_docs()
        .map(|(t, d)| (t.standard_name.clone(), d))
        .collect();
    println!(
        "data: {} ({} tools, {} APIs)",
        data.display(),
        catalog.tool_count(),
        docs.len()
    );

    // 1. The simulator alone.
    let mut sim = Vec::with_capacity(docs.len());
    for (_, doc) in &docs {
        let template = parse_template(doc);
        let args = default_args(doc);
        let start = Instant::now();
        let v = simulate(doc, template.as_ref(), &args);
        sim.push(start.elapsed());
        std::hint::black_box(v);
    }
    sim.sort();
    println!(
        "simulate (in process): p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms over {} APIs",
        percentile(&sim, 0.5),
        percentile(&sim, 0.99),
        percentile(&sim, 1.0),
        sim.len()
    );

    let docs = Arc::new(docs);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let failed = rt.block_on(async move {
        let api = Arc::new(VirtualApi::new(catalog, None));
        let server = spawn(api, SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await?;
        let source = Arc::new(HttpSource::new(&server.url(), None)?);
        let requests_of: Vec<ToolRequest> = docs
            .iter()
            .map(|(tool, doc)| ToolRequest {
                category: doc.category_name.clone(),
                tool_name: tool.clone(),
                api_name: doc.api_name.clone(),
                tool_input: Value::String(Value::Object(default_args(doc)).to_string()),
                strip: "truncate".into(),
            })
            .collect();

        // 2. Latency of every API over loopback HTTP, sequential, and identical on repeat.
        let mut lat = Vec::with_capacity(requests_of.len());
        let mut differing = 0;
        for req in &requests_of {
            let start = Instant::now();
            let a = source.call(req).await?;
            lat.push(start.elapsed());
            let b = source.call(req).await?;
            if a != b || !a.error.is_empty() {
                differing += 1;
            }
        }
        lat.sort();
        let p50 = percentile(&lat, 0.5);
        println!(
            "request over HTTP (sequential): p50 {p50:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms over {} APIs; {differing} differing or failed on repeat",
            percentile(&lat, 0.9),
            percentile(&lat, 0.99),
            percentile(&lat, 1.0),
            lat.len()
        );

        // 3. Throughput under concurrent load.
        let load_of: Vec<ToolRequest> = (0..requests)
            .map(|i| requests_of[i % requests_of.len()].clone())
            .collect();
        let (load, wall) = under_load(&source, load_of, concurrency).await;
        println!(
            "throughput: {:.0} requests/s ({} of {requests} ok, concurrency {concurrency}, {:.2} s); latency under load p50 {:.3} ms, p99 {:.3} ms",
            load.len() as f64 / wall.as_secs_f64(),
            load.len(),
            wall.as_secs_f64(),
            percentile(&load, 0.5),
            percentile(&load, 0.99)
        );
        server.shutdown().await;

        // 4. New calls with saving on (`serve --save`), against a copy of the data's response cache.
        if let Some(n) = save_new {
            for save in [false, true] {
                new_calls(&data, &docs, n, concurrency, save).await?;
            }
        }
        let mut failed = Vec::new();
        if p50 >= TARGET_P50_MS {
            failed.push(format!("p50 {p50:.3} ms is over the {TARGET_P50_MS} ms target"));
        }
        if differing > 0 {
            failed.push(format!("{differing} APIs answered differently on repeat or with an error"));
        }
        if load.len() < requests {
            failed.push(format!("{} requests failed under load", requests - load.len()));
        }
        Ok::<_, Box<dyn std::error::Error>>(failed)
    })?;
    if failed.is_empty() {
        println!("targets met");
        Ok(())
    } else {
        for f in &failed {
            eprintln!("target missed: {f}");
        }
        std::process::exit(1);
    }
}

/// Times `n` new calls (`--save-new N`) to the APIs that have a recorded cache file, spread over
/// them, with saving off, then on: what `serve --save` costs per new answer as the cache grows.
async fn new_calls(
    data: &std::path::Path,
    docs: &[(String, ApiDoc)],
    n: usize,
    concurrency: usize,
    save: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    // A copy of the data directory, served as `serve --save` serves one.
    let copy = tempfile::tempdir()?;
    let cache = copy.path().join("response_cache");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .args(["queries", "tools", "response_cache"].map(|d| data.join(d)))
        .arg(copy.path())
        .status()?;
    if !status.success() {
        return Err("cannot copy the data directory".into());
    }
    let recorded: Vec<&(String, ApiDoc)> = docs
        .iter()
        .filter(|(tool, doc)| {
            let api = sum2act_core::toolbench::naming::pure_api_name(&doc.api_name);
            cache
                .join(&doc.category_name)
                .join(tool)
                .join(format!("{api}.json"))
                .is_file()
        })
        .collect();
    if recorded.is_empty() {
        return Err("no API with a recorded cache file".into());
    }
    let bytes_before = dir_bytes(&cache);
    let options = ServerOptions {
        save,
        entity_memory: true,
        ..ServerOptions::default()
    };
    let api = Arc::new(embedded_api(&DataDir::open(copy.path())?, &options, None)?);
    let server = spawn(api, SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await?;
    let source = Arc::new(HttpSource::new(&server.url(), None)?);
    let requests: Vec<ToolRequest> = (0..n)
        .map(|i| {
            let (tool, doc) = recorded[i % recorded.len()];
            let mut args = default_args(doc);
            args.insert("bench_call".into(), json!(i));
            ToolRequest {
                category: doc.category_name.clone(),
                tool_name: tool.clone(),
                api_name: doc.api_name.clone(),
                tool_input: Value::String(Value::Object(args).to_string()),
                strip: "truncate".into(),
            }
        })
        .collect();
    let (lat, wall) = under_load(&source, requests, concurrency).await;
    server.shutdown().await;
    println!(
        "new calls, saving {}: {:.0} requests/s ({} of {n} ok over {} APIs with a recorded file, concurrency {concurrency}, {:.2} s); p50 {:.3} ms, p99 {:.3} ms; cache grew {} KiB",
        if save { "on (serve --save)" } else { "off" },
        lat.len() as f64 / wall.as_secs_f64(),
        lat.len(),
        recorded.len(),
        wall.as_secs_f64(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        dir_bytes(&cache).saturating_sub(bytes_before) / 1024
    );
    Ok(())
}

/// Sends `requests`, `concurrency` at a time: the sorted latencies of those answered, and the wall time.
async fn under_load(
    source: &Arc<HttpSource>,
    requests: Vec<ToolRequest>,
    concurrency: usize,
) -> (Vec<Duration>, Duration) {
    let start = Instant::now();
    let mut lat: Vec<Duration> = futures::stream::iter(requests)
        .map(|request| {
            let source = source.clone();
            async move {
                let t = Instant::now();
                let ok = source.call(&request).await.is_ok();
                (t.elapsed(), ok)
            }
        })
        .buffer_unordered(concurrency)
        .filter_map(|(d, ok)| async move { ok.then_some(d) })
        .collect()
        .await;
    let wall = start.elapsed();
    lat.sort();
    (lat, wall)
}

/// Bytes of every file under `dir`.
fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        dir_bytes(&p)
                    } else {
                        e.metadata().map_or(0, |m| m.len())
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}
