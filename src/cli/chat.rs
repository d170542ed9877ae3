//! `sum2act chat`: an interactive Sum2Act session with line editing and history.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use super::GlobalArgs;
use super::solver_args::{SolverArgs, start};
use crate::config::Config;
use crate::session::print::PrintObserver;
use crate::session::{Control, HELP, Session};
use sum2act_core::agent::toolset::{DEFAULT_K, ToolChoice, ToolSet};
use sum2act_retrieve::Retriever;

#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Which tools each request gets: all, or retrieved:K, each optionally +mcp (the MCP servers'
    /// tools), or mcp alone (default: retrieved:8, +mcp when MCP servers are given).
    #[arg(long, value_name = "SET")]
    pub tools: Option<ToolChoice>,
    #[command(flatten)]
    pub solver: SolverArgs,
}

pub async fn run(global: &GlobalArgs, config: &Config, args: ChatArgs) -> anyhow::Result<ExitCode> {
    let (choice, mcp) =
        args.solver
            .tool_args
            .resolve_tools(args.tools, ToolSet::Retrieved(DEFAULT_K), config)?;
    let (data, catalog) = super::open_data(global)?;
    let catalog = Arc::new(catalog);
    let retriever = match choice.catalogue {
        Some(ToolSet::Retrieved(_) | ToolSet::Oracle) => Some(Arc::new(Retriever::build(
            &catalog,
            &args.solver.retriever.options()?,
        )?)),
        _ => None,
    };
    let harness = start(args.solver.resolve(config, None, mcp)?, &data).await?;
    let mut session = Session::new(
        catalog.clone(),
        retriever,
        harness.env.clone(),
        choice,
        Arc::new(PrintObserver::default()),
    );
    println!(
        "sum2act chat · model {} · {} tools in {} · {}",
        harness.env.llm.model_id(),
        catalog.tool_count(),
        data.root().display(),
        HELP.lines().next().unwrap_or_default()
    );

    let mut editor = DefaultEditor::new()?;
    let cache = sum2act_core::llm::model_cache_dir();
    let history = cache.parent().unwrap_or(&cache).join("chat_history.txt");
    let _ = editor.load_history(&history);
    loop {
        // rustyline blocks; keep it off the async workers.
        let (ed, line) = tokio::task::spawn_blocking(move || {
            let line = editor.readline("you> ");
            (editor, line)
        })
        .await?;
        editor = ed;
        match line {
            Ok(line) => {
                let _ = editor.add_history_entry(line.as_str());
                match session.handle(&line).await {
                    Ok(Control::Quit) => break,
                    Ok(Control::Continue) => {}
                    Err(e) => eprintln!("error: {}", sum2act_core::terminal::safe(&e.to_string())),
                }
            }
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(parent) = history.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let _ = editor.save_history(&history);
    let gone = harness.shutdown().await;
    for why in &gone {
        eprintln!("error: {}", sum2act_core::terminal::safe_line(why));
    }
    Ok(ExitCode::from(if gone.is_empty() { 0 } else { 1 }))
}
