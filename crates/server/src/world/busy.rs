//! The entities being simulated now, so that a call naming an entity whose first simulation is still
//! in flight waits for it and is given its reply as a fact. Without it, two different calls naming one
//! id made at once (an order's list and its detail, two methods on one world) are simulated side by
//! side and neither sees the other's reply. In this process a call waits at most [`MAX_WAIT`] for each
//! earlier one, and never for one that started after it, so waits cannot form a cycle. Across processes
//! sharing a world folder (each method of a comparison is its own `batch`), an advisory lock per entity
//! in `{world}/.busy/` does the same: all of a call's entities are locked at once or none (a process
//! holding one while waiting for another could wait on one waiting for it), retried for at most
//! [`MAX_WAIT`]. The operating system lets go of a dead process's locks.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use serde_json::{Map, Value};
use tokio::sync::OwnedMutexGuard;

use super::entities::{identifier_argument, named_values, tool_of, weak_identifier};

/// The longest a call waits for one earlier simulation of an entity it names.
pub const MAX_WAIT: Duration = Duration::from_secs(300);

/// The simulations in flight and the entities they name.
#[derive(Debug)]
pub struct Busy {
    entries: Mutex<Vec<Entry>>,
    next: std::sync::atomic::AtomicU64,
    /// [`MAX_WAIT`], shorter in tests so a wrong wait shows in seconds.
    max_wait: Duration,
}

impl Default for Busy {
    fn default() -> Self {
        Busy::with_max_wait(MAX_WAIT)
    }
}

#[derive(Debug)]
struct Entry {
    id: u64,
    keys: Vec<String>,
    /// Held by the simulation until its reply is stored.
    done: Arc<tokio::sync::Mutex<()>>,
}

/// A simulation's claim on the entities it names, released when dropped (its reply stored).
pub struct Claim<'a> {
    busy: &'a Busy,
    id: u64,
    /// The entities' locks across processes, let go when the claim is dropped.
    _across: Vec<File>,
    _held: Option<OwnedMutexGuard<()>>,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if let Ok(mut entries) = self.busy.entries.lock() {
            entries.retain(|e| e.id != self.id);
        }
    }
}

impl Busy {
    /// A `Busy` whose calls wait at most `max_wait` for each earlier simulation.
    pub fn with_max_wait(max_wait: Duration) -> Self {
        Busy {
            entries: Mutex::default(),
            next: Default::default(),
            max_wait,
        }
    }

    /// Claims the entities a call of `api` names, then waits for the simulations in flight that named
    /// one of them before (each at most [`MAX_WAIT`]).
    pub async fn claim(
        &self,
        root: Option<&Path>,
        api: &str,
        args: &Map<String, Value>,
    ) -> Claim<'_> {
        let keys = entity_keys(api, args);
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let done = Arc::new(tokio::sync::Mutex::new(()));
        let held = done.clone().try_lock_owned().ok();
        let earlier: Vec<_> = match self.entries.lock() {
            Ok(mut entries) if !keys.is_empty() => {
                let earlier = entries
                    .iter()
                    .filter(|e| e.keys.iter().any(|k| keys.contains(k)))
                    .map(|e| e.done.clone())
                    .collect();
                entries.push(Entry {
                    id,
                    keys: keys.clone(),
                    done,
                });
                earlier
            }
            _ => Vec::new(),
        };
        let mut claim = Claim {
            busy: self,
            id,
            _across: Vec::new(),
            _held: held,
        };
        for first in earlier {
            let _ = tokio::time::timeout(self.max_wait, first.lock()).await;
        }
        if let Some(root) = root
            && !keys.is_empty()
        {
            claim._across = claim_across(root, &keys, self.max_wait).await;
        }
        claim
    }
}

/// Locks every one of `keys` in `{root}/.busy/`, or, while another process holds one, none: it lets go
/// of those it took and tries again shortly, for at most `max_wait` (then it goes on with what it
/// holds). A world it cannot write goes on without.
async fn claim_across(root: &Path, keys: &[String], max_wait: Duration) -> Vec<File> {
    let dir = root.join(".busy");
    if std::fs::create_dir_all(&dir).is_err() {
        return Vec::new();
    }
    // Each file once: a second `flock` of a file this process holds through another open is refused,
    // so a key named twice (query G2_category 3942's resolutions, both 300) waited for itself.
    let mut paths: Vec<PathBuf> = keys
        .iter()
        .map(|key| {
            let name = hex::encode(Sha256::digest(key.as_bytes()));
            dir.join(format!("{}.lock", &name[..24]))
        })
        .collect();
    paths.sort();
    paths.dedup();
    let start = Instant::now();
    let mut wait = Duration::from_millis(20);
    loop {
        let mut held = Vec::new();
        let mut blocked = false;
        for path in &paths {
            let Ok(file) = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(path)
            else {
                continue;
            };
            match file.try_lock() {
                Ok(()) => held.push(file),
                Err(TryLockError::WouldBlock) => {
                    blocked = true;
                    break;
                }
                Err(TryLockError::Error(e)) => {
                    tracing::warn!("cannot lock {}: {e}", path.display());
                }
            }
        }
        if !blocked || start.elapsed() >= max_wait {
            return held;
        }
        drop(held);
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_millis(250));
    }
}

/// The entities a call names: its identifier arguments' values (a short number only within its tool);
/// for a call naming no identifier, its other values within its tool (two searches for "Planet Earth"
/// at once, by two methods, gave the show two overviews: recall finds a title's facts only once they
/// are stored). Each key once (two arguments may hold one value).
fn entity_keys(api: &str, args: &Map<String, Value>) -> Vec<String> {
    let mut keys = named_keys(api, args);
    let mut seen = std::collections::HashSet::new();
    keys.retain(|k| seen.insert(k.clone()));
    keys
}

fn named_keys(api: &str, args: &Map<String, Value>) -> Vec<String> {
    let values = named_values(args);
    let ids: Vec<String> = values
        .iter()
        .filter(|(k, v)| identifier_argument(k, &Value::String(v.clone())))
        .map(|(_, v)| {
            let v = v.trim().to_lowercase();
            if weak_identifier(&v) {
                format!("{}|{v}", tool_of(api))
            } else {
                v
            }
        })
        .collect();
    if !ids.is_empty() {
        return ids;
    }
    values
        .into_iter()
        .map(|(_, v)| v.trim().to_lowercase())
        .filter(|v| v.chars().filter(|c| c.is_alphanumeric()).count() >= 3)
        .map(|v| format!("{}|{v}", tool_of(api)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_naming_an_entity_in_flight_waits_for_it() {
        let busy = Arc::new(Busy::default());
        let args = |v: Value| v.as_object().cloned().unwrap_or_default();
        let first = busy
            .claim(None, "Tools/shop/orders", &args(json!({"order_id": 1042})))
            .await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let waiting = {
            let busy = busy.clone();
            tokio::spawn(async move {
                let _c = busy
                    .claim(None, "Tools/shop/order", &args(json!({"is_id": "1042"})))
                    .await;
                let _ = tx.send("second");
            })
        };
        // Another entity, and a call naming none, do not wait.
        busy.claim(None, "Tools/shop/order", &args(json!({"is_id": "1043"})))
            .await;
        busy.claim(None, "Tools/shop/list", &args(json!({"page": 2})))
            .await;
        // A call naming no identifier claims its values within its tool.
        assert_eq!(
            entity_keys(
                "Movies/stream/search",
                &args(json!({"title": "Planet Earth", "n": 1}))
            ),
            ["Movies/stream|planet earth"]
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(rx.try_recv().is_err(), "the second call waits");
        drop(first);
        waiting.await.unwrap();
        assert_eq!(rx.recv().await, Some("second"));
        assert!(busy.entries.lock().unwrap().is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_in_another_process_naming_an_entity_in_flight_waits_for_it() {
        // Two `Busy` on one world folder stand for two processes (each method's own batch).
        let world = tempfile::tempdir().unwrap();
        let root = world.path().to_path_buf();
        let (one, two) = (Arc::new(Busy::default()), Arc::new(Busy::default()));
        let args = |v: Value| v.as_object().cloned().unwrap_or_default();
        let first = one
            .claim(
                Some(&root),
                "Tools/shop/orders",
                &args(json!({"order_id": 1042})),
            )
            .await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let waiting = {
            let (two, root) = (two.clone(), root.clone());
            tokio::spawn(async move {
                let _c = two
                    .claim(
                        Some(&root),
                        "Tools/shop/order",
                        &args(json!({"is_id": "1042"})),
                    )
                    .await;
                let _ = tx.send("second");
            })
        };
        // Another entity does not wait.
        two.claim(
            Some(&root),
            "Tools/shop/order",
            &args(json!({"is_id": "1043"})),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(rx.try_recv().is_err(), "the other process's call waits");
        drop(first);
        waiting.await.unwrap();
        assert_eq!(rx.recv().await, Some("second"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_naming_one_value_twice_does_not_wait_for_itself() {
        // Query G2_category 3942: ModifyTiff with `horizontalResolution` and `verticalResolution` both
        // 300 named `…|300` twice; its second flock of that `.busy` file was refused by its own first
        // (flock locks conflict between two opens in one process), and it retried for `MAX_WAIT`.
        let world = tempfile::tempdir().unwrap();
        let root = world.path().to_path_buf();
        let wait = Duration::from_secs(3);
        let one = Busy::with_max_wait(wait);
        let args = json!({"name": "image.tiff", "bitDepth": 24, "horizontalResolution": 300,
            "verticalResolution": 300, "fromScratch": false});
        let args = args.as_object().cloned().unwrap_or_default();
        let api = "Video_Images/aspose_imaging_cloud/modifytiff";
        let keys = entity_keys(api, &args);
        let three_hundred = "Video_Images/aspose_imaging_cloud|300".to_string();
        assert_eq!(
            keys.iter().filter(|k| **k == three_hundred).count(),
            1,
            "{keys:?}"
        );
        // Two keys of one lock file (as if their hashes met) are locked once too.
        let same = [three_hundred.clone(), three_hundred];
        let started = Instant::now();
        assert_eq!(claim_across(&root, &same, wait).await.len(), 1);
        assert!(started.elapsed() < wait / 3, "{:?}", started.elapsed());
        let started = Instant::now();
        let claim = one.claim(Some(&root), api, &args).await;
        assert!(
            started.elapsed() < wait / 3,
            "the claim waited {:?} for itself",
            started.elapsed()
        );
        // It holds the entity: another process's call naming 300 in this tool waits until it is dropped.
        let two = Busy::with_max_wait(wait);
        let other = json!({"verticalResolution": 300})
            .as_object()
            .cloned()
            .unwrap();
        let started = Instant::now();
        let (_, second) = tokio::join!(
            async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                drop(claim);
            },
            two.claim(Some(&root), api, &other)
        );
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(250) && waited < wait / 2,
            "{waited:?}"
        );
        drop(second);
    }
}
