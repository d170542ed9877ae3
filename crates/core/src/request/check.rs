//! Structural checks of the parts a model proposes, the same in every language: no word list decides
//! what the user asked for; the rules only hold the model to the request's text.

use std::collections::BTreeSet;

/// Parts of one request at most; more are folded into the last.
pub const MAX_PARTS: usize = 6;

/// Longest part kept (characters): a part names one thing asked, it is not a paragraph.
const MAX_PART_CHARS: usize = 300;

/// Share of a part's words the request must hold: a part may reword a little, never invent.
const MIN_REQUEST_SHARE: f64 = 0.6;

/// Shortest common beginning that makes two words one (inflection: "hotels"/"hotel", "Wetter"/"Wetters").
const MIN_STEM: usize = 5;

/// The words of a text: runs of letters or digits (any script), lowercased.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The parts to keep of `proposed`: each cleaned, made of the request's words, none repeating
/// another (a part inside a longer one is the longer one's), at most [`MAX_PARTS`]. With none left,
/// the whole request is the one part.
pub fn check_parts(query: &str, proposed: &[String]) -> Vec<String> {
    checked_parts(query, proposed).unwrap_or_else(|| whole_request(query))
}

/// The parts of `proposed` that hold, as [`check_parts`] keeps them; `None` when none does.
pub fn checked_parts(query: &str, proposed: &[String]) -> Option<Vec<String>> {
    let request: BTreeSet<String> = words(query).into_iter().collect();
    let mut kept: Vec<String> = Vec::new();
    for part in proposed.iter().map(|p| clean(p)) {
        if part.is_empty()
            || part.chars().count() > MAX_PART_CHARS
            || !from_request(&part, &request)
        {
            continue;
        }
        let mine = word_set(&part);
        if kept.iter().any(|k| mine.is_subset(&word_set(k))) {
            continue;
        }
        kept.retain(|k| !word_set(k).is_subset(&mine));
        kept.push(part);
    }
    if kept.len() > MAX_PARTS {
        let rest = kept.split_off(MAX_PARTS - 1);
        kept.push(rest.join("; "));
    }
    (!kept.is_empty()).then_some(kept)
}

/// The request as its one part: what is left when no proposed part holds.
pub fn whole_request(query: &str) -> Vec<String> {
    vec![query.trim().chars().take(MAX_PART_CHARS * 2).collect()]
}

/// Form instructions kept of `proposed`: each made of the request's words, not one of `parts`, at
/// most three (an empty list when none holds).
pub fn check_form(query: &str, proposed: &[String], parts: &[String]) -> Vec<String> {
    let request: BTreeSet<String> = words(query).into_iter().collect();
    let mut kept: Vec<String> = Vec::new();
    for form in proposed.iter().map(|p| clean(p)) {
        let mine = word_set(&form);
        let known = parts.iter().chain(&kept).any(|k| word_set(k) == mine);
        if !form.is_empty()
            && form.chars().count() <= MAX_PART_CHARS
            && from_request(&form, &request)
            && !known
            && kept.len() < MAX_FORMS
        {
            kept.push(form);
        }
    }
    kept
}

/// Form instructions of one request at most.
const MAX_FORMS: usize = 3;

/// A part without list marks or surrounding space, on one line.
fn clean(part: &str) -> String {
    let one_line = part.split_whitespace().collect::<Vec<_>>().join(" ");
    one_line
        .trim_start_matches(|c: char| {
            c.is_ascii_digit() || matches!(c, '.' | ')' | '-' | '*' | ' ')
        })
        .trim()
        .to_string()
}

fn word_set(text: &str) -> BTreeSet<String> {
    words(text).into_iter().collect()
}

/// Whether enough of the part's words are the request's (a word counts when the request has it or
/// a word with the same beginning).
fn from_request(part: &str, request: &BTreeSet<String>) -> bool {
    let mine = words(part);
    if mine.is_empty() {
        return false;
    }
    let found = mine.iter().filter(|w| in_request(w, request)).count();
    found as f64 / mine.len() as f64 >= MIN_REQUEST_SHARE
}

fn in_request(word: &str, request: &BTreeSet<String>) -> bool {
    if request.contains(word) {
        return true;
    }
    let stem: String = word.chars().take(MIN_STEM).collect();
    stem.chars().count() == MIN_STEM && request.iter().any(|r| r.starts_with(&stem))
}
