//! One writer per run directory: `batch`, `merge` and `eval` hold an exclusive lock on a `.lock` file
//! in the folder they write while they run. Two batches on one `--out` would otherwise both run every
//! query (twice the model calls) and overwrite each other's answers.
//!
//! The lock is the operating system's (`flock` on Unix), so it goes away with its process: the lock of
//! a process that was killed is taken over by the next one without any clean-up. The file also holds
//! the holder's pid and command, which the refusal names.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use super::BatchError;

/// The lock file's name inside the folder it protects.
pub(crate) const LOCK_FILE: &str = ".lock";

/// An exclusive lock on a folder, held until dropped.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

impl RunLock {
    /// Locks `dir` (created if missing) for `command` (`batch`, `merge`, `eval`); `flag` is how the user
    /// named the folder (`--out`, `OUT`), for the refusal. Refused (bad input) while another process
    /// holds it.
    pub fn acquire(dir: &Path, command: &str, flag: &str) -> Result<RunLock, BatchError> {
        std::fs::create_dir_all(dir).map_err(|e| BatchError::io(dir, e))?;
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| BatchError::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                return Err(BatchError::Locked {
                    dir: dir.to_path_buf(),
                    holder: describe_holder(&holder),
                    flag: flag.to_string(),
                });
            }
            Err(TryLockError::Error(e)) => return Err(BatchError::io(&path, e)),
        }
        let note = format!(
            "pid {} · sum2act {command} · since {}\n",
            std::process::id(),
            super::manifest::timestamp()
        );
        let written = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(note.as_bytes()));
        written.map_err(|e| BatchError::io(&path, e))?;
        Ok(RunLock { _file: file })
    }
}

/// What the lock file says about its holder, on one line.
fn describe_holder(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.is_empty() {
        "pid unknown".into()
    } else {
        crate::terminal::safe_line(line).chars().take(200).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_folder_is_refused_and_free_again_once_released() {
        let dir = tempfile::tempdir().unwrap();
        let held = RunLock::acquire(dir.path(), "batch", "--out").unwrap();
        let err = RunLock::acquire(dir.path(), "merge", "OUT")
            .err()
            .map(|e| (e.is_bad_input(), e.to_string()));
        let (bad_input, message) = err.unwrap_or_default();
        assert!(bad_input, "{message}");
        assert!(
            message.contains(&format!("pid {}", std::process::id()))
                && message.contains("sum2act batch")
                && message.contains("OUT"),
            "{message}"
        );
        drop(held);
        assert!(RunLock::acquire(dir.path(), "merge", "OUT").is_ok());
    }
}
