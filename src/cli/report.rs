//! `sum2act report RUN_DIR... [--out FILE]`: a self-contained HTML report.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::exit::classify;
use sum2act_eval::html_report::write_report;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run directories to show side by side.
    #[arg(value_name = "RUN_DIR", required = true)]
    pub runs: Vec<PathBuf>,
    /// Output file (default: report.html inside the first RUN_DIR).
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Put runs made under different settings side by side, which is otherwise refused; the
    /// differences are still named.
    #[arg(long)]
    pub allow_differences: bool,
}

pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    super::settings_check::check_runs(&args.runs, args.allow_differences)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.runs[0].join("report.html"));
    let stats = write_report(&args.runs, &out).map_err(classify)?;
    println!(
        "wrote {} ({} run(s), {} episodes, {} with judge results, {} KiB)",
        out.display(),
        stats.runs,
        stats.queries,
        stats.judged_runs,
        stats.bytes.div_ceil(1024)
    );
    // Said, not failed: the page is still the run's record; only the judge's figure is left out.
    for (dir, why) in &stats.invalid {
        eprintln!(
            "warning: {}: its evaluation is not valid ({why}); the report shows its finish rate instead of a pass rate (rerun `sum2act eval` with a working judge)",
            dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
