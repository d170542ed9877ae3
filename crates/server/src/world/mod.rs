//! One simulated world: every reply the server made up, kept so that the same call (same API, same
//! arguments in any key order) gets the same reply for every method, every repeat and every process
//! sharing the world folder, and an entity memory so that later replies agree with earlier ones.
//!
//! Two identical calls in flight at once make one simulation: within a process they queue on the call's
//! slot, across processes on the call's lock file (`lock`); the first reply stored wins (`store`). Two
//! different calls naming one entity at once: the later waits for the earlier's reply (`busy`).
//! A run replayed offline with its world gets every reply from the world, so its observations match.

mod busy;
pub mod consistency;
pub mod counts;
pub mod entities;
mod lock;
mod pair_rules;
pub mod store;

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

pub use entities::{EntityMemory, Fact};
pub use store::{Call, Entry, Store};

use sum2act_core::toolbench::DataError;
use sum2act_core::tools::ToolReply;

/// The call as the world keys it: argument values compared as the API receives them, as text, so
/// `{"is_id": 1042}` and `{"is_id": "1042"}` are one call with one reply (two methods asked both of
/// the strong-model run's world at once and got two different orders 1042).
fn same_call(call: &Call) -> Call {
    fn text(v: Value) -> Value {
        match v {
            Value::Number(n) => Value::String(n.to_string()),
            Value::Bool(b) => Value::String(b.to_string()),
            Value::Array(a) => Value::Array(a.into_iter().map(text).collect()),
            Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, text(v))).collect()),
            other => other,
        }
    }
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(args) => Call {
            arguments: sum2act_core::tools::args::canonical_json(&text(args)),
            ..call.clone()
        },
        Err(_) => call.clone(),
    }
}

/// How a world is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorldOptions {
    /// The world folder; `None`: in memory, for this process only.
    pub dir: Option<PathBuf>,
    /// Give the LLM simulator what earlier replies fixed about the values a call names.
    pub entity_memory: bool,
}

/// A world: its replies, its entity memory, and the calls being simulated now.
#[derive(Debug)]
pub struct World {
    store: Store,
    entities: Option<EntityMemory>,
    /// One slot per call being simulated in this process.
    in_flight: Mutex<HashMap<Call, Arc<tokio::sync::Mutex<()>>>>,
    /// The entities those simulations name (with entity memory).
    busy: busy::Busy,
}

impl World {
    /// Opens (creating) the world folder, or a world in memory.
    pub fn open(opts: &WorldOptions) -> Result<World, DataError> {
        let store = match &opts.dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|e| DataError::io(dir, e))?;
                Store::Dir(dir.clone())
            }
            None => Store::Memory(Mutex::new(HashMap::new())),
        };
        let entities = opts
            .entity_memory
            .then(|| EntityMemory::open(opts.dir.as_deref()));
        Ok(World {
            store,
            entities,
            in_flight: Mutex::new(HashMap::new()),
            busy: busy::Busy::default(),
        })
    }

    pub fn dir(&self) -> Option<&Path> {
        self.store.dir()
    }

    pub fn entity_memory(&self) -> bool {
        self.entities.is_some()
    }

    /// The reply the world already gave this call (or, in a world written before arguments were
    /// compared as text, the reply stored under the arguments as sent).
    pub fn get(&self, call: &Call) -> Option<ToolReply> {
        let same = same_call(call);
        self.store
            .get(&same)
            .or_else(|| (same != *call).then(|| self.store.get(call)).flatten())
    }

    /// What earlier replies fixed about the values `call`'s `args` name (empty without entity memory).
    pub fn facts(&self, call: &Call, args: &Map<String, Value>) -> Vec<Fact> {
        self.entities
            .as_ref()
            .map(|e| e.recall(&call.api_label(), args))
            .unwrap_or_default()
    }

    /// Takes the facts a reply the world did not make itself (a recorded one) fixes.
    pub fn observe(&self, call: &Call, args: &Map<String, Value>, reply: &ToolReply) {
        if let Some(e) = &self.entities {
            e.remember(call, args, reply);
        }
    }

    /// The call's reply: the stored one, else `make`'s, stored. Identical calls made at once, here or
    /// in another process sharing the folder, wait for one `make` and all get its reply.
    pub async fn get_or_make<F, Fut>(
        &self,
        call: &Call,
        args: &Map<String, Value>,
        make: F,
    ) -> ToolReply
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = ToolReply>,
    {
        if let Some(reply) = self.get(call) {
            return reply;
        }
        let call = &same_call(call);
        let slot = self.slot(call);
        let reply = {
            let _queued = slot.lock().await;
            self.make_once(call, args, make).await
        };
        if let Ok(mut map) = self.in_flight.lock()
            && Arc::strong_count(&slot) <= 2
        {
            map.remove(call);
        }
        reply
    }

    fn slot(&self, call: &Call) -> Arc<tokio::sync::Mutex<()>> {
        match self.in_flight.lock() {
            Ok(mut map) => map.entry(call.clone()).or_default().clone(),
            Err(_) => Arc::default(),
        }
    }

    /// Under this process's slot: the other processes' lock, a last look, then `make`.
    async fn make_once<F, Fut>(&self, call: &Call, args: &Map<String, Value>, make: F) -> ToolReply
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = ToolReply>,
    {
        if let Some(reply) = self.get(call) {
            return reply;
        }
        let lock = match self.dir() {
            Some(root) => lock::CallLock::take(root, call).await,
            None => None,
        };
        if let Some(reply) = self.get(call) {
            return reply;
        }
        // A call naming an entity another simulation is making waits for it, so its facts are given.
        let _claim = match &self.entities {
            Some(_) => Some(self.busy.claim(self.dir(), &call.api_label(), args).await),
            None => None,
        };
        let made = make().await;
        match self.store.put(call, made.clone()) {
            Ok(stored) => {
                if stored == made {
                    self.observe(call, args, &stored);
                }
                if let Some(lock) = lock {
                    lock.done();
                }
                stored
            }
            Err(e) => {
                tracing::warn!("cannot store a reply in the world: {e}");
                made
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use sum2act_core::tools::ReplySource;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn identical_calls_at_once_make_one_reply_across_worlds_on_one_folder() {
        let dir = tempfile::tempdir().unwrap();
        let opts = WorldOptions {
            dir: Some(dir.path().to_path_buf()),
            entity_memory: true,
        };
        // Two worlds on one folder stand for two processes.
        let worlds = [
            Arc::new(World::open(&opts).unwrap()),
            Arc::new(World::open(&opts).unwrap()),
        ];
        let made = Arc::new(AtomicUsize::new(0));
        let call = Call {
            category: "Data".into(),
            tool: "t".into(),
            api: "a".into(),
            arguments: r#"{"id":"tt0999"}"#.into(),
        };
        let args = json!({"id": "tt0999"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let mut tasks = Vec::new();
        for i in 0..6 {
            let (world, made, call, args) = (
                worlds[i % 2].clone(),
                made.clone(),
                call.clone(),
                args.clone(),
            );
            tasks.push(tokio::spawn(async move {
                world
                    .get_or_make(&call, &args, || async move {
                        let n = made.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
                        ToolReply::new(
                            String::new(),
                            json!({"id": "tt0999", "title": format!("Salt Road {n}"), "year": 2011}),
                            Some(ReplySource::Llm),
                        )
                    })
                    .await
            }));
        }
        let mut replies = Vec::new();
        for t in tasks {
            replies.push(t.await.unwrap());
        }
        assert_eq!(
            made.load(Ordering::SeqCst),
            1,
            "one simulation for six identical calls"
        );
        assert!(replies.iter().all(|r| *r == replies[0]), "{replies:?}");
        // The reply's facts are found by a later call naming the id, in either world.
        let facts = worlds[1].facts(&call, &args);
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!(facts[0].record["year"], 2011);
        // No lock files are left behind.
        let left: Vec<_> = std::fs::read_dir(dir.path().join("Data/t/a"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    #[tokio::test]
    async fn a_number_and_its_text_are_one_call() {
        // Agent requests 71-161: get_order with `is_id` 1042 and with "1042" were two calls, simulated
        // at once, and gave two different orders 1042.
        let dir = tempfile::tempdir().unwrap();
        let opts = WorldOptions {
            dir: Some(dir.path().to_path_buf()),
            entity_memory: true,
        };
        let world = World::open(&opts).unwrap();
        let call = |arguments: &str| Call {
            category: "Tools".into(),
            tool: "shop".into(),
            api: "get_order".into(),
            arguments: arguments.into(),
        };
        let args = json!({"is_id": "1042"})
            .as_object()
            .cloned()
            .unwrap_or_default();
        let reply = |n: u32| ToolReply::new(String::new(), json!({"n": n}), Some(ReplySource::Llm));
        let text = world
            .get_or_make(&call(r#"{"is_id":"1042"}"#), &args, || async { reply(1) })
            .await;
        let number = world
            .get_or_make(&call(r#"{"is_id":1042}"#), &args, || async { reply(2) })
            .await;
        assert_eq!(text, number);
        // A world written before keeps serving a number-keyed reply.
        let old = call(r#"{"page":2}"#);
        Store::Dir(dir.path().to_path_buf())
            .put(&old, reply(3))
            .unwrap();
        assert_eq!(world.get(&old), Some(reply(3)));
    }
}
