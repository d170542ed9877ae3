use std::process::ExitCode;

fn main() -> ExitCode {
    sum2act::llm::ensure_openmp_wait_policy();
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
