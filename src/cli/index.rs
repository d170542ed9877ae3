//! `sum2act index build`: builds the API retrieval index of a data directory's catalogue and caches
//! it on disk (keyed by a fingerprint of the catalogue) for `retrieve` and `--tools retrieved:K`.
//! `sum2act index expand`: has an LLM write example requests per API for `--examples`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::llm_args::LlmArgs;
use super::retriever_args::RetrieverArgs;
use super::{BadInput, GlobalArgs};
use crate::config::Config;
use sum2act_core::prompts::Prompts;
use sum2act_retrieve::examples::{ExampleRequests, GenerateOptions, generate};
use sum2act_retrieve::{RetrieveOptions, Retriever, default_index_dir};

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
    /// Have the LLM (the embedded model by default) write example requests for every API under
    /// DATA/tools, for `--examples FILE`. Each API's line is appended as soon as it is written, so
    /// an interrupted pass loses nothing and a rerun does only the APIs still missing.
    Expand {
        /// The JSON Lines file to write (and to resume from).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Requests to ask for per API.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=10))]
        per_api: u16,
        /// Model calls in flight (the embedded model decodes `--llm-parallel` of them together).
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
        concurrency: u16,
        /// Write at most this many APIs in this pass (a trial, or a pass in slices).
        #[arg(long)]
        limit: Option<usize>,
        #[command(flatten)]
        llm: LlmArgs,
    },
    /// Show the tool graph of DATA/tools that `--method graph` searches: its size and sample edges.
    Graph {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Edges to show.
        #[arg(long, default_value_t = 8)]
        sample: usize,
    },
}

pub async fn run(
    global: &GlobalArgs,
    config: &Config,
    args: IndexArgs,
) -> anyhow::Result<ExitCode> {
    match args.command {
        IndexCommand::Build {
            index_dir,
            json,
            retriever,
        } => build(global, index_dir, json, &retriever),
        IndexCommand::Graph { json, sample } => super::index_graph::run(global, json, sample),
        IndexCommand::Expand {
            out,
            per_api,
            concurrency,
            limit,
            llm,
        } => {
            let options = GenerateOptions {
                out,
                per_api: per_api.into(),
                concurrency: concurrency.into(),
                limit,
            };
            expand(global, config, &llm, &options).await
        }
    }
}

async fn expand(
    global: &GlobalArgs,
    config: &Config,
    llm: &LlmArgs,
    options: &GenerateOptions,
) -> anyhow::Result<ExitCode> {
    let (_, catalog) = super::open_data(global)?;
    let existing =
        ExampleRequests::load(&options.out).map_err(|e| BadInput(format!("--out: {e}")))?;
    let missing = existing.missing(&catalog).len();
    let todo = options.limit.map_or(missing, |l| l.min(missing));
    let prompts = Prompts::load()?;
    let client = sum2act_local::build(&llm.resolve(config)?).await?;
    eprintln!(
        "expand: {todo} of {missing} APIs without example requests, with {}",
        client.model_id()
    );
    let bar = super::progress::counting_bar("expand", todo, "APIs, {elapsed} (eta {eta})");
    let started = Instant::now();
    let summary = generate(client, &prompts, &catalog, &existing, options, &|n| {
        bar.set_position(n as u64)
    })
    .await
    .with_context(|| format!("writing {}", options.out.display()))?;
    bar.finish_and_clear();
    for failure in &summary.failed {
        eprintln!("failed: {failure}");
    }
    println!(
        "examples: {} APIs written in {:.0}s, {} already there, {} failed; {} of {} APIs covered -> {}",
        summary.written,
        started.elapsed().as_secs_f64(),
        summary.already,
        summary.failed.len(),
        summary.already + summary.written,
        summary.apis,
        options.out.display()
    );
    if summary.failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("run the same command again to retry the failed APIs");
        Ok(ExitCode::FAILURE)
    }
}

fn build(
    global: &GlobalArgs,
    index_dir: Option<PathBuf>,
    json: bool,
    retriever: &RetrieverArgs,
) -> anyhow::Result<ExitCode> {
    let (_, catalog) = super::open_data(global)?;
    let dir = index_dir.or_else(default_index_dir).ok_or_else(|| {
        BadInput("no index folder: pass --index-dir or set SUM2ACT_INDEX_DIR".into())
    })?;
    let started = Instant::now();
    let options = retriever.apply(RetrieveOptions {
        index_dir: Some(dir.clone()),
        write: true,
        ..RetrieveOptions::default()
    })?;
    let retriever = Retriever::build(&catalog, &options)
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
            sum2act_retrieve::IndexSource::Cached => "up to date",
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
