//! What a request asks for, without a model, for the Sum2Act checklist: the request's clauses that ask
//! (a question, a request to the agent, "I'd like to know …"), none of its framing ("I'm a movie
//! critic", "Thank you!"), each whole. And the check that a split of the request keeps every ask:
//! a word the request asks about that no part holds means a part was dropped.

use std::collections::BTreeSet;

use super::claims::content_words;
use super::request_parts::{clauses, sentences, split_fallback};

/// Most parts kept per request (as `request_parts::MAX_PARTS`).
pub const MAX_ASKS: usize = 6;
/// Longest ask kept: a size guard for pathological input, far above a real request's sentence.
const ASK_SIZE_GUARD: usize = 1_000;

/// Leading words a clause loses: they join it to the one before and ask for nothing themselves.
const CONNECTIVES: &[&str] = &[
    "additionally",
    "also",
    "and",
    "besides",
    "finally",
    "furthermore",
    "in addition",
    "lastly",
    "moreover",
    "plus",
    "then",
];

/// First words of a request made to the agent ("Fetch …", "Can you …", "Please …").
const REQUESTING: &[&str] = &[
    "add",
    "analyze",
    "analyse",
    "book",
    "calculate",
    "can",
    "check",
    "compare",
    "convert",
    "could",
    "count",
    "create",
    "describe",
    "detect",
    "determine",
    "display",
    "do",
    "does",
    "download",
    "estimate",
    "explain",
    "extract",
    "fetch",
    "filter",
    "find",
    "generate",
    "get",
    "give",
    "help",
    "how",
    "identify",
    "include",
    "inform",
    "is",
    "let",
    "list",
    "look",
    "make",
    "notify",
    "perform",
    "please",
    "predict",
    "provide",
    "recommend",
    "remove",
    "replace",
    "retrieve",
    "return",
    "run",
    "scrape",
    "search",
    "send",
    "share",
    "shorten",
    "show",
    "sort",
    "suggest",
    "summarize",
    "summarise",
    "tell",
    "track",
    "translate",
    "validate",
    "verify",
    "what",
    "when",
    "where",
    "which",
    "who",
    "would",
];

/// Verbs of finding something out: "I want to *know* …" asks; "I want to *write* a review" is why.
const INFO_VERBS: &[&str] = &[
    "access",
    "calculate",
    "check",
    "compare",
    "convert",
    "discover",
    "explore",
    "fetch",
    "find",
    "gather",
    "get",
    "have",
    "know",
    "learn",
    "obtain",
    "read",
    "receive",
    "retrieve",
    "search",
    "see",
    "track",
    "verify",
    "view",
];

/// Phrases that ask without a question mark.
const ASKING_PHRASES: &[&str] = &[
    "appreciate it if",
    "be great",
    "be helpful",
    "be nice",
    "be useful",
    "curious about",
    "i also require",
    "i require",
    "important to",
    "interested in",
    "let me know",
    "looking for",
    "please",
    "searching for",
    "we also require",
    "we require",
    "provide",
    "would like",
    "would love",
];

/// Words that carry no topic: asking verbs and fillers ("provide me with information about …").
const FILLER: &[&str] = &[
    "able",
    "access",
    "additionally",
    "also",
    "api",
    "assist",
    "assistance",
    "available",
    "call",
    "can",
    "could",
    "curious",
    "data",
    "detail",
    "details",
    "fetch",
    "find",
    "finally",
    "furthermore",
    "get",
    "give",
    "great",
    "help",
    "helpful",
    "include",
    "including",
    "info",
    "information",
    "interested",
    "know",
    "lastly",
    "let",
    "like",
    "list",
    "look",
    "looking",
    "love",
    "moreover",
    "need",
    "nice",
    "obtain",
    "please",
    "provide",
    "retrieve",
    "share",
    "show",
    "some",
    "specific",
    "tell",
    "thank",
    "thanks",
    "tool",
    "use",
    "using",
    "want",
    "wondering",
    "would",
];

/// The request's asks, in order: whole clauses that ask for something, framing left out. Falls back
/// to the evaluator's splitter (`split_fallback`) when no clause asks.
pub fn asks(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // A need left out as a lead-in, kept in case a bare "Can you help me with that?" points back at it.
    let mut lead_in: Option<String> = None;
    for (i, sentence) in sentences(query).into_iter().enumerate() {
        if is_thanks(sentence) {
            continue;
        }
        for clause in own_clauses(sentence, i == 0) {
            let c = clean_whole(&clause);
            let ask = if !asks_something(&c, i == 0) {
                if strength(&c).is_some() {
                    lead_in = Some(c);
                }
                continue;
            } else if topic_words(&c).is_empty() {
                match lead_in.take() {
                    Some(need) => need,
                    None => continue,
                }
            } else {
                c
            };
            if !out.contains(&ask) {
                out.push(ask);
            }
            lead_in = None;
        }
    }
    if out.is_empty() {
        return split_fallback(query);
    }
    out.truncate(MAX_ASKS);
    out
}

/// The topic words of `query`'s asks that none of `parts` holds (a word is held when a part has it,
/// or a word of the same stem: "trend" holds "trends"). Empty when the parts keep every ask.
pub fn missing_words(query: &str, parts: &[String]) -> BTreeSet<String> {
    let held: BTreeSet<String> = parts.iter().flat_map(|p| content_words(p)).collect();
    asks(query)
        .iter()
        .flat_map(|a| required_words(a))
        .filter(|w| !held.iter().any(|h| same_stem(h, w)))
        .collect()
}

/// The words a split must keep of one ask: its topic words; of a vague need kept for its values
/// ("I want to write a review of the product with SKU W003"), only the values.
fn required_words(ask: &str) -> BTreeSet<String> {
    let words = topic_words(ask);
    if strength(ask) == Some(Strength::Clear) {
        return words;
    }
    words
        .into_iter()
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
        .collect()
}

/// `parts` with each ask of the request that lost a topic word appended whole: a split may merge,
/// reword or refine the request's asks, never drop one.
pub fn with_dropped_asks(query: &str, parts: &[String]) -> Vec<String> {
    let mut out = parts.to_vec();
    for ask in asks(query) {
        if !out.contains(&ask) && !missing_words(&ask, &out).is_empty() {
            out.push(ask);
        }
    }
    out
}

/// A part as the checklist keeps it: whole (never cut), trimmed, without a leading connective.
pub fn clean_whole(part: &str) -> String {
    let mut t = part
        .trim()
        .trim_start_matches(|c: char| c == ',' || c.is_whitespace())
        .trim_end_matches(['.', ',', ';', ' ']);
    loop {
        let lower = t.to_lowercase();
        let Some(c) = CONNECTIVES
            .iter()
            .find(|c| lower.starts_with(*c) && lower[c.len()..].starts_with([',', ' ']))
        else {
            break;
        };
        t = t[c.len()..].trim_start_matches([',', ' ']);
    }
    match t.char_indices().nth(ASK_SIZE_GUARD) {
        Some((i, _)) => t[..i].to_string(),
        None => t.to_string(),
    }
}

/// Whether a part names something the request does not: a topic word found nowhere in the request
/// (a small model "splits" a weather request into temperature, humidity, wind direction, …).
pub fn adds_topics(query: &str, part: &str) -> bool {
    let request = content_words(query);
    topic_words(part)
        .iter()
        .any(|w| !request.iter().any(|r| same_stem(r, w)))
}

/// Whether a part is the user talking about themselves ("I am a movie critic", "My family and I
/// are planning a trip") rather than something asked for.
pub fn is_framing(part: &str) -> bool {
    let lower = clean_whole(part).to_lowercase();
    let about_me = [
        "i ", "i'm ", "i've ", "my ", "we ", "we're ", "our ", "as a ",
    ]
    .iter()
    .any(|p| lower.starts_with(p));
    is_thanks(part) || (about_me && strength(part).is_none())
}

/// A clause's words that name what is asked about (no fillers, no asking verbs).
pub fn topic_words(text: &str) -> BTreeSet<String> {
    content_words(text)
        .into_iter()
        .filter(|w| !FILLER.contains(&w.as_str()))
        .collect()
}

/// Two words of the same stem: equal, or one is the other plus a plural or verb ending.
fn same_stem(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    a == b
        || (short.len() >= 4
            && long.starts_with(short)
            && matches!(&long[short.len()..], "s" | "es" | "ed" | "ing" | "d"))
}

fn is_thanks(sentence: &str) -> bool {
    let lower = sentence.trim().to_lowercase();
    [
        "thank",
        "thanks",
        "cheers",
        "hey",
        "hi ",
        "hello",
        "greetings",
    ]
    .iter()
    .any(|t| lower.starts_with(t))
        && !sentence.contains('?')
}

/// The sentence's clauses, also cut where the user turns from who they are to what they ask
/// ("I'm a blogger and I want to …"; not "My family and I are …").
fn own_clauses(sentence: &str, opening: bool) -> Vec<String> {
    let mut out = Vec::new();
    for clause in clauses(sentence) {
        match turn_to_the_ask(&clause, opening) {
            Some(at) => out.push(clause[at..].to_string()),
            None => out.push(clause),
        }
    }
    out
}

/// Where "…, and I …" starts the ask after a statement about the user, if it does.
fn turn_to_the_ask(clause: &str, opening: bool) -> Option<usize> {
    let lower = clause.to_lowercase();
    for sep in [", and ", " and ", ", so ", " so "] {
        for (at, _) in lower.match_indices(sep) {
            let (left, right) = (&lower[..at], &lower[at + sep.len()..]);
            let pronoun = ["i ", "i'm ", "i'd ", "i've ", "we ", "we're ", "we'd "]
                .iter()
                .any(|p| right.starts_with(p));
            // The left side is a statement with its own subject ("I'm a blogger"), not half of one
            // ("My family").
            let padded = format!(" {left} ");
            let subject = ["i", "i'm", "am", "we", "we're", "is", "are", "was"]
                .iter()
                .any(|s| padded.contains(&format!(" {s} ")));
            if pronoun && subject && !asks_something(&clause[..at], opening) {
                return Some(at + sep.len());
            }
        }
    }
    None
}

/// Whether a clause asks for something: a question, a request to the agent, a wish to find something
/// out. A vague need ("I want to generate a password", "I need some data") asks when it gives values
/// to act on or comes after the opening sentence; in the opening sentence without values it says why
/// the user asks ("I want to write a review", "I want to know more about Messi's career").
fn asks_something(clause: &str, opening: bool) -> bool {
    match strength(clause) {
        Some(Strength::Clear) => true,
        Some(Strength::Vague) => has_values(clause) || !opening,
        None => false,
    }
}

/// How a clause asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strength {
    /// A question, a request, "I'd like to know …", "I'm interested in …".
    Clear,
    /// "I want to <do something>", "I need some …", "I want to know more about …".
    Vague,
}

fn strength(clause: &str) -> Option<Strength> {
    let lower = clause.to_lowercase();
    // "If it is done, get me the results": the condition asks nothing, what follows it may.
    let conditional = ["if ", "once ", "when ", "after ", "before "]
        .iter()
        .any(|c| lower.starts_with(c));
    if conditional && let Some(at) = clause.find(", ") {
        return strength(&clause[at + 2..]);
    }
    let words: Vec<String> = lower
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_string()
        })
        .collect();
    if clause.contains('?')
        || words
            .first()
            .is_some_and(|w| REQUESTING.contains(&w.as_str()))
        || ASKING_PHRASES.iter().any(|p| lower.contains(p))
    {
        return Some(Strength::Clear);
    }
    let general = ["more about", "information about", "information on"]
        .iter()
        .any(|p| lower.contains(p));
    let mut found = None;
    let padded: Vec<&str> = words.iter().map(String::as_str).chain(["", ""]).collect();
    for w in padded.windows(3) {
        let wish = matches!(w[0], "like" | "love") && w[1] == "to";
        let find_out = matches!(w[0], "want" | "need" | "wish" | "hoping")
            && w[1] == "to"
            && INFO_VERBS.contains(&w[2]);
        let a_thing = w[0] == "need" && matches!(w[1], "a" | "an" | "the");
        if (wish || find_out || a_thing) && !general {
            return Some(Strength::Clear);
        }
        if matches!(w[0], "want" | "need" | "wish") {
            found = Some(Strength::Vague);
        }
    }
    found
}

/// Whether a clause gives values to act on: a number or a quoted name.
fn has_values(clause: &str) -> bool {
    clause.chars().any(|c| c.is_ascii_digit())
        || clause.char_indices().any(|(i, c)| {
            matches!(c, '\'' | '"' | '‘' | '“') && (i == 0 || clause[..i].ends_with(' '))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_is_left_out_and_every_ask_is_kept_whole() {
        let q = "I'm a football enthusiast and I want to know more about Lionel Messi's career. Can you provide me with information about Messi's clubs, managers, teammates, and referees? I'm also curious about any notable transfers he has made. Thank you for your help!";
        assert_eq!(
            asks(q),
            vec![
                "Can you provide me with information about Messi's clubs, managers, teammates, and referees?",
                "I'm also curious about any notable transfers he has made",
            ]
        );
        let critic = "I am a movie critic and I write reviews for a blog. Furthermore, could you provide the details of the movies with the ids tt0111161 and tt0068646, including their ratings?";
        assert_eq!(
            asks(critic),
            vec![
                "could you provide the details of the movies with the ids tt0111161 and tt0068646, including their ratings?"
            ]
        );
        let weather = "What is the weather in Lisbon right now? Please use metric units.";
        assert!(adds_topics(
            weather,
            "What is the wind direction in Lisbon right now?"
        ));
        assert!(!adds_topics(
            weather,
            "the weather in Lisbon, in metric unit"
        ));
        assert!(is_framing("I am a movie critic"));
        assert!(is_framing("Thank you for your help!"));
        assert!(!is_framing("I'd like the ratings of both movies"));
        assert!(!is_framing("ratings of the movies tt0111161 and tt0068646"));
        // A long ask is never cut.
        let long = format!("Can you list {}?", "the books and the films ".repeat(12));
        assert!(asks(&long)[0].ends_with('?'), "{:?}", asks(&long));
    }

    #[test]
    fn a_split_that_drops_an_ask_is_detected_and_mended() {
        let q = "I'm an investor. Give me Apple's balance sheet and earnings. I'm also interested in the recommendation trends for Apple.";
        let split = vec!["Give me Apple's balance sheet".to_string()];
        // A need kept for its values needs only its values kept.
        let review = "I'm a blogger and I want to write a review of the product with SKU W003247135. Can you provide its images and pricing?";
        let parts = vec!["Images and pricing of the product SKU W003247135".to_string()];
        assert!(
            missing_words(review, &parts).is_empty(),
            "{:?}",
            missing_words(review, &parts)
        );
        let missing = missing_words(q, &split);
        assert!(
            missing.contains("earnings") && missing.contains("recommendation"),
            "{missing:?}"
        );
        let mended = with_dropped_asks(q, &split);
        assert_eq!(mended.len(), 3, "{mended:?}");
        assert!(missing_words(q, &mended).is_empty());
        // Reworded parts that keep every topic word (plurals and verb endings aside) drop nothing.
        let full = vec![
            "Apple's balance sheet".to_string(),
            "Apple's earning".to_string(),
            "Recommendation trend for Apple".to_string(),
        ];
        assert!(
            missing_words(q, &full).is_empty(),
            "{:?}",
            missing_words(q, &full)
        );
        assert_eq!(with_dropped_asks(q, &full), full);
    }
}
