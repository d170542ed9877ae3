//! Text normalisation shared by claim extraction and lookup: case, JSON escapes, punctuation and accents
//! must not hide a value that is there.

use std::collections::BTreeSet;

use unicode_normalization::UnicodeNormalization;

/// Words too common to identify anything.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "he",
    "her", "here", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "more", "my",
    "no", "not", "of", "on", "or", "our", "please", "she", "so", "some", "such", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "us", "was",
    "we", "were", "what", "when", "where", "which", "who", "will", "with", "would", "you", "your",
];

pub(crate) fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// Words about data and APIs, often capitalised as acronyms, that name nothing a tool returned.
const GENERIC: &[&str] = &[
    "api", "api's", "apis", "guid", "guids", "id", "ids", "json", "nav", "navs", "url", "urls",
];

/// Whether `word` (any case) is one of [`GENERIC`].
pub(crate) fn is_generic(word: &str) -> bool {
    GENERIC.contains(&word.to_lowercase().as_str())
}

/// Lower case, accents stripped, JSON escapes undone, every run of non-alphanumerics one space, padded
/// with a space on both sides so `" phrase "` matches whole words only.
pub(crate) fn normalize(text: &str) -> String {
    let unescaped = unescape_unicode(text)
        .replace("\\/", "/")
        .replace("\\n", " ")
        .replace("\\t", " ")
        .replace("\\\"", "\"");
    let mut out = String::with_capacity(unescaped.len() + 2);
    out.push(' ');
    let mut space = true;
    for c in unescaped.nfkd() {
        if unicode_normalization::char::is_combining_mark(c) {
            continue;
        }
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
            space = false;
        } else if !space {
            out.push(' ');
            space = true;
        }
    }
    if !space {
        out.push(' ');
    }
    out
}

/// `\u00df` escapes (Python's `json.dumps`, which ToolBench's observations went through) as the
/// characters they stand for, surrogate pairs joined: `M\u00fcnchen` is `München`.
pub(crate) fn unescape_unicode(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\u") {
        return std::borrow::Cow::Borrowed(text);
    }
    let hex = |s: &str| {
        s.get(..4)
            .filter(|h| h.chars().all(|c| c.is_ascii_hexdigit()))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\\u") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(unit) = hex(after) else {
            out.push_str("\\u");
            rest = after;
            continue;
        };
        let low = after[4..]
            .strip_prefix("\\u")
            .and_then(hex)
            .filter(|l| (0xDC00..0xE000).contains(l) && (0xD800..0xDC00).contains(&unit));
        let (code, used) = match low {
            Some(l) => (0x10000 + ((unit - 0xD800) << 10) + (l - 0xDC00), 10),
            None => (unit, 4),
        };
        out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
        rest = &after[used..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Letters and digits only, lower case, accents stripped (`ORD-2291` and `ord 2291` are `ord2291`):
/// the form of last resort for matching values written with other spacing or punctuation.
pub(crate) fn squash(text: &str) -> String {
    normalize(text).chars().filter(|c| *c != ' ').collect()
}

/// The words of `text` that carry meaning (normalised, no stopwords, at least 3 characters or a digit).
pub fn content_words(text: &str) -> BTreeSet<String> {
    normalize(text)
        .split_whitespace()
        .filter(|w| {
            !is_stopword(w) && (w.chars().count() >= 3 || w.chars().any(|c| c.is_ascii_digit()))
        })
        .map(str::to_string)
        .collect()
}

/// Up to ~160 characters of `text` around the first case-insensitive occurrence of `needle` (or the
/// start of `text` when it does not occur as written).
pub(crate) fn excerpt(text: &str, needle: &str) -> String {
    let lower = text.to_lowercase();
    let at = if lower.len() == text.len() {
        lower.find(&needle.to_lowercase()).unwrap_or(0)
    } else {
        0
    };
    let start = floor_char(text, at.saturating_sub(60));
    let end = floor_char(text, (at + needle.len() + 100).min(text.len()));
    let mut s = String::new();
    if start > 0 {
        s.push('…');
    }
    s.push_str(text[start..end].trim());
    if end < text.len() {
        s.push('…');
    }
    s
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stopword("the") && !is_stopword("lisbon"));
    }

    #[test]
    fn normalize_folds_case_accents_escapes_and_punctuation() {
        assert_eq!(normalize("Café  \"Olá\"!"), " cafe ola ");
        assert_eq!(normalize("https:\\/\\/x.io\\/a"), " https x io a ");
        assert!(normalize("São Paulo, BR").contains(" sao paulo "));
        // The dev run's Flixbus stations: names the tools returned escaped were flagged as invented.
        assert_eq!(
            normalize(r#"{"street": "Arnulfstra\u00dfe", "city": "M\u00fcnchen"}"#),
            normalize("street: Arnulfstraße, city: München")
        );
        assert_eq!(normalize(r"K\u0159i\u017e\u00edkova"), " krizikova ");
        assert_eq!(unescape_unicode(r"\ud83d\ude00 \uZZ"), "\u{1f600} \\uZZ");
    }

    #[test]
    fn excerpt_centres_on_the_needle() {
        let text = format!("{}needle{}", "a".repeat(200), "b".repeat(200));
        let e = excerpt(&text, "NEEDLE");
        assert!(e.contains("needle") && e.starts_with('…') && e.ends_with('…'));
        assert!(e.chars().count() < 180);
    }
}
