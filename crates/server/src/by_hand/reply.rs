//! A reader's reply, checked against the request it answers before it is accepted: valid JSON; only
//! offered functions, with arguments that are an object holding the required parameters; exactly one
//! call when one is required; content that is the JSON (matching the schema) the request asks for.
//! Every problem is listed with what to fix, so one more try is enough.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use sum2act_core::llm::json_check;
use sum2act_core::llm::{CompletionRequest, ResponseFormat, ToolChoice};

/// A reply in the reader's format: `{"content": ..., "tool_calls": [{"name": ..., "arguments": {...}}]}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<Call>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    pub name: String,
    pub arguments: Value,
}

/// Parses a JSON reply and checks it against `request`; the error lists every problem.
pub fn parse_json(text: &str, request: &CompletionRequest) -> Result<Reply, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        format!(
            "the reply is not valid JSON ({e}); send one object: {{\"content\": ..., \"tool_calls\": [{{\"name\": ..., \"arguments\": {{...}}}}]}} (for plain text use --text)"
        )
    })?;
    let Value::Object(map) = v else {
        return Err(
            "the reply must be one JSON object with \"content\" and/or \"tool_calls\"".into(),
        );
    };
    let mut problems = Vec::new();
    let reply = shape(map, &mut problems);
    problems.extend(check(&reply, request));
    if problems.is_empty() {
        Ok(reply)
    } else {
        Err(problems.join("\n"))
    }
}

/// A plain-text reply (`--text`): the text is the content; one final newline (a heredoc's) is dropped.
pub fn from_text(text: &str, request: &CompletionRequest) -> Result<Reply, String> {
    let content = text.strip_suffix('\n').unwrap_or(text);
    let reply = Reply {
        content: content.strip_suffix('\r').unwrap_or(content).to_string(),
        tool_calls: Vec::new(),
    };
    let problems = check(&reply, request);
    if problems.is_empty() {
        Ok(reply)
    } else {
        Err(problems.join("\n"))
    }
}

/// The reply's fields, with problems of form (not of fit to the request).
fn shape(mut map: Map<String, Value>, problems: &mut Vec<String>) -> Reply {
    let content = match map.remove("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        // A JSON reply may be given as the value itself: no escaping inside a string.
        Some(v) => v.to_string(),
    };
    let mut tool_calls = Vec::new();
    match map.remove("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (i, c) in calls.into_iter().enumerate() {
                if let Some(call) = call(i, c, problems) {
                    tool_calls.push(call);
                }
            }
        }
        Some(_) => {
            problems.push("\"tool_calls\" must be a list of {\"name\", \"arguments\"}".into())
        }
    }
    for k in map.keys() {
        problems.push(format!(
            "unknown key \"{k}\": a reply has only \"content\" and \"tool_calls\""
        ));
    }
    Reply {
        content,
        tool_calls,
    }
}

fn call(i: usize, c: Value, problems: &mut Vec<String>) -> Option<Call> {
    let Some(name) = c["name"].as_str().map(str::to_string) else {
        problems.push(format!("tool_calls[{i}]: needs \"name\" (a string)"));
        return None;
    };
    let arguments = match &c["arguments"] {
        Value::Null => Some(Value::Object(Map::new())),
        v @ Value::Object(_) => Some(v.clone()),
        // An arguments string (OpenAI's wire form) is fine when it holds an object.
        Value::String(s) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_object),
        _ => None,
    };
    let Some(arguments) = arguments else {
        problems.push(format!(
            "tool_calls[{i}].arguments must be a JSON object like {{\"param\": \"value\"}}"
        ));
        return None;
    };
    if let Some(extra) = c.as_object().and_then(|o| {
        o.keys()
            .find(|k| !matches!(k.as_str(), "name" | "arguments"))
            .cloned()
    }) {
        problems.push(format!(
            "tool_calls[{i}]: unknown key \"{extra}\" (a call has \"name\" and \"arguments\")"
        ));
    }
    Some(Call { name, arguments })
}

/// Problems of fit between `reply` and what `request` asks for.
pub fn check(reply: &Reply, request: &CompletionRequest) -> Vec<String> {
    let mut problems = calls(reply, request);
    if reply.tool_calls.is_empty() {
        problems.extend(content(&reply.content, &request.response_format));
    }
    problems
}

fn calls(reply: &Reply, request: &CompletionRequest) -> Vec<String> {
    let offered: Vec<&Value> = request
        .tools
        .iter()
        .map(|t| t.get("function").unwrap_or(t))
        .collect();
    let names: Vec<&str> = offered.iter().filter_map(|f| f["name"].as_str()).collect();
    let n = reply.tool_calls.len();
    let mut problems = Vec::new();
    if n > 0 && offered.is_empty() {
        return vec!["this request offers no functions: reply with \"content\" only".into()];
    }
    match &request.tool_choice {
        ToolChoice::None if n > 0 => {
            problems.push("tool_choice is none: do not call a function, reply with \"content\"".into())
        }
        ToolChoice::Required | ToolChoice::Function(_) if n != 1 && !offered.is_empty() => {
            problems.push(format!(
                "exactly one function call is required, the reply has {n}: put one entry in \"tool_calls\""
            ))
        }
        _ => {}
    }
    for (i, c) in reply.tool_calls.iter().enumerate() {
        if let ToolChoice::Function(forced) = &request.tool_choice
            && c.name != *forced
        {
            problems.push(format!(
                "tool_calls[{i}].name: the call must be `{forced}`, not `{}`",
                c.name
            ));
            continue;
        }
        let Some(f) = offered.iter().find(|f| f["name"].as_str() == Some(&c.name)) else {
            problems.push(format!(
                "tool_calls[{i}].name: `{}` is not offered (offered: {})",
                c.name,
                names.join(", ")
            ));
            continue;
        };
        for p in f["parameters"]["required"].as_array().into_iter().flatten() {
            if let Some(p) = p.as_str()
                && c.arguments.get(p).is_none()
            {
                problems.push(format!(
                    "tool_calls[{i}].arguments: missing required parameter \"{p}\" of `{}`",
                    c.name
                ));
            }
        }
    }
    problems
}

fn content(content: &str, format: &ResponseFormat) -> Vec<String> {
    if content.trim().is_empty() {
        return vec![
            "the reply is empty: give \"content\" (or a function call where one is offered)".into(),
        ];
    }
    let schema = match format {
        ResponseFormat::Text => return Vec::new(),
        ResponseFormat::JsonObject => None,
        ResponseFormat::JsonSchema { schema, .. } => Some(schema),
    };
    let value: Value = match serde_json::from_str(content) {
        Ok(v) => v,
        Err(e) => {
            return vec![format!(
                "JSON is required but the content is not JSON ({e}); give \"content\" as the JSON value itself"
            )];
        }
    };
    match schema {
        None if !value.is_object() => vec!["the content must be a JSON object".into()],
        None => Vec::new(),
        Some(s) => json_check::problems(&value, s)
            .into_iter()
            .map(|p| format!("content does not match the schema: {p}"))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sum2act_core::llm::Message;

    fn with_tool(choice: ToolChoice) -> CompletionRequest {
        CompletionRequest::new("t", vec![Message::user("q")]).with_tools(
            vec![
                json!({"name": "f", "parameters": {"type": "object", "required": ["city"]}}),
                json!({"name": "Finish", "parameters": {}}),
            ],
            choice,
        )
    }

    #[test]
    fn accepts_a_call_and_json_given_as_a_value() {
        let r = parse_json(
            r#"{"content": "", "tool_calls": [{"name": "f", "arguments": {"city": "Lisbon"}}]}"#,
            &with_tool(ToolChoice::Required),
        )
        .unwrap();
        assert_eq!(r.tool_calls[0].arguments, json!({"city": "Lisbon"}));
        let schema = CompletionRequest::new("t", vec![Message::user("q")])
            .with_json_schema("s", json!({"type": "object", "required": ["ok"]}));
        let r = parse_json(r#"{"content": {"ok": true}}"#, &schema).unwrap();
        assert_eq!(r.content, r#"{"ok":true}"#);
        assert!(from_text("{\"ok\": 1}\n", &schema).is_ok());
    }

    #[test]
    fn refusals_say_what_to_fix() {
        let cases = [
            (ToolChoice::Required, "not json", "not valid JSON"),
            (
                ToolChoice::Required,
                r#"{"content": "hi"}"#,
                "exactly one function call is required, the reply has 0",
            ),
            (
                ToolChoice::Required,
                r#"{"tool_calls": [{"name": "g"}]}"#,
                "`g` is not offered (offered: f, Finish)",
            ),
            (
                ToolChoice::Auto,
                r#"{"tool_calls": [{"name": "f", "arguments": {}}]}"#,
                "missing required parameter \"city\" of `f`",
            ),
            (
                ToolChoice::Auto,
                r#"{"tool_calls": [{"name": "f", "arguments": [1]}]}"#,
                "arguments must be a JSON object",
            ),
            (
                ToolChoice::Function("Finish".into()),
                r#"{"tool_calls": [{"name": "f", "arguments": {"city": "x"}}]}"#,
                "must be `Finish`, not `f`",
            ),
            (
                ToolChoice::None,
                r#"{"tool_calls": [{"name": "f", "arguments": {"city": "x"}}]}"#,
                "tool_choice is none",
            ),
            (
                ToolChoice::Auto,
                r#"{"content": "x", "tool_call": []}"#,
                "unknown key \"tool_call\"",
            ),
            (ToolChoice::Auto, r#"{"content": ""}"#, "the reply is empty"),
        ];
        for (choice, reply, expect) in cases {
            let err = parse_json(reply, &with_tool(choice)).unwrap_err();
            assert!(err.contains(expect), "{reply}: {err}");
        }
        let schema = CompletionRequest::new("t", vec![Message::user("q")])
            .with_json_schema("s", json!({"type": "object", "required": ["ok"], "properties": {"ok": {"type": "boolean"}}}));
        let err = parse_json(r#"{"content": {"ok": "yes"}}"#, &schema).unwrap_err();
        assert!(err.contains("$.ok: expected boolean, got string"), "{err}");
        let err = from_text("plain words", &schema).unwrap_err();
        assert!(err.contains("not JSON"), "{err}");
        let object = CompletionRequest {
            response_format: ResponseFormat::JsonObject,
            ..CompletionRequest::new("t", vec![Message::user("q")])
        };
        assert!(
            parse_json(r#"{"content": [1]}"#, &object)
                .unwrap_err()
                .contains("JSON object")
        );
    }
}
