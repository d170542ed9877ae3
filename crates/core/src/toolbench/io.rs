//! Reading and writing JSON files with errors that name the file and the JSON path, and atomic writes
//! (temp file + rename) so a crash never leaves a half-written result.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::DataError;

/// Reads and parses a JSON file; errors name the file and the JSON path of the problem.
/// Every `.json` file below `root`, in path order (unreadable folders are skipped).
pub fn json_files_under(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, DataError> {
    let text = std::fs::read_to_string(path).map_err(|e| DataError::io(path, e))?;
    parse_json(path, &text)
}

/// Parses JSON text that came from `path`.
pub fn parse_json<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, DataError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let json_path = e.path().to_string();
        DataError::Json {
            path: path.to_path_buf(),
            json_path,
            message: e.into_inner().to_string(),
        }
    })
}

/// Writes `bytes` to `path` atomically: a temp file in the same folder, synced to disk, then a rename
/// (and a sync of the folder), so a crash or power loss leaves the old file or the new one, never a
/// torn one. Failures are `DataError::Write` (a run failure, exit 1).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), DataError> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| DataError::write(dir, e))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(DataError::write(path, e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        DataError::write(path, e)
    })?;
    // The rename is durable once the folder is synced; not every platform can open a folder.
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Serialises `value` as pretty JSON and writes it atomically.
pub fn write_json_atomic<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), DataError> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| DataError::Other(format!("{}: cannot serialise: {e}", path.display())))?;
    bytes.push(b'\n');
    write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolbench::Query;

    #[test]
    fn json_errors_name_file_and_path() {
        let err = parse_json::<Vec<Query>>(
            Path::new("q.json"),
            r#"[{"query": "x", "query_id": "seven"}]"#,
        )
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        assert!(err.contains("q.json"), "{err}");
        assert!(err.contains("[0].query_id"), "{err}");
    }

    #[test]
    fn a_failed_write_is_an_output_error_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "x").unwrap();
        // A folder that cannot exist (its parent is a file), like a full or read-only disk.
        let err = write_atomic(&blocker.join("out.json"), b"{}").unwrap_err();
        assert!(err.is_output(), "{err}");
        assert!(err.to_string().starts_with("cannot write"), "{err}");
        write_atomic(&dir.path().join("ok.json"), b"{}").unwrap();
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    }

    #[test]
    fn missing_query_id_is_named() {
        let err = parse_json::<Vec<Query>>(Path::new("q.json"), r#"[{"query": "x"}]"#)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("query_id"), "{err}");
    }

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().map_err(|e| e.to_string());
        let dir = match dir {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        };
        let path = dir.path().join("sub/out.json");
        assert!(write_json_atomic(&path, &vec![1, 2, 3]).is_ok());
        assert!(write_json_atomic(&path, &vec![4]).is_ok());
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(text.trim(), "[\n  4\n]");
        let leftovers = std::fs::read_dir(dir.path().join("sub"))
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(leftovers, 1);
    }
}
