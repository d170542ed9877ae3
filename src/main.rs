use std::process::ExitCode;

fn main() -> ExitCode {
    // First, before code compiled for a newer CPU can run: a native build copied to an older machine.
    if let Err(e) = sum2act_local::cpu::check_binary(&sum2act_local::cpu::binary_features()) {
        eprintln!("error: {e}");
        return ExitCode::from(1);
    }
    quiet_broken_pipe();
    sum2act_local::ensure_openmp_wait_policy();
    let cli = sum2act::cli::Cli::from_env();
    sum2act::logging::init(cli.global.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(sum2act::cli::run(cli))
}

/// `sum2act ... | head` closes our stdout early; `println!` then panics on EPIPE (Rust ignores SIGPIPE
/// so that network writes return errors instead of killing the process, which the servers need). A
/// closed stdout is not a failure of ours: end quietly with 0, as ripgrep does.
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}
