//! Batch throughput against mock servers (the speed targets):
//! 1. 52 G1-like queries, concurrency 8, zero-latency mock LLM + the embedded tool server:
//!    wall < 1.5 s and harness CPU ≤ 2 ms per LLM call (process CPU minus the mock's thread).
//!    After the last query the harness stops within 1 s (the summary is printed then).
//! 2. 100 queries, a mock LLM with 200 ms latency, concurrency 32: within 15% of the ideal time
//!    (waves × LLM calls per query × latency), i.e. the harness adds no waiting of its own.
//!
//! Real stack end to end: the Sum2Act solver, the OpenAI HTTP client, the embedded `/virtual` server.
//! Uses /work/shared-style data (`../shared/toolbench`, G1_instruction) when present, else the sample.
//! `cargo bench --bench batch` (exits 1 when a target is missed).

#[path = "../tests/cli/support/mock_openai.rs"]
mod mock_openai;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sum2act::harness::{Harness, SolverOptions};
use sum2act_core::agent::AgentOptions;
use sum2act_core::batch::{BatchOptions, NoProgress, SolverJob, StopSignal, run_batch};
use sum2act_core::llm::{EndpointSpec, LlmOptions};
use sum2act_core::toolbench::{DataDir, Task};
use sum2act_server::ToolOptions;

/// CPU seconds (user + system) of this process, or of one of its threads, from /proc.
fn cpu_seconds(stat_path: &str) -> f64 {
    let Ok(text) = std::fs::read_to_string(stat_path) else {
        return 0.0;
    };
    // Fields after the `(comm)`; utime and stime are fields 14 and 15 (1-based) of the whole line.
    let Some(rest) = text.rfind(')').map(|i| &text[i + 2..]) else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields
        .get(11)
        .and_then(|u| u.parse::<f64>().ok())
        .unwrap_or(0.0)
        + fields
            .get(12)
            .and_then(|s| s.parse::<f64>().ok())
            .unwrap_or(0.0);
    ticks / 100.0
}

fn data_dir() -> PathBuf {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/toolbench");
    if shared.join("queries/G1_instruction.json").is_file() {
        shared
    } else {
        sum2act_core::toolbench::sample_dir()
    }
}

/// `n` G1 tasks: the data's G1_instruction queries, repeated with fresh ids when there are fewer.
fn g1_tasks(data: &DataDir, n: usize) -> Vec<Task> {
    let load = data.catalog().expect("catalogue");
    let base: Vec<Task> = data
        .queries("G1_instruction")
        .expect("G1_instruction")
        .iter()
        .filter_map(|q| Task::from_query("G1_instruction", q, &load.catalog).ok())
        .collect();
    assert!(!base.is_empty(), "no resolvable G1 queries");
    (0..n)
        .map(|i| {
            let mut t = base[i % base.len()].clone();
            t.query_id = 1_000_000 + i as u64;
            t
        })
        .collect()
}

struct Measured {
    wall: f64,
    llm_calls: u64,
    harness_cpu: f64,
    finished: usize,
    /// Seconds the harness took to stop after the last query.
    shutdown: f64,
}

async fn measure(
    data: &DataDir,
    tasks: &[Task],
    concurrency: usize,
    latency: Duration,
) -> Measured {
    let (url, thread, stop) = mock_openai::MockOpenAi::spawn_thread_with_tid(latency);
    let (url, mock_tid) = url;
    let options = SolverOptions {
        method: sum2act_core::agent::Method::Sum2act,
        agent: AgentOptions::default(),
        llm: LlmOptions {
            endpoints: vec![EndpointSpec {
                base_url: url.clone(),
                api_key: None,
                model: Some("mock".into()),
            }],
            ..LlmOptions::default()
        },
        tools: ToolOptions::default(),
    };
    let harness = Harness::build(options, data).await.expect("harness");
    let job = Arc::new(SolverJob::new(harness.env.clone()));
    let dir = tempfile::tempdir().expect("tempdir");
    let batch = BatchOptions {
        run_dir: dir.path().to_path_buf(),
        concurrency,
        repeats: 1,
    };
    let mock_stat = format!("/proc/self/task/{mock_tid}/stat");
    let (cpu0, mock0) = (cpu_seconds("/proc/self/stat"), cpu_seconds(&mock_stat));
    let started = Instant::now();
    let outcome = run_batch(tasks, job, &batch, Arc::new(NoProgress), &StopSignal::new())
        .await
        .expect("batch");
    let wall = started.elapsed().as_secs_f64();
    let (cpu1, mock1) = (cpu_seconds("/proc/self/stat"), cpu_seconds(&mock_stat));
    let llm_calls = outcome.episodes.iter().map(|e| e.counters.llm_calls).sum();
    // What a user waits for after the last query: the harness stopping (issue 42 item 12: the embedded
    // tool server's shutdown once waited out the client's idle keep-alive connections, 10 s).
    let stopping = Instant::now();
    harness.shutdown().await;
    let shutdown = stopping.elapsed().as_secs_f64();
    let _ = stop.send(());
    let _ = thread.join();
    Measured {
        wall,
        llm_calls,
        harness_cpu: (cpu1 - cpu0) - (mock1 - mock0),
        finished: outcome.episodes.len(),
        shutdown,
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let data = DataDir::open(&data_dir()).expect("data");
    println!("data: {}", data.root().display());
    let mut ok = true;

    // Warm-up (connection pools, prompt loading, page cache).
    runtime.block_on(measure(&data, &g1_tasks(&data, 8), 8, Duration::ZERO));

    let tasks = g1_tasks(&data, 52);
    let m = runtime.block_on(measure(&data, &tasks, 8, Duration::ZERO));
    let cpu_per_call_ms = 1000.0 * m.harness_cpu / m.llm_calls.max(1) as f64;
    let pass1 = m.finished == 52 && m.wall < 1.5 && cpu_per_call_ms <= 2.0 && m.shutdown < 1.0;
    ok &= pass1;
    println!(
        "52 queries, concurrency 8, zero-latency mocks: wall {:.3} s (target < 1.5), shutdown {:.3} s (target < 1), {} LLM calls, harness CPU {:.3} s = {:.2} ms per LLM call (target ≤ 2) [{}]",
        m.wall,
        m.shutdown,
        m.llm_calls,
        m.harness_cpu,
        cpu_per_call_ms,
        if pass1 { "ok" } else { "MISSED" }
    );

    let latency = Duration::from_millis(200);
    let tasks = g1_tasks(&data, 100);
    let m = runtime.block_on(measure(&data, &tasks, 32, latency));
    let calls_per_query = m.llm_calls as f64 / m.finished.max(1) as f64;
    let waves = 100usize.div_ceil(32) as f64;
    let ideal = waves * calls_per_query * latency.as_secs_f64();
    let over = m.wall / ideal - 1.0;
    let pass2 = m.finished == 100 && over <= 0.15;
    ok &= pass2;
    println!(
        "100 queries, concurrency 32, 200 ms mock LLM: wall {:.3} s, ideal {:.3} s ({waves} waves × {calls_per_query:.2} calls × 200 ms), {:+.1}% (target ≤ +15%) [{}]",
        m.wall,
        ideal,
        over * 100.0,
        if pass2 { "ok" } else { "MISSED" }
    );
    if !ok {
        std::process::exit(1);
    }
}
