//! `sum2act serve-llm`: the configured model (the embedded one by default) behind an OpenAI-compatible
//! endpoint, so other processes and Python tools can share one loaded model; with `--by-hand DIR`,
//! a model answered by readers through DIR (`sum2act by-hand ...`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use super::exit::classify;
use super::llm_args::LlmArgs;
use super::{BadInput, GlobalArgs};
use crate::config::Config;
use sum2act_core::llm::LlmClient;
use sum2act_core::llm::replay::Recorder;
use sum2act_server::by_hand::{ByHand, ByHandOptions, Commands};

#[derive(Debug, Args)]
pub struct ServeLlmArgs {
    /// Port to listen on (0 picks a free one); not `serve`'s 8080, so both run side by side.
    #[arg(long, default_value_t = 8081)]
    pub port: u16,
    /// Address to bind; loopback by default. Binding elsewhere exposes the model to the network.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,
    /// Answer every request by hand: each is written into DIR for a reader of its role (`sum2act
    /// by-hand next DIR --role agent|simulator|judge`) and waits, with no time limit, for the reply.
    /// The model flags are then unused except --record.
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    pub by_hand: Option<PathBuf>,
    #[command(flatten)]
    pub limits: super::limits_args::LimitsArgs,
    #[command(flatten)]
    pub llm: LlmArgs,
}

pub async fn run(
    _global: &GlobalArgs,
    config: &Config,
    args: ServeLlmArgs,
) -> anyhow::Result<ExitCode> {
    let client = match &args.by_hand {
        Some(dir) => by_hand(dir, args.llm.record.as_deref())?,
        None => {
            let options = args.llm.resolve(config).map_err(classify)?;
            sum2act_local::build(&options).await.map_err(classify)?
        }
    };
    let addr = SocketAddr::new(args.host, args.port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AddrInUse => super::serve::port_in_use(addr, &e),
            _ => BadInput(format!("cannot listen on {addr}: {e}")).into(),
        })?;
    let addr = listener.local_addr()?;
    // Printed on stdout so scripts can read the address (with --port 0 in particular).
    println!("serving {} at http://{addr}/v1", client.model_id());
    if let Some(dir) = &args.by_hand {
        eprintln!(
            "requests go to {}/{{agent,simulator,judge}}; readers: sum2act by-hand next {} --role ROLE --wait 120",
            dir.display(),
            dir.display()
        );
    }
    sum2act_server::llm_endpoint::serve_with(listener, client, args.limits.limits()).await?;
    Ok(ExitCode::SUCCESS)
}

/// The by-hand model on `dir`, recorded into `record` when given. The reply command it prints names
/// this very binary and the folder's absolute path, so a reader can run it from anywhere.
fn by_hand(dir: &Path, record: Option<&Path>) -> anyhow::Result<Arc<dyn LlmClient>> {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let program = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "sum2act".into());
    let model = ByHand::new(ByHandOptions {
        dir: absolute.clone(),
        commands: Commands {
            program,
            dir: absolute.display().to_string(),
        },
    })
    .map_err(|e| super::BadInput(format!("--by-hand {}: {e}", dir.display())))?;
    Ok(match record {
        Some(rec) => Arc::new(Recorder::new(model, rec).map_err(classify)?),
        None => Arc::new(model),
    })
}
