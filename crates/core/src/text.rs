//! Text helpers every layer shares: cutting text to a length (by characters, bytes or words) and
//! collapsing sampling loops. One place, so a newcomer finds which cut a caller uses.

/// A phrase repeated back to back more than this many times is a sampling loop.
const MAX_REPEATS: usize = 2;
/// Longest phrase (words) checked for back-to-back repeats.
const MAX_LOOP_WORDS: usize = 8;

/// The first `n` characters of `s`, with an ellipsis when cut.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let cut: String = s.chars().take(n.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// `text` up to `max` characters: the whole sentences that fit, else the whole words that fit and `…`
/// (a single word longer than `max` is the only thing cut inside).
pub(crate) fn clip_at_words(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max).collect();
    let sentence_end = head
        .match_indices(". ")
        .map(|(i, _)| i + 1)
        .filter(|&i| i >= max / 3)
        .last();
    if let Some(end) = sentence_end {
        return head[..end].to_string();
    }
    let room: String = text.chars().take(max.saturating_sub(1)).collect();
    match room.rfind(char::is_whitespace) {
        Some(i) if i > 0 => format!("{}…", room[..i].trim_end()),
        _ => clip(text, max),
    }
}

/// Cuts `text` to at most `cap` bytes on a character boundary; true when it was longer.
pub(crate) fn cap_text(text: &mut String, cap: usize) -> bool {
    if text.len() <= cap {
        return false;
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    true
}

/// Keeps the first `max` characters and appends `...` when the text is longer (ToolBench's rule).
pub(crate) fn truncate(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => {
            let mut t = text;
            t.truncate(i);
            t.push_str("...");
            t
        }
        None => text,
    }
}

/// Collapses a phrase repeated back to back more than `MAX_REPEATS` times into one copy (a sampling
/// loop: "and more and more and more …"). Returns the text and whether a loop was found.
pub(crate) fn collapse_loops(sentence: &str) -> (String, bool) {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let mut out: Vec<&str> = Vec::with_capacity(words.len());
    let mut looped = false;
    let mut i = 0;
    'scan: while i < words.len() {
        for n in 1..=MAX_LOOP_WORDS.min((words.len() - i) / (MAX_REPEATS + 1)) {
            let phrase = &words[i..i + n];
            let mut copies = 1;
            while i + (copies + 1) * n <= words.len()
                && words[i + copies * n..i + (copies + 1) * n] == *phrase
            {
                copies += 1;
            }
            if copies > MAX_REPEATS {
                out.extend_from_slice(phrase);
                i += copies * n;
                looped = true;
                continue 'scan;
            }
        }
        out.push(words[i]);
        i += 1;
    }
    (out.join(" "), looped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_cut_between_sentences_or_words() {
        assert_eq!(clip_at_words("short", 10), "short");
        assert_eq!(
            clip_at_words("One sentence here. Another one that is long.", 30),
            "One sentence here."
        );
        assert_eq!(
            clip_at_words("a description without any sentence end at all", 20),
            "a description…"
        );
        assert_eq!(clip_at_words("abcdefghijklmnop", 8), "abcdefg…");
    }

    #[test]
    fn truncates_at_max_chars() {
        assert_eq!(truncate("abcdef".into(), 3), "abc...");
        assert_eq!(truncate("abc".into(), 3), "abc");
        assert_eq!(truncate("ééé".into(), 2), "éé...");
    }

    #[test]
    fn loops_are_collapsed() {
        let (t, looped) = collapse_loops("It is great and fun and fun and fun and fun today");
        assert!(looped);
        assert_eq!(t, "It is great and fun today");
        assert_eq!(collapse_loops("a b a b"), ("a b a b".to_string(), false));
    }
}
