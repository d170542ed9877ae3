//! Where a tool's file input comes from. An argument names an absolute local path, a `file://`, `data:`
//! or `http(s)://` URL. An http(s) URL is answered first from the data directory's URL cache
//! (`DATA/url_cache/{host}/{path}`: recorded files, offline and deterministic, as `response_cache` is for
//! API replies), then from the network unless the server is offline. Every input is capped in size before
//! it is read whole.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use futures::StreamExt;
use reqwest::Url;

use super::error::MediaError;

/// Largest input file, fetched body or decoded `data:` URL.
pub const MAX_INPUT_BYTES: u64 = 20 * 1024 * 1024;
/// Time a URL fetch may take in all.
const FETCH_TIMEOUT: Duration = Duration::from_secs(20);

/// How inputs are found: the URL cache and whether the network may be used.
#[derive(Debug, Clone)]
pub struct Inputs {
    url_cache: Option<PathBuf>,
    offline: bool,
    client: reqwest::Client,
}

/// An input's bytes and a short name for messages.
#[derive(Debug)]
pub struct Loaded {
    pub bytes: Vec<u8>,
    pub name: String,
}

impl Inputs {
    pub fn new(url_cache: Option<PathBuf>, offline: bool) -> Self {
        let client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::limited(5))
            .user_agent(concat!("sum2act-media/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        Inputs {
            url_cache,
            offline,
            client,
        }
    }

    /// Reads the input named by argument `arg` (its value `value`).
    pub async fn load(&self, arg: &str, value: &str) -> Result<Loaded, MediaError> {
        let value = value.trim();
        if let Some(rest) = value.strip_prefix("data:") {
            return decode_data_url(arg, rest);
        }
        if value.starts_with("http://") || value.starts_with("https://") {
            let url = Url::parse(value)
                .map_err(|e| MediaError::argument(arg, format!("bad URL: {e}")))?;
            return self.fetch(url).await;
        }
        let path = match value.strip_prefix("file://") {
            Some(p) => PathBuf::from(p),
            None => PathBuf::from(value),
        };
        if !path.is_absolute() {
            return Err(MediaError::argument(
                arg,
                format!(
                    "`{}` is not an absolute path or an http(s)/data URL",
                    short(value)
                ),
            ));
        }
        read_capped(&path).await
    }

    async fn fetch(&self, url: Url) -> Result<Loaded, MediaError> {
        let name = short(url.as_str());
        if let Some(file) = self.cached(&url) {
            let mut loaded = read_capped(&file).await?;
            loaded.name = name;
            return Ok(loaded);
        }
        if self.offline {
            return Err(MediaError::Fetch {
                url: name,
                message: "not in the URL cache, and the media server is offline".into(),
            });
        }
        let fail = |message: String| MediaError::Fetch {
            url: name.clone(),
            message,
        };
        let reply = self
            .client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| fail(e.to_string()))?;
        if !reply.status().is_success() {
            return Err(fail(format!("HTTP {}", reply.status())));
        }
        if let Some(n) = reply.content_length().filter(|n| *n > MAX_INPUT_BYTES) {
            return Err(MediaError::too_large(name, n, MAX_INPUT_BYTES));
        }
        let mut bytes = Vec::new();
        let mut body = reply.bytes_stream();
        while let Some(chunk) = body.next().await {
            bytes.extend_from_slice(&chunk.map_err(|e| fail(e.to_string()))?);
            if bytes.len() as u64 > MAX_INPUT_BYTES {
                return Err(MediaError::too_large(
                    name,
                    bytes.len() as u64,
                    MAX_INPUT_BYTES,
                ));
            }
        }
        Ok(Loaded { bytes, name })
    }

    /// The URL cache's file for `url`, if one is recorded. The path is built from the URL's host and
    /// path segments only, never `.`/`..`; URLs with a query string are never cached.
    fn cached(&self, url: &Url) -> Option<PathBuf> {
        let root = self.url_cache.as_ref()?;
        if url.query().is_some() {
            return None;
        }
        let mut path = root.join(url.host_str()?.to_ascii_lowercase());
        for segment in url.path_segments()? {
            if segment.is_empty() || segment == "." || segment == ".." || segment.contains('\\') {
                return None;
            }
            path.push(segment);
        }
        path.is_file().then_some(path)
    }
}

/// Reads a local file after checking its size.
async fn read_capped(path: &Path) -> Result<Loaded, MediaError> {
    let name = path.display().to_string();
    let fail = |e: std::io::Error| MediaError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let meta = tokio::fs::metadata(path).await.map_err(fail)?;
    if !meta.is_file() {
        return Err(MediaError::File {
            path: path.to_path_buf(),
            message: "not a file".into(),
        });
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(MediaError::too_large(name, meta.len(), MAX_INPUT_BYTES));
    }
    let bytes = tokio::fs::read(path).await.map_err(fail)?;
    Ok(Loaded { bytes, name })
}

/// `data:[mime][;base64],DATA`: only base64 payloads carry binary files.
fn decode_data_url(arg: &str, rest: &str) -> Result<Loaded, MediaError> {
    let Some((head, payload)) = rest.split_once(',') else {
        return Err(MediaError::argument(
            arg,
            "a data: URL needs a `,` before its data",
        ));
    };
    if !head.ends_with(";base64") {
        return Err(MediaError::argument(
            arg,
            "only base64 data: URLs are supported (`data:image/png;base64,...`)",
        ));
    }
    let limit = MAX_INPUT_BYTES / 3 * 4 + 4;
    if payload.len() as u64 > limit {
        return Err(MediaError::too_large(
            "the data: URL",
            payload.len() as u64,
            limit,
        ));
    }
    let clean: String = payload
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(clean.as_bytes())
        .map_err(|e| MediaError::argument(arg, format!("bad base64 in the data: URL: {e}")))?;
    Ok(Loaded {
        bytes,
        name: "the data: URL".into(),
    })
}

/// A value cut for a message (a model may pass a very long string).
pub fn short(s: &str) -> String {
    const MAX: usize = 120;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(MAX).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(cache: Option<PathBuf>) -> Inputs {
        Inputs::new(cache, true)
    }

    #[tokio::test]
    async fn relative_paths_are_refused_with_the_argument_named() {
        let e = inputs(None).load("image", "pics/a.png").await.unwrap_err();
        assert!(
            e.to_string()
                .starts_with("argument `image`: `pics/a.png` is not an absolute path"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn data_urls_decode_and_bad_ones_say_why() {
        let ok = inputs(None)
            .load("image", "data:image/png;base64,aGVsbG8=")
            .await
            .unwrap();
        assert_eq!(ok.bytes, b"hello");
        let e = inputs(None)
            .load("image", "data:text/plain,hello")
            .await
            .unwrap_err();
        assert!(e.to_string().contains("only base64"), "{e}");
        let e = inputs(None)
            .load("image", "data:image/png;base64,@@@")
            .await
            .unwrap_err();
        assert!(e.to_string().contains("bad base64"), "{e}");
    }

    #[tokio::test]
    async fn urls_come_from_the_cache_and_never_escape_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("files.demo.example/codes/a.png");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, b"png bytes").unwrap();
        let inputs = inputs(Some(dir.path().to_path_buf()));
        let hit = inputs
            .load("image", "https://FILES.demo.example/codes/a.png")
            .await
            .unwrap();
        assert_eq!(hit.bytes, b"png bytes");
        for miss in [
            "https://files.demo.example/codes/a.png?x=1",
            "https://files.demo.example/../../etc/passwd",
            "https://files.demo.example/codes/b.png",
        ] {
            let e = inputs.load("image", miss).await.unwrap_err();
            assert!(e.to_string().contains("offline"), "{miss}: {e}");
        }
    }

    #[tokio::test]
    async fn missing_files_name_the_path() {
        let e = inputs(None)
            .load("audio", "/no/such/file.wav")
            .await
            .unwrap_err();
        assert!(e.to_string().starts_with("/no/such/file.wav: "), "{e}");
    }
}
