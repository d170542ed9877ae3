//! `sum2act serve`: the virtual RapidAPI server (StableToolBench's `/virtual` protocol) for a data
//! directory, in the foreground until Ctrl-C; and `serve import-cache` for StableToolBench caches.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::llm_args::LlmArgs;
use super::tool_args::FaultArgs;
use super::values::named;
use super::{BadInput, GlobalArgs};
use crate::config::Config;
use sum2act_core::toolbench::DataDir;
use sum2act_server::mcp::{CatalogueMcp, McpServe, serve_http, serve_stdio};
use sum2act_server::{
    ServerOptions, SimulationMode, VirtualApi, embedded_api, import_stb_cache, serve_until,
};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    pub action: Option<ServeAction>,
    /// Port to listen on (0 picks a free one; the address is printed).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to bind; loopback by default. Binding elsewhere exposes the server to the network.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,
    /// Keep the simulated world in DATA/response_cache (one file per new reply, atomically), so reruns
    /// are identical.
    #[arg(long, conflicts_with = "world")]
    pub save: bool,
    #[command(flatten)]
    pub world: super::tool_args::WorldArgs,
    /// How answers that are not in the response cache are made.
    #[arg(long, value_parser = named::<SimulationMode>(SimulationMode::NAMES), default_value_t = SimulationMode::default())]
    pub simulation: SimulationMode,
    /// Answer as StableToolBench's server does: simulate calls that miss required parameters (ours
    /// return a parameter error by default) and serve cache entries of tools outside the catalogue.
    #[arg(long)]
    pub stb_compat: bool,
    /// Serve the APIs as MCP tools instead of the /virtual protocol: over stdio (`--mcp` alone) or
    /// streamable HTTP at http://HOST:PORT/mcp (`--mcp http`).
    #[arg(long, value_name = "TRANSPORT", num_args = 0..=1, default_missing_value = "stdio",
          value_parser = named::<McpServe>(McpServe::NAMES))]
    pub mcp: Option<McpServe>,
    #[command(flatten)]
    pub faults: FaultArgs,
    #[command(flatten)]
    pub limits: super::limits_args::LimitsArgs,
    /// The model for `--simulation llm`, `hybrid` and `mirrorapi` (MirrorAPI: `--base-url` of its vLLM server).
    #[command(flatten)]
    pub llm: LlmArgs,
}

#[derive(Debug, Subcommand)]
pub enum ServeAction {
    /// Convert a StableToolBench response cache (Python-repr keys, `{tool}_for_{Category}` folders)
    /// into our layout (canonical JSON keys), merging into DEST.
    ImportCache {
        /// StableToolBench's `tool_response_cache` folder.
        src: PathBuf,
        /// Our response cache folder, e.g. DATA/response_cache.
        dest: PathBuf,
    },
    /// Measure the schema simulator on a data directory (`--data`): agreement with its recorded real
    /// responses, filler and rule violations over one call per API of its queries, time per reply.
    Fidelity(super::serve_fidelity::FidelityArgs),
}

pub async fn run(
    global: &GlobalArgs,
    config: &Config,
    args: ServeArgs,
) -> anyhow::Result<ExitCode> {
    if let Some(ServeAction::Fidelity(f)) = &args.action {
        return super::serve_fidelity::run(global, f).await;
    }
    if let Some(ServeAction::ImportCache { src, dest }) = &args.action {
        if !src.is_dir() {
            return Err(BadInput(format!(
                "{}: not a folder (the StableToolBench cache to import)",
                src.display()
            ))
            .into());
        }
        let report = import_stb_cache(src, dest)?;
        println!(
            "imported {} entries from {} files into {} ({} already there, {} keys skipped as unreadable)",
            report.entries,
            report.files,
            dest.display(),
            report.existing,
            report.skipped
        );
        return Ok(ExitCode::SUCCESS);
    }
    // A tool server needs only tools/ (and caches): no queries.
    let data = DataDir::open_tools_or_default(global.data.as_deref())?;
    let on_sample = DataDir::chosen(global.data.as_deref()).is_none();
    let llm = match args.simulation {
        SimulationMode::Schema => None,
        _ => Some(
            async { sum2act_local::build(&args.llm.resolve(config)?).await }
                .await
                .context("loading the simulator model")?,
        ),
    };
    let options = ServerOptions {
        save: args.save,
        mode: args.simulation,
        faults: args.faults.config(),
        world: args.world.world.clone(),
        entity_memory: !args.world.no_entity_memory,
    };
    let mut api = embedded_api(&data, &options, llm)?.with_stb_compat(args.stb_compat);
    if on_sample {
        let hint = sample_hint(api.catalog().tool_count());
        eprintln!("note: {hint}");
        api = api.with_unknown_tool_hint(hint);
    }
    let api = Arc::new(api);
    if let Some(transport) = args.mcp {
        return serve_mcp(api, transport, &args, global.verbose).await;
    }
    let describe = api.describe();
    let shutdown = async {
        stop_signal().await;
        eprintln!("shutting down (letting requests in flight finish)");
    };
    if global.verbose == 0 {
        eprintln!("(-v logs one line per request, with where its answer came from)");
    }
    let stats_api = api.clone();
    serve_until(
        api,
        SocketAddr::new(args.host, args.port),
        args.limits.limits(),
        |addr| {
            // Printed on stdout so scripts can read the address (with --port 0 in particular).
            println!("serving {describe} at http://{addr}/virtual");
        },
        shutdown,
    )
    .await
    .map_err(listen_error)?;
    println!("answers: {}", stats_api.stats.snapshot());
    Ok(ExitCode::SUCCESS)
}

/// `serve --mcp`: the same engine as MCP tools. Over stdio nothing but the protocol goes to stdout.
async fn serve_mcp(
    api: Arc<VirtualApi>,
    transport: McpServe,
    args: &ServeArgs,
    verbose: u8,
) -> anyhow::Result<ExitCode> {
    let server = CatalogueMcp::new(api.clone());
    let describe = format!("{} as {} MCP tools", api.describe(), server.tool_count());
    let renamed = server.renamed();
    if !renamed.is_empty() {
        eprintln!(
            "warning: {} APIs share their function name with another API of the catalogue; they are served as:",
            renamed.len()
        );
        for r in renamed {
            eprintln!(
                "  {} ({} of {}; its name {} is taken)",
                r.name, r.api, r.tool, r.clashing
            );
        }
    }
    match transport {
        McpServe::Stdio => {
            if verbose > 0 {
                eprintln!("serving {describe} over stdio");
            }
            serve_stdio(server).await?;
        }
        McpServe::Http => {
            let shutdown = async {
                stop_signal().await;
                eprintln!("shutting down (letting requests in flight finish)");
            };
            serve_http(
                server,
                SocketAddr::new(args.host, args.port),
                args.limits.limits(),
                |addr| println!("serving {describe} (streamable HTTP) at http://{addr}/mcp"),
                shutdown,
            )
            .await
            .map_err(listen_error)?;
            println!("answers: {}", api.stats.snapshot());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What a server started without `--data` (or `$SUM2ACT_DATA`) says: callers naming other tools get
/// "No such tool", which alone does not say that the catalogue is the sample's.
fn sample_hint(tools: usize) -> String {
    format!(
        "no --data given: this server has only the shipped sample's {tools} tools; start it as `sum2act --data DIR serve` to serve DIR/tools"
    )
}

/// A server error, with what to do about a port in use: this server and StableToolBench's both
/// default to 8080.
fn listen_error(e: sum2act_server::ServerError) -> anyhow::Error {
    match &e {
        sum2act_server::ServerError::Bind { addr, error }
            if error.kind() == std::io::ErrorKind::AddrInUse =>
        {
            port_in_use(*addr, error)
        }
        _ => e.into(),
    }
}

/// `cannot listen on ADDR: ...` and how to pick another port (shared with `serve-llm`): the user's
/// `--port` to change (exit 2).
pub(super) fn port_in_use(addr: SocketAddr, error: &std::io::Error) -> anyhow::Error {
    BadInput(format!(
        "cannot listen on {addr}: {error}; another server is using port {} (StableToolBench's server also defaults to 8080): choose another with --port N (--port 0 picks a free one)",
        addr.port()
    ))
    .into()
}

/// Ctrl-C, or SIGTERM on Unix (what service managers and `kill` send).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                r = tokio::signal::ctrl_c() => {
                    if r.is_err() {
                        term.recv().await;
                    }
                }
                _ = term.recv() => {}
            }
            return;
        }
    }
    if tokio::signal::ctrl_c().await.is_err() {
        // No signal handling available: run until killed.
        std::future::pending::<()>().await;
    }
}
