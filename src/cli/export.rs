//! `sum2act export RUN_DIR --format stabletoolbench --out DIR`: hands a run to StableToolBench's own
//! converter and evaluator (see docs/stabletoolbench.md for the whole round trip).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::exit::classify;
use crate::batch::export::export_stabletoolbench;

/// Formats a run can be exported to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Answer files named and shaped for StableToolBench's convert_to_answer_format.py.
    Stabletoolbench,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A run directory written by `sum2act batch`.
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
    #[arg(long, value_enum, default_value = "stabletoolbench")]
    pub format: ExportFormat,
    /// Output directory: one `{subset}/` folder of `{query_id}_{method}.json` files per subset.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

pub fn run(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let ExportFormat::Stabletoolbench = args.format;
    let outcome = export_stabletoolbench(&args.run, &args.out).map_err(classify)?;
    for path in &outcome.unreadable {
        eprintln!(
            "warning: {} is not a readable answer file; not exported",
            path.display()
        );
    }
    for (path, why) in &outcome.failed {
        eprintln!("error: {}: {why}", path.display());
    }
    println!(
        "exported {} answer files to {} as StableToolBench method `{}`",
        outcome.written(),
        args.out.display(),
        outcome.stb_method
    );
    for (subset, n) in &outcome.per_subset {
        println!(
            "  {subset}: {n}  (convert: python convert_to_answer_format.py --answer_dir {} --method {} --output {subset}.json)",
            args.out.join(subset).display(),
            outcome.stb_method
        );
    }
    if outcome.failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(1))
    }
}
