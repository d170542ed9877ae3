//! sum2act-server: the servers of the tool environment, and the factory that gives `run`/`batch`/`chat`
//! their tool environment (a remote server, or the embedded one on loopback).
//!
//! - the embedded virtual API server (StableToolBench's `/virtual` protocol): the response cache,
//!   schema-driven and LLM simulation into one consistent world (`world`), fault injection, the HTTP
//!   routes, and the simulator's fidelity measures (`fidelity`, `mirrorapi`);
//! - `mcp`: the catalogue (and media tools) served as an MCP server;
//! - `media`: real media tools (images, QR codes, audio) behind the same protocol;
//! - `llm_endpoint`: `serve-llm`, an OpenAI-compatible front for any model client, and `by_hand`,
//!   the model answered by hand (readers playing a strong model);
//! - `net`: serving under connection limits, for all of them.

mod answer;
pub mod by_hand;
pub mod cache;
mod catalog_source;
pub mod engine;
pub mod examples;
pub mod faults;
pub mod fidelity;
pub mod llm_endpoint;
pub mod llm_sim;
pub mod mcp;
pub mod media;
pub mod mirrorapi;
pub mod net;
pub mod pyrepr;
pub mod reply_schema;
pub mod routes;
pub mod simulate;
pub mod template_fit;
pub mod world;

/// The core library this crate is built on, as its types: the core's own tests, which answer tool
/// calls with [`CatalogSource`], are a second build of it and cross over by these names.
#[doc(hidden)]
pub use sum2act_core as built_on;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

pub use answer::{Pending, Prepared};
pub use cache::{ImportReport, ResponseCache, import_stb_cache};
pub use catalog_source::CatalogSource;
pub use engine::{Answer, SimulationMode, VirtualApi};
pub use faults::{FaultConfig, FaultKind, FaultMix};
pub use routes::{ServerHandle, router, serve_until, spawn};
pub use world::{World, WorldOptions};

use sum2act_core::llm::LlmClient;
use sum2act_core::toolbench::{DataDir, DataError};
use sum2act_core::tools::mcp::{McpError, McpHub, McpOptions, McpSpec};
use sum2act_core::tools::{HttpSource, ToolConfig, ToolEnv, ToolError};

/// Errors of the tool server and of setting up a tool environment.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("tool data")]
    Data(#[from] DataError),
    // The cause is in the message and not a `source` too, so `{:#}` does not print it twice.
    #[error("cannot listen on {addr}: {error}")]
    Bind {
        addr: SocketAddr,
        error: std::io::Error,
    },
    #[error("tool server failed: {0}")]
    Serve(#[source] std::io::Error),
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// The configured tool server did not answer a check before the run (nothing was spent on it).
    #[error(
        "--tool-server {url}: no tool server answers there ({why}); start it or fix the URL (it may come from $TOOLBENCH_SERVICE_URL, $SERVICE_URL or the config's tools.server_url)"
    )]
    NoToolServer { url: String, why: String },
    #[error(transparent)]
    Mcp(#[from] McpError),
    #[error("{0}")]
    Config(String),
}

impl ServerError {
    /// Whether the user's input is at fault (a bad URL, no server at it, a missing model): exit 2.
    pub fn is_bad_input(&self) -> bool {
        match self {
            ServerError::Data(e) => !e.is_output(),
            ServerError::Tool(e) => matches!(e, ToolError::InvalidUrl(_)),
            // An MCP server that cannot start or be set up is the setup's to fix.
            ServerError::NoToolServer { .. } | ServerError::Config(_) | ServerError::Mcp(_) => true,
            ServerError::Bind { .. } | ServerError::Serve(_) => false,
        }
    }
}

/// A run's tool environment settings, resolved by the CLI from the `run`, `batch` and `chat` flags,
/// the environment and the config file's `[tools]` section.
#[derive(Debug, Clone, Default)]
pub struct ToolOptions {
    /// A StableToolBench-compatible /virtual URL; `None`: start the embedded server on loopback.
    pub tool_server: Option<String>,
    /// Key sent as the toolbench_key header (never logged).
    pub toolbench_key: Option<String>,
    /// Limits and behaviour of the run's tool calls.
    pub calls: ToolConfig,
    /// How the embedded server answers calls that are not in the response cache.
    pub tool_simulation: SimulationMode,
    /// Keep the simulated world in the data directory's response cache (its world folder).
    pub save_tool_responses: bool,
    /// Where the embedded server keeps its world (see [`ServerOptions::world`]).
    pub world: Option<PathBuf>,
    /// Give the LLM simulator what earlier replies fixed about the values a call names.
    pub entity_memory: bool,
    /// Faults the embedded server injects.
    pub faults: FaultConfig,
    /// MCP servers to connect to (their tools join the environment; empty: none).
    pub mcp: Vec<McpSpec>,
}

/// Whether `faults` injects anything (a remote server cannot).
fn injects(faults: &FaultConfig) -> bool {
    faults.rate > 0.0 || !faults.latency.is_zero()
}

/// A run's tool environment, and the embedded server behind it (if one was started).
pub struct ToolSetup {
    pub env: ToolEnv,
    /// Stops when dropped; `shutdown().await` waits for it.
    pub server: Option<ServerHandle>,
}

/// Builds the tool environment: a remote `/virtual` server when one is configured, else the embedded
/// server on a free loopback port, reached over real HTTP like a remote one.
pub async fn tool_setup(
    args: &ToolOptions,
    data: &DataDir,
    llm: Option<Arc<dyn LlmClient>>,
) -> Result<ToolSetup, ServerError> {
    let tool_config = args.calls.clone();
    if let Some(url) = args.tool_server.clone().filter(|u| !u.trim().is_empty()) {
        if injects(&args.faults)
            || args.save_tool_responses
            || args.world.is_some()
            || args.tool_simulation != SimulationMode::Schema
        {
            tracing::warn!(
                "fault injection, simulation, world and saving flags apply to the embedded server only; ignored with --tool-server"
            );
        }
        let source = HttpSource::new(&url, args.toolbench_key.clone())?;
        check_remote(&source, &tool_config).await?;
        let env = ToolEnv::new(Arc::new(source), tool_config);
        let env = with_mcp(env, &args.mcp, data).await?;
        return Ok(ToolSetup { env, server: None });
    }
    let options = ServerOptions {
        save: args.save_tool_responses,
        mode: args.tool_simulation,
        faults: args.faults.clone(),
        world: args.world.clone(),
        entity_memory: args.entity_memory,
    };
    let api = embedded_api(data, &options, llm)?;
    let describe = format!("embedded {}", api.describe());
    let server = spawn(Arc::new(api), SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await?;
    let source = HttpSource::new(&server.url(), None)?.with_label(describe);
    tracing::info!("embedded tool server on {}", server.url());
    let env = ToolEnv::new(Arc::new(source), tool_config);
    let env = with_mcp(env, &args.mcp, data).await?;
    Ok(ToolSetup {
        env,
        server: Some(server),
    })
}

/// Checks that a tool server answers at the configured URL before any model call is spent, trying as
/// often as a tool call would (a server still starting gets the same grace as a call).
async fn check_remote(source: &HttpSource, config: &ToolConfig) -> Result<(), ServerError> {
    let mut attempt = 0u32;
    loop {
        let result = match tokio::time::timeout(
            config.timeout,
            sum2act_core::tools::ToolSource::check(source),
        )
        .await
        {
            Ok(r) => r,
            Err(_) => Err(ToolError::Timeout(config.timeout)),
        };
        let error = match result {
            Ok(()) => return Ok(()),
            Err(e) if e.is_environment() => e,
            // A slow or failing server is there: its calls will say so.
            Err(_) => return Ok(()),
        };
        if attempt >= config.retries {
            let why = match error {
                ToolError::Status(s) => format!("HTTP {s} for its URL: not a /virtual endpoint"),
                ToolError::Unreachable { message, .. } => message,
                other => other.to_string(),
            };
            return Err(ServerError::NoToolServer {
                url: source.url().to_string(),
                why,
            });
        }
        tokio::time::sleep(config.backoff.saturating_mul(1u32 << attempt.min(10))).await;
        attempt += 1;
    }
}

/// The environment with the MCP servers of `specs` connected (unchanged when there are none); stdio
/// servers get `SUM2ACT_DATA` set to the run's data directory.
async fn with_mcp(env: ToolEnv, specs: &[McpSpec], data: &DataDir) -> Result<ToolEnv, ServerError> {
    if specs.is_empty() {
        return Ok(env);
    }
    let root = std::path::absolute(data.root()).unwrap_or_else(|_| data.root().to_path_buf());
    let options = McpOptions {
        env: vec![(
            sum2act_core::toolbench::DATA_ENV.to_string(),
            root.to_string_lossy().into_owned(),
        )],
        ..McpOptions::default()
    };
    let hub = McpHub::connect(specs, &options).await?;
    Ok(env.with_mcp(Arc::new(hub)))
}

impl ToolSetup {
    /// Stops the MCP servers and the embedded server; what the MCP servers that died during the
    /// run said (empty when none did). The environment is dropped before the server stops: a
    /// client's idle keep-alive connection held open kept the server's graceful shutdown waiting
    /// until the connection's header timeout (10 s) after every batch.
    pub async fn shutdown(self) -> Vec<String> {
        let ToolSetup { env, server } = self;
        let failures = match env.mcp() {
            Some(hub) => {
                let f = hub.failures();
                hub.shutdown().await;
                f
            }
            None => Vec::new(),
        };
        drop(env);
        if let Some(server) = server {
            server.shutdown().await;
        }
        failures
    }
}

/// The shipped sample's virtual API as `serve` answers by default (schema simulation behind the
/// response cache, no faults, no saving): what tests, fuzzing and benches serve.
pub fn sample_api() -> Result<VirtualApi, ServerError> {
    let data = DataDir::open(&sum2act_core::toolbench::sample_dir())?;
    embedded_api(&data, &ServerOptions::default(), None)
}

/// How an embedded or standalone virtual API answers (`serve`'s flags; `tool_setup` fills it for run,
/// batch and chat).
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// Keep the world in the data directory's response cache folder (`--save`): reruns then get the
    /// same replies without naming a world.
    pub save: bool,
    pub mode: SimulationMode,
    pub faults: FaultConfig,
    /// The world folder. Without one (and without `save`), a server whose simulation uses a model keeps
    /// its world in memory; the schema simulator needs none (its replies are a function of the call).
    pub world: Option<PathBuf>,
    pub entity_memory: bool,
}

impl ServerOptions {
    /// The world's settings, when the server keeps one.
    fn world(&self, data: &DataDir) -> Option<WorldOptions> {
        let dir = if self.save {
            Some(
                data.response_cache_dir()
                    .unwrap_or_else(|| data.root().join("response_cache")),
            )
        } else {
            self.world.clone()
        };
        (dir.is_some() || self.mode.uses_llm()).then_some(WorldOptions {
            dir,
            entity_memory: self.entity_memory,
        })
    }
}

/// The virtual API of a data directory, configured from flags (used by `serve` and `tool_setup`).
pub fn embedded_api(
    data: &DataDir,
    options: &ServerOptions,
    llm: Option<Arc<dyn LlmClient>>,
) -> Result<VirtualApi, ServerError> {
    let load = data.catalog()?;
    for broken in &load.broken {
        tracing::warn!("skipped broken tool file: {broken}");
    }
    let mut api = VirtualApi::new(Arc::new(load.catalog), data.response_cache_dir())
        .with_stb_cache(data.stb_cache_dir())
        .with_faults(options.faults.clone());
    if let Some(world) = options.world(data) {
        let world = World::open(&world).map_err(ServerError::Data)?;
        api = api.with_world(world);
    }
    if options.mode.uses_llm() {
        let llm = llm.ok_or_else(|| {
            ServerError::Config(
                "LLM simulation needs a model: configure one (see --base-url / --model)"
                    .to_string(),
            )
        })?;
        api = api.with_llm(llm, options.mode);
    }
    Ok(api)
}
