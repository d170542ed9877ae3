//! The parts of a request without a model: the sentences that ask for something, split where a second
//! request starts. Low in the layers so both the evaluator (its fallback when the judge gives no split)
//! and the Sum2Act agent (its checklist) split requests the same way.

use super::claims::{Evidence, SourceKind, check_claims, content_words};

/// Most parts kept per request.
pub const MAX_PARTS: usize = 6;
/// Longest part kept (characters).
pub const MAX_PART_CHARS: usize = 200;

/// Words that mark a sentence (or clause) as asking for something.
const ASKING: &[&str] = &[
    "calculate",
    "can",
    "check",
    "compare",
    "convert",
    "could",
    "fetch",
    "find",
    "get",
    "give",
    "help",
    "how",
    "i'd",
    "include",
    "let",
    "list",
    "look",
    "need",
    "please",
    "provide",
    "recommend",
    "search",
    "send",
    "share",
    "show",
    "suggest",
    "tell",
    "want",
    "what",
    "when",
    "where",
    "which",
    "who",
    "would",
];
/// Words that start a new request inside a sentence after "and" ("…, and give me …").
const VERBS: &[&str] = &[
    "calculate",
    "check",
    "compare",
    "convert",
    "fetch",
    "find",
    "get",
    "give",
    "include",
    "let",
    "list",
    "look",
    "provide",
    "recommend",
    "search",
    "send",
    "share",
    "show",
    "suggest",
    "tell",
    "what",
    "which",
    "how",
    "where",
    "when",
    "who",
];

fn first_word_lower(s: &str) -> String {
    s.split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
        .to_lowercase()
}

fn asks(sentence: &str) -> bool {
    sentence.contains('?')
        || sentence
            .split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                    .to_lowercase()
            })
            .any(|w| ASKING.contains(&w.as_str()))
}

/// Splits a sentence at "and"/"also"/"as well as" where a new request starts, and at semicolons.
pub(crate) fn clauses(sentence: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = sentence.to_string();
    'outer: loop {
        let lower = rest.to_lowercase();
        for sep in [
            ", and also ",
            " and also ",
            ", and ",
            " and ",
            "; ",
            ", also ",
            " as well as ",
        ] {
            let mut from = 0;
            while let Some(at) = lower[from..].find(sep).map(|i| i + from) {
                let after = &rest[at + sep.len()..];
                let starts_request = VERBS.contains(&first_word_lower(after).as_str())
                    || sep.contains("also")
                    || sep == "; ";
                if starts_request && content_words(&rest[..at]).len() >= 2 {
                    out.push(rest[..at].to_string());
                    rest = after.to_string();
                    continue 'outer;
                }
                from = at + sep.len();
            }
        }
        break;
    }
    out.push(rest);
    out
}

/// A part as kept: trimmed, without a leading "Also,", at most `MAX_PART_CHARS`.
pub fn clean(part: &str) -> String {
    let t = part
        .trim()
        .trim_start_matches(|c: char| c == ',' || c.is_whitespace())
        .trim_end_matches(['.', ',', ';', ' ']);
    let t = t
        .strip_prefix("Also, ")
        .or_else(|| t.strip_prefix("Also "))
        .or_else(|| t.strip_prefix("Additionally, "))
        .unwrap_or(t);
    cut(t, MAX_PART_CHARS)
}

/// The parts of `query` without a model: the sentences that ask for something (all sentences when none
/// does), each split where a second request starts ("…, and give me …").
pub fn split_fallback(query: &str) -> Vec<String> {
    let all = sentences(query);
    let asking: Vec<&str> = all.iter().copied().filter(|s| asks(s)).collect();
    let chosen = if asking.is_empty() { all } else { asking };
    let mut parts: Vec<String> = Vec::new();
    for s in chosen {
        for c in clauses(s) {
            let c = clean(&c);
            if !content_words(&c).is_empty() && !parts.contains(&c) {
                parts.push(c);
            }
        }
    }
    if parts.is_empty() {
        parts.push(clean(query));
    }
    parts.truncate(MAX_PARTS);
    parts
}

/// Content words a part needs: "Recipes" alone says nothing about what to check.
const MIN_PART_WORDS: usize = 2;
/// Share of a part's content words that must come from the request (the prompt asks for its own words).
const MIN_REQUEST_SHARE: f64 = 0.6;

/// Checks a model's split: 1..=MAX_PARTS parts, each made mostly of the request's words and adding no
/// specific value the request does not contain (small models answer instead of splitting: "the price
/// of BTC is $1.22"). `None` when nothing usable is left.
pub fn validate_split(query: &str, parts: &[String]) -> Option<Vec<String>> {
    let words = content_words(query);
    let request = [Evidence::new(SourceKind::Request, "request", query)];
    let kept: Vec<String> = parts
        .iter()
        .map(|p| clean(p))
        .filter(|p| {
            let own = content_words(p);
            let shared = own.iter().filter(|w| words.contains(*w)).count();
            let invented = check_claims(p, &request)
                .iter()
                .any(|c| c.claim.kind.is_value() && !c.supported());
            own.len() >= MIN_PART_WORDS
                && shared as f64 / own.len() as f64 >= MIN_REQUEST_SHARE
                && !invented
        })
        .collect();
    let mut unique: Vec<String> = Vec::new();
    for p in kept {
        if !unique.iter().any(|u| u.eq_ignore_ascii_case(&p)) && unique.len() < MAX_PARTS {
            unique.push(p);
        }
    }
    (!unique.is_empty()).then_some(unique)
}

/// Sentences of a text (split at `.`, `!`, `?`, `;` and newlines followed by space).
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        let end = matches!(b, b'!' | b'?' | b';' | b'\n')
            || (*b == b'.' && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()));
        if end {
            out.push(&text[start..=i]);
            start = i + 1;
        }
    }
    out.push(&text[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The first `n` characters of `s`, with an ellipsis when cut.
fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_requests_in_one_sentence() {
        assert_eq!(
            split_fallback(
                "Tell me about the airport with IATA code LIS, and give me the status of flight TP1350 on 2024-06-14."
            ),
            vec![
                "Tell me about the airport with IATA code LIS",
                "give me the status of flight TP1350 on 2024-06-14"
            ]
        );
    }

    #[test]
    fn context_sentences_are_dropped_and_also_starts_a_part() {
        assert_eq!(
            split_fallback(
                "I'm planning a trip to Paris next month. Can you find hotels near the Eiffel Tower? Also, tell me the weather forecast for the week."
            ),
            vec![
                "Can you find hotels near the Eiffel Tower?",
                "tell me the weather forecast for the week"
            ]
        );
    }

    #[test]
    fn and_inside_a_request_does_not_split_it() {
        assert_eq!(
            split_fallback("Find recipes with chickpeas and spinach."),
            vec!["Find recipes with chickpeas and spinach"]
        );
        assert_eq!(
            split_fallback("Get the latest news; list the top 3 songs"),
            vec!["Get the latest news", "list the top 3 songs"]
        );
    }

    #[test]
    fn no_asking_sentence_keeps_everything_and_never_returns_nothing() {
        assert_eq!(
            split_fallback("Weather in Lisbon."),
            vec!["Weather in Lisbon"]
        );
        assert_eq!(split_fallback("   ").len(), 1);
    }

    #[test]
    fn model_splits_are_checked_against_the_request() {
        let q = "What is the price of BTC and ETH?";
        assert_eq!(
            validate_split(q, &["price of BTC".into(), "weather in Oslo".into()]),
            Some(vec!["price of BTC".to_string()])
        );
        assert_eq!(validate_split(q, &["unrelated".into()]), None);
        assert_eq!(
            validate_split(q, &["BTC".into()]),
            None,
            "one word is not a part"
        );
        // Answers instead of parts: a value the request lacks, or mostly new words.
        assert_eq!(
            validate_split(q, &["The price of BTC is $1.22.".into()]),
            None
        );
        assert_eq!(
            validate_split(
                "What is the weather in Lisbon now?",
                &["The weather in Lisbon is cloudy and warm".into()]
            ),
            None
        );
        assert_eq!(validate_split(q, &[]), None);
        assert_eq!(
            validate_split(q, &["price of BTC".into(), "Price of BTC.".into()]),
            Some(vec!["price of BTC".to_string()])
        );
    }
}
