//! `sum2act index build`: builds the API retrieval index of a data directory's catalogue and caches
//! it on disk (keyed by a fingerprint of the catalogue) for `retrieve` and `--tools retrieved:K`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::retriever_args::RetrieverArgs;
use super::{BadInput, GlobalArgs};
use crate::config::Config;
use crate::retrieve::{RetrieveOptions, Retriever, default_index_dir};
use crate::toolbench::DataDir;

#[derive(Debug, Args)]
pub struct IndexArgs {
    #[command(subcommand)]
    pub command: IndexCommand,
}

#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Build (or refresh) the retrieval index over every API under DATA/tools.
    Build {
        /// Folder of cached indices (default: $XDG_CACHE_HOME/sum2act/index).
        #[arg(long, env = "SUM2ACT_INDEX_DIR", value_name = "DIR")]
        index_dir: Option<PathBuf>,
        /// Print JSON instead of a line of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        retriever: RetrieverArgs,
    },
}

pub fn run(global: &GlobalArgs, _config: &Config, args: IndexArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        IndexCommand::Build {
            index_dir,
            json,
            retriever,
        } => build(global, index_dir, json, &retriever),
    }
}

fn build(
    global: &GlobalArgs,
    index_dir: Option<PathBuf>,
    json: bool,
    retriever: &RetrieverArgs,
) -> anyhow::Result<ExitCode> {
    let data = DataDir::open_or_default(global.data.as_deref())?;
    let load = data.catalog()?;
    for broken in &load.broken {
        eprintln!("warning: skipped broken tool file: {broken}");
    }
    let dir = index_dir.or_else(default_index_dir).ok_or_else(|| {
        BadInput("no index folder: pass --index-dir or set SUM2ACT_INDEX_DIR".into())
    })?;
    let started = Instant::now();
    let options = retriever.apply(RetrieveOptions {
        index_dir: Some(dir.clone()),
        write: true,
        ..RetrieveOptions::default()
    })?;
    let retriever = Retriever::build(&load.catalog, &options)
        .with_context(|| format!("building the index in {}", dir.display()))?;
    let secs = started.elapsed().as_secs_f64();
    let location = retriever
        .location()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    if json {
        let out = serde_json::json!({
            "apis": retriever.api_count(),
            "tools": retriever.tool_count(),
            "index": location,
            "source": retriever.source(),
            "seconds": secs,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        let how = match retriever.source() {
            crate::retrieve::IndexSource::Cached => "up to date",
            _ => "built",
        };
        println!(
            "index {how}: {} APIs of {} tools in {:.2}s -> {location}",
            retriever.api_count(),
            retriever.tool_count(),
            secs
        );
    }
    Ok(ExitCode::SUCCESS)
}
