//! `sum2act export RUN_DIR --format stabletoolbench --out DIR`: a run's answer files under the names and
//! in the shape StableToolBench's converter expects (`{out}/{subset}/{query_id}_{its method}.json`), so
//! its `convert_to_answer_format.py` and `eval_pass_rate.py` run on our runs unchanged. `run`/`batch`
//! keep our own names; this is a copy, the run directory is not touched. Only repeat 0 of a
//! `batch --repeats N` run is exported (its converter expects one file per query and method); the
//! `{id}_{method}.rR.json` files of the other repeats are left out. Each run needs its own `--out`
//! where their file names would collide (see [`ledger`]).

mod ledger;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::summary::scan_run_dir;
use super::{BatchError, Manifest};
use crate::toolbench::io::write_json_atomic;
use crate::toolbench::stb_export::{export_answer, family_of, stb_method, stb_method_of_run};

/// Where its converter writes and its evaluator reads, inside the export: `converted/{name}/`.
pub const CONVERTED_DIR: &str = "converted";
/// Where its evaluator writes its results, inside the export (it does not create the folder).
pub const PASS_RATE_DIR: &str = "pass_rate";

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportOutcome {
    /// Files written per subset, and StableToolBench's method name used for them.
    pub per_subset: BTreeMap<String, usize>,
    /// The method name in the file names (give it to its converter as `--method`).
    pub stb_method: String,
    /// The name its evaluator knows the run by (`--reference_model`): the run directory's name.
    pub name: String,
    /// Episodes of the run that ended in error (`.error` records: not answers, not exported).
    pub error_records: usize,
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
    if !run_dir.exists() {
        return Err(BatchError::BadInput(format!(
            "{}: does not exist; give a run directory written by `sum2act batch`",
            run_dir.display()
        )));
    }
    let manifest = Manifest::read(run_dir)?.ok_or_else(|| {
        BatchError::BadInput(format!(
            "{}: not a run directory (no run.json); give a directory written by `sum2act batch`",
            run_dir.display()
        ))
    })?;
    let family = family_of(&manifest.method).ok_or_else(|| {
        BatchError::BadInput(format!(
            "{}: `{}` is not one of our methods (sum2act, react, dfsdt, plan, graph)",
            run_dir.display(),
            manifest.method
        ))
    })?;
    let run_method = stb_method_of_run(family, &manifest.method, &manifest.agent);
    if out.exists() && same_dir(out, run_dir) {
        return Err(BatchError::BadInput(format!(
            "{}: --out must not be the run directory",
            out.display()
        )));
    }
    let (files, unreadable) = scan_run_dir(run_dir)?;
    let name = reference_name(run_dir, &manifest.method);
    if let Some(method) = &run_method {
        claim(out, run_dir, &name, method)?;
    }
    for dir in [out.join(CONVERTED_DIR).join(&name), out.join(PASS_RATE_DIR)] {
        std::fs::create_dir_all(&dir).map_err(|e| BatchError::io(&dir, e))?;
    }
    let mut outcome = ExportOutcome {
        unreadable,
        stb_method: run_method.clone().unwrap_or_default(),
        name,
        error_records: error_records(run_dir),
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
        let method = run_method
            .clone()
            .unwrap_or_else(|| stb_method(family, &value));
        match export_answer(&value, family) {
            Ok(exported) => {
                if outcome.per_subset.is_empty() && run_method.is_none() {
                    claim(out, run_dir, &outcome.name, &method)?;
                }
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

/// Records this run in `out`'s ledger, refusing when another run there has the same file names.
fn claim(out: &Path, run_dir: &Path, name: &str, method: &str) -> Result<(), BatchError> {
    std::fs::create_dir_all(out).map_err(|e| BatchError::io(out, e))?;
    ledger::claim(
        out,
        ledger::Exported {
            run: ledger::absolute(run_dir).display().to_string(),
            name: name.to_string(),
            method: method.to_string(),
        },
    )
}

/// The run directory's name, kept to the characters a file name and its evaluator's arguments take
/// as they are (the method's name when nothing is left).
fn reference_name(run_dir: &Path, method: &str) -> String {
    let name: String = run_dir
        .canonicalize()
        .unwrap_or_else(|_| run_dir.to_path_buf())
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = name.trim_start_matches('.').to_string();
    if name.is_empty() {
        method.to_string()
    } else {
        name
    }
}

/// `.error` records in the run's subset folders.
fn error_records(run_dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(run_dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| std::fs::read_dir(e.path()).ok())
        .flat_map(|files| files.flatten())
        .filter(|f| f.path().extension().is_some_and(|x| x == "error"))
        .count()
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
