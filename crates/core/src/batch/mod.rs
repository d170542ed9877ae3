//! Batch evaluation: runs one method over whole ToolBench subsets with bounded concurrency, one
//! atomically written answer file per query, a `run.json` manifest, resume, graceful Ctrl-C,
//! deterministic sharding across machines, `merge` of sharded run directories and an HTML report.
//!
//! The runner does not know about solvers: it drives a [`Job`] (the CLI adapts an `agent::Solver`
//! to it), so the scheduling, resume and file logic can be tested with a trivial job.

mod complete;
pub mod export;
mod fail_fast;
mod job;
mod lock;
mod manifest;
pub mod merge;
mod plan;
mod progress;
pub mod provenance;
mod runner;
#[cfg(test)]
mod runner_tests;
pub mod settings;
mod solver_job;
mod stop;
mod summary;

use std::path::PathBuf;

pub use fail_fast::FAIL_FAST_AFTER;
pub use job::Solved;
pub(crate) use job::{Job, JobError};
pub use lock::RunLock;
pub use manifest::{MANIFEST_FILE, Manifest, timestamp};
pub(crate) use plan::answer_path_repeat;
pub use plan::{Selection, Shard, answer_path, select_with, selected_ids};
pub use progress::{NoProgress, PlainProgress, Progress, Totals};
pub use provenance::Provenance;
pub use runner::{BatchOptions, BatchOutcome, keep_episode, run_batch};
pub use solver_job::SolverJob;
pub use stop::StopSignal;
pub use summary::{EpisodeView, Summary, scan_run_dir};

/// Errors of the batch layer. `BadInput` and `Data` are the user's to fix (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    #[error(transparent)]
    Data(#[from] crate::toolbench::DataError),
    #[error("{0}")]
    BadInput(String),
    #[error(
        "{dir}: this run directory holds a run with {field} `{existing}`, not `{requested}`; use another --out, or --force to mix them"
    )]
    ManifestMismatch {
        dir: PathBuf,
        field: &'static str,
        existing: String,
        requested: String,
    },
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error(
        "{dir} is in use by another sum2act process ({holder}); wait for it to finish, or give another {flag}"
    )]
    Locked {
        dir: PathBuf,
        holder: String,
        flag: String,
    },
}

impl BatchError {
    /// Whether the user's input is at fault (the CLI maps these to exit code 2).
    pub fn is_bad_input(&self) -> bool {
        match self {
            BatchError::Data(e) => !e.is_output(),
            BatchError::BadInput(_)
            | BatchError::ManifestMismatch { .. }
            | BatchError::Locked { .. } => true,
            BatchError::Io { .. } => false,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, e: impl std::fmt::Display) -> Self {
        BatchError::Io {
            path: path.into(),
            message: e.to_string(),
        }
    }
}
