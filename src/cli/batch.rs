//! `sum2act batch`: one method over whole subsets, concurrently, resumable, with progress bars,
//! a manifest and a summary table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use serde_json::Value;

use super::eval::{EvalArgs, JudgeArgs};
use super::exit::classify;
use super::judge_args::{DEFAULT_VOTES, MAX_VOTES};
use super::llm_args::LlmArgs;
use super::progress::{ProgressMode, make_progress};
use super::solver_args::{SolverArgs, start};
use super::values::{named, subset_name};
use super::{BadInput, GlobalArgs};
use crate::config::Config;
use sum2act_core::agent::toolset::{ToolChoice, ToolSearch, ToolSet, add_mcp, task_with};
use sum2act_core::batch::{
    BatchOptions, BatchOutcome, FAIL_FAST_AFTER, MANIFEST_FILE, Manifest, RunLock, Selection,
    Shard, SolverJob, StopSignal, Summary, run_batch, select_with,
};
use sum2act_core::setup::{ErrorEpisode, SolverEnv};
use sum2act_core::toolbench::answer::FinishKind;
use sum2act_core::toolbench::io::write_json_atomic;
use sum2act_core::toolbench::{Catalog, DataDir};
use sum2act_retrieve::Retriever;

#[derive(Debug, Args)]
pub struct BatchArgs {
    /// Subsets to run, comma-separated (default: every queries/*.json of the data directory).
    #[arg(long, value_delimiter = ',', value_name = "A,B", value_parser = subset_name)]
    pub subsets: Vec<String>,
    /// The first N queries of each subset.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub limit: Option<usize>,
    /// Queries in flight at once (the LLM and tool rate limits apply on top).
    #[arg(
        long,
        default_value_t = 4,
        value_name = "K",
        allow_negative_numbers = true
    )]
    pub concurrency: usize,
    /// Runs of each query (N >= 1). Repeat 0 is today's run under its ToolBench file name; repeats
    /// 1..N-1 sample with a seed from (query id, repeat) and are stored as `{qid}_{method}.rR.json`.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeats: u32,
    /// Run directory: answer files, run.json, summary.json. Rerunning the same command resumes.
    #[arg(long, value_name = "RUN_DIR")]
    pub out: PathBuf,
    /// Run slice I of N (0-based; deterministic), or auto/N to take I from $JOB_COMPLETION_INDEX.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Resume into a run directory made with another method or model anyway.
    #[arg(long)]
    pub force: bool,
    /// Kept for older scripts: an episode that ended in `error` is never kept as an answer, so a
    /// plain rerun always runs it again.
    #[arg(long, hide = true)]
    pub retry_errors: bool,
    /// Which tools each query gets: oracle (its api_list), all, or retrieved:K, each optionally +mcp
    /// (the MCP servers' tools), or mcp alone (default: oracle, +mcp when MCP servers are given).
    #[arg(long, value_name = "SET")]
    pub tools: Option<ToolChoice>,
    /// Judge the run when it finishes (`sum2act eval RUN_DIR`; the judge is --judge, else the agent's model).
    #[arg(long)]
    pub eval: bool,
    /// Judge model for --eval (a model name at the endpoint, or a GGUF path).
    #[arg(long, value_name = "MODEL", requires = "eval")]
    pub judge: Option<String>,
    /// Judge votes per query for --eval.
    #[arg(
        long,
        default_value_t = DEFAULT_VOTES,
        value_parser = clap::value_parser!(u32).range(1..=MAX_VOTES),
        requires = "eval",
        value_name = "N"
    )]
    pub votes: u32,
    /// Progress display: bars on a terminal, plain log lines otherwise.
    #[arg(long, value_parser = named::<ProgressMode>(ProgressMode::NAMES), default_value_t = ProgressMode::default())]
    pub progress: ProgressMode,
    #[command(flatten)]
    pub solver: SolverArgs,
}

pub async fn run(
    global: &GlobalArgs,
    config: &Config,
    args: BatchArgs,
) -> anyhow::Result<ExitCode> {
    let shard = check_flags(&args)?;
    let (choice, mcp) = args
        .solver
        .tool_args
        .resolve_tools(args.tools, ToolSet::Oracle, config)?;
    let (data, catalog) = super::open_data(global)?;
    let mut selection = select(&args, choice, &data, &catalog, shard)?;
    // Held until the batch returns: a second writer on this run directory is refused (before the
    // model is loaded, so the refusal is immediate).
    let _lock = RunLock::acquire(&args.out, "batch", "--out").map_err(classify)?;

    let set = choice.catalogue.unwrap_or(ToolSet::Oracle);
    let graph = super::index_graph::for_agent(args.solver.agent.method, set, &catalog);
    let mut options = args.solver.resolve(config, Some(&args.out), mcp)?;
    options.agent.catalogue_graph = graph;
    let harness = start(options, &data).await?;
    let env = harness.env.clone();
    if let Some(hub) = env.tools.mcp() {
        for task in &mut selection.tasks {
            add_mcp(task, choice, hub.functions());
        }
    }

    let mut manifest = new_manifest(&args, config, &env, (&data, &selection), (shard, choice));
    if let Some(existing) = Manifest::read(&args.out).map_err(classify)? {
        manifest
            .check_resume(&existing, &args.out, args.force)
            .map_err(classify)?;
    }
    // Written before the first query, so even a killed run says what produced its files.
    manifest.write(&args.out).map_err(classify)?;

    // Until the first reply, the manifest can only name the model asked for.
    let meter = env.llm.meter();
    let job = Arc::new(SolverJob::new(env).with_run_dir(args.out.clone()));
    let progress = make_progress(args.progress);
    let stop = StopSignal::new();
    let ctrl_c = stop.listen_ctrl_c(progress.clone());
    let batch_options = BatchOptions {
        run_dir: args.out.clone(),
        concurrency: args.concurrency,
        repeats: args.repeats,
    };
    let outcome = run_batch(&selection.tasks, job, &batch_options, progress, &stop).await;
    ctrl_c.abort();
    let gone = harness.shutdown().await;
    if let Some(meter) = &meter {
        manifest.record_served(&meter.served_models());
    }
    manifest.updated = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    manifest.write(&args.out).map_err(classify)?;
    let outcome = outcome.map_err(classify)?;
    let summary = write_summary(&args.out, &manifest, &selection, &outcome)?;
    print_outcome(&args, &outcome, &summary, &selection, shard);
    if let Some(code) = failure_code(&args, &outcome, &manifest) {
        return Ok(code);
    }
    if !gone.is_empty() {
        for why in &gone {
            eprintln!("error: {}", sum2act_core::terminal::safe_line(why));
        }
        eprintln!(
            "its calls after that are failed observations in the answer files; restart it and rerun into a new --out"
        );
        return Ok(ExitCode::from(1));
    }
    if args.eval {
        println!();
        return evaluate(global, config, &args).await;
    }
    Ok(ExitCode::SUCCESS)
}

/// What produced the run: the method, model, data, selection, tools, prompts, options and budget.
fn new_manifest(
    args: &BatchArgs,
    config: &Config,
    env: &SolverEnv,
    (data, selection): (&DataDir, &Selection),
    (shard, choice): (Shard, ToolChoice),
) -> Manifest {
    let mut manifest = Manifest::new(env.method().name(), &env.llm.model_id());
    manifest.data = data.root().display().to_string();
    manifest.subsets = selection.subsets.clone();
    manifest.limit = args.limit;
    manifest.shard = (shard.count > 1).then(|| shard.to_string());
    manifest.tools = env.tools.settings();
    manifest.tools["tool_set"] = Value::String(choice.to_string());
    manifest.prompts = env.prompts.hashes();
    manifest.agent = args.solver.agent.manifest_value(config);
    manifest.budget = env.options.budget.record(env.method(), &manifest.prompts);
    manifest.config = serde_json::to_value(config).unwrap_or(Value::Null);
    manifest
}

/// Checks the numeric flags; returns the shard to run.
fn check_flags(args: &BatchArgs) -> anyhow::Result<Shard> {
    if args.repeats == 0 {
        return Err(BadInput("--repeats must be at least 1".into()).into());
    }
    if args.concurrency == 0 {
        return Err(BadInput("--concurrency must be at least 1".into()).into());
    }
    Ok(match &args.shard {
        Some(s) => Shard::parse(s).map_err(classify)?,
        None => Shard::default(),
    })
}

/// The queries of this shard with their tool sets; warns about missing tools and skipped queries.
fn select(
    args: &BatchArgs,
    choice: ToolChoice,
    data: &DataDir,
    catalog: &Catalog,
    shard: Shard,
) -> anyhow::Result<Selection> {
    let retriever = match choice.catalogue {
        Some(ToolSet::Retrieved(_)) => Some(Retriever::build(
            catalog,
            &args.solver.retriever.options()?,
        )?),
        _ => None,
    };
    let selection = select_with(data, &args.subsets, args.limit, shard, |subset, query| {
        task_with(
            subset,
            query,
            choice,
            catalog,
            retriever.as_ref().map(|r| r as &dyn ToolSearch),
        )
        .map_err(|e| e.to_string())
    })
    .map_err(classify)?;
    for subset in &selection.subsets {
        if let Ok(queries) = data.queries(subset) {
            super::warn_missing_tools(subset, &queries, catalog);
        }
    }
    for s in &selection.skipped {
        eprintln!("warning: skipped {} {}: {}", s.subset, s.query_id, s.reason);
    }
    if selection.tasks.is_empty() {
        return Err(BadInput(format!(
            "no queries to run in {} (subsets: {}; shard {shard})",
            data.root().display(),
            selection.subsets.join(", ")
        ))
        .into());
    }
    Ok(selection)
}

/// Writes `summary.json` over every answer file of the run directory.
fn write_summary(
    out: &Path,
    manifest: &Manifest,
    selection: &Selection,
    outcome: &BatchOutcome,
) -> anyhow::Result<Summary> {
    let mut selected: BTreeMap<String, usize> = BTreeMap::new();
    for task in &selection.tasks {
        *selected.entry(task.subset.clone()).or_default() += 1;
    }
    let summary = Summary::build(
        &manifest.method,
        &manifest.model,
        &selected,
        &outcome.episodes,
        outcome.wall_s,
    )
    .with_provenance(run_provenance(out));
    write_json_atomic(&out.join("summary.json"), &summary)?;
    Ok(summary)
}

fn print_outcome(
    args: &BatchArgs,
    outcome: &BatchOutcome,
    summary: &Summary,
    selection: &Selection,
    shard: Shard,
) {
    // Episodes that ended in error are kept as `.error` records, not as answer files.
    let errors = outcome
        .episodes
        .iter()
        .filter(|e| e.finish.is(FinishKind::Error))
        .count();
    println!(
        "run directory: {} ({} answer files{}; {} new, {} resumed{})",
        args.out.display(),
        outcome.episodes.len() - errors,
        if errors > 0 {
            format!(", {errors} error records")
        } else {
            String::new()
        },
        outcome.ran,
        outcome.resumed,
        if shard.count > 1 {
            format!("; shard {shard}")
        } else {
            String::new()
        }
    );
    print!("{}", summary.table());
    if !selection.skipped.is_empty() {
        println!(
            "{} queries skipped (their APIs are not in the tools catalogue)",
            selection.skipped.len()
        );
    }
}

/// The exit code of a batch that did not run to the end cleanly (130 interrupted, 2 a setup error,
/// 1 a fatal error or episodes that ended in error), with what to do next; `None` when it did.
fn failure_code(args: &BatchArgs, outcome: &BatchOutcome, manifest: &Manifest) -> Option<ExitCode> {
    if outcome.interrupted {
        println!(
            "interrupted: {} queries not started, {} abandoned in flight; rerun the same command to resume",
            outcome.not_started, outcome.abandoned
        );
        return Some(ExitCode::from(130));
    }
    if let Some(setup) = &outcome.setup_error {
        eprintln!(
            "error: the first episodes all failed with the same error before the model answered once, so the batch stopped ({} queries not started): {setup}",
            outcome.not_started
        );
        if ErrorEpisode::of(0, outcome.setup_cause) != ErrorEpisode::Setup {
            // The model is there but does not answer: an outage of the run, not bad input.
            eprintln!(
                "the model is there but did not answer (a timeout or a server error): check it, or raise --llm-timeout, then rerun the same command"
            );
            return Some(ExitCode::from(1));
        }
        eprintln!(
            "check the model flags (--base-url, --model, the API key), then rerun the same command"
        );
        return Some(ExitCode::from(2));
    }
    if let Some(outage) = &outcome.tool_outage {
        eprintln!(
            "error: {FAIL_FAST_AFTER} episodes in a row could not reach the tool server, so the batch stopped ({} queries not started): {outage}",
            outcome.not_started
        );
        eprintln!(
            "{} episode(s) met the outage (kept as {{subset}}/{{query_id}}_{}.error, not as answers); check --tool-server, then rerun the same command to run them again",
            outcome.unreachable, manifest.method
        );
        return Some(ExitCode::from(1));
    }
    if let Some(fatal) = &outcome.fatal {
        eprintln!(
            "error: the batch stopped early ({} queries not started): {fatal}",
            outcome.not_started
        );
        eprintln!(
            "fix the problem and rerun the same command to resume; {MANIFEST_FILE} records the setup"
        );
        return Some(ExitCode::from(1));
    }
    if outcome.errors > 0 {
        eprintln!(
            "error: {} episode(s) ended in error (kept as {{subset}}/{{query_id}}_{}.error, not as answers); rerun the same command to run them again",
            outcome.errors, manifest.method
        );
        if outcome.unreachable > 0 {
            eprintln!(
                "in {} of them the tool server could not be reached; check --tool-server",
                outcome.unreachable
            );
        }
        if args.eval {
            eprintln!("not judging an incomplete run (--eval skipped)");
        }
        return Some(ExitCode::from(1));
    }
    None
}

/// Runs `sum2act eval RUN_DIR` on the finished run: the batch's `--votes` and `--judge`, and of its
/// model flags only where the model is (`--base-url`, `--model`); every other eval flag at its default.
async fn evaluate(
    global: &GlobalArgs,
    config: &Config,
    args: &BatchArgs,
) -> anyhow::Result<ExitCode> {
    let llm = LlmArgs {
        base_url: args.solver.llm.base_url.clone(),
        model: args.solver.llm.model.clone(),
        llm_spin: args.solver.llm.llm_spin,
        ..LlmArgs::default()
    };
    let judge = JudgeArgs::with_defaults(args.votes, args.judge.clone(), llm);
    super::eval::run(global, config, EvalArgs::for_run(args.out.clone(), judge)).await
}

/// Reply provenance over the run directory's answer files (unreadable files are left out; the
/// summary table already counts them as unfinished).
fn run_provenance(dir: &std::path::Path) -> sum2act_core::batch::Provenance {
    let mut p = sum2act_core::batch::Provenance::default();
    if let Ok((files, _)) = sum2act_core::batch::scan_run_dir(dir) {
        for (_, file, _) in &files {
            p.add(file);
        }
    }
    p
}
