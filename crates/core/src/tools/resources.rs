//! Files between steps (HuggingGPT's resources, for every method): a binary tool output (an MCP
//! tool's image or audio) is stored in the episode's folder, and the model sees a handle (`<file-1>`)
//! with its type and size instead of the bytes. A later call that passes the handle in an argument
//! gets the file's absolute path when it goes to an MCP tool; a `/virtual` ToolBench API gets the
//! handle text unchanged (a web API cannot read our files, and a local path would make the response
//! cache's keys depend on the output folder).
//!
//! The handle is `<file-N>`, not HuggingGPT's `<resource-N>`: `plan` already uses `<resource-N>` for
//! "the output of task N", and a plan can name both.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use super::types::{Attachment, MediaKind, Resource, ToolReply};

/// The files of one episode above which further outputs are not stored (the model is told so).
pub(crate) const MAX_EPISODE_BYTES: u64 = 256 * 1024 * 1024;

const HANDLE_OPEN: &str = "<file-";

/// One episode's files: where they go, and what was stored so far.
#[derive(Debug, Default)]
pub(crate) struct ResourceStore {
    /// The episode's folder (`{answer file stem}.resources`); `None` until a first file needs one,
    /// then a fresh folder under the system's temp directory.
    dir: Option<PathBuf>,
    prepared: bool,
    items: Vec<Resource>,
    total: u64,
}

impl ResourceStore {
    pub(crate) fn new(dir: Option<PathBuf>) -> Self {
        ResourceStore {
            dir,
            ..ResourceStore::default()
        }
    }

    pub(crate) fn resources(&self) -> &[Resource] {
        &self.items
    }

    /// Stores `reply`'s attachments as files and writes each one's handle and size into the part of
    /// the response that describes it (or why it was not stored); the stored files.
    pub(crate) fn store_reply(&mut self, reply: &mut ToolReply, function: &str) -> Vec<Resource> {
        let mut stored = Vec::new();
        for a in std::mem::take(&mut reply.attachments) {
            let outcome = self.store(&a, function);
            let Some(Value::Object(part)) = (match a.slot {
                None => Some(&mut reply.response),
                Some(i) => reply.response.get_mut(i),
            }) else {
                continue;
            };
            match outcome {
                Ok(r) => {
                    part.insert("file".into(), Value::String(r.handle.clone()));
                    part.insert("bytes".into(), Value::from(r.bytes));
                    stored.push(r);
                }
                Err(why) => {
                    part.insert("error".into(), Value::String(format!("not stored: {why}")));
                }
            }
        }
        stored
    }

    fn store(&mut self, a: &Attachment, function: &str) -> Result<Resource, String> {
        let bytes = a.data.len() as u64;
        if self.total + bytes > MAX_EPISODE_BYTES {
            return Err(format!(
                "the episode's files would pass {} MiB",
                MAX_EPISODE_BYTES >> 20
            ));
        }
        let dir = self.prepare()?;
        let n = self.items.len() + 1;
        let path = dir.join(format!("file-{n}.{}", extension(&a.mime_type)));
        std::fs::write(&path, &a.data).map_err(|e| format!("{}: {e}", path.display()))?;
        let resource = Resource {
            handle: format!("{HANDLE_OPEN}{n}>"),
            kind: MediaKind::of_mime(&a.mime_type),
            mime_type: a.mime_type.clone(),
            bytes,
            path,
            function: function.to_string(),
        };
        self.total += bytes;
        self.items.push(resource.clone());
        Ok(resource)
    }

    /// The folder, made on first use. Files of an earlier attempt at the same episode (a rerun after
    /// an error) are removed so handles never point at stale files.
    fn prepare(&mut self) -> Result<PathBuf, String> {
        let dir = self.dir.get_or_insert_with(temp_dir).clone();
        if !self.prepared {
            remove_old_files(&dir);
            std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let abs = std::path::absolute(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            self.dir = Some(abs);
            self.prepared = true;
        }
        Ok(self.dir.clone().unwrap_or(dir))
    }

    /// Replaces every handle in `args`' string values (whole values and inside text) by its file's
    /// absolute path; an unknown handle is an error naming the handles this episode has.
    pub(crate) fn resolve(&self, args: &mut Map<String, Value>) -> Result<(), String> {
        for v in args.values_mut() {
            self.resolve_value(v)?;
        }
        Ok(())
    }

    fn resolve_value(&self, v: &mut Value) -> Result<(), String> {
        match v {
            Value::String(s) if s.contains(HANDLE_OPEN) => *s = self.resolve_text(s)?,
            Value::Array(items) => {
                for item in items {
                    self.resolve_value(item)?;
                }
            }
            Value::Object(m) => {
                for item in m.values_mut() {
                    self.resolve_value(item)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn resolve_text(&self, text: &str) -> Result<String, String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find(HANDLE_OPEN) {
            out.push_str(&rest[..at]);
            let after = &rest[at + HANDLE_OPEN.len()..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 || !after[digits..].starts_with('>') {
                out.push_str(HANDLE_OPEN);
                rest = after;
                continue;
            }
            let handle = &rest[at..at + HANDLE_OPEN.len() + digits + 1];
            let r = self
                .items
                .iter()
                .find(|r| r.handle == handle)
                .ok_or_else(|| self.unknown(handle))?;
            out.push_str(&r.path.to_string_lossy());
            rest = &after[digits + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn unknown(&self, handle: &str) -> String {
        let known: Vec<&str> = self.items.iter().map(|r| r.handle.as_str()).collect();
        if known.is_empty() {
            format!("unknown file handle {handle}: no tool has returned a file yet")
        } else {
            format!(
                "unknown file handle {handle}; the files so far are {}",
                known.join(", ")
            )
        }
    }
}

/// The file handles a reply's response shows (the `file` of each stored part), in order.
pub(crate) fn file_handles(response: &Value) -> Vec<String> {
    let mut out = Vec::new();
    collect_handles(response, &mut out);
    out
}

fn collect_handles(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(h)) = m.get("file")
                && h.starts_with(HANDLE_OPEN)
            {
                out.push(h.clone());
            }
            m.values().for_each(|x| collect_handles(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_handles(x, out)),
        _ => {}
    }
}

/// A fresh folder for a caller with no episode folder (library use, `chat`).
fn temp_dir() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "sum2act-files-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Removes `file-*` entries of an existing folder (ours: nothing else is touched).
fn remove_old_files(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with("file-") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The file extension for a mime type (`bin` when unknown).
pub(crate) fn extension(mime: &str) -> &'static str {
    let essence = mime.split(';').next().unwrap_or("").trim();
    match essence.to_ascii_lowercase().as_str() {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/bmp" => "bmp",
        "image/tiff" => "tiff",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "audio/flac" | "audio/x-flac" => "flac",
        "audio/webm" => "webm",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "text/plain" => "txt",
        _ => "bin",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply_with_image(slot: Option<usize>) -> ToolReply {
        let response = match slot {
            None => json!({"type": "image", "mime_type": "image/png"}),
            Some(_) => json!(["caption", {"type": "image", "mime_type": "image/png"}]),
        };
        let mut r = ToolReply::new(String::new(), response, None);
        r.attachments.push(Attachment {
            mime_type: "image/png".into(),
            data: vec![1, 2, 3],
            slot,
        });
        r
    }

    #[test]
    fn stores_files_and_resolves_handles_to_paths() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = ResourceStore::new(Some(dir.path().join("7_x.resources")));
        let mut reply = reply_with_image(None);
        let stored = store.store_reply(&mut reply, "mcp__t__draw");
        assert_eq!(stored.len(), 1);
        assert_eq!(reply.response["file"], "<file-1>");
        assert_eq!(reply.response["bytes"], 3);
        assert_eq!(std::fs::read(&stored[0].path).unwrap(), vec![1, 2, 3]);
        assert!(stored[0].path.is_absolute());
        assert!(stored[0].path.ends_with("7_x.resources/file-1.png"));
        let mut reply = reply_with_image(Some(1));
        store.store_reply(&mut reply, "f");
        assert_eq!(reply.response[1]["file"], "<file-2>");
        assert_eq!(file_handles(&reply.response), vec!["<file-2>"]);

        let mut args =
            json!({"image": "<file-2>", "note": "see <file-1> and <file-", "n": [ "<file-1>" ]})
                .as_object()
                .cloned()
                .unwrap();
        store.resolve(&mut args).unwrap();
        let p1 = store.resources()[0].path.to_string_lossy().to_string();
        let p2 = store.resources()[1].path.to_string_lossy().to_string();
        assert_eq!(args["image"], Value::String(p2));
        assert_eq!(args["note"], Value::String(format!("see {p1} and <file-")));
        assert_eq!(args["n"][0], Value::String(p1));

        let mut bad = json!({"image": "<file-9>"}).as_object().cloned().unwrap();
        let err = store.resolve(&mut bad).unwrap_err();
        assert!(
            err.contains("<file-9>") && err.contains("<file-1>, <file-2>"),
            "{err}"
        );
    }

    #[test]
    fn a_rerun_replaces_the_files_of_an_earlier_attempt() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("1_m.resources");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("file-5.png"), b"old").unwrap();
        let mut store = ResourceStore::new(Some(folder.clone()));
        store.store_reply(&mut reply_with_image(None), "f");
        assert!(!folder.join("file-5.png").exists());
        assert!(folder.join("file-1.png").exists());
    }

    #[test]
    fn outputs_past_the_episode_cap_are_refused_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = ResourceStore::new(Some(dir.path().join("r")));
        store.total = MAX_EPISODE_BYTES - 1;
        let mut reply = reply_with_image(None);
        assert!(store.store_reply(&mut reply, "f").is_empty());
        let error = reply.response["error"].as_str().unwrap_or_default();
        assert!(error.starts_with("not stored"), "{error}");
    }

    #[test]
    fn kinds_and_extensions_follow_the_mime_type() {
        assert_eq!(MediaKind::of_mime("audio/wav"), MediaKind::Audio);
        assert_eq!(MediaKind::of_mime("image/svg+xml"), MediaKind::Image);
        assert_eq!(extension("audio/x-wav"), "wav");
        assert_eq!(extension("image/jpeg; q=1"), "jpg");
        assert_eq!(extension("application/x-thing"), "bin");
    }
}
