//! What a solver works with: the model, the tool caller, prompts and limits, plus per-episode
//! accounting so every method reports the same counters.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::llm::{Completion, CompletionRequest, LlmClient, LlmError};
use crate::prompts::{PromptError, PromptName, Prompts};
use crate::text::cap_text;
use crate::tools::observation::ObservationCode;
use crate::tools::{Observation, ReplySource, ToolCaller};

use super::budget::Budget;
use super::episode::{Counters, ErrorCause, Step};
use super::sampling::Sampling;

/// Limits and switches shared by all methods.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The one budget every method runs under (observation, steps, calls, prompt policies).
    pub budget: Budget,
    /// Token budget of the Sum2Act state shown to the router.
    pub state_token_budget: usize,
    /// Sum2Act: a successful result of plain JSON up to this many characters (compact) is folded into
    /// the state as it is, with no state-manager call; 0 (the default) sends every result to the state
    /// manager. Measured with a strong model (docs/sum2act.md, issue 43): 9% fewer tokens, 7 fewer of
    /// 48 queries solved at [`SUGGESTED_FOLD_CHARS`], so it is off by default.
    pub fold_chars: usize,
    /// Sum2Act: where the router reads what each tool does.
    pub tool_docs: ToolDocs,
    /// Sum2Act: the router may call several tools in one reply (independent parts at once); off (the
    /// default, and what the strong-model reference runs measured): one call per turn, the paper's loop.
    pub calls_at_once: bool,
    /// Split the task into subtasks before the Sum2Act loop.
    pub decompose: bool,
    /// Independent tries of ReAct (CoT@n).
    pub tries: u32,
    /// DFSDT tree width.
    pub width: u32,
    /// Tokens the model may write per call.
    pub max_tokens: u32,
    /// Tokens of a call that writes the final answer or a state update (a list or an image does not
    /// fit `max_tokens`): Sum2Act's state manager and answer call, plan/graph's answer call, and a
    /// `Finish` of any method that was cut at `max_tokens` (asked again once with this budget).
    pub answer_max_tokens: u32,
    /// ReAct/DFSDT: an exact repeat of a call already made on the same chain is not run again; the
    /// model is asked to finish instead (Sum2Act always does this). Off = ToolBench's behaviour,
    /// where a small model can spend its whole budget repeating one call.
    pub repeat_guard: bool,
    /// Longest reply text and tool-call arguments kept from one model call (bytes): a model that
    /// writes megabytes would otherwise fill answer files, prompts and memory. Longer ones are cut
    /// and counted in `cut_replies`.
    pub max_reply_bytes: usize,
    /// Options of the `plan` and `graph` methods.
    pub methods: super::method_options::MethodOptions,
}

/// Where Sum2Act's router reads what each tool does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolDocs {
    /// A listing in the system prompt (descriptions, arguments, examples); the offered functions carry
    /// argument types only (the default: measured with the strong model).
    Listed,
    /// Only in the offered functions (descriptions and examples in their schemas): the names and
    /// arguments are not written twice.
    Schemas,
}

crate::names::named_values!(ToolDocs, "tool docs" {
    Listed => "listed": "a listing in the system prompt, argument types in the functions (the default)",
    Schemas => "schemas": "only in the offered functions",
});

/// Default of `AgentOptions::answer_max_tokens`.
pub const DEFAULT_ANSWER_MAX_TOKENS: u32 = 2048;

/// Default of `AgentOptions::state_token_budget`: room for a strong model's facts on a multi-part
/// request (the dev run's largest states held ~600 tokens of facts; at 600 the router saw them cut).
pub const DEFAULT_STATE_TOKEN_BUDGET: usize = 1_200;

/// The `fold_chars` measured (`sum2act@lean`): most ToolBench results are smaller (the median result
/// the state manager read in the equal-budget reference runs was 903 characters), and a few of this
/// size still fit the state's token budget.
pub const SUGGESTED_FOLD_CHARS: usize = 1_200;

/// Default of `AgentOptions::max_reply_bytes` (64 KiB).
pub const DEFAULT_MAX_REPLY_BYTES: usize = 64 * 1024;

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            budget: Budget::default(),
            state_token_budget: DEFAULT_STATE_TOKEN_BUDGET,
            fold_chars: 0,
            calls_at_once: false,
            tool_docs: ToolDocs::Listed,
            decompose: false,
            tries: 1,
            width: 2,
            max_tokens: 384,
            answer_max_tokens: DEFAULT_ANSWER_MAX_TOKENS,
            repeat_guard: true,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            methods: Default::default(),
        }
    }
}

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
    pub fn with_sampling(mut self, sampling: Option<Sampling>) -> Self {
        self.sampling = sampling;
        self
    }

    /// Calls the model and counts the call, its tokens and cost. The reply's text and arguments are
    /// cut to `max_reply_bytes` (a cut is counted), so nothing a model writes grows without bound.
    pub async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
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
    pub async fn act(&self, name: &str, arguments: &str) -> Observation {
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
    pub fn error_cause(&self) -> ErrorCause {
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
    pub fn environment_failure(&self) -> Option<String> {
        let first = self.unreachable.lock().ok()?.clone()?;
        let c = self.counters(0);
        Some(format!(
            "the tool server could not be reached ({} of {} tool calls got no reply): {first}",
            c.unreachable_tool_calls, c.tool_calls
        ))
    }

    /// Counts a successful call whose result added nothing new (kept apart from failed calls).
    pub fn count_redundant_call(&self) {
        self.update(|c| c.redundant_calls += 1);
    }

    /// Whether the episode made as many tool calls as its budget allows.
    pub fn tool_calls_spent(&self) -> bool {
        let done = self.counters.lock().map(|c| c.tool_calls).unwrap_or(0);
        self.options
            .budget
            .max_tool_calls
            .is_some_and(|n| done >= u64::from(n))
    }

    /// Whether the episode made as many model calls as its budget allows: a method's loop ends there.
    pub fn llm_calls_spent(&self) -> bool {
        self.llm_calls() >= u64::from(self.options.budget.max_llm_calls)
    }

    /// What a prompt's `{assume_missing}` placeholder gets: the policy's fragment `name` (each prompt
    /// words the policy for its own sentence) when the budget's policy is on, else nothing.
    pub fn assume_missing(&self, name: PromptName) -> Result<String, PromptError> {
        if self.options.budget.assume_missing {
            self.prompts.render(name, &[])
        } else {
            Ok(String::new())
        }
    }

    pub fn llm_calls(&self) -> u64 {
        self.counters.lock().map(|c| c.llm_calls).unwrap_or(0)
    }

    fn update(&self, f: impl FnOnce(&mut Counters)) {
        if let Ok(mut c) = self.counters.lock() {
            f(&mut c);
        }
    }

    /// The counters so far, with wall time filled in.
    pub fn counters(&self, steps: usize) -> Counters {
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
