//! `sum2act run`: solve one query (from the data, or typed on the command line), printing each step and
//! the state as it goes, and write its answer file.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use super::solver_args::{SolverArgs, start};
use super::{BadInput, GlobalArgs};
use crate::config::Config;
use crate::session::print::PrintObserver;
use crate::session::print_outcome;
use sum2act_core::agent::FinishKind;
use sum2act_core::agent::toolset::{
    DEFAULT_K, ToolChoice, ToolSearch, ToolSet, add_mcp, instruction_task, task_with,
};
use sum2act_core::batch::{Solved, keep_episode};
use sum2act_core::setup::ErrorEpisode;
use sum2act_core::toolbench::{Catalog, DataDir, Task};
use sum2act_retrieve::Retriever;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The request to solve. Omit it and give --query-id to take a query from the data directory.
    pub instruction: Option<String>,
    /// Subset of the query (default: search every subset for --query-id).
    #[arg(long, value_parser = super::values::subset_name)]
    pub subset: Option<String>,
    /// Id of a query in the data directory.
    #[arg(long)]
    pub query_id: Option<u64>,
    /// Which tools the agent gets: oracle (the query's api_list), all, or retrieved:K, each
    /// optionally +mcp (the MCP servers' tools), or mcp alone (default: oracle for a query,
    /// retrieved:8 for a typed request, +mcp when MCP servers are given).
    #[arg(long, value_name = "SET")]
    pub tools: Option<ToolChoice>,
    /// Folder for the answer file.
    #[arg(long, default_value = "runs/single", value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub solver: SolverArgs,
}

pub async fn run(global: &GlobalArgs, config: &Config, args: RunArgs) -> anyhow::Result<ExitCode> {
    let (data, catalog) = super::open_data(global)?;
    let default = match args.instruction {
        Some(_) => ToolSet::Retrieved(DEFAULT_K),
        None => ToolSet::Oracle,
    };
    let (choice, mcp) = args
        .solver
        .tool_args
        .resolve_tools(args.tools, default, config)?;
    let mut task = resolve_task(&data, &catalog, &args, choice)?;
    if task.functions.is_empty() && !choice.mcp {
        return Err(no_tools().into());
    }
    let graph =
        super::index_graph::for_agent(args.solver.agent.method, tool_set(&args, choice), &catalog);
    let mut options = args.solver.resolve(config, Some(&args.out), mcp)?;
    options.agent.catalogue_graph = graph;
    let harness = start(options, &data).await?;
    let env = harness.env.clone();
    if let Some(hub) = env.tools.mcp() {
        add_mcp(&mut task, choice, hub.functions());
    }
    if task.functions.is_empty() {
        harness.shutdown().await;
        return Err(no_tools().into());
    }
    let path = sum2act_core::batch::answer_path(
        &args.out,
        &task.subset,
        task.query_id,
        env.method().name(),
    );

    print_setup(&env, &task);
    let ctx = env.context(
        task.functions.clone(),
        Some(path.with_extension("resources")),
        Arc::new(PrintObserver::default()),
    );
    let episode = env.solver.solve(&task, &ctx).await?;
    print_outcome(&episode);
    let failed = episode.finish == FinishKind::Error;
    // As in `batch`: an episode that ended in error is not an answer file (`.error` beside it).
    let Solved { file, view } = Solved::from_episode(&episode);
    let path = keep_episode(&path, &file, &view)
        .with_context(|| format!("writing the answer file of {}", path.display()))?;
    println!(
        "{}: {}",
        if failed {
            "error record"
        } else {
            "answer file"
        },
        path.display()
    );
    let gone = harness.shutdown().await;
    for why in &gone {
        eprintln!("error: {}", sum2act_core::terminal::safe_line(why));
    }
    if !failed {
        return Ok(ExitCode::from(if gone.is_empty() { 0 } else { 1 }));
    }
    episode_error(&episode, &view)
}

/// What the run is about to do: the method, model and tools, the request and its functions.
fn print_setup(env: &sum2act_core::setup::SolverEnv, task: &sum2act_core::toolbench::Task) {
    println!(
        "method: {} · model: {} · tools: {}",
        env.method(),
        env.llm.model_id(),
        env.tools.describe()
    );
    println!(
        "request: {}",
        sum2act_core::terminal::safe_line(&task.query)
    );
    println!(
        "functions: {}",
        task.functions
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// The exit of an episode that ended in error.
fn episode_error(
    episode: &sum2act_core::agent::Episode,
    view: &sum2act_core::batch::EpisodeView,
) -> anyhow::Result<ExitCode> {
    // The same rule as `batch`'s fail-fast: no reply from the model at all, for a reason of the
    // setup (a rejected key, an unknown model, no endpoint), is bad input (2); a timeout is not.
    let error = episode.error.clone().unwrap_or_default();
    if view.error_episode() == Some(ErrorEpisode::Setup) {
        return Err(BadInput(format!(
            "the model never answered: {error}; check the model flags (--base-url, --model, the API key)"
        ))
        .into());
    }
    eprintln!(
        "error: the episode stopped early: {}",
        sum2act_core::terminal::safe_line(&error)
    );
    if episode.counters.unreachable_tool_calls > 0 {
        eprintln!("check --tool-server, then run the query again");
    }
    Ok(ExitCode::from(1))
}

fn no_tools() -> BadInput {
    BadInput("no tools for this request: try --tools all or rephrase it".into())
}

/// The catalogue set the task gets (oracle when it gets none): a typed request is never given an
/// oracle set (it has no api_list).
fn tool_set(args: &RunArgs, choice: ToolChoice) -> ToolSet {
    match (choice.catalogue, &args.instruction) {
        (Some(ToolSet::Oracle), Some(_)) => ToolSet::Retrieved(DEFAULT_K),
        (set, _) => set.unwrap_or(ToolSet::Oracle),
    }
}

fn resolve_task(
    data: &DataDir,
    catalog: &Catalog,
    args: &RunArgs,
    choice: ToolChoice,
) -> anyhow::Result<Task> {
    let needs_index = match choice.catalogue {
        Some(ToolSet::Retrieved(_)) => true,
        Some(ToolSet::Oracle) => args.instruction.is_some(),
        _ => false,
    };
    let retriever = if needs_index {
        Some(Retriever::build(
            catalog,
            &args.solver.retriever.options()?,
        )?)
    } else {
        None
    };
    match (&args.instruction, args.query_id) {
        (Some(_), Some(_)) => {
            Err(BadInput("give either an instruction or --query-id, not both".into()).into())
        }
        (None, None) => Err(BadInput(
            "nothing to solve: give an instruction, or --query-id N [--subset NAME]".into(),
        )
        .into()),
        (Some(text), None) => Ok(instruction_task(
            text,
            choice,
            catalog,
            retriever.as_ref().map(|r| r as &dyn ToolSearch),
        )?),
        (None, Some(id)) => {
            let subsets = match &args.subset {
                Some(s) => vec![s.clone()],
                None => data.subsets()?,
            };
            let mut found = Vec::new();
            for subset in subsets {
                if let Some(q) = data
                    .queries(&subset)?
                    .into_iter()
                    .find(|q| q.query_id == id)
                {
                    found.push((subset, q));
                }
            }
            match found.len() {
                0 => Err(BadInput(format!(
                    "no query with id {id} in {}",
                    data.root().display()
                ))
                .into()),
                1 => {
                    let (subset, q) = &found[0];
                    super::warn_missing_tools(subset, std::slice::from_ref(q), catalog);
                    Ok(task_with(
                        subset,
                        q,
                        choice,
                        catalog,
                        retriever.as_ref().map(|r| r as &dyn ToolSearch),
                    )?)
                }
                _ => {
                    let names: Vec<&str> = found.iter().map(|(s, _)| s.as_str()).collect();
                    Err(BadInput(format!(
                        "query id {id} is in several subsets ({}); pick one with --subset",
                        names.join(", ")
                    ))
                    .into())
                }
            }
        }
    }
}
