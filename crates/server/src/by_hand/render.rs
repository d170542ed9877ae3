//! A request rendered as Markdown for the reader who answers it: the offered functions with their full
//! schemas, every message by role (tool calls with their arguments, tool results with the call they
//! answer), the required reply format, `max_tokens`, and the exact command to reply. It shows only what
//! a model would be sent: never the purpose label nor anything naming the method under test.

use std::fmt::Write;

use serde_json::Value;

use sum2act_core::llm::purpose::ReaderRole;
use sum2act_core::llm::{CompletionRequest, Message, ResponseFormat, Role, ToolChoice};

/// How a reader runs our binary on this folder, e.g. `/usr/bin/sum2act` and `/runs/by-hand`.
#[derive(Debug, Clone)]
pub struct Commands {
    pub program: String,
    pub dir: String,
}

impl Commands {
    /// `PROGRAM by-hand VERB DIR` with both paths quoted for the shell.
    pub fn verb(&self, verb: &str) -> String {
        format!(
            "{} by-hand {verb} {}",
            shell_quote(&self.program),
            shell_quote(&self.dir)
        )
    }
}

/// The whole rendered request.
pub fn render(id: u64, role: ReaderRole, request: &CompletionRequest, cmd: &Commands) -> String {
    let mut s = format!("# Request {id} · role: {role}\n\n");
    let _ = writeln!(
        s,
        "Reply format: {}. max_tokens: {}.\n",
        format_summary(request),
        request.max_tokens
    );
    if !request.tools.is_empty() {
        functions(&mut s, request);
    }
    s.push_str("## Messages\n\n");
    for (i, m) in request.messages.iter().enumerate() {
        message(&mut s, i + 1, m, &request.messages);
    }
    reply_format(&mut s, request);
    how_to_reply(&mut s, id, role, request, cmd);
    s
}

/// One line saying what the reply must be.
pub fn format_summary(request: &CompletionRequest) -> String {
    let calls = !request.tools.is_empty();
    match (&request.tool_choice, &request.response_format) {
        (ToolChoice::Required, _) if calls => "exactly one function call (required)".into(),
        (ToolChoice::Function(name), _) if calls => {
            format!("exactly one call of the function `{name}` (required)")
        }
        (choice, format) => {
            let content = match format {
                ResponseFormat::Text => "plain text",
                ResponseFormat::JsonObject => "a JSON object",
                ResponseFormat::JsonSchema { .. } => "JSON matching the schema below",
            };
            if calls && *choice != ToolChoice::None {
                format!("function call(s), or content as {content}")
            } else {
                content.to_string()
            }
        }
    }
}

fn functions(s: &mut String, request: &CompletionRequest) {
    let choice = match &request.tool_choice {
        ToolChoice::Auto => "auto (call functions or answer in content)".to_string(),
        ToolChoice::Required => "required (exactly one call)".to_string(),
        ToolChoice::None => "none (do not call a function)".to_string(),
        ToolChoice::Function(name) => format!("`{name}` (exactly one call of it)"),
    };
    let _ = writeln!(
        s,
        "## Functions offered ({})\n\ntool_choice: {choice}\n",
        request.tools.len()
    );
    for tool in &request.tools {
        let f = tool.get("function").unwrap_or(tool);
        let name = f["name"].as_str().unwrap_or("(unnamed)");
        let _ = writeln!(s, "### `{name}`\n");
        if let Some(d) = f["description"].as_str().filter(|d| !d.trim().is_empty()) {
            let _ = writeln!(s, "{}\n", d.trim());
        }
        let params = f.get("parameters").cloned().unwrap_or(Value::Null);
        s.push_str("Parameters (JSON schema):\n\n");
        s.push_str(&fenced("json", &pretty(&params)));
    }
}

fn message(s: &mut String, n: usize, m: &Message, all: &[Message]) {
    let heading = match m.role {
        Role::System => "system".to_string(),
        Role::User => "user".to_string(),
        Role::Assistant => "assistant".to_string(),
        Role::Tool => {
            let id = m.tool_call_id.as_deref().unwrap_or("");
            match answered_call(all, id) {
                Some(name) => format!("tool result of call `{id}` (`{name}`)"),
                None if id.is_empty() => "tool result".to_string(),
                None => format!("tool result of call `{id}`"),
            }
        }
    };
    let _ = writeln!(s, "### {n}. {heading}\n");
    if !m.content.is_empty() || m.tool_calls.is_empty() {
        s.push_str(&fenced("text", &m.content));
    }
    for c in &m.tool_calls {
        let _ = writeln!(s, "Function call `{}`: `{}` with arguments\n", c.id, c.name);
        let args = serde_json::from_str::<Value>(&c.arguments)
            .map(|v| pretty(&v))
            .unwrap_or_else(|_| c.arguments.clone());
        s.push_str(&fenced("json", &args));
    }
}

/// The function name of the assistant call with this id.
fn answered_call<'a>(all: &'a [Message], id: &str) -> Option<&'a str> {
    all.iter()
        .flat_map(|m| &m.tool_calls)
        .find(|c| !id.is_empty() && c.id == id)
        .map(|c| c.name.as_str())
}

fn reply_format(s: &mut String, request: &CompletionRequest) {
    let summary = format_summary(request);
    let mut first = summary.chars();
    let capitalised: String = first
        .next()
        .map(|c| c.to_uppercase().chain(first).collect())
        .unwrap_or_default();
    let _ = writeln!(s, "## Reply format\n\n{capitalised}.");
    match &request.response_format {
        ResponseFormat::Text => s.push('\n'),
        ResponseFormat::JsonObject => s.push_str("The content must be one JSON object.\n\n"),
        ResponseFormat::JsonSchema { schema, .. } => {
            s.push_str("The content must be JSON matching this schema:\n\n");
            s.push_str(&fenced("json", &pretty(schema)));
        }
    }
    let _ = writeln!(
        s,
        "max_tokens: {} (respect it roughly).\n",
        request.max_tokens
    );
}

fn how_to_reply(
    s: &mut String,
    id: u64,
    role: ReaderRole,
    request: &CompletionRequest,
    cmd: &Commands,
) {
    let reply = format!("{} {id}", cmd.verb("reply"));
    let next = format!("{} --role {role} --wait 120", cmd.verb("next"));
    s.push_str("## How to reply\n\n");
    let example = match (&request.tool_choice, &request.response_format) {
        (ToolChoice::Required | ToolChoice::Function(_), _) if !request.tools.is_empty() => {
            r#"{"content": "", "tool_calls": [{"name": "FUNCTION", "arguments": {"PARAM": "VALUE"}}]}"#
        }
        (_, ResponseFormat::JsonObject | ResponseFormat::JsonSchema { .. }) => {
            r#"{"content": {"KEY": "VALUE"}}"#
        }
        _ => "",
    };
    if example.is_empty() {
        let _ = writeln!(
            s,
            "Plain text, as it is (stdin up to EOF):\n\n```sh\n{reply} --text - <<'EOF'\nYOUR ANSWER\nEOF\n```\n"
        );
        if !request.tools.is_empty() && request.tool_choice != ToolChoice::None {
            s.push_str("Or function calls as JSON: `{\"content\": \"\", \"tool_calls\": [{\"name\": ..., \"arguments\": {...}}]}` with the command below.\n\n");
        }
    } else {
        let _ = writeln!(
            s,
            "One JSON object (the content may be the JSON value itself, no need to escape it):\n\n```sh\n{reply} - <<'EOF'\n{example}\nEOF\n```\n"
        );
    }
    let _ = writeln!(
        s,
        "The reply is checked against this request; if it is refused, the message says what to fix and the request stays yours. Write each reply for this request: a reply file last written before you claimed it, or a long reply identical to one accepted for another request, is refused. To reply and take the next request in one command, append ` && {next}`."
    );
}

/// `text` in a code fence longer than any run of backticks inside it.
fn fenced(lang: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body = text.strip_suffix('\n').unwrap_or(text);
    format!("{fence}{lang}\n{body}\n{fence}\n\n")
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// `s` as one shell word.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:,=@".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sum2act_core::llm::ToolCall;

    fn commands() -> Commands {
        Commands {
            program: "sum2act".into(),
            dir: "/tmp/by hand".into(),
        }
    }

    #[test]
    fn shows_functions_messages_format_and_command_but_not_the_purpose() {
        let call = ToolCall {
            id: "call_7".into(),
            name: "weather_for_x".into(),
            arguments: r#"{"city":"Lisbon"}"#.into(),
        };
        let mut assistant = Message::assistant("");
        assistant.tool_calls = vec![call.clone()];
        let req = CompletionRequest::new(
            "router",
            vec![
                Message::system("Be brief."),
                Message::user("Weather in Lisbon? ```odd```"),
                assistant,
                Message::tool(&call, "{\"temp\": 21}"),
            ],
        )
        .with_tools(
            vec![json!({"name": "weather_for_x", "description": "Current weather.",
                "parameters": {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}})],
            ToolChoice::Required,
        )
        .with_max_tokens(300);
        let md = render(12, ReaderRole::Agent, &req, &commands());
        for needle in [
            "# Request 12 · role: agent",
            "exactly one function call (required)",
            "### `weather_for_x`",
            "\"required\": [\n    \"city\"\n  ]",
            "### 2. user",
            "````text\nWeather in Lisbon? ```odd```\n````",
            "Function call `call_7`: `weather_for_x` with arguments",
            "\"city\": \"Lisbon\"",
            "### 4. tool result of call `call_7` (`weather_for_x`)",
            "max_tokens: 300",
            "sum2act by-hand reply '/tmp/by hand' 12 - <<'EOF'",
            "&& sum2act by-hand next '/tmp/by hand' --role agent --wait 120",
            "a reply file last written before you claimed it",
        ] {
            assert!(md.contains(needle), "lacks {needle:?}:\n{md}");
        }
        assert!(!md.contains("router"), "{md}");
    }

    #[test]
    fn json_schema_requests_show_the_schema_and_a_json_example() {
        let req = CompletionRequest::new("judge", vec![Message::user("Solved?")])
            .with_json_schema("verdict", json!({"type": "object", "required": ["solved"]}));
        let md = render(3, ReaderRole::Judge, &req, &commands());
        assert!(md.contains("JSON matching this schema"), "{md}");
        assert!(md.contains("\"solved\""), "{md}");
        assert!(md.contains(r#"{"content": {"KEY": "VALUE"}}"#), "{md}");
        let text = CompletionRequest::new("x", vec![Message::user("Hi")]);
        let md = render(4, ReaderRole::Agent, &text, &commands());
        assert!(md.contains("Reply format: plain text"), "{md}");
        assert!(md.contains("4 --text - <<'EOF'"), "{md}");
    }
}
