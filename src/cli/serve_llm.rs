//! `sum2act serve-llm`: the configured model (the embedded one by default) behind an OpenAI-compatible
//! endpoint, so other processes and Python tools can share one loaded model.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;

use clap::Args;

use super::GlobalArgs;
use super::exit::classify;
use super::llm_args::LlmArgs;
use crate::config::Config;
use crate::llm;

#[derive(Debug, Args)]
pub struct ServeLlmArgs {
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 8081)]
    pub port: u16,
    /// Address to bind; loopback by default. Binding elsewhere exposes the model to the network.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,
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
    let client = llm::build(&args.llm.options(), config)
        .await
        .map_err(classify)?;
    let listener = llm::server::bind(SocketAddr::new(args.host, args.port))
        .await
        .map_err(classify)?;
    let addr = listener.local_addr()?;
    // Printed on stdout so scripts can read the address (with --port 0 in particular).
    println!("serving {} at http://{addr}/v1", client.model_id());
    llm::server::serve_with(listener, client, args.limits.limits()).await?;
    Ok(ExitCode::SUCCESS)
}
