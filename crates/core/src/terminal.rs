//! Text shown on a terminal: model output, tool replies and server messages are neutralised before
//! they are printed, so escape sequences in them cannot retitle the window, recolour or clear the
//! screen, or overwrite earlier lines with a carriage return.

use std::borrow::Cow;

/// `text` with every control character except newline and tab replaced by a visible escape
/// (`\x1b`, `\r`, `\u{9b}`…): ESC, CR, backspace, BEL, DEL and the C1 controls (`U+0080`–`U+009F`,
/// which some terminals also obey), plus the bidirectional overrides that reorder what is shown.
pub fn safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `safe`, with newlines escaped too: for text that must stay on one line.
pub fn safe_line(text: &str) -> String {
    safe(text).replace('\n', "\\n")
}

fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_obeyed() {
        let hostile = "ok\x1b]0;pwned\x07 \x1b[2J\rover \u{9b}31m \u{202e}txt\x7f";
        let shown = safe(hostile);
        assert!(
            !shown.chars().any(|c| c.is_control() && c != '\n'),
            "{shown:?}"
        );
        assert!(shown.contains("\\u{1b}]0;pwned\\u{7}"), "{shown}");
        assert!(shown.contains("\\r"), "{shown}");
        assert_eq!(safe("plain\ttext\nnext é 😀"), "plain\ttext\nnext é 😀");
        assert_eq!(safe_line("a\nb\rc"), "a\\nb\\rc");
    }
}
