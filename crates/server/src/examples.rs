//! The recorded examples an LLM simulator is shown: successful replies only (an error reply would be
//! copied as the API's shape), each one whole. StableToolBench cuts its examples' text at 2,048
//! characters, which leaves the last one cut mid-JSON; here an example that does not fit is shown with its
//! lists shortened to their first items (said in the prompt), or left out, never cut.

use serde_json::{Value, json};

use super::pyrepr::decode_recorded;
use super::simulate::reply_is_error;

/// Characters of examples in a prompt, at most (StableToolBench's budget).
pub const MAX_EXAMPLES_CHARS: usize = 2048;
/// Examples shown, at most.
pub const MAX_EXAMPLES: usize = 5;
/// Items a list keeps in a shortened example.
const SHORT_LIST: usize = 2;

/// The examples text for the prompt.
pub fn render(recorded: &[(String, Value)]) -> String {
    let mut shown = Vec::new();
    let mut errors = 0;
    let mut shortened = false;
    let mut used = 2;
    for (key, stored) in recorded {
        if shown.len() >= MAX_EXAMPLES {
            break;
        }
        let error = stored.get("error").and_then(Value::as_str).unwrap_or("");
        let reply = decode_recorded(stored.get("response").unwrap_or(&Value::Null));
        if !error.is_empty() || reply_is_error(&reply) || is_blank(&reply) {
            errors += 1;
            continue;
        }
        let arguments = serde_json::from_str::<Value>(key).unwrap_or(Value::String(key.clone()));
        let whole = json!({"arguments": arguments, "reply": reply});
        let text = whole.to_string();
        let (text, short) = if used + text.len() <= MAX_EXAMPLES_CHARS {
            (text, false)
        } else {
            let cut = json!({"arguments": arguments, "reply": shorten(&reply)}).to_string();
            if used + cut.len() > MAX_EXAMPLES_CHARS {
                continue;
            }
            (cut, true)
        };
        used += text.len() + 1;
        shortened |= short;
        shown.push(text);
    }
    let mut out = format!("[{}]", shown.join(","));
    if shortened {
        out.push_str(&format!(
            "\n(lists in some examples are shortened to their first {SHORT_LIST} items; the real replies are longer)"
        ));
    }
    if errors > 0 {
        out.push_str(&format!(
            "\n({errors} recorded replies of this API are errors or empty and are not shown)"
        ));
    }
    out
}

fn is_blank(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// The value with every list cut to its first items (the JSON stays whole).
fn shorten(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().take(SHORT_LIST).map(shorten).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), shorten(x))).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(args: &str, response: Value) -> (String, Value) {
        (args.to_string(), json!({"error": "", "response": response}))
    }

    #[test]
    fn only_whole_successful_examples_are_shown() {
        let long: Vec<Value> = (0..60)
            .map(|i| json!({"title": format!("Film number {i}"), "year": 2000 + i}))
            .collect();
        let recorded = vec![
            rec(
                r#"{"genre":"x"}"#,
                json!("{'message': 'genre must be an integer: x'}"),
            ),
            rec(
                r#"{"genre":"27"}"#,
                json!(json!({"result": long}).to_string()),
            ),
            rec(
                r#"{"genre":"53"}"#,
                json!({"result": [{"title": "Bridge", "year": 2011}]}),
            ),
            (
                r#"{"a":1}"#.to_string(),
                json!({"error": "Timeout error...", "response": ""}),
            ),
        ];
        let text = render(&recorded);
        let (list, notes) = text.split_once('\n').unwrap_or((&text, ""));
        let parsed: Vec<Value> = serde_json::from_str(list).expect("whole JSON");
        assert_eq!(parsed.len(), 2, "{text}");
        assert_eq!(
            parsed[0]["reply"]["result"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(parsed[1]["reply"]["result"][0]["title"], "Bridge");
        assert!(!text.contains("must be an integer"), "{text}");
        assert!(
            notes.contains("shortened") && notes.contains("2 recorded replies"),
            "{notes}"
        );
        assert!(list.len() <= MAX_EXAMPLES_CHARS);
    }
}
