//! The by-hand folder: one sub-folder per reader role, and per request a raw body and a rendered file
//! whose name says its state. Every change of state is one `rename`, which the filesystem makes atomic,
//! so two readers can never claim the same request and a request is never answered twice:
//!
//! ```text
//! DIR/<role>/000012.request.json   the request as an OpenAI chat-completions body (written first)
//! DIR/<role>/000012.pending.md     rendered for the reader (written last: the request is now open)
//!          → 000012.claimed.md     `by-hand next` claimed it ...
//!   and      000012.claim          ... marked right after; its mtime is the moment of the claim
//!          → 000012.answered.md    `by-hand reply` accepted a reply ...
//!   and      000012.reply.json     ... which the server hands to the waiting client
//!          → 000012.withdrawn.md   the client went away before a reply (or the server restarted)
//! DIR/STOP                         readers stop once nothing of their role is pending
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::ByHandError;
use sum2act_core::llm::purpose::ReaderRole;
use sum2act_core::toolbench::io::write_atomic;

/// Largest reply file read (a reply beyond it is refused, never buffered).
pub const MAX_REPLY_BYTES: u64 = 4 * 1024 * 1024;

/// Where a request is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    Pending,
    Claimed,
    Answered,
    Withdrawn,
}

impl State {
    pub const ALL: [State; 4] = [
        State::Pending,
        State::Claimed,
        State::Answered,
        State::Withdrawn,
    ];

    fn suffix(self) -> &'static str {
        match self {
            State::Pending => "pending.md",
            State::Claimed => "claimed.md",
            State::Answered => "answered.md",
            State::Withdrawn => "withdrawn.md",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Claimed => "claimed",
            State::Answered => "answered",
            State::Withdrawn => "withdrawn",
        }
    }
}

/// One request found in the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub id: u64,
    pub role: ReaderRole,
    pub state: State,
    /// When the request was opened (the rendered file's modification time; renames keep it).
    pub opened: Option<SystemTime>,
}

/// A by-hand folder.
#[derive(Debug, Clone)]
pub struct Queue {
    dir: PathBuf,
}

impl Queue {
    /// Opens `dir` as it is (the reader's side: the server creates it).
    pub fn open(dir: &Path) -> Result<Self, ByHandError> {
        if !dir.join(ReaderRole::Agent.name()).is_dir() {
            return Err(ByHandError::NotAFolder(dir.to_path_buf()));
        }
        Ok(Queue {
            dir: dir.to_path_buf(),
        })
    }

    /// Creates `dir` and its role folders (the server's side).
    pub fn create(dir: &Path) -> Result<Self, ByHandError> {
        for role in ReaderRole::ALL {
            let sub = dir.join(role.name());
            std::fs::create_dir_all(&sub).map_err(|e| ByHandError::io(&sub, e))?;
        }
        Ok(Queue {
            dir: dir.to_path_buf(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, role: ReaderRole, id: u64, tail: &str) -> PathBuf {
        self.dir.join(role.name()).join(format!("{id:06}.{tail}"))
    }

    pub fn state_path(&self, role: ReaderRole, id: u64, state: State) -> PathBuf {
        self.path(role, id, state.suffix())
    }

    pub fn request_path(&self, role: ReaderRole, id: u64) -> PathBuf {
        self.path(role, id, "request.json")
    }

    pub fn reply_path(&self, role: ReaderRole, id: u64) -> PathBuf {
        self.path(role, id, "reply.json")
    }

    /// The claim's mark: the rename keeps the rendered file's time (when the request was opened), so
    /// the moment of the claim needs a file of its own.
    pub fn claim_path(&self, role: ReaderRole, id: u64) -> PathBuf {
        self.path(role, id, "claim")
    }

    /// When the request was last claimed, as the filesystem stamped its mark (`None` for a folder
    /// written before claims were marked). The filesystem's clock, not ours, so that it compares
    /// with the reply file's own modification time.
    pub fn claimed_at(&self, role: ReaderRole, id: u64) -> Option<SystemTime> {
        std::fs::metadata(self.claim_path(role, id))
            .and_then(|m| m.modified())
            .ok()
    }

    /// Opens a request: the raw body first, the rendered file last (its appearance is the signal).
    pub fn post(
        &self,
        role: ReaderRole,
        id: u64,
        body: &[u8],
        rendered: &str,
    ) -> Result<(), ByHandError> {
        let raw = self.request_path(role, id);
        write_atomic(&raw, body).map_err(|e| ByHandError::Io(e.to_string()))?;
        let md = self.state_path(role, id, State::Pending);
        write_atomic(&md, rendered.as_bytes()).map_err(|e| ByHandError::Io(e.to_string()))
    }

    /// Moves a request from one state to another; false when it was not in `from` (someone else
    /// moved it first).
    pub fn moved(&self, role: ReaderRole, id: u64, from: State, to: State) -> bool {
        std::fs::rename(
            self.state_path(role, id, from),
            self.state_path(role, id, to),
        )
        .is_ok()
    }

    /// Every request of `role`, oldest first.
    pub fn entries(&self, role: ReaderRole) -> Result<Vec<Entry>, ByHandError> {
        let sub = self.dir.join(role.name());
        let read = std::fs::read_dir(&sub).map_err(|e| ByHandError::io(&sub, e))?;
        let mut out = Vec::new();
        for item in read.flatten() {
            let name = item.file_name();
            let Some((id, state)) = name.to_str().and_then(parse_name) else {
                continue;
            };
            let opened = item.metadata().ok().and_then(|m| m.modified().ok());
            out.push(Entry {
                id,
                role,
                state,
                opened,
            });
        }
        out.sort_by_key(|e| e.id);
        Ok(out)
    }

    /// The request with this id, in whichever role folder it is.
    pub fn find(&self, id: u64) -> Result<Entry, ByHandError> {
        for role in ReaderRole::ALL {
            for state in State::ALL {
                let p = self.state_path(role, id, state);
                if let Ok(m) = std::fs::metadata(&p) {
                    return Ok(Entry {
                        id,
                        role,
                        state,
                        opened: m.modified().ok(),
                    });
                }
            }
        }
        Err(ByHandError::NoSuchRequest(id))
    }

    /// Claims the oldest pending request of `role` and marks the claim's moment: its id, or `None`
    /// when none is pending. A request another reader claimed a moment earlier is skipped for the
    /// next one. The mark is written after the rename (before it, a lost race would overwrite the
    /// winner's); a claim that cannot be marked is handed back rather than left unmarked.
    pub fn claim_oldest(&self, role: ReaderRole) -> Result<Option<u64>, ByHandError> {
        for e in self.entries(role)? {
            if e.state == State::Pending && self.moved(role, e.id, State::Pending, State::Claimed) {
                let mark = self.claim_path(role, e.id);
                let text = format!("claimed by process {}\n", std::process::id());
                if let Err(err) = std::fs::write(&mark, text) {
                    self.moved(role, e.id, State::Claimed, State::Pending);
                    return Err(ByHandError::io(&mark, err));
                }
                return Ok(Some(e.id));
            }
        }
        Ok(None)
    }

    /// The highest id in the folder (0 when empty), so a restarted server goes on numbering.
    pub fn last_id(&self) -> Result<u64, ByHandError> {
        let mut last = 0;
        for role in ReaderRole::ALL {
            last = last.max(self.entries(role)?.iter().map(|e| e.id).max().unwrap_or(0));
        }
        Ok(last)
    }

    /// Withdraws requests left open by an earlier server: no client waits for them any more.
    pub fn withdraw_all_open(&self) -> Result<usize, ByHandError> {
        let mut n = 0;
        for role in ReaderRole::ALL {
            for e in self.entries(role)? {
                if matches!(e.state, State::Pending | State::Claimed)
                    && self.moved(role, e.id, e.state, State::Withdrawn)
                {
                    n += 1;
                }
            }
        }
        Ok(n)
    }

    /// The reply file's text, when a reply has been accepted.
    pub fn read_reply(&self, role: ReaderRole, id: u64) -> Result<Option<String>, ByHandError> {
        let path = self.reply_path(role, id);
        match std::fs::metadata(&path) {
            Err(_) => Ok(None),
            Ok(m) if m.len() > MAX_REPLY_BYTES => Err(ByHandError::TooLarge(path)),
            Ok(_) => std::fs::read_to_string(&path)
                .map(Some)
                .map_err(|e| ByHandError::io(&path, e)),
        }
    }

    pub fn stop_requested(&self) -> bool {
        self.dir.join("STOP").exists()
    }
}

/// `000012.pending.md` → (12, Pending).
fn parse_name(name: &str) -> Option<(u64, State)> {
    let (id, rest) = name.split_once('.')?;
    let state = State::ALL.into_iter().find(|s| s.suffix() == rest)?;
    Some((id.parse().ok()?, state))
}

/// Age of an entry now, in whole seconds (zero when the clock cannot tell).
pub fn age(e: &Entry) -> Duration {
    e.opened
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .map(|d| Duration::from_secs(d.as_secs()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_exclusive_and_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let q = Queue::create(dir.path()).unwrap();
        for id in [3, 1, 2] {
            q.post(ReaderRole::Agent, id, b"{}", "# r").unwrap();
        }
        q.post(ReaderRole::Judge, 4, b"{}", "# r").unwrap();
        assert_eq!(q.claim_oldest(ReaderRole::Agent).unwrap(), Some(1));
        let marked = q.claimed_at(ReaderRole::Agent, 1).unwrap();
        assert!(marked >= q.find(1).unwrap().opened.unwrap());
        assert_eq!(q.claimed_at(ReaderRole::Agent, 3), None);
        assert_eq!(q.claim_oldest(ReaderRole::Agent).unwrap(), Some(2));
        assert!(!q.moved(ReaderRole::Agent, 1, State::Pending, State::Claimed));
        assert_eq!(q.claim_oldest(ReaderRole::Agent).unwrap(), Some(3));
        assert_eq!(q.claim_oldest(ReaderRole::Agent).unwrap(), None);
        assert_eq!(q.find(4).unwrap().state, State::Pending);
        assert_eq!(q.last_id().unwrap(), 4);
        assert_eq!(q.withdraw_all_open().unwrap(), 4);
        assert_eq!(q.find(2).unwrap().state, State::Withdrawn);
        assert!(matches!(q.find(9), Err(ByHandError::NoSuchRequest(9))));
        assert_eq!(parse_name(".000001.pending.md.1.tmp"), None);
    }
}
