//! Logging with `tracing` to stderr: warnings by default, more with -v, or `RUST_LOG`; credentials in
//! URLs are masked on every line.

use tracing_subscriber::EnvFilter;

pub fn init(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Every line passes through the URL redaction: a library's error text may quote a URL with
        // its credentials.
        .with_writer(|| sum2act_core::redact::Redacting(std::io::stderr()))
        .with_target(false)
        .try_init();
}
