//! The adapter from an agent method to the batch runner: a fresh context (counters, tool caller)
//! per query, sharing the model, the tool environment and the prompts across the run.

use std::sync::Arc;

use super::{Job, JobError, Solved};
use crate::agent::sampling::Sampling;
use crate::agent::{AgentOptions, QuietObserver, SolveContext, Solver};
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
        }
    }
}

#[async_trait]
impl Job for SolverJob {
    fn method(&self) -> &str {
        self.solver.method().name()
    }

    async fn run(&self, task: &Task, repeat: u32) -> Result<Solved, JobError> {
        let ctx = SolveContext::new(
            self.llm.clone(),
            self.env.caller(task.functions.clone()),
            self.prompts.clone(),
            self.options.clone(),
            Arc::new(QuietObserver),
        )
        .with_sampling(Sampling::for_repeat(task.query_id, repeat));
        let episode = self
            .solver
            .solve(task, &ctx)
            .await
            .map_err(|e| JobError(e.to_string()))?;
        Ok(Solved::from_episode(&episode))
    }
}
