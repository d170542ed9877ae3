//! The episodes' files in the report: images shown and audio playable in place, embedded as `data:`
//! URIs so the page stays one self-contained file. Each file is capped, and so is a report's total;
//! a file over a cap (or of a type a browser should not be handed) is listed by its path only.

use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::Value;

/// Largest file embedded.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// Largest total embedded in one report.
pub const MAX_REPORT_BYTES: u64 = 32 * 1024 * 1024;

/// Types embedded: what `<img>` and `<audio>` play, nothing a browser would run.
const EMBEDDED_TYPES: [&str; 12] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/bmp",
    "audio/wav",
    "audio/x-wav",
    "audio/wave",
    "audio/mpeg",
    "audio/ogg",
    "audio/flac",
    "audio/webm",
];

/// What is left of the report's total.
#[derive(Debug)]
pub struct MediaBudget {
    left: u64,
}

impl Default for MediaBudget {
    fn default() -> Self {
        MediaBudget {
            left: MAX_REPORT_BYTES,
        }
    }
}

/// Adds `data_uri` to each of the episode record's `resources` that fits, else `not_embedded`
/// saying why. `answer` is the answer file: a run directory that moved still finds its files in
/// `{answer stem}.resources/`.
pub fn embed_resources(ep: &mut Value, answer: &Path, budget: &mut MediaBudget) {
    let Some(list) = ep.get_mut("resources").and_then(Value::as_array_mut) else {
        return;
    };
    for r in list.iter_mut() {
        let Some(obj) = r.as_object_mut() else {
            continue;
        };
        let mime = obj
            .get("mime_type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_ascii_lowercase();
        let recorded = PathBuf::from(obj.get("path").and_then(Value::as_str).unwrap_or(""));
        let outcome = embed_one(&mime, &locate(&recorded, answer), budget);
        match outcome {
            Ok(uri) => obj.insert("data_uri".into(), Value::String(uri)),
            Err(why) => obj.insert("not_embedded".into(), Value::String(why)),
        };
    }
}

/// The recorded path when it exists, else the same file name in the answer file's folder.
fn locate(recorded: &Path, answer: &Path) -> PathBuf {
    if recorded.is_file() {
        return recorded.to_path_buf();
    }
    let name = recorded.file_name().unwrap_or_default();
    answer.with_extension("resources").join(name)
}

fn embed_one(mime: &str, path: &Path, budget: &mut MediaBudget) -> Result<String, String> {
    if !EMBEDDED_TYPES.contains(&mime) {
        return Err(format!("{mime} is not shown in reports"));
    }
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(format!("larger than {} MiB", MAX_FILE_BYTES >> 20));
    }
    if size > budget.left {
        return Err(format!(
            "the report's {} MiB for files is used up",
            MAX_REPORT_BYTES >> 20
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    budget.left -= bytes.len() as u64;
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    Ok(format!("data:{mime};base64,{data}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn embeds_what_fits_and_says_why_not_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let answer = dir.path().join("1_react.json");
        let files = answer.with_extension("resources");
        std::fs::create_dir_all(&files).unwrap();
        std::fs::write(files.join("file-1.png"), [1u8, 2]).unwrap();
        std::fs::write(files.join("file-2.bin"), [3u8]).unwrap();
        // Recorded where the run used to be: found again beside the answer file.
        let mut ep = json!({"resources": [
            {"handle": "<file-1>", "mime_type": "image/png", "path": "/moved/away/file-1.png"},
            {"handle": "<file-2>", "mime_type": "text/html", "path": "/moved/away/file-2.bin"},
        ]});
        let mut budget = MediaBudget::default();
        embed_resources(&mut ep, &answer, &mut budget);
        assert_eq!(ep["resources"][0]["data_uri"], "data:image/png;base64,AQI=");
        assert!(
            ep["resources"][1]["not_embedded"]
                .as_str()
                .unwrap()
                .contains("text/html")
        );
        let mut tight = MediaBudget { left: 1 };
        let mut again =
            json!({"resources": [{"mime_type": "image/png", "path": files.join("file-1.png")}]});
        embed_resources(&mut again, &answer, &mut tight);
        assert!(
            again["resources"][0]["not_embedded"]
                .as_str()
                .unwrap()
                .contains("used up")
        );
    }
}
