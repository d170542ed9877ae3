//! `sum2act media-server`: the media tools (OCR, speech, image edits, QR codes, metadata) as an MCP
//! server over stdio, for `run --mcp "sum2act media-server"` or any MCP client.

use std::process::ExitCode;

use clap::Args;

use super::GlobalArgs;
use sum2act_core::toolbench::DataDir;
use sum2act_server::media::{MediaOptions, serve_stdio};

#[derive(Debug, Args)]
pub struct MediaServerArgs {
    /// Never fetch URLs over the network: only the data directory's URL cache (`DATA/url_cache`) answers.
    #[arg(long)]
    pub offline: bool,
}

pub async fn run(global: &GlobalArgs, args: MediaServerArgs) -> anyhow::Result<ExitCode> {
    let data = DataDir::open_or_default(global.data.as_deref())?;
    let options = MediaOptions {
        url_cache: data.url_cache_dir(),
        offline: args.offline,
    };
    serve_stdio(options).await?;
    Ok(ExitCode::SUCCESS)
}
