//! The adapter from an agent method to the batch runner: a fresh context (counters, tool caller)
//! per query, sharing the solver's environment (the model, the tools, the prompts) across the run.

use std::path::PathBuf;
use std::sync::Arc;

use super::{Job, JobError, Solved};
use crate::agent::sampling::Sampling;
use crate::agent::{Method, QuietObserver};
use crate::setup::SolverEnv;
use crate::toolbench::Task;
use async_trait::async_trait;

pub struct SolverJob {
    env: SolverEnv,
    /// The run directory: each episode's files go beside its answer file (`{stem}.resources`).
    run_dir: Option<PathBuf>,
}

impl SolverJob {
    pub fn new(env: SolverEnv) -> Self {
        SolverJob { env, run_dir: None }
    }

    pub fn with_run_dir(mut self, run_dir: PathBuf) -> Self {
        self.run_dir = Some(run_dir);
        self
    }
}

#[async_trait]
impl Job for SolverJob {
    fn method(&self) -> Method {
        self.env.method()
    }

    async fn run(&self, task: &Task, repeat: u32) -> Result<Solved, JobError> {
        let resources = self.run_dir.as_ref().map(|dir| {
            super::answer_path_repeat(
                dir,
                &task.subset,
                task.query_id,
                self.method().name(),
                repeat,
            )
            .with_extension("resources")
        });
        let ctx = self
            .env
            .context(task.functions.clone(), resources, Arc::new(QuietObserver))
            .with_sampling(Sampling::for_repeat(task.query_id, repeat));
        let episode = self.env.solver.solve(task, &ctx).await?;
        Ok(Solved::from_episode(&episode))
    }
}
