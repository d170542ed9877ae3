//! What the commands that solve queries (`run`, `batch`, `chat`) share: the solver and what its
//! episodes run against (the model client, the tool environment, the prompts, the limits), a context
//! for each episode, and the rule that says whose fault an episode that ended in `error` is. The
//! binary's `harness` builds it from resolved options; nothing here reads a flag or the config file.

use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::{AgentOptions, Method, Observer, SolveContext, Solver};
use crate::llm::LlmClient;
use crate::prompts::Prompts;
use crate::toolbench::Function;
use crate::toolbench::answer::ErrorCause;
use crate::tools::ToolEnv;

/// The solver and what every episode of a run shares; cheap to clone (a batch job and a chat
/// session each hold one).
#[derive(Clone)]
pub struct SolverEnv {
    pub solver: Arc<dyn Solver>,
    pub llm: Arc<dyn LlmClient>,
    pub tools: ToolEnv,
    pub prompts: Arc<Prompts>,
    pub options: AgentOptions,
}

impl SolverEnv {
    pub fn method(&self) -> Method {
        self.solver.method()
    }

    /// A fresh context for one episode over `functions`; the files its tools produce go to
    /// `resources` (beside the answer file) when given.
    pub fn context(
        &self,
        functions: Vec<Function>,
        resources: Option<PathBuf>,
        observer: Arc<dyn Observer>,
    ) -> SolveContext {
        let mut caller = self.tools.caller(functions);
        if let Some(dir) = resources {
            caller = caller.with_resource_dir(dir);
        }
        SolveContext::new(
            self.llm.clone(),
            caller,
            self.prompts.clone(),
            self.options.clone(),
            observer,
        )
    }
}

/// Whose fault an episode that ended in `error` is; `run` and `batch` decide their exit code by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorEpisode {
    /// The model never answered, for a reason of the setup (a rejected key, an unknown model, no
    /// endpoint): the user's to fix (exit code 2).
    Setup,
    /// The model never answered although it is there (a timeout, a server error), or the tool
    /// server could not be reached: an outage (1).
    NoReply,
    /// The episode stopped after the model had answered: the run failed (1).
    Stopped,
}

impl ErrorEpisode {
    /// The kind of an episode that ended in `error` and used `tokens` tokens (none: the model never
    /// answered), for the `cause` the episode recorded.
    pub fn of(tokens: u64, cause: Option<ErrorCause>) -> Self {
        match (tokens, cause) {
            (0, Some(ErrorCause::Setup) | None) => ErrorEpisode::Setup,
            (0, Some(ErrorCause::Outage | ErrorCause::ToolServer)) => ErrorEpisode::NoReply,
            _ => ErrorEpisode::Stopped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_without_a_reply_is_the_setups_unless_the_model_timed_out() {
        use ErrorCause::*;
        assert_eq!(ErrorEpisode::of(0, Some(Setup)), ErrorEpisode::Setup);
        assert_eq!(ErrorEpisode::of(0, Some(Outage)), ErrorEpisode::NoReply);
        assert_eq!(ErrorEpisode::of(12, Some(Setup)), ErrorEpisode::Stopped);
        assert_eq!(ErrorEpisode::of(12, Some(Outage)), ErrorEpisode::Stopped);
        assert_eq!(ErrorEpisode::of(0, Some(ToolServer)), ErrorEpisode::NoReply);
    }
}
