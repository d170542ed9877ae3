//! What the runner drives: a [`Job`] solves one query and hands back a [`Solved`] answer file with the
//! batch's view of it, so the runner never parses back what a job just built.

use async_trait::async_trait;
use serde_json::Value;

use super::summary::EpisodeView;
use crate::agent::{AgentError, Episode, Method};
use crate::toolbench::DataError;
use crate::toolbench::Task;

/// A setup problem that makes further queries pointless (a prompt that cannot render, a model that
/// is gone); the batch stops launching queries when a job returns one.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The method could not run (`AgentError`: a prompt, the model).
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The answer file could not be written.
    #[error(transparent)]
    Write(#[from] DataError),
}

/// Solves one query and returns its answer file (ToolBench answer file plus the `sum2act` record).
#[async_trait]
pub trait Job: Send + Sync {
    /// The method, whose name is used in answer-file names.
    fn method(&self) -> Method;
    /// Solves repeat `repeat` of `task` (0 for the first run, which must behave as without repeats).
    async fn run(&self, task: &Task, repeat: u32) -> Result<Solved, JobError>;
}

/// One solved query: the answer file to write and the batch's view of its `sum2act` record.
#[derive(Debug, Clone)]
pub struct Solved {
    pub file: Value,
    pub view: EpisodeView,
}

impl Solved {
    /// The answer file of `episode`, its view taken from the episode's fields.
    pub fn from_episode(episode: &Episode) -> Self {
        Solved {
            file: episode.to_json(),
            view: EpisodeView {
                method: episode.method.name().to_string(),
                model: episode.model.clone(),
                subset: episode.subset.clone(),
                query_id: episode.query_id,
                finish: episode.finish.into(),
                counters: episode.counters.clone(),
                error: episode.error.clone(),
                error_cause: episode.error_cause,
            },
        }
    }
}
