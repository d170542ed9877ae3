//! Observations as ToolBench shows them to the model (ToolBench `toolbench/inference/Downstream_tasks/rapidapi.py`): the Python-`json.dumps` text of
//! the server's reply, its status code, truncation, and the `Finish` pseudo-function.

use serde_json::{Map, Value};

use super::types::Finish;
pub(crate) use super::types::ObservationCode;

/// The error strings a ToolBench server uses, mapped to codes 6–11 by exact match (anything else is 0,
/// which is why code 0 alone does not mean success).
pub const NOT_WORKING_ERROR: &str = "API not working error...";
pub const UNAUTHORIZED_ERROR: &str = "Unauthorized error...";
pub const UNSUBSCRIBED_ERROR: &str = "Unsubscribed error...";
pub const TOO_MANY_REQUESTS_ERROR: &str = "Too many requests error...";
pub const RATE_LIMIT_ERROR: &str = "Rate limit per minute error...";
pub const MESSAGE_ERROR: &str = "Message error...";
pub const TIMEOUT_ERROR: &str = "Timeout error...";
pub const PARSE_ERROR: &str = "Tool input parse error...\n";

/// The status code ToolBench derives from a server reply's `error` string.
pub(crate) fn code_for_error(error: &str) -> ObservationCode {
    match error {
        NOT_WORKING_ERROR => ObservationCode::NotWorking,
        UNAUTHORIZED_ERROR => ObservationCode::Unauthorized,
        UNSUBSCRIBED_ERROR => ObservationCode::Unsubscribed,
        TOO_MANY_REQUESTS_ERROR => ObservationCode::TooManyRequests,
        RATE_LIMIT_ERROR => ObservationCode::RateLimit,
        MESSAGE_ERROR => ObservationCode::Message,
        _ => ObservationCode::Ok,
    }
}

/// `{"error": …, "response": …}` exactly as Python's `json.dumps` prints it (`", "`/`": "` separators,
/// non-ASCII escaped), so observation lengths and truncation points match ToolBench's.
pub fn reply_text(error: &str, response: &Value) -> String {
    reply_text_as(error, response, Ascii::Escape)
}

/// [`reply_text`] with non-ASCII escaped or kept as is.
pub fn reply_text_as(error: &str, response: &Value, ascii: Ascii) -> String {
    let mut out = String::with_capacity(64);
    out.push_str("{\"error\": ");
    dump_str(&mut out, error, ascii);
    out.push_str(", \"response\": ");
    dump(&mut out, response, ascii);
    out.push('}');
    out
}

/// Python `json.dumps` of any JSON value.
pub fn python_dumps(value: &Value) -> String {
    python_dumps_as(value, Ascii::Escape)
}

/// Python `json.dumps` of any JSON value, non-ASCII escaped (`ensure_ascii`, ToolBench's default) or
/// kept as is (`ensure_ascii=False`: the judge reads names as written).
pub fn python_dumps_as(value: &Value, ascii: Ascii) -> String {
    let mut out = String::new();
    dump(&mut out, value, ascii);
    out
}

/// Whether [`python_dumps_as`] escapes non-ASCII characters (Python's `ensure_ascii`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ascii {
    Escape,
    Keep,
}

fn dump(out: &mut String, v: &Value, ascii: Ascii) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => dump_str(out, s, ascii),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dump(out, item, ascii);
            }
            out.push(']');
        }
        Value::Object(map) => dump_map(out, map, ascii),
    }
}

fn dump_map(out: &mut String, map: &Map<String, Value>, ascii: Ascii) {
    out.push('{');
    for (i, (k, item)) in map.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        dump_str(out, k, ascii);
        out.push_str(": ");
        dump(out, item, ascii);
    }
    out.push('}');
}

fn dump_str(out: &mut String, s: &str, ascii: Ascii) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (ascii == Ascii::Escape && (c as u32) > 0x7e) => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// What a `Finish` call amounts to: the observation text, its code and the outcome, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct FinishOutcome {
    pub text: String,
    pub code: ObservationCode,
    pub finish: Option<Finish>,
}

/// Interprets the arguments of a `Finish` call as ToolBench does (`rapidapi.py`): lenient JSON first, then
/// a substring fallback for the half-broken JSON models often write. The texts of the malformed cases
/// are ToolBench's own (not valid JSON), kept so that trajectories read the same.
pub fn parse_finish(arguments: &str) -> FinishOutcome {
    let (return_type, final_answer) = match parse_lenient_object(arguments) {
        Some(obj) => (
            obj.get("return_type").map(value_as_text),
            obj.get("final_answer").map(value_as_text),
        ),
        None => finish_by_substring(arguments),
    };
    let bad = |text: &str| FinishOutcome {
        text: text.to_string(),
        code: ObservationCode::BadFinish,
        finish: None,
    };
    match return_type.as_deref() {
        None => bad("{error:\"must have \"return_type\"\"}"),
        Some("give_up_and_restart") => FinishOutcome {
            text: "{\"response\":\"chose to give up and restart\"}".to_string(),
            code: ObservationCode::GiveUp,
            finish: Some(Finish::GiveUp),
        },
        Some("give_answer") => match final_answer {
            None => bad("{error:\"must have \"final_answer\"\"}"),
            Some(answer) => FinishOutcome {
                text: "{\"response\":\"successfully giving the final answer.\"}".to_string(),
                code: ObservationCode::Answer,
                finish: Some(Finish::Answer(answer)),
            },
        },
        Some(_) => bad("{error:\"\"return_type\" is not a valid choice\"}"),
    }
}

fn value_as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn finish_by_substring(text: &str) -> (Option<String>, Option<String>) {
    let return_type = if text.contains("\"return_type\": \"give_answer\"") {
        Some("give_answer".to_string())
    } else if text.contains("\"return_type\": \"give_up_and_restart\"") {
        Some("give_up_and_restart".to_string())
    } else {
        text.split_once("\"return_type\": \"")
            .and_then(|(_, rest)| rest.split_once("\",").map(|(v, _)| v.to_string()))
    };
    // QUIRK kept from ToolBench: the answer runs to the end of the text, trailing quote and brace included.
    let final_answer = text
        .split_once("\"final_answer\": \"")
        .map(|(_, rest)| rest.to_string());
    (return_type, final_answer)
}

/// Parses a JSON object the way Python's `json.loads(strict=False)` does: raw control characters
/// (typically newlines) inside strings are accepted.
pub fn parse_lenient_object(text: &str) -> Option<Map<String, Value>> {
    // Lone surrogate escapes parse in Python; here they become U+FFFD instead of failing the parse.
    let text = &*crate::toolbench::json_repair::replace_lone_surrogates(text);
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Some(m),
        Ok(_) => None,
        Err(_) => match serde_json::from_str::<Value>(&escape_raw_controls(text)) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        },
    }
}

/// Escapes raw control characters that sit inside JSON strings.
fn escape_raw_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            } else if (c as u32) < 0x20 {
                out.push_str(&format!("\\u{:04x}", c as u32));
                continue;
            }
        } else if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dumps_like_python() {
        let text = reply_text("", &json!({"a": [1, "é"], "b": null}));
        assert_eq!(
            text,
            "{\"error\": \"\", \"response\": {\"a\": [1, \"\\u00e9\"], \"b\": null}}"
        );
        assert_eq!(python_dumps(&json!("😀")), "\"\\ud83d\\ude00\"");
    }

    #[test]
    fn error_strings_map_to_codes() {
        assert_eq!(code_for_error(""), 0);
        assert_eq!(code_for_error(RATE_LIMIT_ERROR), 10);
        assert_eq!(code_for_error(UNAUTHORIZED_ERROR), 7);
        assert_eq!(code_for_error("Rate limit error..."), 0);
    }

    #[test]
    fn finish_variants() {
        let ok = parse_finish(
            r#"{"return_type": "give_answer", "final_answer": "line1
line2"}"#,
        );
        assert_eq!(ok.code, 3);
        assert_eq!(ok.finish, Some(Finish::Answer("line1\nline2".into())));
        assert_eq!(
            parse_finish(r#"{"return_type": "give_up_and_restart"}"#).code,
            4
        );
        assert_eq!(parse_finish(r#"{"return_type": "give_answer"}"#).code, 2);
        assert_eq!(parse_finish(r#"{"final_answer": "x"}"#).code, 2);
        assert_eq!(parse_finish(r#"{"return_type": "maybe"}"#).code, 2);
        let broken =
            parse_finish(r#"{"return_type": "give_answer", "final_answer": "It is 5 "C"}"#);
        assert_eq!(broken.code, 3);
        assert_eq!(broken.finish, Some(Finish::Answer("It is 5 \"C\"}".into())));
    }

    #[test]
    fn lone_surrogate_in_an_answer_is_stored_as_valid_text() {
        let f = parse_finish(
            r#"{"return_type": "give_answer", "final_answer": "a \ud800 b \ud83d\ude00"}"#,
        );
        assert_eq!(f.finish, Some(Finish::Answer("a \u{fffd} b 😀".into())));
        let stored = serde_json::to_string(&json!({ "answer": f.finish })).unwrap();
        let back: Value = serde_json::from_str(&stored).unwrap();
        assert_eq!(back["answer"]["answer"], "a \u{fffd} b 😀");
    }
}
