//! What a reader does with the folder: claim the oldest pending request of its role (`next`), answer
//! it (`reply`: checked against the request, and guarded against a reply meant for another), see the queue (`status`), and hand back a request
//! whose reader died (`release`). The server never hands a claimed request to a second reader by
//! itself: it cannot tell a slow reader from a dead one, so releasing is an explicit act.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::guard::{self, ReplyFile};
use super::queue::{Entry, Queue, State, age};
use super::reply::{self, Reply};
use super::{ByHandError, POLL};
use sum2act_core::llm::purpose::ReaderRole;
use sum2act_core::llm::{CompletionRequest, count_tokens};

/// What `next` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Claimed this request; its rendered text.
    Claimed { id: u64, rendered: String },
    /// Nothing of the role was pending within the wait.
    Nothing,
    /// Nothing was pending and `DIR/STOP` exists.
    Stop,
}

/// Claims the oldest pending request of `role`, waiting up to `wait` for one (polling, no busy loop).
/// Pending requests are served before `STOP` is honoured, so a run is never left half-answered.
pub async fn next(queue: &Queue, role: ReaderRole, wait: Duration) -> Result<Next, ByHandError> {
    let started = Instant::now();
    loop {
        if let Some(id) = queue.claim_oldest(role)? {
            let path = queue.state_path(role, id, State::Claimed);
            let rendered = std::fs::read_to_string(&path).map_err(|e| ByHandError::io(&path, e))?;
            return Ok(Next::Claimed { id, rendered });
        }
        if queue.stop_requested() {
            return Ok(Next::Stop);
        }
        if started.elapsed() >= wait {
            return Ok(Next::Nothing);
        }
        tokio::time::sleep(POLL.min(wait.saturating_sub(started.elapsed()))).await;
    }
}

/// How a reply was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyForm {
    /// The reader's JSON reply format.
    Json,
    /// Raw text that is the content.
    Text,
}

/// Where a reply came from, for the guards against a reply meant for another request ([`guard`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Source {
    /// The file read (standard input too, when it is redirected from a file); `None` for a pipe or a
    /// terminal, whose text is written as it is sent.
    pub file: Option<ReplyFile>,
    /// The reader means to repeat an earlier reply word for word (`--repeat`): not refused as a copy.
    pub repeat: bool,
}

/// A reply accepted, with its length against the request's `max_tokens` (a model would have been cut
/// there; the reader is told, not refused).
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    pub reply: Reply,
    pub tokens: u64,
    pub max_tokens: u32,
}

/// Accepts a reply to the claimed request `id` once it fits the request and passes the guards (a file
/// older than the claim, a long reply copied from another request); returns the reply as stored. The
/// claim is the gate: of two replies to one request, only the first is accepted; a refused one leaves
/// the request claimed.
pub fn answer(
    queue: &Queue,
    id: u64,
    text: &str,
    form: ReplyForm,
    source: &Source,
) -> Result<Accepted, ByHandError> {
    let entry = claimed(queue, id)?;
    if let Some(file) = &source.file {
        guard::written_after_claim(queue, entry.role, id, file)?;
    }
    let request = stored_request(queue, &entry)?;
    let parsed = match form {
        ReplyForm::Json => reply::parse_json(text, &request),
        ReplyForm::Text => reply::from_text(text, &request),
    };
    let reply = parsed.map_err(|problems| ByHandError::InvalidReply { id, problems })?;
    let bytes = serde_json::to_vec_pretty(&reply).map_err(|e| ByHandError::Io(e.to_string()))?;
    if !source.repeat {
        let from = source
            .file
            .as_ref()
            .map_or("standard input", |f| f.name.as_str());
        guard::not_copied(queue, entry.role, id, &reply, &bytes, from)?;
    }
    let target = queue.reply_path(entry.role, id);
    let tmp = target.with_file_name(format!(".{id:06}.reply.{}.tmp", std::process::id()));
    write_synced(&tmp, &bytes)?;
    if !queue.moved(entry.role, id, State::Claimed, State::Answered) {
        let _ = std::fs::remove_file(&tmp);
        return Err(lost_race(queue, id));
    }
    std::fs::rename(&tmp, &target).map_err(|e| ByHandError::io(&target, e))?;
    let tokens = count_tokens(&reply.content)
        + reply
            .tool_calls
            .iter()
            .map(|c| count_tokens(&c.name) + count_tokens(&c.arguments.to_string()))
            .sum::<usize>();
    Ok(Accepted {
        reply,
        tokens: tokens as u64,
        max_tokens: request.max_tokens,
    })
}

/// Puts a claimed request back to pending (its reader died or gave up).
pub fn release(queue: &Queue, id: u64) -> Result<ReaderRole, ByHandError> {
    let entry = claimed(queue, id)?;
    if !queue.moved(entry.role, id, State::Claimed, State::Pending) {
        return Err(lost_race(queue, id));
    }
    // The next claim marks its own moment; a mark of no claim would only mislead.
    let _ = std::fs::remove_file(queue.claim_path(entry.role, id));
    Ok(entry.role)
}

/// The request as a claimed entry, or why it is not one.
fn claimed(queue: &Queue, id: u64) -> Result<Entry, ByHandError> {
    let entry = queue.find(id)?;
    let hint = match entry.state {
        State::Claimed => return Ok(entry),
        State::Pending => "claim it first with `by-hand next`",
        State::Answered => "it was already answered; take the next request",
        State::Withdrawn => "its client went away, nobody needs the reply; take the next request",
    };
    Err(ByHandError::NotClaimed {
        id,
        state: entry.state.name(),
        hint,
    })
}

/// Why a request that was claimed a moment ago no longer is (withdrawn or answered meanwhile).
fn lost_race(queue: &Queue, id: u64) -> ByHandError {
    match claimed(queue, id) {
        Err(e) => e,
        Ok(_) => ByHandError::Io(format!(
            "request {id} changed state while this command ran; run it again"
        )),
    }
}

/// The request as the server stored it.
pub fn stored_request(queue: &Queue, entry: &Entry) -> Result<CompletionRequest, ByHandError> {
    let path = queue.request_path(entry.role, entry.id);
    let bad = |message: String| ByHandError::BadRequestFile {
        path: path.clone(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    let body: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    sum2act_core::llm::wire::parse_request(&body).map_err(bad)
}

fn write_synced(path: &PathBuf, bytes: &[u8]) -> Result<(), ByHandError> {
    use std::io::Write;
    std::fs::File::create(path)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .map_err(|e| ByHandError::io(path, e))
}

/// Counts of one role's requests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoleStatus {
    pub pending: usize,
    pub claimed: usize,
    pub answered: usize,
    pub withdrawn: usize,
    /// The oldest pending request and how long it has waited.
    pub oldest_pending: Option<(u64, Duration)>,
    /// The oldest claimed request and how long since it was opened (a dead reader shows here).
    pub oldest_claimed: Option<(u64, Duration)>,
}

/// Counts per role, in the order of [`ReaderRole::ALL`].
pub fn status(queue: &Queue) -> Result<Vec<(ReaderRole, RoleStatus)>, ByHandError> {
    let mut out = Vec::new();
    for role in ReaderRole::ALL {
        let mut s = RoleStatus::default();
        for e in queue.entries(role)? {
            let (count, oldest) = match e.state {
                State::Pending => (&mut s.pending, Some(&mut s.oldest_pending)),
                State::Claimed => (&mut s.claimed, Some(&mut s.oldest_claimed)),
                State::Answered => (&mut s.answered, None),
                State::Withdrawn => (&mut s.withdrawn, None),
            };
            *count += 1;
            if let Some(slot) = oldest
                && slot.is_none()
            {
                *slot = Some((e.id, age(&e)));
            }
        }
        out.push((role, s));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sum2act_core::llm::openai::request_body;
    use sum2act_core::llm::{Message, ToolChoice};

    fn post(q: &Queue, id: u64, role: ReaderRole, req: &CompletionRequest) {
        let body = serde_json::to_vec(&request_body("m", req)).unwrap();
        q.post(role, id, &body, &format!("# Request {id}")).unwrap();
    }

    #[tokio::test]
    async fn next_reply_release_and_status() {
        let dir = tempfile::tempdir().unwrap();
        let q = Queue::create(dir.path()).unwrap();
        let req = CompletionRequest::new("t", vec![Message::user("q")]).with_tools(
            vec![json!({"name": "f", "parameters": {}})],
            ToolChoice::Required,
        );
        post(&q, 1, ReaderRole::Agent, &req);
        post(&q, 2, ReaderRole::Judge, &req);
        let n = next(&q, ReaderRole::Agent, Duration::ZERO).await.unwrap();
        assert_eq!(
            n,
            Next::Claimed {
                id: 1,
                rendered: "# Request 1".into()
            }
        );
        assert_eq!(
            next(&q, ReaderRole::Agent, Duration::from_millis(50))
                .await
                .unwrap(),
            Next::Nothing
        );
        let bad = answer(
            &q,
            1,
            r#"{"content": "no call"}"#,
            ReplyForm::Json,
            &Source::default(),
        )
        .unwrap_err();
        assert!(bad.to_string().contains("stays claimed"), "{bad}");
        assert_eq!(q.find(1).unwrap().state, State::Claimed);
        answer(
            &q,
            1,
            r#"{"tool_calls": [{"name": "f"}]}"#,
            ReplyForm::Json,
            &Source::default(),
        )
        .unwrap();
        let twice = answer(
            &q,
            1,
            r#"{"tool_calls": [{"name": "f"}]}"#,
            ReplyForm::Json,
            &Source::default(),
        )
        .unwrap_err();
        assert!(twice.to_string().contains("already answered"), "{twice}");
        assert!(q.read_reply(ReaderRole::Agent, 1).unwrap().is_some());
        let unclaimed = answer(&q, 2, "{}", ReplyForm::Json, &Source::default()).unwrap_err();
        assert!(
            unclaimed.to_string().contains("claim it first"),
            "{unclaimed}"
        );

        let s = status(&q).unwrap();
        assert_eq!((s[0].1.answered, s[2].1.pending), (1, 1));
        assert_eq!(s[2].1.oldest_pending.map(|(id, _)| id), Some(2));
        assert!(matches!(
            next(&q, ReaderRole::Judge, Duration::ZERO).await.unwrap(),
            Next::Claimed { id: 2, .. }
        ));
        assert!(q.claimed_at(ReaderRole::Judge, 2).is_some());
        assert_eq!(release(&q, 2).unwrap(), ReaderRole::Judge);
        assert_eq!(q.claimed_at(ReaderRole::Judge, 2), None);
        assert_eq!(q.find(2).unwrap().state, State::Pending);
        std::fs::write(dir.path().join("STOP"), "").unwrap();
        assert!(matches!(
            next(&q, ReaderRole::Judge, Duration::ZERO).await.unwrap(),
            Next::Claimed { .. }
        ));
        assert_eq!(
            next(&q, ReaderRole::Judge, Duration::from_secs(60))
                .await
                .unwrap(),
            Next::Stop
        );
    }
}
