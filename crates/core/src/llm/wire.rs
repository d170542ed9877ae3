//! The OpenAI chat-completions wire format as a server reads it: a request body into a
//! [`CompletionRequest`] (the inverse of `openai::request_body`) and a [`Completion`] into a response
//! body. `serve-llm` speaks it; a replay keys requests by it (`replay::wire_key`).

use serde_json::{Value, json};

use super::purpose::Purpose;
use super::{Completion, CompletionRequest, Message, ResponseFormat, Role, ToolCall, ToolChoice};

/// Parses an OpenAI chat-completions body. Errors name the offending field.
pub fn parse_request(body: &Value) -> Result<CompletionRequest, String> {
    if body["stream"].as_bool() == Some(true) {
        return Err("`stream`: streaming is not supported; send stream=false".into());
    }
    let messages = body["messages"]
        .as_array()
        .ok_or("`messages` must be an array of {role, content}")?
        .iter()
        .enumerate()
        .map(|(i, m)| parse_message(i, m))
        .collect::<Result<Vec<_>, _>>()?;
    if messages.is_empty() {
        return Err("`messages` is empty".into());
    }
    let tools: Vec<Value> = match &body["tools"] {
        Value::Null => Vec::new(),
        Value::Array(a) => a
            .iter()
            .map(|t| t.get("function").unwrap_or(t).clone())
            .collect(),
        _ => return Err("`tools` must be an array".into()),
    };
    let tool_choice = match &body["tool_choice"] {
        Value::Null => ToolChoice::Auto,
        Value::String(s) => match s.as_str() {
            "auto" => ToolChoice::Auto,
            "required" | "any" => ToolChoice::Required,
            "none" => ToolChoice::None,
            other => return Err(format!("`tool_choice`: unknown value {other:?}")),
        },
        v => match v["function"]["name"].as_str() {
            Some(name) => ToolChoice::Function(name.to_string()),
            None => return Err("`tool_choice` object needs function.name".into()),
        },
    };
    let rf = &body["response_format"];
    let response_format = match rf["type"].as_str() {
        None | Some("text") => ResponseFormat::Text,
        Some("json_object") => ResponseFormat::JsonObject,
        Some("json_schema") => {
            let spec = &rf["json_schema"];
            let schema = spec
                .get("schema")
                .cloned()
                .ok_or("`response_format.json_schema.schema` is missing")?;
            ResponseFormat::JsonSchema {
                name: spec["name"].as_str().unwrap_or("response").to_string(),
                schema,
            }
        }
        Some(other) => return Err(format!("`response_format.type`: unknown value {other:?}")),
    };
    let max_tokens = body["max_completion_tokens"]
        .as_u64()
        .or_else(|| body["max_tokens"].as_u64())
        .unwrap_or(512)
        .min(u64::from(u32::MAX)) as u32;
    let mut request = CompletionRequest::new(Purpose::Serve, messages)
        .with_tools(tools, tool_choice)
        .with_max_tokens(max_tokens)
        .with_temperature(body["temperature"].as_f64().unwrap_or(0.0) as f32);
    request.response_format = response_format;
    request.seed = body["seed"].as_u64();
    Ok(request)
}

fn parse_message(i: usize, m: &Value) -> Result<Message, String> {
    let role = match m["role"].as_str() {
        Some("system") | Some("developer") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool") | Some("function") => Role::Tool,
        other => return Err(format!("`messages[{i}].role`: unknown role {other:?}")),
    };
    // Content is a string, null, or a list of parts of which we keep the text ones.
    let content = match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => {
            return Err(format!(
                "`messages[{i}].content` must be a string or a list of parts"
            ));
        }
    };
    let tool_calls = m["tool_calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .enumerate()
                .map(|(k, c)| ToolCall {
                    id: c["id"]
                        .as_str()
                        .map_or_else(|| format!("call_{k}"), str::to_string),
                    name: c["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    arguments: match &c["function"]["arguments"] {
                        Value::String(s) => s.clone(),
                        Value::Null => "{}".into(),
                        v => v.to_string(),
                    },
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Message {
        role,
        content,
        tool_calls,
        tool_call_id: m["tool_call_id"].as_str().map(str::to_string),
        name: m["name"].as_str().map(str::to_string),
    })
}

/// The chat-completions response body for `c`.
pub fn response_json(c: &Completion, id: &str) -> Value {
    let mut message = json!({"role": "assistant", "content": c.content});
    if !c.tool_calls.is_empty() {
        message["tool_calls"] = c
            .tool_calls
            .iter()
            .map(|t| json!({"id": t.id, "type": "function", "function": {"name": t.name, "arguments": t.arguments}}))
            .collect();
    }
    json!({
        "id": id,
        "object": "chat.completion",
        "created": chrono::Utc::now().timestamp(),
        "model": c.model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": c.finish_reason.clone().unwrap_or_else(|| "stop".into()),
        }],
        "usage": {
            "prompt_tokens": c.usage.prompt_tokens,
            "completion_tokens": c.usage.completion_tokens,
            "total_tokens": c.usage.total(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tools_formats_and_parts() {
        let body = json!({
            "model": "x",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
            "tool_choice": {"type": "function", "function": {"name": "f"}},
            "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": {"type": "object"}}},
            "max_tokens": 7
        });
        let r = parse_request(&body).unwrap();
        assert_eq!(r.messages[0].content, "hi");
        assert_eq!(r.tools[0]["name"], "f");
        assert_eq!(r.tool_choice, ToolChoice::Function("f".into()));
        assert_eq!(r.max_tokens, 7);
        assert!(matches!(
            r.response_format,
            ResponseFormat::JsonSchema { .. }
        ));
        let err =
            parse_request(&json!({"messages": [{"role": "robot", "content": "x"}]})).unwrap_err();
        assert!(err.contains("messages[0].role"), "{err}");
    }
}
