//! The adapter from an agent method to the batch runner: a fresh context (counters, tool caller)
//! per query, sharing the model, the tool environment and the prompts across the run.

use std::path::PathBuf;
use std::sync::Arc;

use super::{Job, JobError, Solved};
use crate::agent::sampling::Sampling;
use crate::agent::{AgentOptions, Method, QuietObserver, SolveContext, Solver};
use crate::llm::LlmClient;
use crate::prompts::Prompts;
use crate::toolbench::Task;
use crate::tools::ToolEnv;
use async_trait::async_trait;

pub struct SolverJob {
    solver: Arc<dyn Solver>,
    llm: Arc<dyn LlmClient>,
    env: ToolEnv,
    prompts: Arc<Prompts>,
    options: AgentOptions,
    /// The run directory: each episode's files go beside its answer file (`{stem}.resources`).
    run_dir: Option<PathBuf>,
}

impl SolverJob {
    pub fn new(
        solver: Arc<dyn Solver>,
        llm: Arc<dyn LlmClient>,
        env: ToolEnv,
        prompts: Arc<Prompts>,
        options: AgentOptions,
    ) -> Self {
        SolverJob {
            solver,
            llm,
            env,
            prompts,
            options,
            run_dir: None,
        }
    }

    pub fn with_run_dir(mut self, run_dir: PathBuf) -> Self {
        self.run_dir = Some(run_dir);
        self
    }
}

#[async_trait]
impl Job for SolverJob {
    fn method(&self) -> Method {
        self.solver.method()
    }

    async fn run(&self, task: &Task, repeat: u32) -> Result<Solved, JobError> {
        let mut caller = self.env.caller(task.functions.clone());
        if let Some(dir) = &self.run_dir {
            let answer = super::answer_path_repeat(
                dir,
                &task.subset,
                task.query_id,
                self.method().name(),
                repeat,
            );
            caller = caller.with_resource_dir(answer.with_extension("resources"));
        }
        let ctx = SolveContext::new(
            self.llm.clone(),
            caller,
            self.prompts.clone(),
            self.options.clone(),
            Arc::new(QuietObserver),
        )
        .with_sampling(Sampling::for_repeat(task.query_id, repeat));
        let episode = self.solver.solve(task, &ctx).await?;
        Ok(Solved::from_episode(&episode))
    }
}
