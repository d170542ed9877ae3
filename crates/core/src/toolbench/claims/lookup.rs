//! Looking claims up in the evidence: values by value (numbers after rounding to the precision the answer
//! wrote, in any unit or scale; dates in any format; phone numbers in any grouping), words by whole-word
//! match after normalisation, names or list items by most of their content words when the exact phrase
//! is not there, and anything textual with spacing and punctuation ignored as a last resort.

use std::collections::BTreeSet;

use super::dates::{dates_meet, evidence_dates};
use super::extract::extract_claims;
use super::numbers::{digit_runs, evidence_numbers, hex_value, phone_digits};
use super::text::{content_words, excerpt, normalize, squash};
use super::units::{ELIDED_SCALES, conversions, mentions_scale};
use super::{Claim, ClaimCheck, ClaimKind, Evidence, MatchKind, SourceKind, Support};

/// Evidence numbers tried in pairs for derived values (a conversion, a total); more would make chance
/// matches likely.
const MAX_DERIVED_NUMBERS: usize = 60;
/// Share of a name's or list item's content words that must occur in one source.
const WORD_SHARE: f64 = 0.8;
/// Shortest squashed text matched loosely (shorter ones occur by chance).
const MIN_LOOSE_CHARS: usize = 6;
/// Shortest phone number (digits) matched by suffix.
const MIN_PHONE_DIGITS: usize = 7;

/// One evidence text, prepared once for every claim.
struct Prepared<'a> {
    ev: &'a Evidence,
    norm: String,
    squashed: String,
    words: BTreeSet<String>,
    numbers: Vec<(f64, String)>,
    dates: Vec<(i32, u32, u32)>,
    digit_runs: Vec<String>,
}

fn prepare(ev: &Evidence) -> Prepared<'_> {
    let unescaped = ev.text.replace("\\/", "/");
    Prepared {
        ev,
        norm: normalize(&ev.text),
        squashed: squash(&ev.text),
        words: content_words(&ev.text),
        numbers: evidence_numbers(&unescaped),
        dates: evidence_dates(&unescaped),
        digit_runs: digit_runs(&unescaped),
    }
}

/// Extracts the claims of `answer` and looks each one up in `evidence` (observations first, then the
/// agent's arguments, then the request).
pub fn check_claims(answer: &str, evidence: &[Evidence]) -> Vec<ClaimCheck> {
    let mut ordered: Vec<&Evidence> = evidence.iter().collect();
    ordered.sort_by_key(|e| e.kind);
    let prepared: Vec<Prepared<'_>> = ordered.into_iter().map(prepare).collect();
    let scaled = mentions_scale(answer);
    extract_claims(answer)
        .into_iter()
        .map(|claim| {
            let support = prepared
                .iter()
                .find_map(|p| exact(&claim, p))
                .or_else(|| words(&claim, &prepared))
                .or_else(|| prepared.iter().find_map(|p| converted(&claim, p, scaled)))
                .or_else(|| prepared.iter().find_map(|p| loose(&claim, p)))
                .or_else(|| url_of_id(&claim, &prepared))
                .or_else(|| url_of_value(&claim, &prepared))
                .or_else(|| name_with_code(&claim, &prepared))
                .or_else(|| derived(&claim, &prepared));
            ClaimCheck { claim, support }
        })
        .collect()
}

fn support(p: &Prepared<'_>, matched: MatchKind, needle: &str) -> Support {
    Support {
        kind: p.ev.kind,
        label: p.ev.label.clone(),
        matched,
        excerpt: excerpt(&p.ev.text, needle),
    }
}

/// Whether evidence value `e` is `value` within `tol`, also as a fraction for a percentage and with
/// the sign ignored (`9.13° W` for `-9.13`).
fn number_matches(claim: &Claim, value: f64, tol: f64, e: f64) -> bool {
    let percent = claim.text.ends_with('%');
    (value - e).abs() <= tol
        || (value.abs() - e.abs()).abs() <= tol
        || (percent && (value - e * 100.0).abs() <= tol)
}

/// The first evidence number within `tol` of `value`.
fn find_number<'p>(
    claim: &Claim,
    p: &'p Prepared<'_>,
    value: f64,
    tol: f64,
) -> Option<&'p (f64, String)> {
    p.numbers
        .iter()
        .find(|(e, _)| number_matches(claim, value, tol, *e))
}

fn exact(claim: &Claim, p: &Prepared<'_>) -> Option<Support> {
    match claim.kind {
        ClaimKind::Number => {
            let value = claim.value?;
            find_number(claim, p, value, claim.tolerance)
                .map(|(_, raw)| support(p, MatchKind::Exact, raw))
        }
        ClaimKind::Date => dates_meet(&claim.dates, &p.dates).then(|| {
            let year = claim
                .dates
                .first()
                .map(|d| d.0.to_string())
                .unwrap_or_default();
            support(p, MatchKind::Exact, &year)
        }),
        ClaimKind::Phone => {
            let digits = phone_digits(&claim.text);
            let found = p.digit_runs.iter().find(|run| {
                let (short, long) = if run.len() < digits.len() {
                    (run.as_str(), digits.as_str())
                } else {
                    (digits.as_str(), run.as_str())
                };
                short.len() >= MIN_PHONE_DIGITS && long.ends_with(short)
            })?;
            let tail = &found[found.len().saturating_sub(4)..];
            Some(support(p, MatchKind::Exact, tail))
        }
        _ => {
            let phrase = phrase_of(claim);
            (phrase.trim().len() > 1 && p.norm.contains(&phrase))
                .then(|| support(p, MatchKind::Exact, first_word(claim.match_text())))
        }
    }
}

/// A number in another unit of its dimension, or (in an answer that names a scale somewhere) at a
/// scale the answer left out; a hexadecimal id (`0x121eac0`) as the decimal number it is.
fn converted(claim: &Claim, p: &Prepared<'_>, scaled: bool) -> Option<Support> {
    if claim.kind == ClaimKind::Id {
        let value = hex_value(&claim.text)?;
        return find_number(claim, p, value, 0.5)
            .map(|(_, raw)| support(p, MatchKind::Converted, raw));
    }
    let value = claim.value.filter(|_| claim.kind == ClaimKind::Number)?;
    let mut candidates = claim
        .unit
        .map(|u| conversions(value, claim.tolerance, u))
        .unwrap_or_default();
    if scaled {
        candidates.extend(
            ELIDED_SCALES
                .iter()
                .map(|f| (value * f, claim.tolerance * f)),
        );
    }
    candidates.into_iter().find_map(|(v, tol)| {
        find_number(claim, p, v, tol).map(|(_, raw)| support(p, MatchKind::Converted, raw))
    })
}

/// Textual values (and long whole numbers) with case, spacing and punctuation ignored.
fn loose(claim: &Claim, p: &Prepared<'_>) -> Option<Support> {
    let long_integer = claim.kind == ClaimKind::Number
        && claim.decimals == 0
        && claim.text.chars().filter(char::is_ascii_digit).count() >= MIN_PHONE_DIGITS;
    if claim.kind == ClaimKind::Number && !long_integer
        || matches!(claim.kind, ClaimKind::Date | ClaimKind::Phone)
    {
        return None;
    }
    let needle = squash(claim.match_text());
    (needle.chars().count() >= MIN_LOOSE_CHARS && p.squashed.contains(&needle))
        .then(|| support(p, MatchKind::Loose, first_word(claim.match_text())))
}

/// The normalised phrase a textual claim must occur as (URLs without scheme and `www.`).
fn phrase_of(claim: &Claim) -> String {
    let text = if claim.kind == ClaimKind::Url {
        let lower = claim.text.to_lowercase();
        lower
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .trim_start_matches("www.")
            .trim_end_matches('/')
            .to_string()
    } else {
        claim.match_text().to_string()
    };
    normalize(&text)
}

fn first_word(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or(text)
}

fn words(claim: &Claim, prepared: &[Prepared<'_>]) -> Option<Support> {
    if !matches!(
        claim.kind,
        ClaimKind::Name | ClaimKind::ListItem | ClaimKind::Quoted
    ) {
        return None;
    }
    let wanted = content_words(claim.match_text());
    if wanted.len() < 2 {
        return short_name(claim, prepared);
    }
    prepared.iter().find_map(|p| {
        let found: Vec<&String> = wanted.iter().filter(|w| p.words.contains(*w)).collect();
        let share = found.len() as f64 / wanted.len() as f64;
        (share >= WORD_SHARE).then(|| support(p, MatchKind::Words, found[0]))
    })
}

/// What follows a URL claim's host (`path?query#fragment`); `None` for a claim that is no URL.
fn url_path(claim: &Claim) -> Option<&str> {
    if claim.kind != ClaimKind::Url {
        return None;
    }
    let after_host = claim
        .text
        .split_once("://")
        .map_or(claim.text.as_str(), |(_, rest)| rest);
    Some(after_host.split_once('/').map_or("", |(_, p)| p))
}

/// Shortest id a URL is matched by when the URL itself is nowhere.
const MIN_URL_ID_CHARS: usize = 6;

/// A URL built from an id the tools returned (`https://vimeo.com/372811902` from `"id": 372811902`,
/// a watch page from a video id): its longest path or query token with a digit, of at least six
/// characters, is a whole word of one source.
fn url_of_id(claim: &Claim, prepared: &[Prepared<'_>]) -> Option<Support> {
    let path = url_path(claim)?;
    let id = path
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| t.len() >= MIN_URL_ID_CHARS && t.chars().any(|c| c.is_ascii_digit()))
        .max_by_key(|t| t.len())?;
    let needle = format!(" {} ", id.to_lowercase());
    prepared
        .iter()
        .find(|p| p.norm.contains(&needle))
        .map(|p| support(p, MatchKind::Derived, id))
}

/// `Afghanistan (AF)`, `Lisbon (LIS)`: a name and its code, which the tools return as two fields of
/// one record; found when both are whole words of one source.
fn name_with_code(claim: &Claim, prepared: &[Prepared<'_>]) -> Option<Support> {
    if claim.kind.is_value() {
        return None;
    }
    let (name, code) = claim
        .match_text()
        .trim()
        .strip_suffix(')')?
        .rsplit_once('(')?;
    let code = code.trim();
    if code.is_empty() || code.len() > 8 || !code.chars().all(char::is_alphanumeric) {
        return None;
    }
    let name = normalize(name);
    let code = format!(" {} ", normalize(code).trim());
    if name.trim().is_empty() {
        return None;
    }
    prepared
        .iter()
        .find(|p| p.norm.contains(&name) && p.norm.contains(&code))
        .map(|p| support(p, MatchKind::Words, code.trim()))
}

/// Shortest path segment or query value matched as a whole returned value.
const MIN_URL_VALUE_CHARS: usize = 3;

/// A URL one of whose path segments or query values is a whole value a tool returned (a slug
/// `bohemian-rhapsody`, `?id=abc12` from `"id": "abc12"`): the URL was built from it. A segment
/// needs a digit or a dash, or six characters, so `/track/` or `/en/` alone match nothing.
fn url_of_value(claim: &Claim, prepared: &[Prepared<'_>]) -> Option<Support> {
    let path = url_path(claim)?;
    let telling = |t: &&str| {
        t.chars().count() >= MIN_URL_VALUE_CHARS
            && (t.chars().any(|c| c.is_ascii_digit() || c == '-') || t.chars().count() >= 6)
    };
    let values: Vec<&str> = path
        .split(['/', '?', '&', '#'])
        .map(|t| t.rsplit_once('=').map_or(t, |(_, v)| v))
        .filter(telling)
        .collect();
    prepared
        .iter()
        .filter(|p| p.ev.kind == SourceKind::Observation)
        .find_map(|p| {
            let v = values.iter().find(|v| returns_value(&p.ev.text, v))?;
            Some(support(p, MatchKind::Derived, v))
        })
}

/// Whether `text` (a JSON reply) holds `value` as a whole string or number value.
fn returns_value(text: &str, value: &str) -> bool {
    if text.contains(&format!("\"{value}\"")) {
        return true;
    }
    text.match_indices(value).any(|(at, _)| {
        let before = text[..at].trim_end().ends_with(':');
        let after = text[at + value.len()..].trim_start();
        before && after.starts_with([',', '}', ']'])
    })
}

/// A name of two or more words with one content word ("Sungjae Im"), found when every word of it is
/// a whole word of one source: the tools may hold first and last names apart.
fn short_name(claim: &Claim, prepared: &[Prepared<'_>]) -> Option<Support> {
    let words: Vec<String> = normalize(claim.match_text())
        .split_whitespace()
        .map(|w| format!(" {w} "))
        .collect();
    if claim.kind != ClaimKind::Name || words.len() < 2 {
        return None;
    }
    prepared
        .iter()
        .find(|p| words.iter().all(|w| p.norm.contains(w.as_str())))
        .map(|p| support(p, MatchKind::Words, words[0].trim()))
}

/// A number that is the product or quotient of two evidence numbers (250 EUR × rate), or the sum or
/// difference of two numbers the tools returned (hours worked on two days, how much warmer one city
/// is), to the precision the answer wrote. Sums and differences take tool results only: with the
/// request's and the arguments' small numbers too, chance would match almost any small number.
fn derived(claim: &Claim, prepared: &[Prepared<'_>]) -> Option<Support> {
    let value = claim.value.filter(|_| claim.kind == ClaimKind::Number)?;
    let pool: Vec<(f64, &Prepared<'_>, &str)> = prepared
        .iter()
        .flat_map(|p| p.numbers.iter().map(move |(v, raw)| (*v, p, raw.as_str())))
        .filter(|(v, _, _)| v.abs() > 1e-12)
        .take(MAX_DERIVED_NUMBERS)
        .collect();
    for (i, (a, pa, raw_a)) in pool.iter().enumerate() {
        for (b, pb, raw_b) in &pool[i + 1..] {
            let results =
                pa.ev.kind == SourceKind::Observation && pb.ev.kind == SourceKind::Observation;
            let sums = [a + b, (a - b).abs()];
            let candidates = [a * b, a / b, b / a];
            let sums = if results { &sums[..] } else { &[] };
            if candidates
                .iter()
                .chain(sums)
                .any(|c| number_matches(claim, value, claim.tolerance, *c))
            {
                // Cite the observation when one of the two numbers came from one.
                let (p, raw) = if pb.ev.kind == SourceKind::Observation {
                    (pb, raw_b)
                } else {
                    (pa, raw_a)
                };
                let mut s = support(p, MatchKind::Derived, raw);
                s.excerpt = format!("{raw_a} and {raw_b}: {}", s.excerpt);
                return Some(s);
            }
        }
    }
    None
}
