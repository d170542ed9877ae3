//! Dates in any common written form, read as `(year, month, day)` (day 0: a month without a day), so
//! `7 Nov 2008`, `November 7th, 2008`, `07-Nov-2008`, `2008-11-07T00:00:00Z` and `07/11/2008` are one
//! date. Evidence is read more widely than answers: compact `20081107` and Unix timestamps
//! (`1226016000`, in seconds or milliseconds, UTC) are dates there, since APIs write dates that way and
//! answers never do.

use std::sync::LazyLock;

use chrono::Datelike;
use regex::Regex;

use super::scan::re;

const MONTHS: &str = "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";
/// Between the parts of a written date: spaces, or one dash, slash or dot with optional spaces.
const SEP: &str = r"(?:\s*[-/.]\s*|\s+)";

static DATE_ISO: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?"));
static DATE_NUMERIC: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})\b"));
static DATE_MDY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b({MONTHS})\.?{SEP}(\d{{1,2}})(?:st|nd|rd|th)?,?{SEP}(\d{{4}})\b"
    ))
});
static DATE_DMY: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(\d{{1,2}})(?:st|nd|rd|th)?\.?{SEP}(?:of\s+)?({MONTHS})\.?,?{SEP}(\d{{4}})\b"
    ))
});
static DATE_MY: LazyLock<Regex> =
    LazyLock::new(|| re(&format!(r"(?i)\b({MONTHS})\.?,?{SEP}(\d{{4}})\b")));
/// `20081107` (evidence only).
static DATE_COMPACT: LazyLock<Regex> =
    LazyLock::new(|| re(r"\b((?:19|20)\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])\b"));
/// Unix time in seconds (10 digits: 2001–2286) or milliseconds (13 digits) (evidence only).
static EPOCH: LazyLock<Regex> = LazyLock::new(|| re(r"\b(\d{10}|\d{13})(?:\.\d+)?\b"));

/// A JSON field holding part of a date (evidence only): its key (1) and its value (2), a number or a
/// month name. Keys with `week` name a weekday, not a day of the month.
static DATE_FIELD: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r#"(?i)"([a-z_]*(?:year|yr|month|mon|day)[a-z_]*|[ymd])"\s*:\s*"?(\d{{1,4}}|{MONTHS})"?\s*[,}}]"#
    ))
});
/// How far apart (bytes) the year, month and day fields of one date may be.
const FIELD_SPAN: usize = 160;

/// A date in a text: `(start, end, readings as (year, month, day))`.
pub(super) type DateSpan = (usize, usize, Vec<(i32, u32, u32)>);

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

/// Every written date in `text` (the forms an answer uses), as `(start, end, readings)`.
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

/// The dates an evidence text holds: the written ones, compact `YYYYMMDD`, and Unix timestamps.
pub(super) fn evidence_dates(text: &str) -> Vec<(i32, u32, u32)> {
    let mut out: Vec<(i32, u32, u32)> = find_dates(text)
        .into_iter()
        .flat_map(|(_, _, r)| r)
        .collect();
    for c in DATE_COMPACT.captures_iter(text) {
        let n = |i: usize| c[i].parse::<u32>().unwrap_or(0);
        out.push((n(1) as i32, n(2), n(3)));
    }
    out.extend(field_dates(text));
    for c in EPOCH.captures_iter(text) {
        let Ok(raw) = c[1].parse::<i64>() else {
            continue;
        };
        let secs = if c[1].len() == 13 { raw / 1000 } else { raw };
        if let Some(t) = chrono::DateTime::from_timestamp(secs, 0) {
            let d = t.date_naive();
            out.push((d.year(), d.month(), d.day()));
        }
    }
    out
}

/// Which part of a date a field holds.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    Year,
    Month,
    Day,
}

/// Dates an API returned as separate fields (`"day": 5, "month": 3, "year": 2024`): each year field
/// with the nearest month field and (when there is one) the nearest day field within
/// [`FIELD_SPAN`] bytes of it.
fn field_dates(text: &str) -> Vec<(i32, u32, u32)> {
    let mut fields: Vec<(usize, Part, u32)> = Vec::new();
    for c in DATE_FIELD.captures_iter(text) {
        let key = c[1].to_ascii_lowercase();
        let value = &c[2];
        let number = value.parse::<u32>().ok();
        let part = match key.as_str() {
            k if k.contains("week") => continue,
            "y" => Part::Year,
            "m" => Part::Month,
            "d" => Part::Day,
            k if k.contains("year") || k.contains("yr") => Part::Year,
            // `dayOfMonth` is a day.
            k if k.starts_with("day") => Part::Day,
            k if k.contains("mon") => Part::Month,
            _ => Part::Day,
        };
        let n = match (part, number) {
            (Part::Month, None) => month(value),
            (_, n) => n,
        };
        if let Some(n) = n {
            fields.push((c.get(0).map_or(0, |m| m.start()), part, n));
        }
    }
    let nearest = |at: usize, part: Part| {
        fields
            .iter()
            .filter(|(p, kind, _)| *kind == part && p.abs_diff(at) <= FIELD_SPAN)
            .min_by_key(|(p, _, _)| p.abs_diff(at))
            .map(|(_, _, n)| *n)
    };
    fields
        .iter()
        .filter(|(_, part, _)| *part == Part::Year)
        .filter_map(|&(at, _, y)| {
            let m = nearest(at, Part::Month)?;
            let d = nearest(at, Part::Day).unwrap_or(0);
            Some((y as i32, m, d))
        })
        .filter(|&(y, m, d)| valid(y, m, d))
        .collect()
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

/// Whether a date claim's readings meet one of the evidence's dates (a month-precision claim meets
/// any day of that month).
pub(super) fn dates_meet(claim: &[(i32, u32, u32)], evidence: &[(i32, u32, u32)]) -> bool {
    evidence.iter().any(|(y, m, d)| {
        claim
            .iter()
            .any(|(cy, cm, cd)| cy == y && cm == m && (*cd == 0 || cd == d))
    })
}
