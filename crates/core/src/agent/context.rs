//! What a solver works with: the model, the tool caller, prompts and limits, plus per-episode
//! accounting so every method reports the same counters.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::llm::{Completion, CompletionRequest, LlmClient, LlmError};
use crate::prompts::{PromptError, PromptName, Prompts};
use crate::text::cap_text;
use crate::tools::observation::ObservationCode;
use crate::tools::{Observation, ReplySource, ToolCaller};

use super::episode::{Counters, ErrorCause, Step};
use super::options::AgentOptions;
use super::sampling::Sampling;

/// Receives live progress of an episode (the `run` and `chat` commands print it).
pub trait Observer: Send + Sync {
    /// A step finished (an action and its observation, with the state after it for Sum2Act).
    fn step(&self, _step: &Step) {}
    /// Free-form progress (decomposition, retries of malformed output, backtracking).
    fn note(&self, _text: &str) {}
}

/// An observer that shows nothing (batch runs).
pub struct QuietObserver;

impl Observer for QuietObserver {}

/// The context of one episode.
pub struct SolveContext {
    pub llm: Arc<dyn LlmClient>,
    pub tools: ToolCaller,
    pub prompts: Arc<Prompts>,
    pub options: AgentOptions,
    pub observer: Arc<dyn Observer>,
    counters: Mutex<Counters>,
    /// The first tool call's error that never reached the tool server.
    unreachable: Mutex<Option<String>>,
    /// Whether the last failed model call was a setup error ([`LlmError::is_setup`]).
    last_llm_failure_is_setup: Mutex<Option<bool>>,
    started: Instant,
    /// Set for repeats `r > 0` of a batch: every call is sampled with an episode-specific seed.
    sampling: Option<Sampling>,
}

impl SolveContext {
    pub fn new(
        llm: Arc<dyn LlmClient>,
        tools: ToolCaller,
        prompts: Arc<Prompts>,
        options: AgentOptions,
        observer: Arc<dyn Observer>,
    ) -> Self {
        // The budget is the one place the observation cut is set: the caller cuts what ReAct and
        // DFSDT keep at the number the other methods' readers use.
        let tools = tools.with_observation_chars(options.budget.observation_chars);
        SolveContext {
            llm,
            tools,
            prompts,
            options,
            observer,
            counters: Mutex::new(Counters::default()),
            unreachable: Mutex::new(None),
            last_llm_failure_is_setup: Mutex::new(None),
            started: Instant::now(),
            sampling: None,
        }
    }

    /// Samples every call of this episode as repeat `sampling` (`None`: requests go out unchanged).
    pub(crate) fn with_sampling(mut self, sampling: Option<Sampling>) -> Self {
        self.sampling = sampling;
        self
    }

    /// Calls the model and counts the call, its tokens and cost. The reply's text and arguments are
    /// cut to `max_reply_bytes` (a cut is counted), so nothing a model writes grows without bound.
    pub(crate) async fn complete(
        &self,
        request: &CompletionRequest,
    ) -> Result<Completion, LlmError> {
        let mut result = match &self.sampling {
            None => self.llm.complete(request).await,
            Some(sampling) => {
                let mut sampled = request.clone();
                sampling.apply(&mut sampled, self.llm_calls());
                self.llm.complete(&sampled).await
            }
        };
        let cap = self.options.max_reply_bytes;
        // A reply the backend cut at the token cap counts as cut too.
        let cut = match &mut result {
            Ok(c) => cap_completion(c, cap) || c.finish_reason.as_deref() == Some("length"),
            Err(LlmError::Truncated { content, .. }) => {
                cap_text(content, cap);
                true
            }
            Err(_) => false,
        };
        if let (Err(e), Ok(mut last)) = (&result, self.last_llm_failure_is_setup.lock()) {
            *last = Some(e.is_setup());
        }
        self.update(|c| {
            if cut {
                c.cut_replies += 1;
            }
            c.llm_calls += 1;
            if let Ok(done) = &result {
                c.prompt_tokens += done.usage.prompt_tokens;
                c.completion_tokens += done.usage.completion_tokens;
                c.cost_usd += done.cost_usd;
            }
        });
        result
    }

    /// Runs a tool action and counts it. A tool call past the budget's `max_tool_calls` is not made:
    /// the model is told the budget is spent and to finish with what it has.
    pub(crate) async fn act(&self, name: &str, arguments: &str) -> Observation {
        if name != crate::toolbench::FINISH && self.tool_calls_spent() {
            let limit = self.options.budget.max_tool_calls.unwrap_or_default();
            let why = format!(
                "not called: this episode's budget of {limit} tool calls is spent. Call Finish now with what the results above hold."
            );
            self.update(|c| c.over_budget_calls += 1);
            return super::common::harness_observation(name, arguments, &why);
        }
        let obs = self.tools.call(name, arguments).await;
        if obs.finish.is_none() {
            self.update(|c| {
                c.tool_calls += 1;
                if obs.failed {
                    c.failed_tool_calls += 1;
                }
                if obs.code == ObservationCode::NoSuchFunction {
                    c.hallucinated_calls += 1;
                }
                if obs.source == ReplySource::Unreachable {
                    c.unreachable_tool_calls += 1;
                }
            });
            if obs.source == ReplySource::Unreachable
                && let Ok(mut first) = self.unreachable.lock()
            {
                first.get_or_insert_with(|| obs.error.clone());
            }
        }
        obs
    }

    /// Whose failure an episode that ended in `error` is: the tool server's when it could not be
    /// reached, else the setup's when the last failed model call was a setup error, else an outage.
    pub(crate) fn error_cause(&self) -> ErrorCause {
        if self.environment_failure().is_some() {
            return ErrorCause::ToolServer;
        }
        match self.last_llm_failure_is_setup.lock().ok().and_then(|l| *l) {
            Some(true) => ErrorCause::Setup,
            _ => ErrorCause::Outage,
        }
    }

    /// Why the episode is not a result although it ended: the tool server could not be reached for
    /// some of its calls (the first such error, with the count). `None` when every call was answered.
    pub(crate) fn environment_failure(&self) -> Option<String> {
        let first = self.unreachable.lock().ok()?.clone()?;
        let c = self.counters(0);
        Some(format!(
            "the tool server could not be reached ({} of {} tool calls got no reply): {first}",
            c.unreachable_tool_calls, c.tool_calls
        ))
    }

    /// Counts a successful call whose result added nothing new (kept apart from failed calls).
    pub(crate) fn count_redundant_call(&self) {
        self.update(|c| c.redundant_calls += 1);
    }

    /// Whether the episode made as many tool calls as its budget allows.
    pub(crate) fn tool_calls_spent(&self) -> bool {
        let done = self.counters.lock().map(|c| c.tool_calls).unwrap_or(0);
        self.options
            .budget
            .max_tool_calls
            .is_some_and(|n| done >= u64::from(n))
    }

    /// Whether the episode made as many model calls as its budget allows: a method's loop ends there.
    pub(crate) fn llm_calls_spent(&self) -> bool {
        self.llm_calls() >= u64::from(self.options.budget.max_llm_calls)
    }

    /// What a prompt's `{assume_missing}` placeholder gets: the policy's fragment `name` (each prompt
    /// words the policy for its own sentence) when the budget's policy is on, else nothing.
    pub(crate) fn assume_missing(&self, name: PromptName) -> Result<String, PromptError> {
        if self.options.budget.assume_missing {
            self.prompts.render(name, &[])
        } else {
            Ok(String::new())
        }
    }

    pub(crate) fn llm_calls(&self) -> u64 {
        self.counters.lock().map(|c| c.llm_calls).unwrap_or(0)
    }

    fn update(&self, f: impl FnOnce(&mut Counters)) {
        if let Ok(mut c) = self.counters.lock() {
            f(&mut c);
        }
    }

    /// The counters so far, with wall time filled in.
    pub(crate) fn counters(&self, steps: usize) -> Counters {
        let mut c = self.counters.lock().map(|c| c.clone()).unwrap_or_default();
        c.steps = steps as u64;
        c.wall_ms = self.started.elapsed().as_millis() as u64;
        c
    }
}

/// Longest tool name kept from a reply (real ToolBench names are under 100 characters).
const MAX_NAME_BYTES: usize = 256;

/// Cuts a completion's content, tool names and arguments to their caps; true when anything was cut.
fn cap_completion(c: &mut Completion, cap: usize) -> bool {
    let mut cut = cap_text(&mut c.content, cap);
    for call in &mut c.tool_calls {
        cut |= cap_text(&mut call.arguments, cap);
        cut |= cap_text(&mut call.name, MAX_NAME_BYTES);
    }
    if cut {
        c.finish_reason = Some("length".into());
    }
    cut
}
