//! Guards against a reply sent for the wrong request. A reader that keeps one private reply file and
//! sends it before rewriting it answers request N with an earlier request's reply: valid JSON that fits
//! the schema, so the checks of [`super::reply`] pass it. It happened in a measurement (an episode
//! about one API got an answer about another). Two cheap checks catch that slip:
//! - a reply file must have been written after its request was claimed ([`written_after_claim`]);
//! - a long reply must not be, word for word, the reply accepted for another request of the role
//!   ([`not_copied`]); short ones (`{"content": "yes"}`) legitimately repeat.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::ByHandError;
use super::queue::Queue;
use super::reply::Reply;
use sum2act_core::llm::purpose::ReaderRole;

/// A reply at most this long (as compact JSON, in bytes) may repeat an earlier one: short answers do.
pub const COPY_MIN_BYTES: usize = 200;

/// The file a reply was read from, as the reader named it, and when it was last written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyFile {
    pub name: String,
    pub modified: SystemTime,
}

/// Refuses a reply file last written before request `id` was claimed: it cannot hold this request's
/// reply. Without a claim mark (a folder from before claims were marked) there is nothing to compare.
pub fn written_after_claim(
    queue: &Queue,
    role: ReaderRole,
    id: u64,
    file: &ReplyFile,
) -> Result<(), ByHandError> {
    match queue.claimed_at(role, id) {
        Some(claimed) if before(file.modified, claimed) => Err(ByHandError::StaleReply {
            id,
            file: file.name.clone(),
            written: file.modified,
            claimed,
        }),
        _ => Ok(()),
    }
}

/// Whether `written` is earlier than `claimed`. A filesystem that keeps whole seconds rounds a fresh
/// file's time down, possibly to before the claim, so such a time is compared by the second.
fn before(written: SystemTime, claimed: SystemTime) -> bool {
    let since = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (w, c) = (since(written), since(claimed));
    if w.subsec_nanos() == 0 {
        w.as_secs() < c.as_secs()
    } else {
        w < c
    }
}

/// Refuses a reply longer than [`COPY_MIN_BYTES`] whose stored form (`stored`, the bytes `by-hand
/// reply` writes to `NNNNNN.reply.json`) is the stored reply of another request of the role, byte for
/// byte. Cheap: one listing of the role's folder and a size per stored reply; only replies of the very
/// same size are read. `from` names the reply's source for the message.
pub fn not_copied(
    queue: &Queue,
    role: ReaderRole,
    id: u64,
    reply: &Reply,
    stored: &[u8],
    from: &str,
) -> Result<(), ByHandError> {
    let compact = serde_json::to_vec(reply).map_or(0, |v| v.len());
    if compact <= COPY_MIN_BYTES {
        return Ok(());
    }
    let sub = queue.dir().join(role.name());
    let listing = std::fs::read_dir(&sub).map_err(|e| ByHandError::io(&sub, e))?;
    let mut earliest = None;
    for item in listing.flatten() {
        let name = item.file_name();
        let Some(other) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".reply.json"))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        let same_size = item
            .metadata()
            .is_ok_and(|m| m.len() == stored.len() as u64);
        if other != id
            && same_size
            && earliest.is_none_or(|e| other < e)
            && std::fs::read(item.path()).is_ok_and(|b| b == stored)
        {
            earliest = Some(other);
        }
    }
    match earliest {
        None => Ok(()),
        Some(earlier) => Err(ByHandError::CopiedReply {
            id,
            earlier,
            from: from.to_string(),
            bytes: compact,
        }),
    }
}

/// A time as the reader's clock shows it, to the millisecond.
pub(crate) fn stamp(t: &SystemTime) -> String {
    chrono::DateTime::<chrono::Local>::from(*t)
        .format("%Y-%m-%d %H:%M:%S%.3f %:z")
        .to_string()
}

/// How long before `claimed` the file was written, in seconds.
pub(crate) fn gap(written: &SystemTime, claimed: &SystemTime) -> f64 {
    claimed
        .duration_since(*written)
        .unwrap_or(Duration::ZERO)
        .as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::by_hand::queue::State;
    use crate::by_hand::reader::{ReplyForm, Source, answer};
    use sum2act_core::llm::openai::request_body;
    use sum2act_core::llm::{CompletionRequest, Message};

    fn queue_with(ids: &[(u64, ReaderRole)]) -> (tempfile::TempDir, Queue) {
        let dir = tempfile::tempdir().unwrap();
        let q = Queue::create(dir.path()).unwrap();
        let req = CompletionRequest::new("t", vec![Message::user("q")]);
        let body = serde_json::to_vec(&request_body("m", &req)).unwrap();
        for &(id, role) in ids {
            q.post(role, id, &body, &format!("# Request {id}")).unwrap();
        }
        (dir, q)
    }

    /// Writes `text` to `path` (now), optionally dating it `back` before now; the file as sent.
    fn reply_file(path: &std::path::Path, text: &str, back: Option<Duration>) -> Source {
        std::fs::write(path, text).unwrap();
        let f = std::fs::File::options().write(true).open(path).unwrap();
        if let Some(back) = back {
            f.set_modified(SystemTime::now() - back).unwrap();
        }
        Source {
            file: Some(ReplyFile {
                name: path.display().to_string(),
                modified: f.metadata().unwrap().modified().unwrap(),
            }),
            repeat: false,
        }
    }

    #[test]
    fn a_file_written_before_the_claim_is_refused_and_the_request_stays_claimed() {
        let (dir, q) = queue_with(&[(7, ReaderRole::Agent)]);
        let path = dir.path().join("my reply.json");
        // The reply written for an earlier request a minute and a half ago, still in the reader's file.
        let stale = reply_file(
            &path,
            r#"{"content": "about API one"}"#,
            Some(Duration::from_secs(90)),
        );
        assert_eq!(q.claim_oldest(ReaderRole::Agent).unwrap(), Some(7));
        let err = answer(
            &q,
            7,
            r#"{"content": "about API one"}"#,
            ReplyForm::Json,
            &stale,
        )
        .unwrap_err();
        assert!(
            matches!(err, ByHandError::StaleReply { id: 7, .. }),
            "{err}"
        );
        let msg = err.to_string();
        for needle in [
            "my reply.json",
            "before request 7 was claimed",
            "90.",
            "Write the reply for request 7",
            "stays claimed by you",
        ] {
            assert!(msg.contains(needle), "lacks {needle:?}: {msg}");
        }
        assert!(err.is_bad_input());
        assert_eq!(q.find(7).unwrap().state, State::Claimed);
        assert_eq!(q.read_reply(ReaderRole::Agent, 7).unwrap(), None);

        // Written again after the claim: accepted.
        let fresh = reply_file(&path, r#"{"content": "about API two"}"#, None);
        answer(
            &q,
            7,
            r#"{"content": "about API two"}"#,
            ReplyForm::Json,
            &fresh,
        )
        .unwrap();
        assert_eq!(q.find(7).unwrap().state, State::Answered);
    }

    #[test]
    fn a_whole_second_file_time_is_compared_by_the_second() {
        let at = |s: u64, ms: u64| UNIX_EPOCH + Duration::from_millis(s * 1000 + ms);
        assert!(
            !before(at(100, 0), at(100, 600)),
            "rounded down by the filesystem"
        );
        assert!(before(at(99, 0), at(100, 600)));
        assert!(before(at(100, 200), at(100, 600)));
        assert!(!before(at(100, 600), at(100, 600)));
        assert!(!before(at(101, 1), at(100, 600)));
    }

    #[test]
    fn a_long_reply_copied_from_another_request_is_refused_a_short_one_is_not() {
        let roles = [
            (1, ReaderRole::Agent),
            (2, ReaderRole::Agent),
            (3, ReaderRole::Agent),
            (4, ReaderRole::Agent),
            (5, ReaderRole::Judge),
        ];
        let (_dir, q) = queue_with(&roles);
        let long =
            serde_json::json!({"content": "The hotel search returned three offers. ".repeat(8)})
                .to_string();
        let short = r#"{"content": "yes"}"#;
        let stdin = Source::default();
        let claim = |role| q.claim_oldest(role).unwrap().unwrap();

        assert_eq!(claim(ReaderRole::Agent), 1);
        answer(&q, 1, &long, ReplyForm::Json, &stdin).unwrap();
        assert_eq!(claim(ReaderRole::Agent), 2);
        let err = answer(&q, 2, &long, ReplyForm::Json, &stdin).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(
                err,
                ByHandError::CopiedReply {
                    id: 2,
                    earlier: 1,
                    ..
                }
            ),
            "{msg}"
        );
        for needle in [
            "accepted for request 1",
            "reply for request 2",
            "stays claimed",
            "--repeat",
        ] {
            assert!(msg.contains(needle), "lacks {needle:?}: {msg}");
        }
        assert_eq!(q.find(2).unwrap().state, State::Claimed);
        // Meant as a repeat: accepted.
        let repeat = Source {
            repeat: true,
            ..Source::default()
        };
        answer(&q, 2, &long, ReplyForm::Json, &repeat).unwrap();

        // Short replies repeat freely; another role's folder is not compared.
        assert_eq!(claim(ReaderRole::Agent), 3);
        answer(&q, 3, short, ReplyForm::Json, &stdin).unwrap();
        assert_eq!(claim(ReaderRole::Agent), 4);
        answer(&q, 4, short, ReplyForm::Json, &stdin).unwrap();
        assert_eq!(claim(ReaderRole::Judge), 5);
        answer(&q, 5, &long, ReplyForm::Json, &stdin).unwrap();
    }
}
