//! `sum2act retrieve "instruction" -k 10`: the APIs the retriever picks for an instruction;
//! `sum2act retrieve eval`: NDCG/recall of our retriever and plain BM25 on a data directory's queries.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Subcommand};

use super::retriever_args::RetrieverArgs;
use super::{BadInput, GlobalArgs};
use crate::config::Config;
use sum2act_retrieve::{
    Bm25Baseline, Half, RetrieveOptions, Retriever, Weights, default_index_dir, evaluate,
};

#[derive(Debug, Args)]
#[command(subcommand_negates_reqs = true)]
pub struct RetrieveArgs {
    #[command(subcommand)]
    pub command: Option<RetrieveCommand>,
    /// The instruction to find APIs for.
    #[arg(value_name = "INSTRUCTION")]
    pub instruction: Option<String>,
    /// How many APIs to print.
    #[arg(short, long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub k: u32,
    /// Print JSON instead of a list.
    #[arg(long)]
    pub json: bool,
    /// Folder of cached indices (built by `sum2act index build`); without one the index is built in memory.
    #[arg(long, global = true, env = "SUM2ACT_INDEX_DIR", value_name = "DIR")]
    pub index_dir: Option<PathBuf>,
    /// Ranking weights as JSON (fields of the default weights; missing ones keep their default),
    /// for tuning.
    #[arg(long, global = true, value_name = "FILE")]
    pub weights: Option<PathBuf>,
    #[command(flatten)]
    pub retriever: RetrieverArgs,
}

#[derive(Debug, Subcommand)]
pub enum RetrieveCommand {
    /// NDCG@1/3/5 and recall@5/10 per subset against each query's `relevant APIs`, for our retriever
    /// and plain BM25; the corpus is every API under DATA/tools.
    Eval {
        /// Print one JSON object: {"ours": {subset: metrics, "overall": …}, "bm25": {…}}.
        #[arg(long)]
        json: bool,
        /// Score only queries with an even or odd query_id (the default weights were tuned on the
        /// even ones, so `odd` is the held-out check).
        #[arg(long, value_parser = super::values::named::<Half>(Half::NAMES), default_value = "all")]
        half: Half,
        /// Also print every query whose NDCG@5 is below this (0–100): relevant APIs vs our top 5.
        #[arg(long, value_name = "NDCG")]
        misses: Option<f64>,
    },
}

pub fn run(global: &GlobalArgs, _config: &Config, args: RetrieveArgs) -> anyhow::Result<ExitCode> {
    let (data, catalog) = super::open_data(global)?;
    let mut options = args.retriever.apply(RetrieveOptions {
        index_dir: args.index_dir.clone().or_else(default_index_dir),
        write: false,
        ..RetrieveOptions::default()
    })?;
    if let Some(path) = &args.weights {
        options.weights = read_weights(path)?;
    }
    match args.command {
        Some(RetrieveCommand::Eval { json, half, misses }) => {
            let retriever = Retriever::build(&catalog, &options)?;
            let baseline = Bm25Baseline::build(&catalog)?;
            let report = evaluate(&data, &retriever, &baseline, half)?;
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                println!(
                    "data: {} ({} APIs of {} tools)",
                    data.root().display(),
                    retriever.api_count(),
                    retriever.tool_count()
                );
                print!("{}", report.table());
            }
            if let Some(below) = misses {
                eprint!("{}", report.misses(below));
            }
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let instruction = args
                .instruction
                .as_deref()
                .map(str::trim)
                .unwrap_or_default();
            if instruction.is_empty() {
                return Err(BadInput(
                    "retrieve: give an instruction (sum2act retrieve \"…\" -k 10) or `retrieve eval`".into(),
                )
                .into());
            }
            let retriever = Retriever::build(&catalog, &options)?;
            let started = Instant::now();
            let hits = retriever.search(instruction, args.k as usize)?;
            let elapsed = started.elapsed();
            if args.json {
                println!("{}", serde_json::to_string_pretty(&hits)?);
            } else {
                for (i, h) in hits.iter().enumerate() {
                    println!(
                        "{:>3}. {:>6.3}  {} / {}  [{}]",
                        i + 1,
                        h.score,
                        h.tool_name,
                        h.api_name,
                        h.category
                    );
                }
                if hits.is_empty() {
                    println!("no API matches");
                }
                eprintln!(
                    "{} of {} APIs in {:.1} ms",
                    hits.len(),
                    retriever.api_count(),
                    elapsed.as_secs_f64() * 1e3
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn read_weights(path: &std::path::Path) -> anyhow::Result<Weights> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| BadInput(format!("--weights {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| BadInput(format!("--weights {}: {e}", path.display())).into())
}
