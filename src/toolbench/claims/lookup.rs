//! Looking claims up in the evidence: values by value (numbers after rounding to the precision the answer
//! wrote, dates in any format), words by whole-word match after normalisation, and names or list items
//! by most of their content words when the exact phrase is not there.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::extract::{extract_claims, find_dates, parse_number};
use super::text::{content_words, excerpt, normalize};
use super::{Claim, ClaimCheck, ClaimKind, Evidence, MatchKind, SourceKind, Support};

static EVIDENCE_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?")
        .unwrap_or_else(|e| panic!("bad evidence number pattern: {e}"))
});

/// Evidence numbers tried in pairs for derived values (a conversion, a total); more would make chance
/// matches likely.
const MAX_DERIVED_NUMBERS: usize = 60;
/// Share of a name's or list item's content words that must occur in one source.
const WORD_SHARE: f64 = 0.8;

/// One evidence text, prepared once for every claim.
struct Prepared<'a> {
    ev: &'a Evidence,
    norm: String,
    words: BTreeSet<String>,
    numbers: Vec<(f64, String)>,
    dates: Vec<(i32, u32, u32)>,
}

fn prepare(ev: &Evidence) -> Prepared<'_> {
    let unescaped = ev.text.replace("\\/", "/");
    let numbers = EVIDENCE_NUMBER
        .find_iter(&unescaped)
        .filter_map(|m| parse_number(m.as_str(), None).map(|(v, _)| (v, m.as_str().to_string())))
        .collect();
    let dates = find_dates(&unescaped)
        .into_iter()
        .flat_map(|(_, _, r)| r)
        .collect();
    Prepared {
        ev,
        norm: normalize(&ev.text),
        words: content_words(&ev.text),
        numbers,
        dates,
    }
}

/// Extracts the claims of `answer` and looks each one up in `evidence` (observations first, then the
/// agent's arguments, then the request).
pub fn check_claims(answer: &str, evidence: &[Evidence]) -> Vec<ClaimCheck> {
    let mut ordered: Vec<&Evidence> = evidence.iter().collect();
    ordered.sort_by_key(|e| e.kind);
    let prepared: Vec<Prepared<'_>> = ordered.into_iter().map(prepare).collect();
    extract_claims(answer)
        .into_iter()
        .map(|claim| {
            let support = prepared
                .iter()
                .find_map(|p| exact(&claim, p))
                .or_else(|| words(&claim, &prepared))
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

/// The tolerance of a number as written: half a unit of its last decimal (scaled by a scale word).
fn tolerance(claim: &Claim) -> f64 {
    let written = claim.text.to_ascii_lowercase();
    let scale = if written.contains("trillion") {
        1e12
    } else if written.contains("billion") || written.contains("bn") {
        1e9
    } else if written.contains("million") {
        1e6
    } else if written.contains("thousand") || written.trim_end().ends_with('k') {
        1e3
    } else {
        1.0
    };
    0.5 * 10f64.powi(-(claim.decimals as i32)) * scale + 1e-9
}

fn number_matches(claim: &Claim, value: f64, e: f64) -> bool {
    let tol = tolerance(claim);
    let percent = claim.text.ends_with('%');
    (value - e).abs() <= tol
        || (value.abs() - e.abs()).abs() <= tol
        || (percent && (value - e * 100.0).abs() <= tol)
}

fn exact(claim: &Claim, p: &Prepared<'_>) -> Option<Support> {
    match claim.kind {
        ClaimKind::Number => {
            let value = claim.value?;
            p.numbers
                .iter()
                .find(|(e, _)| number_matches(claim, value, *e))
                .map(|(_, raw)| support(p, MatchKind::Exact, raw))
        }
        ClaimKind::Date => {
            let hit = p.dates.iter().any(|(y, m, d)| {
                claim
                    .dates
                    .iter()
                    .any(|(cy, cm, cd)| cy == y && cm == m && (*cd == 0 || cd == d))
            });
            hit.then(|| {
                let year = claim
                    .dates
                    .first()
                    .map(|d| d.0.to_string())
                    .unwrap_or_default();
                support(p, MatchKind::Exact, &year)
            })
        }
        _ => {
            let phrase = phrase_of(claim);
            (phrase.trim().len() > 1 && p.norm.contains(&phrase))
                .then(|| support(p, MatchKind::Exact, first_word(&claim.text)))
        }
    }
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
        claim.text.clone()
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
    let wanted = content_words(&claim.text);
    if wanted.len() < 2 {
        return None;
    }
    prepared.iter().find_map(|p| {
        let found: Vec<&String> = wanted.iter().filter(|w| p.words.contains(*w)).collect();
        let share = found.len() as f64 / wanted.len() as f64;
        (share >= WORD_SHARE).then(|| support(p, MatchKind::Words, found[0]))
    })
}

/// A number that is the product or quotient of two evidence numbers (250 EUR × rate), to the
/// precision the answer wrote.
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
            let candidates = [a * b, a / b, b / a];
            if candidates.iter().any(|c| number_matches(claim, value, *c)) {
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
