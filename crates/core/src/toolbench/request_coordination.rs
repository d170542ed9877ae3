//! Asks joined in one sentence: "Read the total on the invoice and convert it to US dollars", "Turn it
//! upright and tell me the total", "Find a recipe, get its photo, and write the title on it", "Which
//! city is it going to, and what's the weather there?". Each is an ask of its own: a checklist that
//! keeps only the last one lets the agent finish without the first (the request's own splitter,
//! `request_parts::clauses`, is the evaluator's and stays as it is).

use super::claims::content_words;
use super::request_vocab::{
    CONDITIONS, NOT_ACTIONS, OBJECT_STARTS, REQUESTING, WH, WH_PREPOSITIONS,
};

/// Where a second ask may start.
const JOINS: &[&str] = &[", and then ", ", then ", " then ", ", and ", " and ", ", "];

/// `clause` cut where a second ask starts: an imperative after an imperative ("…, and convert it"),
/// or a question word after a question (`question`: the sentence asks with "?").
pub(crate) fn coordinated_asks(clause: &str, question: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = clause.to_string();
    while let Some((left, right)) = second_ask(&rest, question) {
        // A question's first half stays a question ("Which gate is on it?").
        out.push(if question && !left.trim_end().ends_with('?') {
            format!("{}?", left.trim_end().trim_end_matches(','))
        } else {
            left
        });
        rest = right;
    }
    out.push(rest);
    out
}

/// The first place in `clause` where a second ask starts, as (before, after).
fn second_ask(clause: &str, question: bool) -> Option<(String, String)> {
    let lower = clause.to_lowercase();
    let imperative = words(&lower).first().is_some_and(|w| is_action(w));
    if !(imperative || question) || starts_conditional(&lower) {
        return None;
    }
    let mut best: Option<(usize, usize)> = None;
    for join in JOINS {
        for (at, _) in lower.match_indices(join) {
            let next = words(&lower[at + join.len()..]);
            if *join == ", " && !imperative {
                continue;
            }
            let starts = if imperative {
                next.first().is_some_and(|w| is_action(w))
                    && next
                        .get(1)
                        .is_some_and(|w| OBJECT_STARTS.contains(&w.as_str()))
            } else {
                asks_again(&next)
            };
            let enough = content_words(&clause[..at]).len() >= 2;
            if starts && enough && best.is_none_or(|(b, _)| at < b) {
                best = Some((at, at + join.len()));
            }
        }
    }
    best.map(|(at, after)| (clause[..at].to_string(), clause[after..].to_string()))
}

fn is_action(word: &str) -> bool {
    REQUESTING.contains(&word) && !NOT_ACTIONS.contains(&word)
}

/// A question word, alone or after a preposition.
fn asks_again(next: &[String]) -> bool {
    let first = next.first().map(String::as_str).unwrap_or("");
    WH.contains(&first)
        || (WH_PREPOSITIONS.contains(&first)
            && next.get(1).is_some_and(|w| WH.contains(&w.as_str())))
}

/// A clause that opens with a condition or a means ("If it rains, …", "Using the tool, …").
fn starts_conditional(lower: &str) -> bool {
    CONDITIONS
        .iter()
        .chain(&["using ", "with "])
        .any(|c| lower.starts_with(c))
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .take(3)
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_string()
        })
        .collect()
}

/// Marks of a value kept whole while a request is cut into sentences and clauses (private-use
/// characters: a request holds none).
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

/// `query` with each word that holds `:`, `;`, `=`, `?` or `!` inside (a Wi-Fi string, a URL, a
/// time) replaced by a mark, and the words replaced; `restore_values` puts them back.
pub(crate) fn protect_values(query: &str) -> (String, Vec<String>) {
    let mut kept = Vec::new();
    let mut out = String::with_capacity(query.len());
    for (i, word) in query.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let body = word.trim_end_matches(['.', ',', '!', '?', ')']);
        let body = if body.ends_with(';') && !body.trim_end_matches(';').contains([':', ';', '=']) {
            body.trim_end_matches(';')
        } else {
            body
        };
        let inner = body.trim_end_matches(';');
        if inner.contains([':', ';', '=', '?', '!']) && !inner.ends_with(':') {
            out.push_str(&format!("{OPEN}{}{CLOSE}", kept.len()));
            out.push_str(&word[body.len()..]);
            kept.push(body.to_string());
        } else {
            out.push_str(word);
        }
    }
    (out, kept)
}

/// `text` with the marks of `protect_values` replaced by the words they stand for.
pub(crate) fn restore_values(text: &str, kept: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let after = &rest[at + OPEN.len_utf8()..];
        let Some(end) = after.find(CLOSE) else {
            out.push_str(&rest[at..]);
            return out;
        };
        match after[..end].parse::<usize>().ok().and_then(|k| kept.get(k)) {
            Some(v) => out.push_str(v),
            None => out.push_str(&rest[at..at + OPEN.len_utf8() + end + CLOSE.len_utf8()]),
        }
        rest = &after[end + CLOSE.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// `part` without the punctuation that ends its sentence, except where it is the end of a value: a
/// Wi-Fi string's `;;`, a code ending in `;` (the last word holds `:`, `;` or `=` inside).
pub(crate) fn keep_value_end(part: &str) -> &str {
    let trimmed = part.trim_end_matches(['.', ',', ';', ' ']);
    let last = trimmed.rsplit(' ').next().unwrap_or("");
    if last.contains([':', ';', '=']) {
        let with_semicolons = part.trim_end_matches(['.', ',', ' ']);
        if with_semicolons.ends_with(';') {
            return with_semicolons;
        }
    }
    trimmed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imperatives_and_questions_joined_in_one_sentence_are_asks_of_their_own() {
        assert_eq!(
            coordinated_asks(
                "Read the total amount on invoice INV-1 in DocuVault and convert it to US dollars",
                false
            ),
            [
                "Read the total amount on invoice INV-1 in DocuVault",
                "convert it to US dollars"
            ]
        );
        assert_eq!(
            coordinated_asks(
                "Find a recipe with chickpeas on Recipe Box, get the photo of the first recipe found, and write the recipe's title on that photo",
                false
            ),
            [
                "Find a recipe with chickpeas on Recipe Box",
                "get the photo of the first recipe found",
                "write the recipe's title on that photo"
            ]
        );
        assert_eq!(
            coordinated_asks(
                "Which gate does the QR code on ticket TKT-1 say, and from what time is entry?",
                true
            ),
            [
                "Which gate does the QR code on ticket TKT-1 say?",
                "from what time is entry?"
            ]
        );
        // Nouns after "and" are what one ask asks for, not a second ask.
        for whole in [
            "Get the album's tracks and play count",
            "Show the title, list price and rating",
            "Tell me the price and availability of the product",
            "If it rains tomorrow, tell me the forecast and send me a warning",
        ] {
            assert_eq!(coordinated_asks(whole, false), [whole]);
        }
        // A statement joined to an ask is not cut here (framing is decided by the caller).
        let statement = "I'm planning a trip and need the weather";
        assert_eq!(coordinated_asks(statement, false), [statement]);
    }

    #[test]
    fn values_with_sentence_marks_inside_survive_the_cut() {
        let q = "Make a QR code for WIFI:S:Home;T:WPA;P:secret;; and tell me its size. Open https://x.example/?q=1, please.";
        let (safe, kept) = protect_values(q);
        assert!(!safe.contains(';') && !safe.contains("?q"), "{safe}");
        assert_eq!(restore_values(&safe, &kept), q);
        assert_eq!(
            kept,
            ["WIFI:S:Home;T:WPA;P:secret;;", "https://x.example/?q=1"]
        );
        // Words that only end a sentence or a clause are left alone.
        let plain = "Is it open? Tell me; thanks: really.";
        assert_eq!(protect_values(plain), (plain.to_string(), vec![]));
    }

    #[test]
    fn a_value_ending_in_semicolons_keeps_them() {
        assert_eq!(
            keep_value_end("Make a QR code for WIFI:S:Home;T:WPA;P:secret;;"),
            "Make a QR code for WIFI:S:Home;T:WPA;P:secret;;"
        );
        assert_eq!(
            keep_value_end("Tell me the weather;"),
            "Tell me the weather"
        );
        assert_eq!(
            keep_value_end("Convert 250 EUR to JPY. "),
            "Convert 250 EUR to JPY"
        );
    }
}
