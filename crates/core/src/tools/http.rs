//! A client for StableToolBench-compatible `/virtual` servers (ours or theirs) over HTTP.

use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;

use super::types::{ReplySource, ToolReply, ToolRequest};
use super::{Started, ToolError, ToolSource};

/// Header in which our server says where a reply came from (the body stays exactly `{error, response}`).
pub const SOURCE_HEADER: &str = "x-sum2act-source";

/// The early answer, opt-in. A client sends this header (any value) to say it understands it; our server
/// then answers a call that a model is simulating at once with the header, and sends the body when the
/// reply is made, with its source as a `source` field (headers are gone by then). The caller charges
/// ToolBench's timeout to the API's part only, not to the simulator's thinking. Other clients get the
/// plain one-part reply.
pub const SIMULATING_HEADER: &str = "x-sum2act-simulating";

/// Header carrying the key (StableToolBench also reads it from the body).
pub(crate) const KEY_HEADER: &str = "toolbench_key";

/// Replies above this size are refused rather than buffered without bound.
pub(crate) const DEFAULT_MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// Calls a `/virtual` endpoint. Redirects are followed only within the same host, and the key is never
/// part of any log line or `Debug` output.
#[derive(Clone)]
pub struct HttpSource {
    url: reqwest::Url,
    /// The URL with its credentials masked, for messages.
    shown: String,
    key: Option<String>,
    client: reqwest::Client,
    max_reply_bytes: usize,
    /// What the server is, when the caller knows (the embedded server says how it answers).
    label: Option<String>,
}

impl std::fmt::Debug for HttpSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSource")
            .field("url", &self.shown)
            .field("key", &self.key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

#[derive(Serialize)]
struct Body<'a> {
    #[serde(flatten)]
    request: &'a ToolRequest,
    /// The Python server's request model requires the field, so it is sent even when empty.
    toolbench_key: &'a str,
}

impl HttpSource {
    /// A client for `url` (e.g. `http://127.0.0.1:8080/virtual`).
    pub fn new(url: &str, key: Option<String>) -> Result<Self, ToolError> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| ToolError::InvalidUrl(format!("invalid tool server URL `{url}`: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ToolError::InvalidUrl(format!(
                "invalid tool server URL `{url}`: the scheme must be http or https"
            )));
        }
        let origin = parsed.clone();
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            let same_origin = attempt.url().scheme() == origin.scheme()
                && attempt.url().host_str() == origin.host_str()
                && attempt.url().port_or_known_default() == origin.port_or_known_default();
            if same_origin && attempt.previous().len() < 5 {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let client = reqwest::Client::builder()
            .redirect(policy)
            .connect_timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(|e| ToolError::Other(format!("cannot build the HTTP client: {e}")))?;
        Ok(HttpSource {
            shown: crate::redact::url(parsed.as_str()),
            url: parsed,
            key: key.filter(|k| !k.is_empty()),
            client,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            label: None,
        })
    }

    /// Says what the server is in `describe` (manifests and logs).
    pub fn with_label(mut self, label: String) -> Self {
        self.label = Some(label);
        self
    }

    pub fn with_max_reply_bytes(mut self, n: usize) -> Self {
        self.max_reply_bytes = n;
        self
    }

    /// The server's URL, without credentials.
    pub fn url(&self) -> &str {
        &self.shown
    }
}

/// A connection failure: the innermost cause says why ("Connection refused"); reqwest's own text only
/// says that sending failed. The URL is left out: it may hold a key, and the message names it shown.
fn unreachable(shown: &str, e: reqwest::Error) -> ToolError {
    let e = e.without_url();
    let mut cause: &dyn std::error::Error = &e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    let message = if std::ptr::addr_eq(cause, &e) {
        e.to_string()
    } else {
        format!("{e}: {cause}")
    };
    ToolError::Unreachable {
        url: shown.to_string(),
        message,
    }
}

/// Reads a reply body under the size cap; owns what it needs, so a simulated reply can be read later.
struct BodyReader {
    shown: String,
    max_reply_bytes: usize,
}

impl BodyReader {
    async fn read(self, mut resp: reqwest::Response) -> Result<ToolReply, ToolError> {
        let source = resp
            .headers()
            .get(SOURCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(ReplySource::parse);
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| unreachable(&self.shown, e))?
        {
            if body.len() + chunk.len() > self.max_reply_bytes {
                return Err(ToolError::TooLarge(self.max_reply_bytes));
            }
            body.extend_from_slice(&chunk);
        }
        let value: Value =
            serde_json::from_slice(&body).map_err(|e| ToolError::BadReply(e.to_string()))?;
        let Value::Object(mut obj) = value else {
            return Err(ToolError::BadReply(
                "the reply is not a JSON object".to_string(),
            ));
        };
        // An early answer's body names its source (see `SIMULATING_HEADER`).
        let named = match obj.remove("source") {
            Some(Value::String(s)) => ReplySource::parse(&s),
            _ => None,
        };
        reply_from_object(&mut obj, named.or(source).unwrap_or(ReplySource::Remote))
    }
}

/// A reply body as the protocol defines it: `{"error": str, "response": any}`. A body with no
/// `response` and no error (`{}`, or some other server's JSON) is not an empty success: it is
/// `BadReply`, which the caller turns into a failed observation naming the problem.
pub(crate) fn reply_from_object(
    obj: &mut serde_json::Map<String, Value>,
    source: ReplySource,
) -> Result<ToolReply, ToolError> {
    let error = match obj.remove("error") {
        Some(Value::String(s)) => s,
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let Some(response) = obj.remove("response") else {
        if error.is_empty() {
            let keys: Vec<&str> = obj.keys().map(String::as_str).take(5).collect();
            return Err(ToolError::BadReply(format!(
                "the reply has no `response` and no `error` (keys: [{}]); expected {{\"error\": ..., \"response\": ...}}",
                keys.join(", ")
            )));
        }
        return Ok(ToolReply::new(
            error,
            Value::String(String::new()),
            Some(source),
        ));
    };
    Ok(ToolReply::new(error, response, Some(source)))
}

#[async_trait]
impl ToolSource for HttpSource {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        match self.start(request).await? {
            Started::Ready(reply) => Ok(reply),
            Started::Simulating(rest) => rest.await,
        }
    }

    async fn start(&self, request: &ToolRequest) -> Result<Started, ToolError> {
        let key = self.key.as_deref().unwrap_or("");
        let mut req = self
            .client
            .post(self.url.clone())
            .header(SIMULATING_HEADER, "accept")
            .json(&Body {
                request,
                toolbench_key: key,
            });
        if !key.is_empty() {
            req = req.header(KEY_HEADER, key);
        }
        let resp = req.send().await.map_err(|e| {
            if e.is_timeout() {
                ToolError::Timeout(std::time::Duration::ZERO)
            } else {
                unreachable(&self.shown, e)
            }
        })?;
        let status = resp.status().as_u16();
        if status != 200 {
            return Err(ToolError::Status(status));
        }
        let body = BodyReader {
            shown: self.shown.clone(),
            max_reply_bytes: self.max_reply_bytes,
        };
        if resp.headers().contains_key(SIMULATING_HEADER) {
            return Ok(Started::Simulating(Box::pin(body.read(resp))));
        }
        body.read(resp).await.map(Started::Ready)
    }

    /// A `GET` of the URL: any HTTP reply but 404 means a server is there (a `/virtual` endpoint
    /// answers 405 to a `GET`); nothing is sent that a server could act on.
    async fn check(&self) -> Result<(), ToolError> {
        let resp = self
            .client
            .get(self.url.clone())
            .send()
            .await
            .map_err(|e| unreachable(&self.shown, e))?;
        match resp.status().as_u16() {
            404 => Err(ToolError::Status(404)),
            _ => Ok(()),
        }
    }

    fn identity(&self) -> String {
        // A labelled source is a server this process started: its port is an accident of the run.
        match &self.label {
            Some(label) => label.clone(),
            None => self.describe(),
        }
    }

    fn describe(&self) -> String {
        // Credentials in the URL (user:password@host, a key parameter) stay out of manifests and logs.
        match &self.label {
            Some(label) => format!("{label} at {}", self.shown),
            None => format!("tool server {}", self.shown),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value) -> Result<ToolReply, ToolError> {
        let Value::Object(mut obj) = v else {
            return Err(ToolError::BadReply("not an object".into()));
        };
        reply_from_object(&mut obj, ReplySource::Remote)
    }

    #[test]
    fn a_reply_without_error_or_response_is_bad_not_an_empty_success() {
        for body in [
            json!({}),
            json!({"result": 1}),
            json!({"error": ""}),
            json!({"error": null}),
        ] {
            match read(body.clone()) {
                Err(ToolError::BadReply(m)) => assert!(m.contains("no `response`"), "{m}"),
                other => panic!("{body}: {other:?}"),
            }
        }
        let ok = read(json!({"error": "", "response": {"a": 1}})).unwrap();
        assert_eq!(ok.response, json!({"a": 1}));
        let failed = read(json!({"error": "API not working error..."})).unwrap();
        assert_eq!(failed.error, "API not working error...");
    }

    #[tokio::test]
    async fn the_caller_turns_a_malformed_reply_into_a_failed_observation() {
        use axum::routing::post;
        let app = axum::Router::new().route("/virtual", post(|| async { axum::Json(json!({})) }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let source = HttpSource::new(&format!("http://{addr}/virtual"), None).unwrap();
        let env = crate::tools::ToolEnv::new(std::sync::Arc::new(source), Default::default());
        let doc: crate::toolbench::ApiDoc = serde_json::from_value(json!({
            "category_name": "C", "tool_name": "T", "api_name": "a",
            "required_parameters": [], "optional_parameters": []
        }))
        .unwrap();
        let caller = env.caller(vec![crate::toolbench::Function::from_doc(&doc, "t")]);
        let name = caller.functions()[0].name.clone();
        let obs = caller.call(&name, "{}").await;
        assert!(obs.failed, "{obs:?}");
        assert_ne!(obs.code, 0);
        assert!(obs.error.contains("no `response`"), "{}", obs.error);
    }
}
