//! Reading an action out of whatever a model wrote: a native tool call, our JSON action object (possibly
//! wrapped in prose or a code fence), or ReAct's `Action:` / `Action Input:` text. Small models are
//! sloppy; the parser is forgiving about form and strict about substance (a tool name must be present).

use serde_json::Value;

use crate::llm::Completion;
pub use crate::toolbench::json_repair::{close_json, replace_lone_surrogates};

/// An action chosen by a model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Action {
    pub thought: String,
    pub name: String,
    /// The arguments as a JSON text (what the tool caller receives).
    pub arguments: String,
}

/// Extracts the action from a completion. The error text is shown to the model when it is asked again.
pub fn action(c: &Completion) -> Result<Action, String> {
    if let Some(call) = c.tool_calls.first() {
        return Ok(Action {
            thought: c.content.trim().to_string(),
            name: call.name.trim().to_string(),
            arguments: normalise_arguments(&call.arguments),
        });
    }
    action_from_text(&c.content)
}

/// The reply's native function calls after the first (`action` reads the first), in order.
pub fn further_actions(c: &Completion) -> Vec<Action> {
    c.tool_calls
        .iter()
        .skip(1)
        .map(|call| Action {
            thought: String::new(),
            name: call.name.trim().to_string(),
            arguments: normalise_arguments(&call.arguments),
        })
        .filter(|a| !a.name.is_empty())
        .collect()
}

/// Parses our JSON action format or ReAct's text format.
pub fn action_from_text(text: &str) -> Result<Action, String> {
    let fixed = replace_lone_surrogates(text);
    let from_json = first_json_object(&fixed).map(|v| action_from_json(&v, text));
    if let Some(Ok(a)) = from_json {
        return Ok(a);
    }
    if let Some(a) = react_text(text) {
        return Ok(a);
    }
    if let Some(Err(e)) = from_json {
        return Err(e);
    }
    if text.trim().is_empty() {
        Err("the reply was empty".to_string())
    } else {
        Err("no JSON object with a \"name\" field was found".to_string())
    }
}

fn action_from_json(v: &Value, raw: &str) -> Result<Action, String> {
    let name = ["name", "action", "function", "tool"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| "the JSON object has no \"name\" field".to_string())?;
    let args = ["arguments", "args", "action_input", "parameters", "input"]
        .iter()
        .find_map(|k| v.get(*k))
        .cloned()
        .unwrap_or(Value::Object(Default::default()));
    let arguments = match args {
        Value::String(s) => normalise_arguments(&s),
        Value::Null => "{}".to_string(),
        other => other.to_string(),
    };
    let thought = v
        .get("thought")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| prose_before_json(raw));
    Ok(Action {
        thought: thought.trim().to_string(),
        name: name.to_string(),
        arguments,
    })
}

/// `Thought: … Action: name Action Input: {…}`.
fn react_text(text: &str) -> Option<Action> {
    let a = text.find("Action:")?;
    let after = &text[a + "Action:".len()..];
    let (name, input) = match after.find("Action Input:") {
        Some(i) => (&after[..i], &after[i + "Action Input:".len()..]),
        None => (after, ""),
    };
    let name = name.trim().lines().next()?.trim().to_string();
    if name.is_empty() {
        return None;
    }
    let thought = text[..a]
        .trim()
        .trim_start_matches("Thought:")
        .trim()
        .to_string();
    let arguments = first_json_object(input)
        .map(|v| v.to_string())
        .unwrap_or_else(|| normalise_arguments(input.trim()));
    Some(Action {
        thought,
        name,
        arguments,
    })
}

fn prose_before_json(raw: &str) -> String {
    raw.find('{')
        .map(|i| raw[..i].trim().to_string())
        .unwrap_or_default()
}

/// Arguments text as sent: valid JSON objects are re-serialised compactly *in the model's key order*
/// (StableToolBench keys its cache by Python's `str(dict)` of the arguments in that order), anything
/// else is passed through so the tool caller can report it as malformed. Lone UTF-16 surrogate escapes
/// (which no Rust string can hold) become U+FFFD first, so such an object still parses. Comparisons use
/// [`call_key`].
pub fn normalise_arguments(raw: &str) -> String {
    let t = raw.trim();
    if t.is_empty() {
        return "{}".to_string();
    }
    let fixed = replace_lone_surrogates(t);
    match serde_json::from_str::<Value>(&fixed) {
        Ok(v @ Value::Object(_)) => v.to_string(),
        _ => first_json_object(&fixed)
            .map(|v| v.to_string())
            .unwrap_or_else(|| t.to_string()),
    }
}

/// The arguments' identity for repeat detection: sorted-key canonical JSON when they are an object, so
/// `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same call; the trimmed text otherwise.
pub(crate) fn call_key(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments.trim()) {
        Ok(v @ Value::Object(_)) => crate::tools::args::canonical_json(&v),
        _ => arguments.trim().to_string(),
    }
}

/// Start positions tried by `first_json_object`: each try scans to the end of the text, so a reply
/// made of thousands of unclosed braces would otherwise cost quadratic time.
const MAX_OBJECT_STARTS: usize = 64;

/// The first balanced `{…}` in `text` that parses as a JSON object (code fences and prose around it are
/// ignored). Only the first `MAX_OBJECT_STARTS` opening braces are tried.
pub fn first_json_object(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut start = 0;
    for _ in 0..MAX_OBJECT_STARTS {
        let begin = start + text[start..].find('{')?;
        if let Some(end) = balanced_end(bytes, begin)
            && let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(&text[begin..=end])
        {
            return Some(v);
        }
        start = begin + 1;
    }
    None
}

/// A `Finish` action read out of a reply that was cut before its JSON closed (the token cap): the
/// open strings and brackets are closed, so the answer is kept up to the cut. `None` when the cut
/// reply is not a `Finish` with a `give_answer` (a cut tool call is not run: its arguments are cut).
pub fn salvage_finish(text: &str) -> Option<Action> {
    let begin = text.find('{')?;
    let closed = close_json(&text[begin..])?;
    let v: Value = serde_json::from_str(&replace_lone_surrogates(&closed)).ok()?;
    let action = action_from_json(&v, text).ok()?;
    let args: Value = serde_json::from_str(&action.arguments).ok()?;
    (action.name == crate::toolbench::FINISH
        && args["return_type"] == "give_answer"
        && args["final_answer"].is_string())
    .then_some(action)
}

/// Index of the `}` closing the `{` at `begin`, skipping braces inside strings.
fn balanced_end(bytes: &[u8], begin: usize) -> Option<usize> {
    let (mut depth, mut in_str, mut escaped) = (0usize, false, false);
    for (i, &b) in bytes.iter().enumerate().skip(begin) {
        if in_str {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;

    #[test]
    fn native_tool_call_wins() {
        let c = Completion {
            content: "checking".into(),
            tool_calls: vec![ToolCall {
                id: "1".into(),
                name: "f".into(),
                arguments: "{\"b\": 1, \"a\": 2}".into(),
            }],
            ..Completion::default()
        };
        let a = action(&c).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.name, "f");
        assert_eq!(a.arguments, "{\"b\":1,\"a\":2}");
        assert_eq!(a.thought, "checking");
    }

    #[test]
    fn json_in_prose_and_fences() {
        let text = "Sure!\n```json\n{\"thought\": \"get it {now}\", \"name\": \"w\", \"arguments\": {\"city\": \"Paris\"}}\n```";
        let a = action_from_text(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.name, "w");
        assert_eq!(a.arguments, "{\"city\":\"Paris\"}");
        assert_eq!(a.thought, "get it {now}");
    }

    #[test]
    fn aliases_and_string_arguments() {
        let a = action_from_text("{\"action\": \"w\", \"action_input\": \"{\\\"q\\\": 1}\"}")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((a.name.as_str(), a.arguments.as_str()), ("w", "{\"q\":1}"));
    }

    #[test]
    fn react_text_format() {
        let a = action_from_text(
            "Thought: need data\nAction: search_for_x\nAction Input: {\"q\": \"cats\"}",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.name, "search_for_x");
        assert_eq!(a.thought, "need data");
        assert_eq!(a.arguments, "{\"q\":\"cats\"}");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(action_from_text("").is_err());
        assert!(action_from_text("I think the answer is 42").is_err());
        assert!(action_from_text("{\"thought\": \"no name\"}").is_err());
        assert!(action_from_text("{{{{").is_err());
        assert_eq!(normalise_arguments("not json"), "not json");
    }

    #[test]
    fn arguments_keep_the_models_order_and_compare_by_content() {
        let raw = r#"{"zeta": 1, "alpha": {"y": 2, "x": [3]}}"#;
        assert_eq!(
            normalise_arguments(raw),
            r#"{"zeta":1,"alpha":{"y":2,"x":[3]}}"#
        );
        let c = Completion {
            tool_calls: vec![ToolCall {
                id: "a".into(),
                name: "f".into(),
                arguments: raw.into(),
            }],
            ..Completion::default()
        };
        assert_eq!(
            action(&c).unwrap().arguments,
            r#"{"zeta":1,"alpha":{"y":2,"x":[3]}}"#
        );
        let text = r#"{"name": "f", "arguments": {"b": 1, "a": 2}}"#;
        assert_eq!(
            action_from_text(text).unwrap().arguments,
            r#"{"b":1,"a":2}"#
        );
        assert_eq!(
            action_from_text("Action: f\nAction Input: {\"b\": 1, \"a\": 2}")
                .unwrap()
                .arguments,
            r#"{"b":1,"a":2}"#
        );
        assert_eq!(
            call_key(r#"{"b":1,"a":2}"#),
            call_key(r#"{"a": 2, "b": 1}"#)
        );
        assert_ne!(call_key(r#"{"a":1}"#), call_key(r#"{"a":2}"#));
    }
}
