//! A model answered by hand: each request is written into a folder, rendered for a reader (a person,
//! or an agent playing a strong model), and the completion is whatever reply the reader gives, however
//! long that takes. Behind `serve-llm --by-hand DIR` it is an OpenAI-compatible endpoint, used for
//! human baselines, strong-model measurements, and for reading exactly what a model is shown.
//!
//! Requests are split by reader role (`purpose::ReaderRole`), so different readers answer the agent,
//! the tool simulator and the judge. The folder's layout and its atomic state changes are in [`queue`];
//! the reader's commands (`by-hand next|reply|status|release`) in [`reader`]; the guards against a
//! reply meant for another request in [`guard`].

pub mod guard;
pub mod queue;
pub mod reader;
pub mod render;
pub mod reply;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;

use queue::{Queue, State};
pub use render::Commands;
use reply::Reply;
use sum2act_core::llm::openai::request_body;
use sum2act_core::llm::purpose::ReaderRole;
use sum2act_core::llm::{Completion, CompletionRequest, LlmClient, LlmError, ToolCall, Usage};
use sum2act_core::llm::{count_completion_tokens, count_prompt_tokens};

/// The model id the endpoint reports.
pub const MODEL_ID: &str = "by-hand";

/// How often a waiting request looks for its reply, and `next --wait` for a request.
pub const POLL: Duration = Duration::from_millis(200);

/// Errors of the by-hand folder and its reader commands.
#[derive(Debug, thiserror::Error)]
pub enum ByHandError {
    #[error(
        "{0} is not a by-hand folder (start `sum2act serve-llm --by-hand DIR` first; it creates DIR/agent, DIR/simulator and DIR/judge)"
    )]
    NotAFolder(PathBuf),
    #[error("{0}")]
    Io(String),
    #[error("no request {0} in this folder")]
    NoSuchRequest(u64),
    #[error("{0}: larger than 4 MiB, refused")]
    TooLarge(PathBuf),
    #[error("request {id} is {state}, not claimed: {hint}")]
    NotClaimed {
        id: u64,
        state: &'static str,
        hint: &'static str,
    },
    #[error(
        "reply to request {id} refused (the request stays claimed by you; fix and send again):\n{problems}"
    )]
    InvalidReply { id: u64, problems: String },
    /// A reply file older than its request's claim: it was written for an earlier request.
    #[error(
        "{file}: last written {}, before request {id} was claimed ({}, {:.1} s later), so it cannot hold this request's reply (an earlier request's reply left in the file?). Write the reply for request {id} and send it again (the request stays claimed by you)",
        guard::stamp(.written), guard::stamp(.claimed), guard::gap(.written, .claimed)
    )]
    StaleReply {
        id: u64,
        file: String,
        written: SystemTime,
        claimed: SystemTime,
    },
    /// A long reply identical to one accepted for another request of the role: copied from it.
    #[error(
        "{from}: this reply ({bytes} bytes) is word for word the one accepted for request {earlier}, copied from it? Write the reply for request {id} and send it again (the request stays claimed by you); if request {id} truly needs the very same reply, send it with --repeat"
    )]
    CopiedReply {
        id: u64,
        earlier: u64,
        from: String,
        bytes: usize,
    },
    #[error("{path}: the stored request cannot be read: {message}")]
    BadRequestFile { path: PathBuf, message: String },
}

impl ByHandError {
    fn io(path: &Path, e: std::io::Error) -> Self {
        ByHandError::Io(format!("{}: {e}", path.display()))
    }

    /// Whether the reader's input (folder, id, reply) is at fault: exit code 2.
    pub fn is_bad_input(&self) -> bool {
        !matches!(
            self,
            ByHandError::Io(_) | ByHandError::BadRequestFile { .. }
        )
    }
}

/// Where the folder is and how readers run the binary.
#[derive(Debug, Clone)]
pub struct ByHandOptions {
    pub dir: PathBuf,
    pub commands: Commands,
}

/// The model whose every reply a reader writes.
pub struct ByHand {
    queue: Queue,
    commands: Commands,
    last_id: AtomicU64,
}

impl ByHand {
    /// Creates the folder; requests an earlier server left open are withdrawn (nobody waits for them),
    /// and numbering goes on after the highest id there.
    pub fn new(options: ByHandOptions) -> Result<Self, ByHandError> {
        let queue = Queue::create(&options.dir)?;
        let withdrawn = queue.withdraw_all_open()?;
        if withdrawn > 0 {
            tracing::warn!("withdrew {withdrawn} requests left open by an earlier server");
        }
        Ok(ByHand {
            last_id: AtomicU64::new(queue.last_id()?),
            queue,
            commands: options.commands,
        })
    }

    /// Reads the reply once it is there; a reply that does not fit the request (written into the
    /// folder by hand rather than with `by-hand reply`) is set aside and the request claimed again.
    fn take_reply(
        &self,
        role: ReaderRole,
        id: u64,
        request: &CompletionRequest,
    ) -> Result<Option<Reply>, LlmError> {
        let Some(text) = self.queue.read_reply(role, id).map_err(by_hand)? else {
            return Ok(None);
        };
        match reply::parse_json(&text, request) {
            Ok(r) => Ok(Some(r)),
            Err(problems) => {
                tracing::warn!("request {id}: reply file refused, claimed again: {problems}");
                let path = self.queue.reply_path(role, id);
                let _ = std::fs::rename(&path, path.with_extension("rejected"));
                self.queue.moved(role, id, State::Answered, State::Claimed);
                Ok(None)
            }
        }
    }
}

fn by_hand(e: ByHandError) -> LlmError {
    LlmError::ByHand(e.to_string())
}

/// Withdraws the request when its caller stops waiting (the client disconnected): readers then skip
/// it, and a reply already being written is refused.
struct Withdraw<'a> {
    queue: &'a Queue,
    role: ReaderRole,
    id: u64,
    armed: bool,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if self.armed {
            let (q, r, id) = (self.queue, self.role, self.id);
            let _ = q.moved(r, id, State::Pending, State::Withdrawn)
                || q.moved(r, id, State::Claimed, State::Withdrawn);
        }
    }
}

#[async_trait]
impl LlmClient for ByHand {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let id = self.last_id.fetch_add(1, Ordering::SeqCst) + 1;
        let role = ReaderRole::of_purpose(&request.purpose);
        let body = serde_json::to_vec_pretty(&request_body(MODEL_ID, request))
            .map_err(|e| LlmError::ByHand(e.to_string()))?;
        let rendered = render::render(id, role, request, &self.commands);
        self.queue
            .post(role, id, &body, &rendered)
            .map_err(by_hand)?;
        let mut guard = Withdraw {
            queue: &self.queue,
            role,
            id,
            armed: true,
        };
        // No time limit: a reader takes as long as it takes; the caller's own timeout (if any) ends
        // the wait by dropping this future, which withdraws the request.
        loop {
            if let Some(reply) = self.take_reply(role, id, request)? {
                guard.armed = false;
                return Ok(completion(id, reply, request, started));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    fn model_id(&self) -> String {
        MODEL_ID.into()
    }
}

/// The completion for an accepted reply: call ids made from the request id (stable across replays),
/// usage counted with our tokenizer so tokens per query compare with every other backend.
fn completion(id: u64, reply: Reply, request: &CompletionRequest, started: Instant) -> Completion {
    let tool_calls: Vec<ToolCall> = reply
        .tool_calls
        .into_iter()
        .enumerate()
        .map(|(k, c)| ToolCall {
            id: format!("call_{id}_{k}"),
            name: c.name,
            arguments: c.arguments.to_string(),
        })
        .collect();
    let usage = Usage {
        prompt_tokens: count_prompt_tokens(request),
        completion_tokens: count_completion_tokens(&reply.content, &tool_calls),
    };
    let finish = if tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    Completion {
        content: reply.content,
        tool_calls,
        usage,
        model: MODEL_ID.into(),
        finish_reason: Some(finish.into()),
        elapsed_ms: started.elapsed().as_millis() as u64,
        cost_usd: 0.0,
    }
}
