//! `sum2act export RUN_DIR --format stabletoolbench --out DIR`: a run's answer files under the names and
//! in the shape StableToolBench's converter expects (`{out}/{subset}/{query_id}_{its method}.json`), so
//! its `convert_to_answer_format.py` and `eval_pass_rate.py` run on our runs unchanged. `run`/`batch`
//! keep our own names; this is a copy, the run directory is not touched. Only repeat 0 of a
//! `batch --repeats N` run is exported (its converter expects one file per query and method); the
//! `{id}_{method}.rR.json` files of the other repeats are left out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::summary::scan_run_dir;
use super::{BatchError, Manifest};
use crate::toolbench::io::write_json_atomic;
use crate::toolbench::stb_export::{export_answer, family_of, stb_method};

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportOutcome {
    /// Files written per subset, and StableToolBench's method name used for them.
    pub per_subset: BTreeMap<String, usize>,
    /// The method name in the file names (give it to its converter as `--method`).
    pub stb_method: String,
    /// Answer files that could not be exported, with the reason.
    pub failed: Vec<(PathBuf, String)>,
    /// Files that do not parse as our answer files.
    pub unreadable: Vec<PathBuf>,
}

impl ExportOutcome {
    pub fn written(&self) -> usize {
        self.per_subset.values().sum()
    }
}

/// Exports every answer file of `run_dir` into `out` (created if needed).
pub fn export_stabletoolbench(run_dir: &Path, out: &Path) -> Result<ExportOutcome, BatchError> {
    let manifest = Manifest::read(run_dir)?.ok_or_else(|| {
        BatchError::BadInput(format!(
            "{}: not a run directory (no run.json); give a directory written by `sum2act batch`",
            run_dir.display()
        ))
    })?;
    let family = family_of(&manifest.method).ok_or_else(|| {
        BatchError::BadInput(format!(
            "{}: method `{}` has no StableToolBench counterpart (known: sum2act, react, dfsdt)",
            run_dir.display(),
            manifest.method
        ))
    })?;
    if out.exists() && same_dir(out, run_dir) {
        return Err(BatchError::BadInput(format!(
            "{}: --out must not be the run directory",
            out.display()
        )));
    }
    let (files, unreadable) = scan_run_dir(run_dir)?;
    let mut outcome = ExportOutcome {
        unreadable,
        ..ExportOutcome::default()
    };
    for (path, value, view) in files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if super::plan::repeat_of(name) != 0 {
            continue;
        }
        if !view.method.is_empty() && view.method != manifest.method {
            continue;
        }
        let method = stb_method(family, &value);
        match export_answer(&value, family) {
            Ok(exported) => {
                let target = out
                    .join(&view.subset)
                    .join(format!("{}_{method}.json", view.query_id));
                write_json_atomic(&target, &exported)?;
                *outcome.per_subset.entry(view.subset.clone()).or_default() += 1;
                if outcome.stb_method.is_empty() {
                    outcome.stb_method = method;
                } else if outcome.stb_method != method {
                    outcome.failed.push((
                        path,
                        format!("mixed method names: {method} and {}", outcome.stb_method),
                    ));
                }
            }
            Err(e) => outcome.failed.push((path, e.to_string())),
        }
    }
    Ok(outcome)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
