//! Finding the claims in an answer. Kinds are taken in a fixed order and each match is masked out of the
//! text before the next kind looks, so the digits of a date or an id are not also read as numbers.

use std::sync::LazyLock;

use regex::Regex;

use super::text::{content_words, is_stopword};
use super::{Claim, ClaimKind, MAX_ANSWER_CHARS, MAX_CLAIMS};

fn re(pattern: &str) -> Regex {
    // The patterns are constants of this file: a typo is caught by every test that extracts claims.
    Regex::new(pattern).unwrap_or_else(|e| panic!("bad claim pattern {pattern}: {e}"))
}

static URL: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(?i)\b(?:https?://|www\.)[^\s<>"'()\[\]{}]+"#));
static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b"));
const MONTHS: &str = "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";
static DATE_ISO: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?"));
static DATE_NUMERIC: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})\b"));
static DATE_MDY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b({MONTHS})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b"
    ))
});
static DATE_DMY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({MONTHS})\.?,?\s+(\d{{4}})\b"
    ))
});
static DATE_MY: LazyLock<Regex> =
    LazyLock::new(|| re(&format!(r"(?i)\b({MONTHS})\.?,?\s+(\d{{4}})\b")));
static TOKEN: LazyLock<Regex> = LazyLock::new(|| re(r"[A-Za-z0-9][A-Za-z0-9_\-]*[A-Za-z0-9]"));
/// A number with thousands separators or a decimal part, an optional currency sign before it, and an
/// optional scale word or unit after it.
static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:[$€£¥]\s?)?(-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?)(?:\s?(thousand|million|billion|trillion|bn|k)\b)?(\s?(?:%|°\s?[cf]\b|(?-i:[A-Z]{3}\b)|(?:km/h|mph|kg|mg|lbs?|km|cm|mm|mi|miles?|meters?|metres?|kilometers?|degrees?(?:\s+(?:celsius|fahrenheit))?|celsius|fahrenheit|hours?|minutes?|seconds?|days?|years?|points?|votes?|reviews?|stars?|users?|followers?|views?|likes?|people|calories|kcal|ms|usd|eur|gbp|jpy|dollars?|euros?|pounds?|yen|percent)\b))?",
    )
});
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

/// The claims of `answer`, in the order they appear.
pub fn extract_claims(answer: &str) -> Vec<Claim> {
    let answer = cap(answer);
    let mut masked = answer.to_string();
    let mut claims = Vec::new();
    simple(&URL, ClaimKind::Url, &mut masked, &mut claims);
    simple(&EMAIL, ClaimKind::Email, &mut masked, &mut claims);
    dates(&mut masked, &mut claims);
    ids(&mut masked, &mut claims);
    numbers(&mut masked, &mut claims);
    // Quoted strings and list items hide their words from the name pass, not from each other.
    let mut names_mask = masked.clone();
    quoted(&masked, &mut names_mask, &mut claims);
    list_items(&masked, &mut names_mask, &mut claims);
    names(&names_mask, &mut claims);
    claims.sort_by_key(|c| c.start);
    dedupe(&mut claims);
    claims.truncate(MAX_CLAIMS);
    claims
}

fn cap(s: &str) -> &str {
    match s.char_indices().nth(MAX_ANSWER_CHARS) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn mask(text: &mut String, start: usize, end: usize) {
    text.replace_range(start..end, &" ".repeat(end - start));
}

fn claim(kind: ClaimKind, text: &str, start: usize) -> Claim {
    Claim {
        kind,
        text: text.to_string(),
        start,
        value: None,
        decimals: 0,
        dates: Vec::new(),
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

/// Month number of an English month name or abbreviation.
pub(super) fn month(name: &str) -> Option<u32> {
    let n = name.to_ascii_lowercase();
    let key = n.get(..3)?;
    let months = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    months.iter().position(|m| *m == key).map(|i| i as u32 + 1)
}

fn valid(y: i32, m: u32, d: u32) -> bool {
    (1..=12).contains(&m) && d <= 31 && (1000..=2999).contains(&y)
}

/// A date in a text: `(start, end, readings as (year, month, day))`.
pub(super) type DateSpan = (usize, usize, Vec<(i32, u32, u32)>);

/// Every date in `text` as `(start, end, readings)`.
pub(super) fn find_dates(text: &str) -> Vec<DateSpan> {
    let mut found = Vec::new();
    let num = |s: &str| s.parse::<u32>().unwrap_or(0);
    for c in DATE_ISO.captures_iter(text) {
        let (y, m, d) = (num(&c[1]) as i32, num(&c[2]), num(&c[3]));
        push_date(&mut found, &c, vec![(y, m, d)]);
    }
    for c in DATE_NUMERIC.captures_iter(text) {
        let (a, b, y) = (num(&c[1]), num(&c[2]), num(&c[3]) as i32);
        // 03/04/2024 is 3 April in most of the world and March 4 in the US: keep both readings.
        push_date(&mut found, &c, vec![(y, b, a), (y, a, b)]);
    }
    for c in DATE_MDY.captures_iter(text) {
        let m = month(&c[1]).unwrap_or(0);
        push_date(&mut found, &c, vec![(num(&c[3]) as i32, m, num(&c[2]))]);
    }
    for c in DATE_DMY.captures_iter(text) {
        let m = month(&c[2]).unwrap_or(0);
        push_date(&mut found, &c, vec![(num(&c[3]) as i32, m, num(&c[1]))]);
    }
    for c in DATE_MY.captures_iter(text) {
        let m = month(&c[1]).unwrap_or(0);
        push_date(&mut found, &c, vec![(num(&c[2]) as i32, m, 0)]);
    }
    found
}

fn push_date(found: &mut Vec<DateSpan>, c: &regex::Captures<'_>, readings: Vec<(i32, u32, u32)>) {
    let Some(m) = c.get(0) else { return };
    let readings: Vec<_> = readings
        .into_iter()
        .filter(|(y, mo, d)| valid(*y, *mo, *d))
        .collect();
    let overlaps = found.iter().any(|(s, e, _)| m.start() < *e && *s < m.end());
    if !readings.is_empty() && !overlaps {
        found.push((m.start(), m.end(), readings));
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
    let found: Vec<(usize, usize)> = TOKEN
        .find_iter(masked)
        .filter(|m| {
            let t = m.as_str();
            t.len() >= 3
                && t.chars().any(|c| c.is_ascii_digit())
                && t.chars().any(|c| c.is_ascii_alphabetic())
                && !UNIT_OR_ORDINAL.is_match(t)
        })
        .map(|m| (m.start(), m.end()))
        .collect();
    for (s, e) in found {
        out.push(claim(ClaimKind::Id, &masked[s..e], s));
        mask(masked, s, e);
    }
}

/// Value and decimals of a number as written (`66,412.37` → 66412.37, 2), scaled by a scale word.
pub(super) fn parse_number(digits: &str, scale: Option<&str>) -> Option<(f64, u32)> {
    let plain = digits.replace(',', "");
    let value: f64 = plain.parse().ok()?;
    let decimals = plain.split_once('.').map_or(0, |(_, d)| d.len() as u32);
    let factor = match scale.map(str::to_ascii_lowercase).as_deref() {
        Some("thousand" | "k") => 1e3,
        Some("million") => 1e6,
        Some("billion" | "bn") => 1e9,
        Some("trillion") => 1e12,
        _ => 1.0,
    };
    Some((value * factor, decimals))
}

fn numbers(masked: &mut String, out: &mut Vec<Claim>) {
    let mut found = Vec::new();
    for c in NUMBER.captures_iter(masked) {
        let (Some(all), Some(digits)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let scale = c.get(2).map(|m| m.as_str());
        let unit = c.get(3).map(|m| m.as_str().trim().to_string());
        let Some((value, decimals)) = parse_number(digits.as_str(), scale) else {
            continue;
        };
        // A small whole number with nothing after it ("3 recipes", "top 5") says too little to check.
        let specific = decimals > 0
            || value.abs() >= 10.0
            || scale.is_some()
            || all.as_str().starts_with(['$', '€', '£', '¥'])
            || unit
                .as_deref()
                .is_some_and(|u| u == "%" || u.starts_with('°'));
        let text = all.as_str().trim_end();
        found.push((
            all.start(),
            all.start() + text.len(),
            value,
            decimals,
            specific,
        ));
    }
    for (s, e, value, decimals, specific) in found {
        if specific {
            let mut c = claim(ClaimKind::Number, masked[s..e].trim_end(), s);
            c.value = Some(value);
            c.decimals = decimals;
            out.push(c);
        }
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
        let mut text = run.trim_end_matches(['.', '\'', '-', '&']);
        // Drop leading stopwords ("The Premier League" → "Premier League").
        while let Some((first, rest)) = text.split_once([' ', '\t']) {
            if !is_stopword(&first.to_lowercase()) {
                break;
            }
            start += text.len() - rest.len();
            text = rest.trim_start();
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
                && (sentence_start || is_stopword(&lower) || NOT_NAMES.contains(&lower.as_str())))
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
