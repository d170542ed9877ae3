//! Whether the runs given to `merge` are whole: every query an input's `run.json` selects (data,
//! subsets, limit, shard) has an answer file in some input (or in the merged run already). A shard
//! cancelled, failed or stopped by its time limit mid-run leaves queries without one; merging it
//! would pass a partial result off as complete.

use std::path::{Path, PathBuf};

use super::Manifest;
use super::plan::{Shard, answer_path, selected_ids};
use crate::toolbench::DataDir;

/// An input with queries that have no answer anywhere in the merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incomplete {
    pub dir: PathBuf,
    /// `I/N` when the input is a shard.
    pub shard: Option<String>,
    /// Queries it selects without an answer file.
    pub missing: usize,
    /// Queries it selects.
    pub selected: usize,
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match &self.shard {
            Some(shard) => format!("shard {shard} ({})", self.dir.display()),
            None => self.dir.display().to_string(),
        };
        write!(
            f,
            "{what} is incomplete: {} of its {} queries have no answer",
            self.missing, self.selected
        )
    }
}

/// What the completeness check found.
#[derive(Debug, Clone, Default)]
pub struct Completeness {
    pub incomplete: Vec<Incomplete>,
    /// Inputs whose selection could not be read back (their data directory is gone or elsewhere),
    /// with why: not checked.
    pub unchecked: Vec<String>,
}

/// Checks every input against the answers of all inputs and of `out`.
pub(super) fn check(out: &Path, inputs: &[(PathBuf, Manifest)]) -> Completeness {
    let mut found = Completeness::default();
    let mut dirs: Vec<&Path> = inputs.iter().map(|(d, _)| d.as_path()).collect();
    dirs.push(out);
    for (dir, manifest) in inputs {
        match selection(manifest) {
            Ok(ids) => {
                let missing = ids
                    .iter()
                    .filter(|(subset, id)| {
                        !dirs
                            .iter()
                            .any(|d| answer_path(d, subset, *id, &manifest.method).is_file())
                    })
                    .count();
                if missing > 0 {
                    found.incomplete.push(Incomplete {
                        dir: dir.clone(),
                        shard: manifest.shard.clone(),
                        missing,
                        selected: ids.len(),
                    });
                }
            }
            Err(why) => found.unchecked.push(format!("{}: {why}", dir.display())),
        }
    }
    found
}

/// The (subset, query id) pairs a run's manifest selects.
fn selection(manifest: &Manifest) -> Result<Vec<(String, u64)>, String> {
    if manifest.data.is_empty() || manifest.subsets.is_empty() {
        return Err("run.json names no data directory or subsets".into());
    }
    let shard = match &manifest.shard {
        Some(text) => Shard::parse_with_env(text, None).map_err(|e| e.to_string())?,
        None => Shard::default(),
    };
    let data = DataDir::open(Path::new(&manifest.data)).map_err(|e| e.to_string())?;
    selected_ids(&data, &manifest.subsets, manifest.limit, shard).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_shard_and_the_count() {
        let i = Incomplete {
            dir: PathBuf::from("runs/shard-1"),
            shard: Some("1/3".into()),
            missing: 2,
            selected: 5,
        };
        assert_eq!(
            i.to_string(),
            "shard 1/3 (runs/shard-1) is incomplete: 2 of its 5 queries have no answer"
        );
    }
}
