//! Finding the claims in an answer. Kinds are taken in a fixed order and each match is masked out of the
//! text before the next kind looks, so the digits of a date or an id are not also read as numbers.

use std::sync::LazyLock;

use regex::Regex;

use super::dates::find_dates;
use super::numbers::{numbers, phones};
use super::scan::{claim, mask, re};
use super::text::{content_words, is_generic, is_stopword};
use super::{Claim, ClaimKind, MAX_ANSWER_CHARS, MAX_CLAIMS};

static URL: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)\b(?:https?://|www\.)[^\s<>"'()\[\]{}]+"#));
static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b"));
static TOKEN: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z0-9][A-Za-z0-9_\-]*[A-Za-z0-9]"));
static QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    re(r#""([^"\n]{2,80})"|“([^”\n]{2,80})”|(?:^|[\s(\[])'([^'\n]{2,80})'(?:$|[\s.,;:!?)\]])"#)
});
static BULLET: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?m)^[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]+(.+)$"));
static NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"[A-Z][\p{L}0-9'&.\-]*(?:[ \t]+(?:(?:of|de|da|do|del|la|le|the|von|van|and|&)[ \t]+)?[A-Z][\p{L}0-9'&.\-]*)*",
    )
});

/// Capitalised words that are not names on their own.
const NOT_NAMES: &[&str] = &[
    "april",
    "august",
    "based",
    "celsius",
    "december",
    "fahrenheit",
    "february",
    "finally",
    "finish",
    "friday",
    "however",
    "january",
    "july",
    "june",
    "march",
    "monday",
    "november",
    "october",
    "saturday",
    "september",
    "sunday",
    "thursday",
    "tuesday",
    "wednesday",
];

/// Capitalised words that open a clause without naming anything ("Other Titanic-like films",
/// "Neither Rome nor Venice", "Unfortunately I could not"): dropped from the front of a name.
const CLAUSE_OPENERS: &[&str] = &[
    "additionally",
    "also",
    "both",
    "each",
    "either",
    "enjoy",
    "every",
    "neither",
    "note",
    "other",
    "sorry",
    "unfortunately",
];

/// Clock and time-zone words ("2:00 PM CT", "13:42 UTC"): not names.
const TIME_WORDS: &[&str] = &[
    "am", "bst", "cest", "cet", "ct", "edt", "est", "et", "gmt", "ist", "pdt", "pm", "pst", "pt",
    "utc",
];

/// The pronoun I and its contractions, which end a run of capitalised words ("URLs and I'll").
fn is_pronoun_i(word: &str) -> bool {
    let w = word.replace('’', "'");
    w == "I" || (w.starts_with("I'") && w.len() <= 4)
}

/// The claims of `answer`, in the order they appear.
pub(crate) fn extract_claims(answer: &str) -> Vec<Claim> {
    let answer = cap(answer);
    let mut masked = answer.to_string();
    let mut claims = Vec::new();
    simple(&URL, ClaimKind::Url, &mut masked, &mut claims);
    simple(&EMAIL, ClaimKind::Email, &mut masked, &mut claims);
    dates(&mut masked, &mut claims);
    phones(&mut masked, &mut claims);
    ids(&mut masked, &mut claims);
    numbers(&mut masked, &mut claims);
    // Quoted strings and list items hide their words from the name pass, not from each other.
    let mut names_mask = masked.clone();
    quoted(&masked, &mut names_mask, &mut claims);
    list_items(&masked, &mut names_mask, &mut claims);
    names(&names_mask, &mut claims);
    for c in &mut claims {
        shown_as_written(c, answer);
    }
    let headings = headings(answer);
    claims.retain(|c| c.kind.is_value() || !headings.iter().any(|h| h.contains(&c.start)));
    claims.sort_by_key(|c| c.start);
    dedupe(&mut claims);
    claims.truncate(MAX_CLAIMS);
    claims
}

/// A textual claim was read from the answer with earlier claims blanked out ("contract until ( )"):
/// its text becomes the answer's own wording, the blanked form is kept for matching its words.
fn shown_as_written(c: &mut Claim, answer: &str) {
    if c.kind.is_value() {
        return;
    }
    let Some(original) = answer.get(c.start..c.start + c.text.len()) else {
        return;
    };
    if original != c.text {
        let shown = original.split_whitespace().collect::<Vec<_>>().join(" ");
        c.masked = Some(std::mem::replace(&mut c.text, shown));
    }
}

/// The answer's own headings (byte ranges): markdown `#` lines, lines wholly in bold, and lines
/// ending in a colon with nothing after it. Their words label what follows and claim nothing,
/// though the values in them (a date in a heading) still do.
fn headings(answer: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in answer.split_inclusive('\n') {
        let t = line.trim();
        let bare = t.trim_end_matches(':').trim();
        let bold = ["**", "__"].iter().any(|m| {
            bare.len() > 4 && bare.starts_with(m) && bare.trim_end_matches(':').ends_with(m)
        });
        let label = t.ends_with(':') && !t.starts_with(['-', '*', '•']);
        if t.starts_with('#') || bold || label {
            out.push(at..at + line.len());
        }
        at += line.len();
    }
    out
}

fn cap(s: &str) -> &str {
    match s.char_indices().nth(MAX_ANSWER_CHARS) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn simple(pattern: &Regex, kind: ClaimKind, masked: &mut String, out: &mut Vec<Claim>) {
    let found: Vec<(usize, usize)> = pattern
        .find_iter(masked)
        .map(|m| {
            let trimmed = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']);
            (m.start(), m.start() + trimmed.len())
        })
        .collect();
    for (s, e) in found {
        out.push(claim(kind, &masked[s..e], s));
        mask(masked, s, e);
    }
}

fn dates(masked: &mut String, out: &mut Vec<Claim>) {
    for (s, e, readings) in find_dates(masked) {
        let mut c = claim(ClaimKind::Date, &masked[s..e], s);
        c.dates = readings;
        out.push(c);
        mask(masked, s, e);
    }
}

/// Tokens mixing letters and digits (`TP1350`, `B07XJ8C8F5`, `ORD-2291`), not ordinals or
/// number-plus-unit (`21st`, `10km`).
fn ids(masked: &mut String, out: &mut Vec<Claim>) {
    static UNIT_OR_ORDINAL: LazyLock<Regex> =
        LazyLock::new(|| re(r"^\d+(?:\.\d+)?(?:st|nd|rd|th|[a-z]{1,3})$"));
    // Image sizes (`800x800`, read as two numbers), the joint of a time range (`PM-9` in
    // "6:30 PM-9:00 PM") and ranks (`top-5`).
    static SIZE_OR_TIME: LazyLock<Regex> =
        LazyLock::new(|| re(r"^(?:\d+x\d+|(?i:am|pm|top|no|page|part|step|round)-\d+)$"));
    let found: Vec<(usize, usize)> = TOKEN
        .find_iter(masked)
        .filter(|m| {
            let t = m.as_str();
            t.len() >= 3
                && t.chars().any(|c| c.is_ascii_digit())
                && t.chars().any(|c| c.is_ascii_alphabetic())
                && !UNIT_OR_ORDINAL.is_match(t)
                && !SIZE_OR_TIME.is_match(t)
        })
        .map(|m| (m.start(), m.end()))
        .collect();
    for (s, e) in found {
        out.push(claim(ClaimKind::Id, &masked[s..e], s));
        mask(masked, s, e);
    }
}

fn quoted(masked: &str, names_mask: &mut String, out: &mut Vec<Claim>) {
    for c in QUOTED.captures_iter(masked) {
        let Some(m) = c.get(1).or(c.get(2)).or(c.get(3)) else {
            continue;
        };
        if content_words(m.as_str()).is_empty() {
            continue;
        }
        out.push(claim(ClaimKind::Quoted, m.as_str().trim(), m.start()));
        mask(names_mask, m.start(), m.end());
    }
}

/// Bulleted or numbered lines, and inline enumerations after a colon ("recipes: A, B and C").
fn list_items(masked: &str, names_mask: &mut String, out: &mut Vec<Claim>) {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for c in BULLET.captures_iter(masked) {
        if let Some(m) = c.get(1) {
            // "Hummus: a chickpea dip" names the item before the colon.
            let item = m.as_str().split([':', '—']).next().unwrap_or("");
            let item = item.split(" - ").next().unwrap_or("");
            spans.push(trimmed_span(masked, m.start(), m.start() + item.len()));
        }
    }
    for (colon, _) in masked.match_indices(':') {
        let rest = &masked[colon + 1..];
        let end = rest.find(['.', '\n', '!', '?']).unwrap_or(rest.len());
        let tail = &rest[..end];
        let parts = split_enumeration(tail);
        if parts.len() < 2 || parts.iter().any(|(_, p)| p.split_whitespace().count() > 8) {
            continue;
        }
        for (offset, part) in parts {
            let s = colon + 1 + offset;
            spans.push(trimmed_span(masked, s, s + part.len()));
        }
    }
    for (s, e) in spans {
        let text = &masked[s..e];
        if e > s && !content_words(text).is_empty() {
            out.push(claim(ClaimKind::ListItem, text, s));
            mask(names_mask, s, e);
        }
    }
}

/// `A, B, and C` / `A; B` / `A and B` → the parts with their offsets. With commas, only the last part
/// is split on "and", and only when no other part contains one ("chickpea and spinach stew, hummus").
fn split_enumeration(text: &str) -> Vec<(usize, &str)> {
    let mut parts: Vec<(usize, &str)> = Vec::new();
    let mut start = 0;
    for (i, _) in text.match_indices([',', ';']) {
        parts.push((start, &text[start..i]));
        start = i + 1;
    }
    parts.push((start, &text[start..]));
    for p in &mut parts {
        let t = p.1.trim_start();
        let lead = p.1.len() - t.len();
        for conj in ["and ", "or "] {
            if let Some(rest) = t.strip_prefix(conj) {
                *p = (p.0 + lead + conj.len(), rest);
                break;
            }
        }
    }
    let others_have_and = parts[..parts.len() - 1]
        .iter()
        .any(|(_, p)| p.contains(" and "));
    if !others_have_and
        && let Some(&(offset, last)) = parts.last()
        && let Some(at) = last.rfind(" and ")
    {
        parts.pop();
        parts.push((offset, &last[..at]));
        parts.push((offset + at + 5, &last[at + 5..]));
    }
    parts.retain(|(_, p)| !p.trim().is_empty());
    parts
}

fn trimmed_span(text: &str, s: usize, e: usize) -> (usize, usize) {
    let inner = &text[s..e];
    let lead = inner.len() - inner.trim_start().len();
    let trimmed = inner
        .trim()
        .trim_end_matches(['.', ',', ';', '!', '?', ' ']);
    (s + lead, s + lead + trimmed.len())
}

/// Runs of capitalised words, minus a sentence's first word when it stands alone or is a stopword.
fn names(masked: &str, out: &mut Vec<Claim>) {
    for m in NAME.find_iter(masked) {
        let mut start = m.start();
        // A run of capitalised words ends at a full stop ("… Portugal. The airport …").
        let run = m.as_str();
        let run = run.find(". ").map_or(run, |i| &run[..i]);
        // The pronoun I ends a name ("URLs and I'll", "Unfortunately I").
        let run = match run.split_whitespace().find(|w| is_pronoun_i(w)) {
            // `w` is a slice of `run`: its offset is where the pronoun starts.
            Some(w) => run[..w.as_ptr() as usize - run.as_ptr() as usize].trim_end(),
            None => run,
        };
        let run = run.trim_end_matches(" and").trim_end_matches(" &");
        let mut text = run.trim_end_matches(['.', '\'', '-', '&']);
        // Words about data rather than names end no name ("Flixbus IDs", "Similar Movies API").
        while let Some((head, last)) = text.rsplit_once([' ', '\t']) {
            if !is_generic(last) {
                break;
            }
            text = head.trim_end();
        }
        if is_generic(text) {
            continue;
        }
        // Drop leading stopwords and clause openers ("The Premier League" → "Premier League",
        // "Other Titanic" → "Titanic").
        while let Some((first, rest)) = text.split_once([' ', '\t']) {
            let lower = first.to_lowercase();
            if !is_stopword(&lower) && !CLAUSE_OPENERS.contains(&lower.as_str()) {
                break;
            }
            start += text.len() - rest.len();
            text = rest.trim_start();
        }
        if text
            .split_whitespace()
            .all(|w| TIME_WORDS.contains(&w.to_lowercase().as_str()))
        {
            continue;
        }
        let words: Vec<&str> = text.split_whitespace().collect();
        let lower = text.to_lowercase();
        let sentence_start = masked[..start]
            .trim_end()
            .chars()
            .last()
            .is_none_or(|c| matches!(c, '.' | '!' | '?' | ':' | '\n'));
        let single = words.len() == 1;
        if text.chars().count() < 3
            || (single
                && (sentence_start
                    || is_stopword(&lower)
                    || NOT_NAMES.contains(&lower.as_str())
                    || CLAUSE_OPENERS.contains(&lower.as_str())))
        {
            continue;
        }
        out.push(claim(ClaimKind::Name, text, start));
    }
}

fn dedupe(claims: &mut Vec<Claim>) {
    let mut seen = std::collections::HashSet::new();
    claims.retain(|c| seen.insert((c.kind, c.text.to_lowercase())));
}
