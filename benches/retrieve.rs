//! Retrieval speed: building the index for the catalogue (2,490 APIs in `../shared/toolbench`, else
//! the sample) in memory and on disk, opening the cached index, and query latency p50/p99 over every
//! query of the data directory. Targets: in-memory build < 5 s, query p99 < 20 ms. Where
//! all-MiniLM-L6-v2 is installed (`scripts/fetch-model.sh minilm`), also the `--dense` variant:
//! embedding the catalogue and query latency (reported, no target).
//! `cargo bench --bench retrieve` (exits 1 when a target is missed).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use sum2act_core::toolbench::{DataDir, sample_dir};
use sum2act_retrieve::{RetrieveOptions, Retriever, minilm};

fn main() -> ExitCode {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/toolbench");
    let root = if shared.join("tools").is_dir() {
        shared
    } else {
        sample_dir()
    };
    let Ok(data) = DataDir::open(&root) else {
        eprintln!("no data directory at {}", root.display());
        return ExitCode::from(1);
    };
    let Ok(load) = data.catalog() else {
        eprintln!("cannot load the catalogue of {}", root.display());
        return ExitCode::from(1);
    };
    let catalog = load.catalog;

    let started = Instant::now();
    let Ok(retriever) = Retriever::build(&catalog, &RetrieveOptions::default()) else {
        eprintln!("index build failed");
        return ExitCode::from(1);
    };
    let build_memory = started.elapsed().as_secs_f64();

    let Ok(tmp) = tempfile::tempdir() else {
        return ExitCode::from(1);
    };
    let disk = RetrieveOptions {
        index_dir: Some(tmp.path().to_path_buf()),
        write: true,
        ..RetrieveOptions::default()
    };
    let started = Instant::now();
    if Retriever::build(&catalog, &disk).is_err() {
        eprintln!("on-disk index build failed");
        return ExitCode::from(1);
    }
    let build_disk = started.elapsed().as_secs_f64();
    let started = Instant::now();
    if Retriever::build(&catalog, &disk).is_err() {
        eprintln!("opening the cached index failed");
        return ExitCode::from(1);
    }
    let open_cached = started.elapsed().as_secs_f64();

    let mut queries = Vec::new();
    for subset in data.subsets().unwrap_or_default() {
        queries.extend(
            data.queries(&subset)
                .unwrap_or_default()
                .into_iter()
                .map(|q| q.query),
        );
    }
    let Some(times) = latencies(&retriever, &queries, 3) else {
        return ExitCode::from(1);
    };
    let (p50, p99) = (percentile(&times, 0.5), percentile(&times, 0.99));
    println!(
        "data: {} ({} APIs, {} tools)",
        root.display(),
        retriever.api_count(),
        retriever.tool_count()
    );
    println!("index build (memory): {build_memory:.3} s");
    println!("index build (disk):   {build_disk:.3} s");
    println!(
        "open cached index:    {open_cached:.3} s (includes catalogue fingerprint and analysis)"
    );
    println!(
        "query latency over {} searches: p50 {p50:.2} ms, p99 {p99:.2} ms",
        times.len()
    );
    dense(&catalog, &queries);
    let ok = build_memory < 5.0 && p99 < 20.0;
    println!("{}", if ok { "targets met" } else { "TARGET MISSED" });
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Search latencies in ms, sorted; `None` when a search fails.
fn latencies(retriever: &Retriever, queries: &[String], rounds: usize) -> Option<Vec<f64>> {
    let mut times = Vec::with_capacity(queries.len() * rounds);
    for _ in 0..rounds {
        for q in queries {
            let t = Instant::now();
            if retriever.search(q, 10).is_err() {
                eprintln!("search failed: {q}");
                return None;
            }
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    times.sort_by(f64::total_cmp);
    Some(times)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted
        .get(((sorted.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or(0.0)
}

/// The `--dense` variant, when the sentence encoder is installed.
fn dense(catalog: &sum2act_core::toolbench::Catalog, queries: &[String]) {
    let Some(dir) = minilm::default_model_dir().filter(|d| d.join("model.safetensors").exists())
    else {
        println!("dense: skipped (no all-MiniLM-L6-v2; scripts/fetch-model.sh minilm)");
        return;
    };
    let started = Instant::now();
    let Ok(model) = minilm::MiniLm::load(&dir) else {
        println!("dense: cannot load {}", dir.display());
        return;
    };
    let load = started.elapsed().as_secs_f64();
    let options = RetrieveOptions {
        encoder: Some(Arc::new(model)),
        ..RetrieveOptions::default()
    };
    let started = Instant::now();
    let Ok(retriever) = Retriever::build(catalog, &options) else {
        println!("dense: index build failed");
        return;
    };
    let embed = started.elapsed().as_secs_f64();
    let Some(times) = latencies(&retriever, queries, 1) else {
        return;
    };
    println!(
        "dense: model load {load:.2} s; embedding {} APIs {embed:.1} s (cached after the first run)",
        retriever.api_count()
    );
    println!(
        "dense query latency over {} searches: p50 {:.1} ms, p99 {:.1} ms",
        times.len(),
        percentile(&times, 0.5),
        percentile(&times, 0.99)
    );
}
