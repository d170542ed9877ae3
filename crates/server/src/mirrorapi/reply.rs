//! MirrorAPI's reply → a tool reply. The model answers `{"error": "", "response": "<text>"}`, in CoT mode
//! with a `mechanism_of_the_api` explanation first, and `response` is usually the real API's body as
//! text: Python's `str()` of a dict (as StableToolBench's cache stores it) or JSON. About half of its
//! outputs are not valid JSON outside (quotes inside `response` left unescaped, or cut off at the token
//! limit), so, like StableToolBench's `extract_attributes_json`, a strict parse is tried first and then
//! the fields are read leniently; the response text is then decoded into JSON where it parses.

use serde_json::{Map, Value};

use crate::pyrepr;
use crate::simulate::parse_partial_json;

/// Longest model output read (2,048 tokens are about 8 KiB; anything far beyond is not a reply).
pub const MAX_REPLY_BYTES: usize = 256 * 1024;
/// Longest error text kept.
const MAX_ERROR_CHARS: usize = 1024;
/// Braces tried as the start of the reply object when prose comes before it.
const MAX_STARTS: usize = 64;

/// A parsed MirrorAPI reply.
#[derive(Debug, Clone, PartialEq)]
pub struct MirrorReply {
    pub error: String,
    pub response: Value,
    /// The CoT mode's `mechanism_of_the_api`, or prose before the JSON object.
    pub explanation: Option<String>,
}

/// Why a reply was not usable (the server then falls back to the schema simulator).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReplyError {
    #[error("the MirrorAPI reply is {0} bytes, over the {MAX_REPLY_BYTES}-byte limit")]
    TooLong(usize),
    #[error("the MirrorAPI reply has no `response` field")]
    NoResponse,
    #[error("the MirrorAPI reply is empty (no error and no response)")]
    Empty,
}

/// Parses the model's text: strict JSON (anywhere after leading prose), else the lenient field reading.
pub fn parse_reply(text: &str) -> Result<MirrorReply, ReplyError> {
    if text.len() > MAX_REPLY_BYTES {
        return Err(ReplyError::TooLong(text.len()));
    }
    let body = strip_fences(text);
    let (mut fields, prose) = match strict_object(body) {
        Some((obj, start)) => (obj, body[..start].trim()),
        None => (lenient_fields(body)?, ""),
    };
    let response = fields.remove("response").ok_or(ReplyError::NoResponse)?;
    let error = match fields.remove("error") {
        Some(Value::String(s)) => s,
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let explanation = match fields.remove("mechanism_of_the_api") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s),
        _ => (!prose.is_empty()).then(|| prose.to_string()),
    };
    let reply = MirrorReply {
        error: error.trim().chars().take(MAX_ERROR_CHARS).collect(),
        response: decode_response(response),
        explanation,
    };
    if reply.error.is_empty() && is_empty(&reply.response) {
        return Err(ReplyError::Empty);
    }
    Ok(reply)
}

fn strip_fences(text: &str) -> &str {
    let t = text.trim();
    let t = match t.find("```") {
        Some(i) => {
            let after = &t[i + 3..];
            let after = after.strip_prefix("json").unwrap_or(after);
            after.rfind("```").map_or(after, |j| &after[..j])
        }
        None => t,
    };
    t.trim()
}

/// The first JSON object with a `response` key that parses strictly, and where it starts.
fn strict_object(text: &str) -> Option<(Map<String, Value>, usize)> {
    text.match_indices('{').take(MAX_STARTS).find_map(|(i, _)| {
        let mut values = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(Value::Object(obj))) if obj.contains_key("response") => Some((obj, i)),
            _ => None,
        }
    })
}

/// The fields of a reply that is not valid JSON: `"error": "<up to the next \",>"` and everything
/// after `"response":`, with the closing quote and brace of the outer object removed.
fn lenient_fields(text: &str) -> Result<Map<String, Value>, ReplyError> {
    let mut fields = Map::new();
    let (_, rest) = after_key(text, "response").ok_or(ReplyError::NoResponse)?;
    let head = &text[..text.len() - rest.len()];
    if let Some((_, e)) = after_key(head, "mechanism_of_the_api") {
        fields.insert(
            "mechanism_of_the_api".into(),
            Value::String(quoted_prefix(e)),
        );
    }
    if let Some((_, e)) = after_key(head, "error") {
        fields.insert("error".into(), Value::String(quoted_prefix(e)));
    }
    fields.insert("response".into(), raw_value(rest));
    Ok(fields)
}

/// The text after `"key"` and its colon (and spaces).
fn after_key<'a>(text: &'a str, key: &str) -> Option<(usize, &'a str)> {
    let needle = format!("\"{key}\"");
    let at = text.find(&needle)?;
    let rest = text[at + needle.len()..].trim_start();
    let rest = rest.strip_prefix(':')?.trim_start();
    Some((at, rest))
}

/// A field's string value read up to the quote that ends it before the next field (`",`), or to the
/// end of the text; unescaped where it is valid JSON string content.
fn quoted_prefix(text: &str) -> String {
    let Some(inner) = text.strip_prefix('"') else {
        return String::new();
    };
    let end = inner
        .match_indices('"')
        .find(|(i, _)| inner[i + 1..].trim_start().starts_with(','))
        .map_or(inner.len(), |(i, _)| i);
    unescape(&inner[..end])
}

/// Everything after `"response":`: a quoted text (whose inner quotes may be unescaped) up to the end,
/// less the outer object's closing quote and brace; or a bare JSON value.
fn raw_value(rest: &str) -> Value {
    let rest = rest.trim_end();
    let Some(inner) = rest.strip_prefix('"') else {
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        if let Some(Ok(v)) = values.next() {
            return v;
        }
        let without_brace = rest.strip_suffix('}').unwrap_or(rest);
        return parse_partial_json(without_brace)
            .unwrap_or_else(|| Value::String(without_brace.trim().to_string()));
    };
    let inner = inner.strip_suffix('}').map_or(inner, str::trim_end);
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    Value::String(unescape(inner))
}

/// JSON string escapes decoded when the text is valid string content; otherwise the text as it is.
fn unescape(raw: &str) -> String {
    serde_json::from_str::<String>(&format!("\"{raw}\"")).unwrap_or_else(|_| raw.to_string())
}

/// A response given as text → the JSON it holds (JSON, then a Python literal, then JSON cut off at the
/// token limit, repaired); other text stays text, since some APIs answer with plain text.
pub fn decode_response(v: Value) -> Value {
    let Value::String(s) = &v else {
        return v;
    };
    let t = s.trim();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return v;
    }
    if let Ok(parsed) = serde_json::from_str::<Value>(t) {
        return parsed;
    }
    if let Ok(parsed) = pyrepr::parse(t) {
        return parsed;
    }
    if t.contains('"')
        && let Some(repaired) = parse_partial_json(t)
    {
        return repaired;
    }
    v
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_reply_with_a_python_repr_response() {
        let r = parse_reply(
            "{\n    \"error\": \"\",\n    \"response\": \"{'items': [{'id': 7, 'ok': True}], 'next': None}\"\n}",
        )
        .unwrap();
        assert_eq!(r.error, "");
        assert_eq!(
            r.response,
            json!({"items": [{"id": 7, "ok": true}], "next": null})
        );
        assert_eq!(r.explanation, None);
    }

    #[test]
    fn unescaped_inner_quotes_are_read_leniently() {
        let r = parse_reply(
            "{\"error\": \"\", \"response\": \"{\"status\":0,\"langs\":[\"en\",\"fr\"]}\"\n}",
        )
        .unwrap();
        assert_eq!(r.response, json!({"status": 0, "langs": ["en", "fr"]}));
    }

    #[test]
    fn cot_explanation_is_split_from_the_response() {
        let text = "{\"mechanism_of_the_api\": \"It looks the \"city\" up in a table.\", \
                    \"error\": \"\", \"response\": \"{\"city\": \"Oslo\", \"temp_c\": 4}\"}";
        let r = parse_reply(text).unwrap();
        assert_eq!(r.response, json!({"city": "Oslo", "temp_c": 4}));
        assert_eq!(
            r.explanation.as_deref(),
            Some("It looks the \"city\" up in a table.")
        );
        let strict =
            json!({"mechanism_of_the_api": "Reads a table.", "error": "", "response": {"n": 1}});
        let r = parse_reply(&format!("Sure. Here it is:\n```json\n{strict}\n```")).unwrap();
        assert_eq!(r.response, json!({"n": 1}));
        assert_eq!(r.explanation.as_deref(), Some("Reads a table."));
        let r = parse_reply(&format!(
            "The API sums its inputs. {}",
            json!({"error": "", "response": "3"})
        ))
        .unwrap();
        assert_eq!(r.response, json!("3"));
        assert_eq!(r.explanation.as_deref(), Some("The API sums its inputs."));
    }

    #[test]
    fn cut_off_replies_keep_what_was_written() {
        let r = parse_reply(
            "{\"error\": \"\", \"response\": \"{\\\"a\\\": [1, 2, {\\\"b\\\": \\\"x\\\"}, \\\"ht",
        )
        .unwrap();
        assert_eq!(r.response, json!({"a": [1, 2, {"b": "x"}]}));
        let r =
            parse_reply("{\"error\": \"\", \"response\": \"{'a': [1, 2, 'https:/\"\n}").unwrap();
        assert_eq!(
            r.response,
            json!("{'a': [1, 2, 'https:/"),
            "an unreadable cut-off stays text"
        );
    }

    #[test]
    fn errors_and_text_responses_pass_through() {
        let r = parse_reply("{\"error\": \"Tool input parse error...\\n\", \"response\": \"\"}")
            .unwrap();
        assert_eq!(r.error, "Tool input parse error...");
        let r =
            parse_reply("{\"error\": \"\", \"response\": \"The word has 5 letters.\"}").unwrap();
        assert_eq!(r.response, json!("The word has 5 letters."));
    }

    #[test]
    fn malformed_or_empty_replies_are_refused() {
        assert_eq!(
            parse_reply("I cannot help with that."),
            Err(ReplyError::NoResponse)
        );
        assert_eq!(
            parse_reply("{\"error\": \"\"}"),
            Err(ReplyError::NoResponse)
        );
        assert_eq!(
            parse_reply("{\"error\": \"\", \"response\": \"\"}"),
            Err(ReplyError::Empty)
        );
        assert_eq!(
            parse_reply("{\"error\": \"\", \"response\": {}}"),
            Err(ReplyError::Empty)
        );
        let huge = format!(
            "{{\"error\": \"\", \"response\": \"{}\"}}",
            "x".repeat(MAX_REPLY_BYTES)
        );
        assert!(matches!(parse_reply(&huge), Err(ReplyError::TooLong(_))));
    }
}
