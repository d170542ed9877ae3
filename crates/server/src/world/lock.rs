//! One simulation per call across processes: an advisory lock (`flock`) on `{id}.lock` beside the
//! call's reply file, held while the reply is made. The operating system releases it when its process
//! dies, so a killed run never blocks another. Waiting polls `try_lock` from async code (no thread is
//! blocked). The lock only saves work: replies stay identical without it, since the first reply stored
//! wins (see `store`).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::store::{Call, Store};

/// A held call lock; released on drop.
pub struct CallLock {
    _file: File,
    path: PathBuf,
}

impl CallLock {
    /// Takes the lock of `call` under the world folder `root`, waiting for another holder. `None` when
    /// no lock file can be made (a read-only world): the caller goes on without it.
    pub async fn take(root: &Path, call: &Call) -> Option<CallLock> {
        let dir = Store::api_dir(root, call);
        std::fs::create_dir_all(&dir).ok()?;
        let path = dir.join(format!("{}.lock", call.id()));
        let file = match OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!("cannot open the world lock {}: {e}", path.display());
                return None;
            }
        };
        let mut wait = Duration::from_millis(20);
        loop {
            match file.try_lock() {
                Ok(()) => return Some(CallLock { _file: file, path }),
                Err(TryLockError::WouldBlock) => {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_millis(250));
                }
                Err(TryLockError::Error(e)) => {
                    tracing::warn!("cannot lock {}: {e}", path.display());
                    return None;
                }
            }
        }
    }

    /// Removes the lock file once the call's reply is stored: any process that still waits on it finds
    /// the reply after taking it, and later ones find the reply before looking for a lock.
    pub fn done(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
