//! A client for OpenAI-compatible chat-completion endpoints (OpenAI, vLLM, Ollama, llama.cpp server,
//! and our own `sum2act serve-llm`). One instance talks to one endpoint; retries, limits and failover
//! are decorators around it.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::purpose;
use super::tokens::count_prompt_tokens;
use super::{
    Completion, CompletionRequest, LlmClient, LlmError, Message, ResponseFormat, Role, ToolCall,
    ToolChoice, Usage, count_completion_tokens,
};

/// Largest response body read from an endpoint.
pub(crate) const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

/// One OpenAI-compatible endpoint.
pub struct OpenAiClient {
    http: reqwest::Client,
    /// The API root as given, credentials included: only requests are built from it.
    base_url: reqwest::Url,
    /// The API root with credentials masked (`redact::url`): every message, log line and id uses it.
    shown: String,
    api_key: Option<String>,
    /// The model name; resolved from `/models` on first use when not configured.
    model: Mutex<Option<String>>,
    timeout: Duration,
}

// Hand-written so the key can never reach a log line through `{:?}`.
impl std::fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("base_url", &self.shown)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("model", &self.model.lock().ok().and_then(|m| m.clone()))
            .finish()
    }
}

impl OpenAiClient {
    /// `base_url` is the API root, e.g. `http://127.0.0.1:8000/v1`.
    pub fn new(
        base_url: &str,
        api_key: Option<String>,
        model: Option<String>,
        timeout: Duration,
    ) -> Result<Self, LlmError> {
        let shown = crate::redact::url(base_url.trim_end_matches('/'));
        let parsed = reqwest::Url::parse(base_url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && !u.cannot_be_a_base());
        let Some(base_url) = parsed else {
            return Err(LlmError::Config(format!(
                "endpoint URL `{shown}` must start with http:// or https:// and be a valid URL (e.g. http://127.0.0.1:8000/v1)"
            )));
        };
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(10).min(timeout))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build HTTP client: {e}")))?;
        Ok(OpenAiClient {
            http,
            base_url,
            shown,
            api_key: api_key.filter(|k| !k.is_empty()),
            model: Mutex::new(model.filter(|m| !m.is_empty())),
            timeout,
        })
    }

    /// `path` under the API root, its query (an `api-version`, a key) kept at the end.
    fn endpoint(&self, path: &str) -> reqwest::Url {
        let mut url = self.base_url.clone();
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().extend(path.split('/'));
        }
        url
    }

    fn authorized(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.api_key {
            Some(k) => rb.bearer_auth(k),
            None => rb,
        }
    }

    /// Removes the key from text that came back from the server (some echo part of it).
    fn scrub(&self, text: &str) -> String {
        let mut s: String = text.chars().take(500).collect();
        if let Some(k) = &self.api_key {
            s = s.replace(k.as_str(), "***");
        }
        s
    }

    /// The response body as text, refused beyond `MAX_BODY_BYTES` rather than buffered without bound
    /// (the agent cuts what it keeps further, to `max_reply_bytes`).
    async fn read_body(&self, mut resp: reqwest::Response) -> Result<String, LlmError> {
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| self.transport_error(e))? {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(LlmError::InvalidResponse(format!(
                    "{}: reply larger than {} MiB",
                    self.shown,
                    MAX_BODY_BYTES >> 20
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    fn transport_error(&self, e: reqwest::Error) -> LlmError {
        if e.is_timeout() {
            LlmError::Timeout(self.timeout)
        } else {
            LlmError::Unreachable {
                endpoint: self.shown.clone(),
                message: self.scrub(&error_chain(&e.without_url())),
            }
        }
    }

    /// The configured model, or the first one the endpoint lists.
    async fn model(&self) -> Result<String, LlmError> {
        if let Some(m) = self.model.lock().ok().and_then(|m| m.clone()) {
            return Ok(m);
        }
        let models = self.list_models().await?;
        let first = models
            .into_iter()
            .next()
            .ok_or_else(|| LlmError::ModelNotFound {
                endpoint: self.shown.clone(),
                model: "(none given)".into(),
                message: "the endpoint lists no models; pass --model NAME".into(),
            })?;
        if let Ok(mut m) = self.model.lock() {
            *m = Some(first.clone());
        }
        Ok(first)
    }

    /// Model ids served by the endpoint (`GET /models`).
    pub async fn list_models(&self) -> Result<Vec<String>, LlmError> {
        let url = self.endpoint("models");
        let resp = self
            .authorized(self.http.get(url))
            .send()
            .await
            .map_err(|e| self.transport_error(e))?;
        let status = resp.status().as_u16();
        let retry_after = retry_after(resp.headers());
        let text = self.read_body(resp).await?;
        if status != 200 {
            return Err(self.status_error(status, retry_after, &text, "(listing models)"));
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| {
            LlmError::InvalidResponse(format!("{}/models: not JSON: {e}", self.shown))
        })?;
        Ok(v["data"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|m| m["id"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default())
    }

    fn status_error(
        &self,
        status: u16,
        retry_after: Option<Duration>,
        body: &str,
        model: &str,
    ) -> LlmError {
        let endpoint = self.shown.clone();
        let message = self.scrub(&error_message(body));
        let lower = message.to_lowercase();
        match status {
            401 | 403 => LlmError::Unauthorized { endpoint, status },
            404 => LlmError::ModelNotFound {
                endpoint,
                model: model.to_string(),
                message: format!("HTTP 404: {message}"),
            },
            429 => LlmError::RateLimited {
                endpoint,
                retry_after,
            },
            400 | 413
                if lower.contains("context")
                    || lower.contains("too long")
                    || lower.contains("maximum") && lower.contains("token") =>
            {
                LlmError::RemoteContextOverflow { endpoint, message }
            }
            400 if lower.contains("model")
                && (lower.contains("not found") || lower.contains("does not exist")) =>
            {
                LlmError::ModelNotFound {
                    endpoint,
                    model: model.to_string(),
                    message,
                }
            }
            _ => LlmError::Server {
                endpoint,
                status,
                message,
            },
        }
    }
}

#[async_trait]
impl LlmClient for OpenAiClient {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        let started = Instant::now();
        let model = self.model().await?;
        let body = request_body(&model, request);
        let url = self.endpoint("chat/completions");
        tracing::debug!(endpoint = %self.shown, model = %model, purpose = %request.purpose, "LLM request");
        let mut post = self.authorized(self.http.post(url)).json(&body);
        // The purpose travels beside the prompt, never in it: a by-hand endpoint routes on it.
        if let Some(p) = purpose::from_header(request.purpose.as_str()) {
            post = post.header(purpose::PURPOSE_HEADER, p);
        }
        let resp = post.send().await.map_err(|e| self.transport_error(e))?;
        let status = resp.status().as_u16();
        let after = retry_after(resp.headers());
        let text = self.read_body(resp).await?;
        if !(200..300).contains(&status) {
            return Err(self.status_error(status, after, &text, &model));
        }
        let mut completion = parse_response(&text, request)?;
        if completion.model.is_empty() {
            completion.model = model;
        }
        completion.elapsed_ms = started.elapsed().as_millis() as u64;
        Ok(completion)
    }

    fn model_id(&self) -> String {
        self.model
            .lock()
            .ok()
            .and_then(|m| m.clone())
            .unwrap_or_else(|| format!("{} (default model)", self.shown))
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

/// `Retry-After` (seconds or an HTTP date) or the non-standard `retry-after-ms`.
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    let v = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(secs) = v.parse::<f64>() {
        return Some(Duration::from_secs_f64(secs.max(0.0)));
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let wait = when.signed_duration_since(chrono::Utc::now());
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

/// The human part of an OpenAI-style error body (`{"error": {"message": …}}`), else the raw text.
fn error_message(body: &str) -> String {
    let v: Option<Value> = serde_json::from_str(body).ok();
    let msg = v.as_ref().and_then(|v| {
        v["error"]["message"]
            .as_str()
            .or_else(|| v["error"].as_str())
            .or_else(|| v["message"].as_str())
            .or_else(|| v["detail"].as_str())
            .map(str::to_string)
    });
    msg.unwrap_or_else(|| body.trim().to_string())
}

fn message_json(m: &Message) -> Value {
    let mut o = json!({ "role": m.role, "content": m.content });
    if !m.tool_calls.is_empty() {
        o["tool_calls"] = m
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
    }
    if m.role == Role::Tool
        && let Some(id) = &m.tool_call_id
    {
        o["tool_call_id"] = json!(id);
    }
    o
}

/// Wraps bare function objects as `{"type": "function", "function": …}`.
pub(crate) fn tool_json(t: &Value) -> Value {
    if t.get("type").is_some() && t.get("function").is_some() {
        t.clone()
    } else {
        json!({ "type": "function", "function": t })
    }
}

/// The chat-completions body for `request`.
pub fn request_body(model: &str, request: &CompletionRequest) -> Value {
    let mut body = json!({
        "model": model,
        "messages": request.messages.iter().map(message_json).collect::<Vec<_>>(),
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    });
    if let Some(seed) = request.seed {
        body["seed"] = json!(seed);
    }
    if !request.tools.is_empty() {
        body["tools"] = request.tools.iter().map(tool_json).collect();
        body["tool_choice"] = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Required => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Function(name) => json!({"type": "function", "function": {"name": name}}),
        };
    }
    match &request.response_format {
        ResponseFormat::Text => {}
        ResponseFormat::JsonObject => body["response_format"] = json!({"type": "json_object"}),
        ResponseFormat::JsonSchema { name, schema } => {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": !open_map(schema)}
            })
        }
    }
    body
}

/// Whether a schema has an object with open keys (`additionalProperties` a schema: a map of currency
/// codes), which OpenAI's strict structured output refuses; such a schema is sent non-strict.
fn open_map(schema: &Value) -> bool {
    match schema {
        Value::Object(m) => {
            m.get("additionalProperties").is_some_and(Value::is_object) || m.values().any(open_map)
        }
        Value::Array(a) => a.iter().any(open_map),
        _ => false,
    }
}

/// Names of the functions offered in `request`.
pub fn tool_names(request: &CompletionRequest) -> Vec<String> {
    request
        .tools
        .iter()
        .filter_map(|t| {
            t["function"]["name"]
                .as_str()
                .or_else(|| t["name"].as_str())
                .map(str::to_string)
        })
        .collect()
}

/// Checks a completion against what was asked: JSON modes must produce JSON (a reply cut at the
/// token cap is `Truncated`, with its text). Tool calls naming a function that was not offered pass:
/// the tool caller answers them as ToolBench does (code 1, "No such function name") and counts them
/// as hallucinated, which is a result about the model, not a failure of the run. Shared by every
/// backend so they fail the same way.
pub fn validate(completion: &Completion, request: &CompletionRequest) -> Result<(), LlmError> {
    if completion.tool_calls.is_empty()
        && request.response_format != ResponseFormat::Text
        && let Err(e) = serde_json::from_str::<Value>(&completion.content)
    {
        if completion.finish_reason.as_deref() == Some("length") {
            return Err(LlmError::Truncated {
                max_tokens: request.max_tokens,
                content: completion.content.clone(),
            });
        }
        let preview: String = completion.content.chars().take(200).collect();
        return Err(LlmError::InvalidResponse(format!(
            "JSON was requested but the reply is not JSON ({e}): {preview}"
        )));
    }
    Ok(())
}

/// Parses a chat-completions response; usage reported by the server wins over local counting.
pub(crate) fn parse_response(
    text: &str,
    request: &CompletionRequest,
) -> Result<Completion, LlmError> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        let preview: String = text.chars().take(200).collect();
        LlmError::InvalidResponse(format!("response body is not JSON ({e}): {preview}"))
    })?;
    let choice = v["choices"]
        .get(0)
        .ok_or_else(|| LlmError::InvalidResponse("response has no choices".into()))?;
    let message = &choice["message"];
    let content = message["content"].as_str().unwrap_or_default().to_string();
    let mut tool_calls = Vec::new();
    if let Some(calls) = message["tool_calls"].as_array() {
        for (i, c) in calls.iter().enumerate() {
            let name = c["function"]["name"].as_str().ok_or_else(|| {
                LlmError::InvalidResponse("tool call without a function name".into())
            })?;
            let arguments = match &c["function"]["arguments"] {
                Value::String(s) => s.clone(),
                Value::Null => "{}".to_string(),
                other => other.to_string(),
            };
            tool_calls.push(ToolCall {
                id: c["id"]
                    .as_str()
                    .map_or_else(|| format!("call_{i}"), str::to_string),
                name: name.to_string(),
                arguments,
            });
        }
    }
    let reported = |k: &str| v["usage"][k].as_u64();
    let usage = match (reported("prompt_tokens"), reported("completion_tokens")) {
        (Some(p), Some(c)) => Usage {
            prompt_tokens: p,
            completion_tokens: c,
        },
        _ => Usage {
            prompt_tokens: count_prompt_tokens(request),
            completion_tokens: count_completion_tokens(&content, &tool_calls),
        },
    };
    let completion = Completion {
        content,
        tool_calls,
        usage,
        model: v["model"].as_str().unwrap_or_default().to_string(),
        finish_reason: choice["finish_reason"].as_str().map(str::to_string),
        elapsed_ms: 0,
        cost_usd: 0.0,
    };
    validate(&completion, request)?;
    Ok(completion)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_wraps_tools_and_formats() {
        let req = CompletionRequest::new("t", vec![Message::user("hi")])
            .with_tools(
                vec![json!({"name": "f", "parameters": {}})],
                ToolChoice::Required,
            )
            .with_json_schema("s", json!({"type": "object"}));
        let body = request_body("m", &req);
        assert_eq!(body["tools"][0]["type"], "function");
        assert_eq!(body["tools"][0]["function"]["name"], "f");
        assert_eq!(body["tool_choice"], "required");
        assert_eq!(body["response_format"]["type"], "json_schema");
    }

    #[test]
    fn unknown_tool_call_is_passed_to_the_agent() {
        let req = CompletionRequest::new("t", vec![Message::user("hi")])
            .with_tools(vec![json!({"name": "f"})], ToolChoice::Auto);
        let body = r#"{"choices":[{"message":{"content":null,"tool_calls":[{"id":"a","function":{"name":"g","arguments":"{}"}}]}}]}"#;
        let c = parse_response(body, &req).unwrap();
        assert_eq!(c.tool_calls[0].name, "g");
    }

    #[test]
    fn json_cut_at_the_token_cap_keeps_its_text() {
        let req = CompletionRequest::new("t", vec![Message::user("hi")])
            .with_json_schema("s", json!({"type": "object"}))
            .with_max_tokens(5);
        let body =
            r#"{"choices":[{"message":{"content":"{\"a\": \"long"},"finish_reason":"length"}]}"#;
        match parse_response(body, &req) {
            Err(LlmError::Truncated {
                max_tokens: 5,
                content,
            }) => assert_eq!(content, "{\"a\": \"long"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn local_count_when_server_reports_none() {
        let req = CompletionRequest::new("t", vec![Message::user("hello world")]);
        let body = r#"{"choices":[{"message":{"content":"hello world"}}]}"#;
        let c = parse_response(body, &req).unwrap();
        assert_eq!(c.usage.completion_tokens, 2);
        assert_eq!(c.usage.prompt_tokens, 9);
    }

    #[tokio::test]
    async fn an_endless_reply_is_refused_not_buffered() {
        use axum::routing::post;
        let huge = "x".repeat(MAX_BODY_BYTES + 1024);
        let app = axum::Router::new().route(
            "/v1/chat/completions",
            post(move || {
                let body = huge.clone();
                async move { body }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let client = OpenAiClient::new(
            &format!("http://{addr}/v1"),
            None,
            Some("m".into()),
            Duration::from_secs(20),
        )
        .unwrap();
        let req = CompletionRequest::new("t", vec![Message::user("hi")]);
        match client.complete(&req).await {
            Err(LlmError::InvalidResponse(m)) => assert!(m.contains("larger than"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
