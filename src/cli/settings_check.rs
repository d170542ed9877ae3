//! The check `compare`, `report` and `settings` (the method tables' check) make before they put
//! runs side by side: the runs must differ only in what is compared (the method, or the model).
//! Other differences are named and refused (exit 2) unless `--allow-differences` says to go on.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::BadInput;
use sum2act_core::batch::Manifest;
use sum2act_core::batch::settings::{self, SettingsCheck};

/// Refuses runs whose manifests differ in more than the method or the model, naming the settings;
/// with `allow`, names them on stderr and goes on. A folder without a manifest (a converted
/// folder) cannot be checked: that is said, not refused. Returns the manifests read and their check.
pub fn check_runs(
    runs: &[PathBuf],
    allow: bool,
) -> Result<(Vec<Manifest>, SettingsCheck), BadInput> {
    let mut manifests = Vec::new();
    for dir in runs {
        match Manifest::read(dir) {
            Ok(Some(m)) => manifests.push(m),
            Ok(None) => eprintln!(
                "note: {} has no run.json: its settings cannot be checked against the others",
                dir.display()
            ),
            Err(e) => return Err(BadInput(format!("{}: {e}", dir.display()))),
        }
    }
    let refs: Vec<&Manifest> = manifests.iter().collect();
    let check = settings::check(&refs);
    if check.is_fair() {
        return Ok((manifests, check));
    }
    let names: Vec<String> = runs.iter().map(|p| p.display().to_string()).collect();
    let lines = check.lines().join("\n  ");
    let what = format!(
        "the runs ({}) differ in more than the one thing compared:\n  {lines}",
        names.join(" | ")
    );
    if allow {
        eprintln!("warning: {what}\n(going on: --allow-differences)");
        return Ok((manifests, check));
    }
    Err(BadInput(format!(
        "{what}\nRun them again under the same settings, or pass --allow-differences to compare them anyway."
    )))
}

#[derive(Debug, Args)]
pub struct SettingsArgs {
    /// Run directories to check against each other.
    #[arg(value_name = "RUN_DIR", required = true)]
    pub runs: Vec<PathBuf>,
    /// Name the differences but exit 0.
    #[arg(long)]
    pub allow_differences: bool,
}

/// `sum2act settings RUN...`: what the runs compare and the budget they share, or the settings
/// they differ in besides (exit 2).
pub fn run(args: SettingsArgs) -> anyhow::Result<ExitCode> {
    let (manifests, check) = check_runs(&args.runs, args.allow_differences)?;
    let compared = if check.compared.is_empty() {
        "nothing (one method, one model)".to_string()
    } else {
        check.compared.join(" and ")
    };
    println!("{} runs compare {compared}", args.runs.len());
    if let Some(b) = manifests
        .first()
        .map(|m| &m.budget)
        .filter(|b| !b.is_null())
    {
        let mut shown = b.clone();
        if let Some(o) = shown.as_object_mut() {
            o.remove("prompts");
            o.remove("reads");
            o.remove("retry_prompt");
        }
        println!("budget: {shown}");
    }
    Ok(ExitCode::SUCCESS)
}
