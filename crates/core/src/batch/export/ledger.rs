//! The runs an export folder holds (`.sum2act-exports`), so a second run exported into the same
//! `--out` cannot overwrite the first one's answers. StableToolBench's converter reads every
//! `{query_id}_{method}.json` of a subset folder as one method's answers, and four of our five methods
//! export as `CoT@1`: two runs in one folder would silently become one run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::batch::BatchError;
use crate::toolbench::io::{read_json, write_json_atomic};

/// The ledger's file name inside an export folder.
const LEDGER_FILE: &str = ".sum2act-exports";

/// One run exported into the folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Exported {
    /// The run directory, as an absolute path.
    pub run: String,
    /// The name its evaluator knows the run by (`converted/{name}/`).
    pub name: String,
    /// StableToolBench's method name in the answer files' names.
    pub method: String,
}

impl Exported {
    /// What would make `other` overwrite this run's files: the same answer file names or the same
    /// converted folder, from another run.
    fn clash(&self, other: &Exported) -> Option<String> {
        if self.run == other.run {
            return None;
        }
        if self.method == other.method {
            Some(format!("answer files `{{query_id}}_{}.json`", self.method))
        } else if self.name == other.name {
            Some(format!("converted folder `converted/{}`", self.name))
        } else {
            None
        }
    }
}

/// The exports recorded in `out`, none when it has no ledger.
fn read(out: &Path) -> Result<Vec<Exported>, BatchError> {
    let path = out.join(LEDGER_FILE);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    Ok(read_json(&path)?)
}

/// Refuses an export of `this` into `out` when another run there owns the same file names, else
/// records it (before any answer is written, so an interrupted export still counts).
pub(crate) fn claim(out: &Path, this: Exported) -> Result<(), BatchError> {
    let mut exports = read(out)?;
    if let Some((other, what)) = exports
        .iter()
        .find_map(|e| e.clash(&this).map(|what| (e, what)))
    {
        return Err(BatchError::BadInput(format!(
            "{}: already holds the export of run {} ({what}); exporting {} there would overwrite its answers: give each run its own --out",
            out.display(),
            other.run,
            this.run
        )));
    }
    if !exports.iter().any(|e| e.run == this.run) {
        exports.push(this);
    }
    write_json_atomic(&out.join(LEDGER_FILE), &exports)?;
    Ok(())
}

/// `dir` as an absolute path (symbolic links resolved when it exists).
pub(crate) fn absolute(dir: &Path) -> PathBuf {
    dir.canonicalize()
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn export(run: &str, name: &str, method: &str) -> Exported {
        Exported {
            run: run.into(),
            name: name.into(),
            method: method.into(),
        }
    }

    #[test]
    fn a_second_run_with_the_same_file_names_is_refused() {
        let out = tempfile::tempdir().unwrap();
        claim(out.path(), export("/a", "a", "CoT@1")).unwrap();
        // The same run again: a re-export, fine.
        claim(out.path(), export("/a", "a", "CoT@1")).unwrap();
        // Another method's names do not collide.
        claim(out.path(), export("/b", "b", "DFS_woFilter_w2")).unwrap();
        let e = claim(out.path(), export("/c", "c", "CoT@1"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("run /a") && e.contains("_CoT@1.json"), "{e}");
        let e = claim(out.path(), export("/d", "a", "DFS_wFilter_w2"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("converted/a"), "{e}");
        assert_eq!(read(out.path()).unwrap().len(), 2);
    }
}
