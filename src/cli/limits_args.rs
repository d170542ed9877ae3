//! Connection limits of the two servers (`serve`, `serve-llm`).

use std::time::Duration;

use clap::Args;

use sum2act_server::net::{DEFAULT_HEADER_TIMEOUT_SECS, DEFAULT_MAX_CONNECTIONS, Limits};

#[derive(Debug, Clone, Args)]
pub struct LimitsArgs {
    /// Seconds a client has to send its request headers before the connection is closed.
    #[arg(long, default_value_t = DEFAULT_HEADER_TIMEOUT_SECS, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout: u64,
    /// Connections served at once; more wait until one closes.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS as u64, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
}

impl LimitsArgs {
    pub fn limits(&self) -> Limits {
        Limits {
            header_read_timeout: Duration::from_secs(self.header_timeout),
            max_connections: usize::try_from(self.max_connections).unwrap_or(usize::MAX),
        }
    }
}
