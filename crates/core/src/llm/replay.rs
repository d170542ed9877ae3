//! Record/replay: `--record DIR` stores every request with the replies it got; `--replay DIR` answers
//! from those files and fails loudly on a request it has not seen, so a run can be reproduced exactly
//! without a model. `--record DIR --reuse-recorded` answers what DIR already holds from it and asks
//! the model only the rest, recording them: a change that alters some requests of a run is recorded
//! again for those alone. One file per distinct request (`<hash>.json`); repeated identical requests get the
//! recorded replies in order (the last one once they run out).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{Completion, CompletionRequest, LlmClient, LlmError, Role};
use crate::toolbench::canonical::canonical_json;
use crate::toolbench::io::write_json_atomic;

#[derive(Debug, Serialize, Deserialize)]
struct Recording {
    request: CompletionRequest,
    responses: Vec<Completion>,
}

/// Stable key of a request: its JSON with sorted keys, without the `purpose` label (not sent to the
/// model, so renaming a purpose does not invalidate recordings).
pub(crate) fn request_key(request: &CompletionRequest) -> String {
    let mut v = serde_json::to_value(request).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.remove("purpose");
    }
    let canonical = canonical_json(&v);
    hex::encode(Sha256::digest(canonical.as_bytes()))[..32].to_string()
}

/// The key of `request` as an OpenAI-compatible server records it (`serve-llm --record`): after the
/// trip through the wire, which carries no purpose, no `tools_described` and no names on tool
/// messages. So a run made through a recording server replays offline from the server's recording.
pub(crate) fn wire_key(request: &CompletionRequest) -> Option<String> {
    let body = super::openai::request_body("", request);
    super::wire::parse_request(&body)
        .ok()
        .map(|r| request_key(&r))
}

/// The recording model's id as the run named it (`--model`), which a replay reports again: the model
/// field of the replies may differ (a server answering with its own or a dated model name).
const MODEL_FILE: &str = "model.txt";

fn path_for(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.json"))
}

/// Stores each request and its reply in a folder.
pub struct Recorder<C> {
    inner: C,
    dir: PathBuf,
    /// Serialises read-modify-write of one recording file.
    lock: Mutex<()>,
    /// With `--reuse-recorded`: the replies of each key served so far (recorded or new), so the
    /// n-th identical request gets the n-th recorded reply and only requests past those reach the model.
    reuse: Option<Mutex<HashMap<String, usize>>>,
}

impl<C: LlmClient> Recorder<C> {
    pub fn new(inner: C, dir: impl Into<PathBuf>) -> Result<Self, LlmError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join(MODEL_FILE), inner.model_id()))
            .map_err(|e| LlmError::Config(format!("--record {}: {e}", dir.display())))?;
        Ok(Recorder {
            inner,
            dir,
            lock: Mutex::new(()),
            reuse: None,
        })
    }

    /// Answers the requests the folder already holds from it (`--reuse-recorded`).
    pub fn reusing(mut self) -> Self {
        self.reuse = Some(Mutex::new(HashMap::new()));
        self
    }

    /// The recorded reply this request is due, if the folder holds one, counting it as served; `None`
    /// when reuse is off or the recording has no reply left for it.
    fn recorded(&self, request: &CompletionRequest) -> Result<Option<Completion>, LlmError> {
        let Some(served) = &self.reuse else {
            return Ok(None);
        };
        let key = request_key(request);
        let path = path_for(&self.dir, &key);
        let responses = match std::fs::read_to_string(&path) {
            Ok(text) => {
                serde_json::from_str::<Recording>(&text)
                    .map_err(|e| LlmError::Replay(format!("{}: {e}", path.display())))?
                    .responses
            }
            Err(_) => Vec::new(),
        };
        let mut served = served
            .lock()
            .map_err(|_| LlmError::Replay("recorder lock poisoned".into()))?;
        let n = served.entry(key).or_insert(0);
        let due = responses.get(*n).cloned();
        // A new reply is appended at index n: counted here either way.
        *n += 1;
        Ok(due)
    }

    fn append(&self, request: &CompletionRequest, completion: &Completion) -> Result<(), LlmError> {
        let key = request_key(request);
        let path = path_for(&self.dir, &key);
        let _guard = self
            .lock
            .lock()
            .map_err(|_| LlmError::Replay("recorder lock poisoned".into()))?;
        let mut rec = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str::<Recording>(&text)
                .map_err(|e| LlmError::Replay(format!("{}: {e}", path.display())))?,
            Err(_) => Recording {
                request: request.clone(),
                responses: Vec::new(),
            },
        };
        rec.responses.push(completion.clone());
        write_json_atomic(&path, &rec).map_err(|e| LlmError::Replay(e.to_string()))
    }
}

#[async_trait]
impl<C: LlmClient> LlmClient for Recorder<C> {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        if let Some(recorded) = self.recorded(request)? {
            return Ok(recorded);
        }
        let completion = self.inner.complete(request).await?;
        self.append(request, &completion)?;
        Ok(completion)
    }

    fn model_id(&self) -> String {
        self.inner.model_id()
    }

    fn meter(&self) -> Option<Arc<super::Meter>> {
        self.inner.meter()
    }
}

/// Answers from recordings only.
pub(crate) struct Replayer {
    dir: PathBuf,
    model: String,
    served: Mutex<HashMap<String, usize>>,
}

impl Replayer {
    pub(crate) fn new(dir: impl Into<PathBuf>) -> Result<Self, LlmError> {
        let dir = dir.into();
        if !dir.is_dir() {
            return Err(LlmError::Config(format!(
                "--replay {}: no such directory (record one with --record DIR)",
                dir.display()
            )));
        }
        // The recorded model's id, so manifests of a replayed run name the model that produced it: as
        // the recording run named it, else as its replies did (recordings made before `model.txt`).
        let named = std::fs::read_to_string(dir.join(MODEL_FILE))
            .ok()
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty());
        let model = named
            .or_else(|| recorded_model(&dir))
            .unwrap_or_else(|| "replay".to_string());
        Ok(Replayer {
            dir,
            model,
            served: Mutex::new(HashMap::new()),
        })
    }
}

/// The model field of the first recorded reply in `dir`.
fn recorded_model(dir: &Path) -> Option<String> {
    std::fs::read_dir(dir)
        .ok()
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .find_map(|p| {
            let text = std::fs::read_to_string(p).ok()?;
            let rec: Recording = serde_json::from_str(&text).ok()?;
            rec.responses.first().map(|c| c.model.clone())
        })
}

#[async_trait]
impl LlmClient for Replayer {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        let mut key = request_key(request);
        let mut path = path_for(&self.dir, &key);
        // Recorded on a server's side (`serve-llm --record`): keyed as the request arrived there.
        if !path.is_file()
            && let Some(wire) = wire_key(request)
            && path_for(&self.dir, &wire).is_file()
        {
            path = path_for(&self.dir, &wire);
            key = wire;
        }
        let text = std::fs::read_to_string(&path).map_err(|_| {
            let last_user = request
                .messages
                .iter()
                .rev()
                .find(|m| m.role == Role::User)
                .map(|m| m.content.chars().take(80).collect::<String>())
                .unwrap_or_default();
            LlmError::Replay(format!(
                "no recording in {} for this {} request (key {key}; last user message {last_user:?}); re-record with --record",
                self.dir.display(),
                if request.purpose.as_str().is_empty() {
                    "LLM"
                } else {
                    request.purpose.as_str()
                },
            ))
        })?;
        let rec: Recording = serde_json::from_str(&text)
            .map_err(|e| LlmError::Replay(format!("{}: {e}", path.display())))?;
        let index = {
            let mut served = self
                .served
                .lock()
                .map_err(|_| LlmError::Replay("replay lock poisoned".into()))?;
            let n = served.entry(key).or_insert(0);
            *n += 1;
            *n - 1
        };
        rec.responses
            .get(index)
            .or_else(|| rec.responses.last())
            .cloned()
            .ok_or_else(|| {
                LlmError::Replay(format!("{}: recording has no responses", path.display()))
            })
    }

    fn model_id(&self) -> String {
        self.model.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;
    use crate::llm::scripted::ScriptedLlm;

    #[tokio::test]
    async fn a_reusing_recorder_asks_the_model_only_what_the_folder_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let ask = |text: &str| CompletionRequest::new("t", vec![Message::user(text)]);
        let first = Recorder::new(
            ScriptedLlm::from_replies(vec!["a1".into(), "a2".into()]),
            dir.path(),
        )
        .unwrap();
        first.complete(&ask("A")).await.unwrap();
        first.complete(&ask("A")).await.unwrap();
        // The second run: its model would answer "new" to anything.
        let again = Recorder::new(ScriptedLlm::from_replies(vec!["new".into(); 3]), dir.path())
            .unwrap()
            .reusing();
        let replies: Vec<String> = [ask("A"), ask("B"), ask("A"), ask("A")]
            .iter()
            .map(|r| {
                futures::executor::block_on(again.complete(r))
                    .unwrap()
                    .content
            })
            .collect();
        assert_eq!(replies, vec!["a1", "new", "a2", "new"]);
        // What was asked is recorded beside what was reused, and replays.
        let replay = Replayer::new(dir.path()).unwrap();
        assert_eq!(replay.complete(&ask("B")).await.unwrap().content, "new");
        let recorded: Vec<String> = (0..3)
            .map(|_| {
                futures::executor::block_on(replay.complete(&ask("A")))
                    .unwrap()
                    .content
            })
            .collect();
        assert_eq!(recorded, vec!["a1", "a2", "new"]);
    }

    #[tokio::test]
    async fn replays_what_was_recorded_and_rejects_the_unseen() {
        let dir = tempfile::tempdir().unwrap();
        let rec = Recorder::new(
            ScriptedLlm::from_replies(vec!["one".into(), "two".into()]),
            dir.path(),
        )
        .unwrap();
        let req = CompletionRequest::new("router", vec![Message::user("q")]);
        rec.complete(&req).await.unwrap();
        rec.complete(&req).await.unwrap();
        let replay = Replayer::new(dir.path()).unwrap();
        // The replay names the model as the recording run did, whatever its replies said.
        assert_eq!(
            replay.model_id(),
            ScriptedLlm::from_replies(vec![]).model_id()
        );
        let relabelled = CompletionRequest::new("other", vec![Message::user("q")]);
        assert_eq!(replay.complete(&relabelled).await.unwrap().content, "one");
        assert_eq!(replay.complete(&req).await.unwrap().content, "two");
        assert_eq!(replay.complete(&req).await.unwrap().content, "two");
        // A request recorded after the wire (on a server) replays for the client that sent it.
        let mut sent = CompletionRequest::new("state", vec![Message::user("w")]).tools_described();
        sent.tools = vec![serde_json::json!({"type": "function", "function": {"name": "f"}})];
        let body = crate::llm::openai::request_body("m", &sent);
        let arrived = crate::llm::wire::parse_request(&body).unwrap();
        assert_ne!(request_key(&arrived), request_key(&sent));
        let server =
            Recorder::new(ScriptedLlm::from_replies(vec!["wire".into()]), dir.path()).unwrap();
        server.complete(&arrived).await.unwrap();
        let replay = Replayer::new(dir.path()).unwrap();
        assert_eq!(replay.complete(&sent).await.unwrap().content, "wire");
        let unseen = CompletionRequest::new("router", vec![Message::user("new")]);
        let err = replay.complete(&unseen).await.unwrap_err().to_string();
        assert!(err.contains("no recording"), "{err}");
    }
}
