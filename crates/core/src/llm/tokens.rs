//! Local token counting with tiktoken's cl100k_base: used to budget prompts and to account for calls
//! whose server reports no usage. The BPE tables are built once per process.

use super::{CompletionRequest, Message, ToolCall};

/// Tokens in `text` (cl100k_base, special tokens treated as text).
pub fn count_tokens(text: &str) -> usize {
    tiktoken_rs::cl100k_base_singleton()
        .encode_ordinary(text)
        .len()
}

/// Tokens of a chat prompt as OpenAI counts them: each message costs its content plus a small framing
/// overhead, and the tool list is billed as its JSON text.
pub fn count_prompt_tokens(request: &CompletionRequest) -> u64 {
    let messages: usize = request.messages.iter().map(count_message_tokens).sum();
    let tools: usize = request
        .tools
        .iter()
        .map(|t| count_tokens(&t.to_string()))
        .sum();
    // Every reply is primed with `<|start|>assistant<|message|>`.
    (messages + tools + 3) as u64
}

/// Tokens of a reply: its content plus each call's name and arguments.
pub fn count_completion_tokens(content: &str, tool_calls: &[ToolCall]) -> u64 {
    let calls: usize = tool_calls
        .iter()
        .map(|c| count_tokens(&c.name) + count_tokens(&c.arguments))
        .sum();
    (count_tokens(content) + calls) as u64
}

fn count_message_tokens(m: &Message) -> usize {
    let calls: usize = m
        .tool_calls
        .iter()
        .map(|c| count_tokens(&c.name) + count_tokens(&c.arguments) + 3)
        .sum();
    4 + count_tokens(&m.content) + calls + m.name.as_deref().map_or(0, count_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_strings() {
        assert_eq!(count_tokens(""), 0);
        assert_eq!(count_tokens("hello world"), 2);
        let req = CompletionRequest::new("t", vec![Message::user("hello world")]);
        assert_eq!(count_prompt_tokens(&req), 4 + 2 + 3);
    }
}
