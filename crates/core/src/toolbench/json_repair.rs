//! Repairs for JSON text written by models: closing a reply cut at the token cap, and replacing
//! lone UTF-16 surrogate escapes (valid for Python's `json`, impossible in a Rust string) so such
//! text is stored as valid JSON instead of garbled.

/// Closes the strings, arrays and objects left open at the end of a cut JSON text. A dangling key,
/// colon or comma at the cut is dropped. `None` when the text is not JSON-shaped at all.
pub fn close_json(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 8);
    let mut stack: Vec<char> = Vec::new();
    let (mut in_str, mut escaped) = (false, false);
    // Where the last escape sequence in a string began, and whether it is a `\u` one.
    let mut last_escape: Option<(usize, bool)> = None;
    for c in text.chars() {
        if in_str {
            if escaped {
                escaped = false;
                if let Some((at, _)) = last_escape {
                    last_escape = Some((at, c == 'u'));
                }
            } else if c == '\\' {
                escaped = true;
                last_escape = Some((out.len(), false));
            } else if c == '"' {
                in_str = false;
                last_escape = None;
            }
            out.push(c);
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                if stack.pop() != Some(c) {
                    return None;
                }
                if stack.is_empty() {
                    out.push(c);
                    return Some(out);
                }
            }
            _ => {}
        }
        out.push(c);
    }
    if in_str {
        match last_escape {
            // A lone backslash, or a `\u` escape cut before its four digits: drop it.
            Some((at, _)) if escaped => out.truncate(at),
            Some((at, true)) if out.len() - at < 6 => out.truncate(at),
            _ => {}
        }
        out.push('"');
    }
    loop {
        let t = out.trim_end();
        let dangling_key = t.ends_with(':');
        if !(dangling_key || t.ends_with(',')) {
            break;
        }
        let cut = t.len() - 1;
        out.truncate(cut);
        // A key left without its value goes too.
        if dangling_key {
            let t = out.trim_end();
            let open = t.strip_suffix('"').and_then(|inner| inner.rfind('"'));
            if let Some(open) = open {
                out.truncate(open);
            }
        }
    }
    while let Some(close) = stack.pop() {
        let len = out.trim_end().len();
        if out[..len].ends_with(',') {
            out.truncate(len - 1);
        }
        out.push(close);
    }
    Some(out)
}

/// Replaces `\uD800`–`\uDFFF` escapes that are not part of a valid surrogate pair with `\uFFFD`:
/// Python's `json` accepts them, serde_json (and a Rust string) cannot.
pub fn replace_lone_surrogates(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\u") && !text.contains("\\U") {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let hex_at = |i: usize| -> Option<u32> {
        let h = text.get(i + 2..i + 6)?;
        if b.get(i) == Some(&b'\\') && matches!(b.get(i + 1), Some(b'u')) {
            u32::from_str_radix(h, 16).ok()
        } else {
            None
        }
    };
    let mut out = String::with_capacity(text.len());
    let (mut i, mut last) = (0, 0);
    let mut in_str = false;
    while i < b.len() {
        match b[i] {
            b'"' => in_str = !in_str,
            b'\\' if in_str => {
                if let Some(u) = hex_at(i) {
                    let high = (0xD800..0xDC00).contains(&u);
                    let low = (0xDC00..0xE000).contains(&u);
                    let paired =
                        high && hex_at(i + 6).is_some_and(|n| (0xDC00..0xE000).contains(&n));
                    if paired {
                        i += 12;
                        continue;
                    }
                    if high || low {
                        out.push_str(&text[last..i]);
                        out.push_str("\\ufffd");
                        i += 6;
                        last = i;
                        continue;
                    }
                    i += 6;
                    continue;
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if last == 0 {
        return std::borrow::Cow::Borrowed(text);
    }
    out.push_str(&text[last..]);
    std::borrow::Cow::Owned(out)
}
