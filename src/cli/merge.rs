//! `sum2act merge OUT RUN_DIR...`: joins sharded run directories into one.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::exit::classify;
use sum2act_core::batch::merge::{MergeOptions, merge};
use sum2act_core::batch::{RunLock, Summary, scan_run_dir};

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The merged run directory (created if missing; an existing run there must have the same method).
    #[arg(value_name = "OUT")]
    pub out: PathBuf,
    /// Run directories to join (e.g. one per shard).
    #[arg(value_name = "RUN_DIR", required = true)]
    pub runs: Vec<PathBuf>,
    /// Merge runs of different models too (methods must always match).
    #[arg(long)]
    pub force: bool,
    /// Merge an incomplete set of shards (their run.json files say which slice each is), or shards
    /// with unanswered queries (cut short mid-run): what is missing is named instead of refused.
    #[arg(long)]
    pub allow_partial: bool,
}

pub fn run(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let _lock = RunLock::acquire(&args.out, "merge", "OUT").map_err(classify)?;
    let options = MergeOptions {
        force: args.force,
        allow_partial: args.allow_partial,
    };
    let outcome = merge(&args.out, &args.runs, options).map_err(classify)?;
    if let Some(missing) = outcome.missing_message() {
        eprintln!("warning: {missing}; `sum2act eval` counts their queries as missing answers");
    }
    for incomplete in &outcome.completeness.incomplete {
        eprintln!("warning: {incomplete}; `sum2act eval` counts them as missing answers");
    }
    for why in &outcome.completeness.unchecked {
        eprintln!("warning: not checked for unanswered queries: {why}");
    }
    println!(
        "merged {} run(s) into {}: {} answer files copied, {} already there",
        args.runs.len(),
        args.out.display(),
        outcome.copied,
        outcome.identical
    );
    for path in &outcome.conflicts {
        eprintln!(
            "warning: {} differs from the file already merged for that query; kept the first",
            path.display()
        );
    }
    for path in &outcome.unreadable {
        eprintln!(
            "warning: {} is not a readable answer file; not merged",
            path.display()
        );
    }
    let (files, _) = scan_run_dir(&args.out).map_err(classify)?;
    let mut per_subset: BTreeMap<String, usize> = BTreeMap::new();
    for (_, _, view) in &files {
        *per_subset.entry(view.subset.clone()).or_default() += 1;
    }
    let episodes: Vec<_> = files.into_iter().map(|f| f.2).collect();
    let summary = Summary::build(
        &outcome.manifest.method,
        &outcome.manifest.model,
        &per_subset,
        &episodes,
        0.0,
    );
    print!("{}", summary.table());
    Ok(if outcome.conflicts.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
