//! Agent methods behind one `Solver` trait: Sum2Act (router + state manager), ReAct/CoT, DFSDT,
//! plan-and-execute (HuggingGPT) and tool-graph search (ControlLLM).
//! Every method gets the same context (model, tool caller, prompts, limits) and returns the same
//! `Episode`, so an A/B comparison differs only in the method.

pub mod budget;
mod common;
mod context;
pub(crate) mod dfsdt;
mod epilogue;
mod episode;
pub(crate) mod failure;
pub(crate) mod graph;
pub(crate) mod options;
pub mod parse;
pub(crate) mod plan;
pub mod react;
pub(crate) mod reading;
pub(crate) mod sampling;
pub mod sum2act;
pub mod toolset;

use std::sync::Arc;

use async_trait::async_trait;

pub use crate::toolbench::method::Method;
pub use budget::{Budget, Preset};
pub use context::{Observer, QuietObserver, SolveContext};
pub use episode::{Episode, FinishKind, Step};
#[cfg(test)]
pub(crate) use options::DEFAULT_ANSWER_MAX_TOKENS;
pub use options::{AgentOptions, AgentSection, FoldChars, Strategy, ToolDocs};

use crate::toolbench::Task;

/// Errors that end an episode early. Model and tool failures inside an episode are not errors: they
/// become failed steps; only an unusable setup (a prompt that cannot render, a model that is down
/// for good) surfaces here.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Prompt(#[from] crate::prompts::PromptError),
    #[error(transparent)]
    Llm(#[from] crate::llm::LlmError),
}

/// An agent method.
#[async_trait]
pub trait Solver: Send + Sync {
    /// The method; its name is written in answer-file names (`{query_id}_{method}.json`).
    fn method(&self) -> Method;

    /// Solves one task. Returns an episode even when the task was not solved.
    async fn solve(&self, task: &Task, ctx: &SolveContext) -> Result<Episode, AgentError>;
}

/// Builds the solver for `--method NAME`. A method's own options (DFSDT's width, ReAct's tries,
/// plan's parallelism, graph's search) are fixed here; the budget every method shares (steps, calls,
/// the observation cut, `max_depth` included) comes with each episode's context, so it is read in one
/// place for all methods.
pub fn solver(method: Method, options: &AgentOptions) -> Arc<dyn Solver> {
    match method {
        Method::Sum2act => Arc::new(sum2act::Sum2Act::new(options)),
        Method::React => Arc::new(react::React::new(options)),
        Method::Dfsdt => Arc::new(dfsdt::Dfsdt::new(options)),
        Method::Plan => Arc::new(plan::Planner::new(options)),
        Method::Graph => Arc::new(graph::GraphSearch::new(options)),
    }
}
#[cfg(test)]
mod budget_tests;
#[cfg(test)]
mod hardening_tests;
#[cfg(test)]
mod sample_harness;
#[cfg(test)]
mod tests;
