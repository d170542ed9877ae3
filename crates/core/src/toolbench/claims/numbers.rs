//! Numbers as answers write them (thousands separators, currency signs, scale words, units) and as
//! evidence holds them (plain, scientific, with scale words, ISO and `1h 41min` durations), phone
//! numbers in any grouping, and the precision a written number claims.

use std::sync::LazyLock;

use regex::Regex;

use super::scan::{claim, mask, re};
use super::units;
use super::{Claim, ClaimKind};

/// Units a number may carry besides the convertible ones of [`units`]: counts and currencies, kept so
/// the unit is part of the claim's text.
const COUNT_UNITS: &[&str] = &[
    "years",
    "year",
    "points",
    "point",
    "votes",
    "vote",
    "reviews",
    "review",
    "stars",
    "star",
    "users",
    "user",
    "followers",
    "follower",
    "views",
    "view",
    "likes",
    "like",
    "people",
    "calories",
    "kcal",
    "usd",
    "eur",
    "gbp",
    "jpy",
    "dollars",
    "dollar",
    "euros",
    "euro",
    "pounds",
    "pound",
    "yen",
    "percent",
    "degrees",
    "degree",
];

/// Thousands separators: comma, no-break space, narrow no-break space, thin space.
const DIGITS: &str = r"-?\d{1,3}(?:[,\x{a0}\x{202f}\x{2009}]\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?";

/// A number in an answer: currency sign, digits (1), a scale word after a space (2) or a scale letter
/// against the digits (3), and a unit (4).
static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    let mut names: Vec<String> = COUNT_UNITS.iter().map(|u| regex::escape(u)).collect();
    names.extend(
        units_names()
            .into_iter()
            .filter(|u| !u.starts_with('°'))
            .map(|u| regex::escape(&u).replace(' ', r"\s+")),
    );
    // Longest first: the alternation takes the first name that fits (`minutes` before `min`).
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    names.dedup();
    re(&format!(
        r"(?i)(?:[$€£¥]\s?)?({DIGITS})(?:\s?(thousand|million|billion|trillion|bn|mn|tn)s?\b|((?-i:[kKMBT]))\b)?(\s?(?:%|°\s?[cf]\b|(?-i:[A-Z]{{3}}\b)|(?:{})\b))?",
        names.join("|")
    ))
});

/// A number in evidence: digits or scientific notation (1), then a scale word (2) or letter (3).
static EVIDENCE_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(-?\d+(?:\.\d+)?[eE][+-]?\d+|{DIGITS})(?:\s?((?i:thousand|million|billion|trillion|bn|mn|tn))s?\b|((?-i:[KMBT]))\b)?"
    ))
});
/// ISO 8601 durations (`PT1H41M`) and written ones (`1h 41min`, `2 hrs 5 mins`).
static DURATION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bPT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?\b|\b(\d+)\s?(?:h|hrs?|hours?)\s*(\d+)\s?(?:m|mins?|minutes?)\b",
    )
});
/// Phone numbers: `+34 605 11 22 33`, `(555) 123-4567`, `+14155550123`.
static PHONE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\+\d{7,15}\b|(?:\+\d{1,3}[\s.\-]?)?(?:\(\d{1,4}\)[\s.\-]?)?\d{2,5}(?:[\s.\-]\d{2,5}){1,5}")
});
/// Digit runs of evidence that may be phone numbers, in any grouping.
static DIGIT_RUN: LazyLock<Regex> = LazyLock::new(|| re(r"\+?\d(?:[\s().\-]{0,2}\d){6,}"));

fn units_names() -> Vec<String> {
    units::names().map(str::to_string).collect()
}

/// Value and decimals of a number as written (`66,412.37` → 66412.37, 2), times `scale`.
pub(super) fn parse_number(digits: &str, scale: f64) -> Option<(f64, u32)> {
    let plain: String = digits
        .chars()
        .filter(|c| !matches!(c, ',' | '\u{a0}' | '\u{202f}' | '\u{2009}'))
        .collect();
    let value: f64 = plain.parse().ok()?;
    let mantissa = plain.split(['e', 'E']).next().unwrap_or("");
    let decimals = mantissa.split_once('.').map_or(0, |(_, d)| d.len() as u32);
    Some((value * scale, decimals))
}

/// The scale of captures 2 (a word) or 3 (a letter), 1 without one.
fn scale_of(c: &regex::Captures<'_>) -> f64 {
    c.get(2)
        .or(c.get(3))
        .and_then(|m| units::scale(m.as_str()))
        .unwrap_or(1.0)
}

/// The number claims of an answer (masked out as they are taken).
pub(super) fn numbers(masked: &mut String, out: &mut Vec<Claim>) {
    let mut found = Vec::new();
    for c in NUMBER.captures_iter(masked) {
        let (Some(all), Some(digits)) = (c.get(0), c.get(1)) else {
            continue;
        };
        let scale = scale_of(&c);
        let written_unit = c.get(4).map(|m| m.as_str().trim().to_string());
        let unit = written_unit.as_deref().and_then(units::unit);
        // A numbered list's marker ("10. video") is not a claim.
        if list_marker(masked, all.start(), digits.end()) {
            found.push((all.start(), digits.end(), 0.0, 0, 1.0, None, false));
            continue;
        }
        // A dash glued to a word or number is a range's ("2011-2018"), not a minus sign.
        let digits_text = match digits.as_str().strip_prefix('-') {
            Some(d) if glued_before(masked, digits.start()) => d,
            _ => digits.as_str(),
        };
        let Some((value, decimals)) = parse_number(digits_text, scale) else {
            continue;
        };
        // A small whole number with nothing after it ("3 recipes", "top 5") says too little to check.
        let specific = decimals > 0
            || value.abs() >= 10.0
            || scale > 1.0
            || all.as_str().starts_with(['$', '€', '£', '¥'])
            || unit.is_some_and(units::is_magnitude)
            || written_unit
                .as_deref()
                .is_some_and(|u| u == "%" || u.starts_with('°'));
        let text = all.as_str().trim_end();
        let end = all.start() + text.len();
        let start = if digits_text.len() < digits.as_str().len() && all.start() == digits.start() {
            digits.start() + 1
        } else {
            all.start()
        };
        found.push((start, end, value, decimals, scale, unit, specific));
    }
    for (s, e, value, decimals, scale, unit, specific) in found {
        if specific {
            let mut c = claim(ClaimKind::Number, masked[s..e].trim_end(), s);
            c.value = Some(value);
            c.decimals = decimals;
            c.unit = unit;
            c.tolerance = tolerance(value, decimals, scale);
            out.push(c);
        }
        mask(masked, s, e);
    }
}

/// Whether the number at `start..end` opens its line and is followed by `.` or `)` and a space.
fn list_marker(text: &str, start: usize, end: usize) -> bool {
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..start].trim().is_empty()
        && !text[start..end].contains(['.', ','])
        && (text[end..].starts_with(". ") || text[end..].starts_with(") "))
}

/// Whether the character before byte `at` is a letter or digit.
fn glued_before(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_some_and(char::is_alphanumeric)
}

/// Half a unit of the last digit written (scaled by the scale word): `274.5 billion` ± 0.05 billion.
/// Whole numbers of four or more digits ending in zeros are read as rounded to the last nonzero digit
/// (`66,400` ± 50), when at least two digits are significant.
fn tolerance(value: f64, decimals: u32, scale: f64) -> f64 {
    let mut tol = 0.5 * 10f64.powi(-(decimals as i32)) * scale;
    if decimals == 0 && scale == 1.0 && value.abs() >= 1000.0 {
        let digits = format!("{}", value.abs().round() as u64);
        let zeros = digits.len() - digits.trim_end_matches('0').len();
        if digits.len() - zeros >= 2 {
            tol = 0.5 * 10f64.powi(zeros as i32);
        }
    }
    tol + 1e-9
}

/// The phone-number claims of an answer (masked out as they are taken): 8 to 15 digits, grouped with
/// a leading `+` or parentheses, or with two or more dashes or dots.
pub(super) fn phones(masked: &mut String, out: &mut Vec<Claim>) {
    let found: Vec<(usize, usize)> = PHONE
        .find_iter(masked)
        .filter(|m| {
            let t = m.as_str();
            let digits = t.chars().filter(char::is_ascii_digit).count();
            let before = masked[..m.start()].chars().next_back();
            let glued =
                before.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ',' | '-'));
            let grouped = t.starts_with('+')
                || t.contains('(')
                || t.matches('-').count() >= 2
                || t.matches('.').count() >= 2;
            (8..=15).contains(&digits) && grouped && !glued
        })
        .map(|m| (m.start(), m.end()))
        .collect();
    for (s, e) in found {
        out.push(claim(ClaimKind::Phone, &masked[s..e], s));
        mask(masked, s, e);
    }
}

/// The digits of a phone number, without leading zeros (a trunk prefix).
pub(super) fn phone_digits(text: &str) -> String {
    let d: String = text.chars().filter(char::is_ascii_digit).collect();
    d.trim_start_matches('0').to_string()
}

/// Digit runs of an evidence text in any grouping (candidates for phone numbers).
pub(super) fn digit_runs(text: &str) -> Vec<String> {
    DIGIT_RUN
        .find_iter(text)
        .map(|m| phone_digits(m.as_str()))
        .collect()
}

/// A hexadecimal literal (`0x1bc16d674ec80000`: blockchain APIs write amounts and block numbers so).
static HEX: LazyLock<Regex> = LazyLock::new(|| re(r"\b0[xX]([0-9a-fA-F]{1,32})\b"));

/// The value of a hexadecimal literal (`0x2a` → 42).
pub(super) fn hex_value(text: &str) -> Option<f64> {
    let c = HEX.captures(text.trim())?;
    u128::from_str_radix(&c[1], 16).ok().map(|v| v as f64)
}

/// Every number of an evidence text, with its raw text: plain and scaled (`274.5 billion`), decoded
/// from hexadecimal, and the totals of durations in minutes and seconds (`PT1H41M` → 101, 6060).
pub(super) fn evidence_numbers(text: &str) -> Vec<(f64, String)> {
    let mut out = Vec::new();
    for m in HEX.find_iter(text) {
        if let Some(v) = hex_value(m.as_str()) {
            out.push((v, m.as_str().to_string()));
        }
    }
    for c in EVIDENCE_NUMBER.captures_iter(text) {
        let (Some(all), Some(digits)) = (c.get(0), c.get(1)) else {
            continue;
        };
        if let Some((v, _)) = parse_number(digits.as_str(), 1.0) {
            out.push((v, digits.as_str().to_string()));
            let scale = scale_of(&c);
            if scale > 1.0 {
                out.push((v * scale, all.as_str().to_string()));
            }
        }
    }
    for c in DURATION.captures_iter(text) {
        let n = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<f64>().ok());
        let (h, m, s) = match n(4) {
            Some(h) => (h, n(5).unwrap_or(0.0), 0.0),
            None => (
                n(1).unwrap_or(0.0),
                n(2).unwrap_or(0.0),
                n(3).unwrap_or(0.0),
            ),
        };
        let raw = c.get(0).map(|m| m.as_str().to_string()).unwrap_or_default();
        let minutes = h * 60.0 + m;
        out.push((minutes, raw.clone()));
        out.push((minutes * 60.0 + s, raw));
    }
    out
}
