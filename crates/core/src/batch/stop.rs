//! Graceful stopping: Ctrl-C (or SIGTERM) first stops launching queries, a second press abandons the
//! ones in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use tokio::sync::Notify;

use super::Progress;

/// A two-level stop request: level 1 stops launching queries (in-flight ones finish), level 2
/// abandons the ones in flight. Ctrl-C raises it one level per press.
#[derive(Clone, Default)]
pub struct StopSignal {
    level: Arc<AtomicU8>,
    notify: Arc<Notify>,
}

impl StopSignal {
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the level by one and returns the new level.
    pub(crate) fn escalate(&self) -> u8 {
        let level = self.level.fetch_add(1, Ordering::SeqCst).saturating_add(1);
        self.notify.notify_waiters();
        level
    }

    pub(crate) fn level(&self) -> u8 {
        self.level.load(Ordering::SeqCst)
    }

    /// Resolves once the level reaches `level`.
    pub(crate) async fn reached(&self, level: u8) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.level() >= level {
                return;
            }
            notified.await;
        }
    }

    /// Escalates on every Ctrl-C (and SIGTERM, which Kubernetes sends before killing a pod) and
    /// tells the user what happens next.
    pub fn listen_ctrl_c(&self, progress: Arc<dyn Progress>) -> tokio::task::JoinHandle<()> {
        let stop = self.clone();
        tokio::spawn(async move {
            #[cfg(unix)]
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            loop {
                #[cfg(unix)]
                let signalled = match term.as_mut() {
                    Some(t) => tokio::select! {
                        r = tokio::signal::ctrl_c() => r.is_ok(),
                        r = t.recv() => r.is_some(),
                    },
                    None => tokio::signal::ctrl_c().await.is_ok(),
                };
                #[cfg(not(unix))]
                let signalled = tokio::signal::ctrl_c().await.is_ok();
                if !signalled {
                    break;
                }
                match stop.escalate() {
                    1 => progress.note(
                        "stopping: no new queries; waiting for those in flight (Ctrl-C again to abandon them)",
                    ),
                    _ => progress.note("abandoning the queries in flight; rerun the same command to resume"),
                }
            }
        })
    }
}
