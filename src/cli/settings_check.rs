//! The check `compare` and `report` make before they put runs side by side: the runs must differ
//! only in what is compared (the method, or the model). Other differences are named and refused
//! (exit 2) unless `--allow-differences` says to go on.

use std::path::PathBuf;

use super::BadInput;
use sum2act_core::batch::{Manifest, settings};

/// Refuses runs whose manifests differ in more than the method or the model, naming the settings;
/// with `allow`, names them on stderr and goes on. A folder without a manifest (a converted
/// folder) cannot be checked: that is said, not refused.
pub fn check_runs(runs: &[PathBuf], allow: bool) -> Result<(), BadInput> {
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
        return Ok(());
    }
    let names: Vec<String> = runs.iter().map(|p| p.display().to_string()).collect();
    let lines = check.lines().join("\n  ");
    let what = format!(
        "the runs ({}) differ in more than the one thing compared:\n  {lines}",
        names.join(" | ")
    );
    if allow {
        eprintln!("warning: {what}\n(going on: --allow-differences)");
        return Ok(());
    }
    Err(BadInput(format!(
        "{what}\nRun them again under the same settings, or pass --allow-differences to compare them anyway."
    )))
}
