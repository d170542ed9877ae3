//! `sum2act export RUN_DIR --format stabletoolbench --out DIR`: hands a run to StableToolBench's own
//! converter and evaluator (see docs/stabletoolbench.md for the whole round trip).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::exit::classify;
use super::values::named;
use sum2act_core::batch::export::{
    CONVERTED_DIR, ExportOutcome, PASS_RATE_DIR, export_stabletoolbench,
};

/// Formats a run can be exported to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExportFormat {
    /// Answer files named and shaped for StableToolBench's convert_to_answer_format.py.
    #[default]
    Stabletoolbench,
}

sum2act_core::names::named_values!(ExportFormat, "export format" {
    Stabletoolbench => "stabletoolbench": "Answer files named and shaped for StableToolBench's convert_to_answer_format.py",
});

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A run directory written by `sum2act batch`.
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
    #[arg(long, value_parser = named::<ExportFormat>(ExportFormat::NAMES), default_value_t = ExportFormat::default())]
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
    if outcome.written() == 0 {
        eprintln!(
            "error: {}: no answer files to export ({} error records: episodes that ended in error are not answers; rerun the batch to retry them)",
            args.run.display(),
            outcome.error_records
        );
        return Ok(ExitCode::from(1));
    }
    println!(
        "exported {} answer files to {} as StableToolBench method `{}`{}",
        outcome.written(),
        args.out.display(),
        outcome.stb_method,
        if outcome.error_records > 0 {
            format!(
                " ({} error records left out: not answers)",
                outcome.error_records
            )
        } else {
            String::new()
        }
    );
    print_commands(&args.out, &outcome);
    if outcome.failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(1))
    }
}

/// Its converter and evaluator as they run from its `toolbench/tooleval` folder (they import modules
/// from there), with absolute paths into the export: the converter writes where the evaluator reads.
fn print_commands(out: &Path, outcome: &ExportOutcome) {
    let out = out.canonicalize().unwrap_or_else(|_| out.to_path_buf());
    let converted = out.join(CONVERTED_DIR);
    println!(
        "StableToolBench's converter and evaluator, as they run from its toolbench/tooleval folder:"
    );
    println!("  cd StableToolBench/toolbench/tooleval");
    for (subset, n) in &outcome.per_subset {
        println!(
            "  python convert_to_answer_format.py --answer_dir {} --method {} --output {}    # {n} answers",
            out.join(subset).display(),
            outcome.stb_method,
            converted
                .join(&outcome.name)
                .join(format!("{subset}.json"))
                .display()
        );
    }
    let subsets: Vec<&str> = outcome.per_subset.keys().map(String::as_str).collect();
    println!(
        "  python eval_pass_rate.py --converted_answer_path {} --reference_model {} --test_ids ../../solvable_queries/test_query_ids --test_set {} --save_path {}",
        converted.display(),
        outcome.name,
        subsets.join(" "),
        out.join(PASS_RATE_DIR).display()
    );
}
