//! The entities being simulated now, so that a call naming an entity whose first simulation is still
//! in flight waits for it and is given its reply as a fact. Without it, two different calls naming one
//! id made at once (an order's list and its detail, two methods on one world) are simulated side by
//! side and neither sees the other's reply. In this process only; a call waits at most [`MAX_WAIT`]
//! for each earlier one, and never for one that started after it, so waits cannot form a cycle.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::OwnedMutexGuard;

use super::entities::{identifier_argument, named_values, tool_of, weak_identifier};

/// The longest a call waits for one earlier simulation of an entity it names.
pub const MAX_WAIT: Duration = Duration::from_secs(300);

/// The simulations in flight and the entities they name.
#[derive(Debug, Default)]
pub struct Busy {
    entries: Mutex<Vec<Entry>>,
    next: std::sync::atomic::AtomicU64,
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
    /// Claims the entities a call of `api` names, then waits for the simulations in flight that named
    /// one of them before (each at most [`MAX_WAIT`]).
    pub async fn claim(&self, api: &str, args: &Map<String, Value>) -> Claim<'_> {
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
                entries.push(Entry { id, keys, done });
                earlier
            }
            _ => Vec::new(),
        };
        let claim = Claim {
            busy: self,
            id,
            _held: held,
        };
        for first in earlier {
            let _ = tokio::time::timeout(MAX_WAIT, first.lock()).await;
        }
        claim
    }
}

/// The entities a call names: its identifier arguments' values (a short number only within its tool).
fn entity_keys(api: &str, args: &Map<String, Value>) -> Vec<String> {
    named_values(args)
        .into_iter()
        .filter(|(k, v)| identifier_argument(k, &Value::String(v.clone())))
        .map(|(_, v)| {
            let v = v.trim().to_lowercase();
            if weak_identifier(&v) {
                format!("{}|{v}", tool_of(api))
            } else {
                v
            }
        })
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
            .claim("Tools/shop/orders", &args(json!({"order_id": 1042})))
            .await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let waiting = {
            let busy = busy.clone();
            tokio::spawn(async move {
                let _c = busy
                    .claim("Tools/shop/order", &args(json!({"is_id": "1042"})))
                    .await;
                let _ = tx.send("second");
            })
        };
        // Another entity, and a call naming none, do not wait.
        busy.claim("Tools/shop/order", &args(json!({"is_id": "1043"})))
            .await;
        busy.claim("Tools/shop/list", &args(json!({"page": 2})))
            .await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(rx.try_recv().is_err(), "the second call waits");
        drop(first);
        waiting.await.unwrap();
        assert_eq!(rx.recv().await, Some("second"));
        assert!(busy.entries.lock().unwrap().is_empty());
    }
}
