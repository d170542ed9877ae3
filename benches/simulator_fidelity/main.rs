//! How much information the schema simulator's replies carry (issue #18); the measurement itself is
//! `sum2act_server::fidelity` (also behind `sum2act serve fidelity`).
//!
//! `cargo bench --bench simulator_fidelity [-- --data DIR --dump FILE --sample N --skip K --verbose
//! --world DIR]`
//!
//! `--world DIR` adds part (d): the consistency of a world folder (a run's `OUT/world`).
//!
//! `--dump FILE` writes a reading sample of N APIs instead of measuring. Exits 1 when a target is
//! missed.

use std::path::{Path, PathBuf};

use sum2act_core::toolbench::DataDir;
use sum2act_server::fidelity::{Options, dump, measure, query_apis};

type Error = Box<dyn std::error::Error>;

fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared/toolbench");
    let sample = root.join("toolbench/sample");
    let data_path = flag(&args, "--data").map(PathBuf::from).unwrap_or_else(|| {
        if shared.join("tools").is_dir() {
            shared.clone()
        } else {
            sample.clone()
        }
    });
    if let Some(path) = flag(&args, "--dump") {
        let data = DataDir::open(&data_path)?;
        let catalog = data.catalog()?.catalog;
        let apis = query_apis(&data, &catalog)?;
        let n = flag(&args, "--sample")
            .and_then(|s| s.parse().ok())
            .unwrap_or(100);
        // `--skip K` reads further down the same order (for looking at replies outside the sample).
        let skip = flag(&args, "--skip")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        print!("{}", dump(&apis, skip, n, Path::new(&path))?);
        return Ok(());
    }
    let opts = Options {
        data: data_path,
        extra_recorded: Some(sample),
        verbose: args.iter().any(|a| a == "--verbose"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let report = rt.block_on(measure(&opts))?;
    print!("{}", report.table);
    if let Some(world) = flag(&args, "--world").map(PathBuf::from) {
        let c = sum2act_server::world::consistency::check(&world);
        print!("{}", c.table(&world, false));
    }
    if report.missed.is_empty() {
        println!("targets met");
        return Ok(());
    }
    for m in &report.missed {
        eprintln!("target missed: {m}");
    }
    std::process::exit(1)
}
