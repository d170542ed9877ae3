//! The command line: flags are defined once here and in each subcommand's file; `run` dispatches.

pub mod agent_args;
mod batch;
mod budget_args;
mod by_hand;
mod calibrate;
mod chat;
mod compare;
mod data;
pub mod eval;
mod eval_input;
mod eval_tools;
mod exit;
mod export;
mod index;
mod index_graph;
mod judge_args;
mod limits_args;
mod llm;
mod llm_args;
#[cfg(feature = "local-model")]
mod llm_bench;
mod media_server;
mod merge;
mod progress;
mod report;
mod retrieve;
mod retriever_args;
mod run;
mod serve;
mod serve_fidelity;
mod serve_llm;
mod settings_check;
mod solver_args;
mod tool_args;
mod values;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::config::Config;
pub use exit::BadInput;

/// A harness for LLM agents on ToolBench: Sum2Act, ReAct and DFSDT over RapidAPI-style tools,
/// offline by default (embedded model + embedded tool server + shipped sample).
#[derive(Debug, Parser)]
#[command(name = "sum2act", version, about, long_about = None)]
#[command(
    after_help = "Environment:\n  SUM2ACT_DATA      default data directory (else the shipped sample)\n  SUM2ACT_CONFIG    config file (TOML) with endpoints and limits\n  OPENAI_BASE_URL   use an OpenAI-compatible endpoint instead of the embedded model (or OPENAI_API_BASE)\n  TOOLBENCH_SERVICE_URL  a /virtual tool server instead of the embedded one (or SERVICE_URL)\n  OPENAI_API_KEY    its key, never logged (or OPENAI_KEY)\n  SUM2ACT_MODEL     model name at that endpoint (or GPT_MODEL), or path of the embedded GGUF model"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The process's command line (on bad flags, clap prints why and exits with code 2).
    pub fn from_env() -> Self {
        <Self as Parser>::parse()
    }
}

/// Flags every subcommand accepts.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Data directory with queries/ and tools/ (default: the shipped sample).
    #[arg(long, global = true, env = "SUM2ACT_DATA", value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Config file (TOML) for endpoints, limits and prices.
    #[arg(long, global = true, env = "SUM2ACT_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// More logging (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Solve one query (from the data, or typed) and print every step and the state.
    Run(Box<run::RunArgs>),
    /// An interactive Sum2Act session: the state carries over between requests.
    Chat(Box<chat::ChatArgs>),
    /// Inspect a data directory.
    Data(data::DataArgs),
    /// Pass rate (LLM judge votes), judge-free metrics and judge calibration of a run.
    Eval(Box<eval::EvalArgs>),
    /// Win rate of RUN_B against RUN_A with paired bootstrap intervals and sign tests.
    Compare(Box<compare::CompareArgs>),
    /// The judge's agreement with hand labels over many runs, both modes, on one half of the labels;
    /// per-method pass rates beside the labelled rates; `--save` records it in the registry.
    Calibrate(Box<calibrate::CalibrateArgs>),
    /// Run a method over whole subsets: concurrent, resumable, shardable, with progress and a summary.
    Batch(Box<batch::BatchArgs>),
    /// Copy a run in another harness's format: `--format stabletoolbench` for its converter and evaluator.
    Export(export::ExportArgs),
    /// Join run directories (e.g. shards of one batch) into one.
    Merge(merge::MergeArgs),
    /// Write a self-contained HTML report (pass rates, costs, trajectory viewer) for run directories.
    Report(report::ReportArgs),
    /// Check that runs differ only in the method or the model: the budget, tools, prompts and options
    /// they differ in besides are named (exit 2).
    Settings(settings_check::SettingsArgs),
    /// Check the configured model (the embedded one by default): answer a prompt, show tokens and speed.
    Llm(llm::LlmCmdArgs),
    /// Serve the configured model (embedded by default) on loopback port 8081 as an OpenAI-compatible
    /// endpoint; `--by-hand DIR`: every request is answered by a reader through DIR.
    ServeLlm(Box<serve_llm::ServeLlmArgs>),
    /// The reader's side of `serve-llm --by-hand DIR`: claim a request (`next`), answer it (`reply`),
    /// see the queue (`status`), hand back an abandoned one (`release`).
    ByHand(by_hand::ByHandArgs),
    /// The virtual RapidAPI server (StableToolBench's /virtual protocol) for a data directory: cached,
    /// simulated or LLM answers, fault injection; `serve import-cache` converts StableToolBench caches.
    Serve(Box<serve::ServeArgs>),
    /// The media tools (OCR, text to speech, image edits, QR codes, metadata) as an MCP server over stdio.
    MediaServer(media_server::MediaServerArgs),
    /// The API retrieval index: `index build` caches it for a data directory's catalogue.
    Index(index::IndexArgs),
    /// Rank the catalogue's APIs for an instruction, or `retrieve eval` to score the retriever against BM25.
    Retrieve(Box<retrieve::RetrieveArgs>),
}

/// Runs the parsed command line and maps the outcome to an exit code (0 ok, 1 failed, 2 bad input).
pub async fn run(cli: Cli) -> ExitCode {
    match dispatch(cli).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            exit::code_of(&e)
        }
    }
}

/// Opens `--data` (or the default) and loads its tool catalogue. A broken tool file is bad input, as
/// in `data stats`: skipping it would quietly drop the queries that use its tool (exit 2, naming it).
pub(crate) fn open_data(
    global: &GlobalArgs,
) -> Result<
    (
        sum2act_core::toolbench::DataDir,
        sum2act_core::toolbench::Catalog,
    ),
    sum2act_core::toolbench::DataError,
> {
    let data = sum2act_core::toolbench::DataDir::open_or_default(global.data.as_deref())?;
    let load = data.catalog()?;
    if let Some(first) = load.broken.first() {
        return Err(sum2act_core::toolbench::DataError::Other(format!(
            "{} tool file(s) cannot be read; fix or remove them (`sum2act data stats` lists them all). First: {first}",
            load.broken.len()
        )));
    }
    Ok((data, load.catalog))
}

/// Warns once per tool that `queries` name and the catalogue lacks (such queries are not refused:
/// a remote tool server may know the tool).
pub(crate) fn warn_missing_tools(
    subset: &str,
    queries: &[sum2act_core::toolbench::Query],
    catalog: &sum2act_core::toolbench::Catalog,
) {
    for missing in sum2act_core::toolbench::missing_tools(queries, catalog) {
        eprintln!(
            "warning: {}: {missing}",
            sum2act_core::terminal::safe_line(subset)
        );
    }
}

async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    let config = Config::load(cli.global.config.as_deref())?;
    match cli.command {
        Command::Run(args) => run::run(&cli.global, &config, *args).await,
        Command::Chat(args) => chat::run(&cli.global, &config, *args).await,
        Command::Data(args) => data::run(&cli.global, &config, args),
        Command::Eval(args) => eval::run(&cli.global, &config, *args).await,
        Command::Compare(args) => compare::run(&cli.global, &config, *args).await,
        Command::Calibrate(args) => calibrate::run(&cli.global, &config, *args).await,
        Command::Batch(args) => batch::run(&cli.global, &config, *args).await,
        Command::Merge(args) => merge::run(args),
        Command::Export(args) => export::run(args),
        Command::Report(args) => report::run(args),
        Command::Settings(args) => settings_check::run(args),
        Command::Llm(args) => llm::run(&cli.global, &config, args).await,
        Command::ServeLlm(args) => serve_llm::run(&cli.global, &config, *args).await,
        Command::ByHand(args) => by_hand::run(args).await,
        Command::Serve(args) => serve::run(&cli.global, &config, *args).await,
        Command::MediaServer(args) => media_server::run(&cli.global, args).await,
        Command::Index(args) => index::run(&cli.global, &config, args).await,
        Command::Retrieve(args) => retrieve::run(&cli.global, &config, *args),
    }
}
