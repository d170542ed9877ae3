//! An MCP tool result as a tool reply: text (JSON text read as JSON) becomes the `response`; images,
//! audio and embedded binary resources become attachments, which the caller stores as files and
//! names by handle (`tools::resources`); `isError` becomes the reply's `error`.
//!
//! The `response` is the one part itself when the result has one part, else the list of parts; a
//! binary part is shown as `{"type": "image", "mime_type": ..., "file": "<file-1>", "bytes": N}`.
//! `structuredContent` is the response when the result has no binary part.

use base64::Engine;
use serde_json::{Value, json};

use crate::tools::types::Attachment;
use crate::tools::{ReplySource, ToolError, ToolReply};

/// Text over this size (all text parts together) is refused, as `/virtual` replies over 8 MiB are.
pub(crate) const MAX_TEXT_BYTES: usize = crate::tools::http::DEFAULT_MAX_REPLY_BYTES;

/// The reply for a `tools/call` result.
pub(crate) fn reply_of(result: &rmcp::model::CallToolResult) -> Result<ToolReply, ToolError> {
    let mut parts = Vec::with_capacity(result.content.len());
    let mut attachments = Vec::new();
    let mut text_bytes = 0usize;
    for block in &result.content {
        let block = serde_json::to_value(block).map_err(|e| ToolError::BadReply(e.to_string()))?;
        let (part, binary) = part_of(&block)?;
        if let Some(t) = block.get("text").and_then(Value::as_str) {
            text_bytes += t.len();
        }
        if let Some((mime_type, data)) = binary {
            attachments.push(Attachment {
                mime_type,
                data,
                slot: Some(parts.len()),
            });
        }
        parts.push(part);
    }
    if text_bytes > MAX_TEXT_BYTES {
        return Err(ToolError::BadReply(format!(
            "reply text larger than {MAX_TEXT_BYTES} bytes"
        )));
    }
    if result.is_error == Some(true) {
        let error = parts
            .iter()
            .map(|p| match p {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let error = if error.is_empty() {
            "the tool reported an error".to_string()
        } else {
            error
        };
        return Ok(ToolReply::new(
            error,
            Value::String(String::new()),
            Some(ReplySource::Mcp),
        ));
    }
    let response = match (&result.structured_content, attachments.is_empty()) {
        (Some(s), true) => s.clone(),
        _ if parts.len() == 1 => {
            for a in &mut attachments {
                a.slot = None;
            }
            parts.pop().unwrap_or(Value::Null)
        }
        _ if parts.is_empty() => Value::String(String::new()),
        _ => Value::Array(parts),
    };
    let mut reply = ToolReply::new(String::new(), response, Some(ReplySource::Mcp));
    reply.attachments = attachments;
    Ok(reply)
}

/// One content block (as its JSON) as a response part, with its binary data when it has some.
#[allow(clippy::type_complexity)]
fn part_of(block: &Value) -> Result<(Value, Option<(String, Vec<u8>)>), ToolError> {
    let kind = block["type"].as_str().unwrap_or("");
    let mime = |v: &Value| {
        v["mimeType"]
            .as_str()
            .unwrap_or("application/octet-stream")
            .to_string()
    };
    Ok(match kind {
        "text" => (text_value(block["text"].as_str().unwrap_or("")), None),
        "image" | "audio" => {
            let m = mime(block);
            let data = decode(block["data"].as_str().unwrap_or(""))?;
            (json!({"type": kind, "mime_type": m}), Some((m, data)))
        }
        "resource" => {
            let r = &block["resource"];
            let uri = r["uri"].as_str().unwrap_or("");
            match (r["text"].as_str(), r["blob"].as_str()) {
                (Some(text), _) => (json!({"type": "resource", "uri": uri, "text": text}), None),
                (None, Some(blob)) => {
                    let m = mime(r);
                    let data = decode(blob)?;
                    let part = json!({"type": "resource", "uri": uri, "mime_type": m});
                    (part, Some((m, data)))
                }
                (None, None) => (json!({"type": "resource", "uri": uri}), None),
            }
        }
        "resource_link" => (
            json!({"type": "resource_link", "uri": block["uri"], "name": block["name"],
                   "mime_type": block.get("mimeType").cloned().unwrap_or(Value::Null)}),
            None,
        ),
        other => (json!({"type": other}), None),
    })
}

/// Text that is a JSON object or array is read as JSON (servers send JSON as text); other text
/// stays text.
fn text_value(text: &str) -> Value {
    let t = text.trim_start();
    if (t.starts_with('{') || t.starts_with('['))
        && let Ok(v) = serde_json::from_str::<Value>(text)
    {
        return v;
    }
    Value::String(text.to_string())
}

fn decode(data: &str) -> Result<Vec<u8>, ToolError> {
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| ToolError::BadReply(format!("binary content is not valid base64: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock};

    #[test]
    fn text_json_and_binaries_become_a_response_and_attachments() {
        let one = CallToolResult::success(vec![ContentBlock::text(r#"{"text": "HELLO"}"#)]);
        let r = reply_of(&one).unwrap();
        assert_eq!(r.response, json!({"text": "HELLO"}));
        assert_eq!(r.source, Some(ReplySource::Mcp));
        assert!(r.attachments.is_empty());

        let png = base64::engine::general_purpose::STANDARD.encode([137u8, 80, 78, 71]);
        let image = CallToolResult::success(vec![ContentBlock::image(png.clone(), "image/png")]);
        let r = reply_of(&image).unwrap();
        assert_eq!(
            r.response,
            json!({"type": "image", "mime_type": "image/png"})
        );
        assert_eq!(r.attachments[0].slot, None);
        assert_eq!(r.attachments[0].data, vec![137, 80, 78, 71]);

        let both = CallToolResult::success(vec![
            ContentBlock::text("a caption"),
            ContentBlock::audio(png, "audio/wav"),
        ]);
        let r = reply_of(&both).unwrap();
        assert_eq!(r.response[0], "a caption");
        assert_eq!(r.response[1]["type"], "audio");
        assert_eq!(r.attachments[0].slot, Some(1));
    }

    #[test]
    fn errors_and_bad_binaries_are_failed_replies() {
        let err = CallToolResult::error(vec![ContentBlock::text("no such file: /x.png")]);
        let r = reply_of(&err).unwrap();
        assert_eq!(r.error, "no such file: /x.png");
        let bad = CallToolResult::success(vec![ContentBlock::image("%%%", "image/png")]);
        assert!(matches!(reply_of(&bad), Err(ToolError::BadReply(_))));
        let empty = CallToolResult::success(vec![]);
        assert_eq!(reply_of(&empty).unwrap().response, json!(""));
    }
}
