//! The Sum2Act final answer, checked against what the episode observed before Finish runs: sentences
//! stating only values no observation, argument or the request contains are removed (a sentence that
//! also states an observed value is kept: a strong model rewrites dates and numbers); parts that
//! failed are stated as not obtained, with why; loops and echoes of our prompts are cut. The answer is
//! never cut to a length: a list or an image is what the user asked for.

use crate::toolbench::claims::{
    ClaimCheck, Evidence, MatchKind, SourceKind, Support, check_claims, content_words, normalize,
};

use super::checklist::{Checklist, speaks_of};
use crate::agent::reading::neutral;
use crate::text::collapse_loops;
/// Names a text must hold before "most of them are unsupported" counts.
const MIN_NAMES: usize = 2;

/// Our own prompt text: a sentence holding one of these leaked from a prompt, not from the tools.
const PROMPT_MARKERS: &[&str] = &[
    "call finish",
    "give_answer",
    "give_up_and_restart",
    "return_type",
    "final_answer",
    "state after",
    "facts found:",
    "failed calls:",
    "checklist (parts of the request)",
    "what is the next action",
    "[open]",
    "[answered]",
    "this is the subfunction for tool",
];

/// What the check changed, for the step's notes.
#[derive(Debug, Default, PartialEq)]
pub struct Cleaned {
    pub answer: String,
    pub unsupported_removed: usize,
    pub echoes_removed: usize,
    pub repeats_removed: usize,
    pub not_obtained: usize,
    /// The router's text held no observed value and was replaced by the state's facts.
    pub rewritten: bool,
}

impl Cleaned {
    pub fn notes(&self) -> Vec<String> {
        let mut n = Vec::new();
        let counts = [
            (
                self.unsupported_removed,
                "sentence(s) with unsupported values removed",
            ),
            (
                self.echoes_removed,
                "sentence(s) echoing the prompt or request removed",
            ),
            (
                self.repeats_removed,
                "repeated sentence(s) or phrase loop(s) removed",
            ),
            (self.not_obtained, "failed part(s) stated as not obtained"),
        ];
        for (k, what) in counts {
            if k > 0 {
                n.push(format!("final answer: {k} {what}"));
            }
        }
        if self.rewritten {
            n.push("final answer: stated no observed value; written from the state's facts".into());
        }
        n
    }
}

/// Cleans the router's `answer` against `evidence` (observations, arguments, request) and the checklist.
/// `facts` (from the state) write the answer when nothing of the router's is left.
pub fn ground(
    answer: &str,
    query: &str,
    evidence: &[Evidence],
    checklist: &Checklist,
    facts: &[String],
) -> Cleaned {
    let mut out = Cleaned::default();
    let request: Vec<String> = crate::toolbench::request_parts::sentences(query)
        .into_iter()
        .map(normalize)
        .collect();
    let mut seen: Vec<String> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    for line in answer.lines() {
        let mut kept: Vec<String> = Vec::new();
        for sentence in split_sentences(line) {
            let (sentence, looped) = collapse_loops(&sentence);
            out.repeats_removed += usize::from(looped);
            let norm = normalize(&sentence);
            if norm.trim().is_empty() {
                continue;
            }
            // A list that loops ("1. Silva 2. Aisha 3. Silva …") repeats items under new numbers.
            let item = normalize(strip_list_marker(&sentence));
            let lower = sentence.to_lowercase();
            if PROMPT_MARKERS.iter().any(|m| lower.contains(m)) || request.contains(&norm) {
                out.echoes_removed += 1;
            } else if seen.contains(&item) {
                out.repeats_removed += 1;
            } else if unsupported(&sentence, evidence) {
                out.unsupported_removed += 1;
            } else {
                seen.push(item);
                kept.push(sentence);
            }
        }
        if !kept.is_empty() {
            lines.push(kept.join(" "));
        }
    }
    let mut text = lines.join("\n");
    // An answer that states nothing a tool returned ("I can fetch your orders.") says nothing: the
    // state's facts write it instead, when there are any.
    let observed = check_claims(&text, evidence).iter().any(|c| c.observed());
    if !observed {
        let written = from_facts(facts, evidence);
        if !written.is_empty() || text.trim().is_empty() {
            out.rewritten = !text.trim().is_empty() && !written.is_empty();
            text = written;
        }
    }
    let written = normalize(&text);
    for (part, reason) in checklist.failed() {
        if written.contains(&normalize(part)) || addresses(&text, part, evidence) {
            continue;
        }
        out.not_obtained += 1;
        text.push_str(&format!("\nNot obtained: {part} ({reason})."));
    }
    out.answer = text.trim().to_string();
    out
}

/// Whether a line of the answer speaks of `part` and says it was not obtained or states a value a tool
/// returned for it: the answer already says what became of the part ("Subscriber email validation: not
/// obtained. You gave no addresses."), so no "Not obtained" line repeats it.
fn addresses(answer: &str, part: &str, evidence: &[Evidence]) -> bool {
    answer.lines().any(|line| {
        let lower = line.to_lowercase();
        let negative = NOT_OBTAINED.iter().any(|n| lower.contains(n));
        speaks_of(line, part)
            && (negative
                || check_claims(&neutral(line), evidence)
                    .iter()
                    .any(|c| c.observed()))
    })
}

/// Phrases with which an answer says a part could not be obtained.
const NOT_OBTAINED: &[&str] = &[
    "not obtained",
    "not available",
    "unavailable",
    "could not",
    "couldn't",
    "can't",
    "cannot",
    "unable",
    "not found",
    "no data",
    "not provide",
    "did not",
    "didn't",
    "failed",
];

/// The sentence without a leading list marker ("3. ", "- ", "* ").
fn strip_list_marker(sentence: &str) -> &str {
    let t = sentence.trim_start();
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &t[digits..];
    if digits > 0 && (rest.starts_with(". ") || rest.starts_with(") ")) {
        return rest[2..].trim_start();
    }
    t.strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .unwrap_or(t)
}

/// A text stating a concrete value (number, date, id, URL, e-mail) found in no evidence, unless it also
/// states one a tool observation holds (a strong model rewrites a date or rounds a number beside the
/// values it copied; a value the request gave does not vouch for the rest), or whose names and list
/// items are mostly found nowhere (a name alone is matched loosely, so one miss is not enough). A value
/// kept by reference (`[value 3.1]`) comes from an observation.
pub fn unsupported(text: &str, evidence: &[Evidence]) -> bool {
    let request: String = evidence
        .iter()
        .filter(|e| e.kind == SourceKind::Request)
        .map(|e| normalize(&e.text))
        .collect();
    // A value kept by reference comes from an observation: it vouches for the text.
    let referenced = crate::agent::reading::has_references(text);
    let observed: String = evidence
        .iter()
        .filter(|e| e.kind == SourceKind::Observation)
        .map(|e| normalize(&e.text))
        .collect();
    let mut checks = check_claims(&neutral(text), evidence);
    for c in &mut checks {
        if !c.claim.kind.is_value() && !c.observed() && pieces_observed(&c.claim.text, &observed) {
            c.support = Some(Support {
                kind: SourceKind::Observation,
                label: "pieces".into(),
                matched: MatchKind::Words,
                excerpt: String::new(),
            });
        }
    }
    !referenced && unsupported_checks(&checks, &request)
}

/// Whether a name or list item the model wrote from two fields of one result ("Arabic (ar)" from
/// `{"text": "Arabic", "value": "ar"}`) is observed piece by piece: each piece outside and inside its
/// parentheses is in the observation. The evaluator's lookup matches the item whole; a fact copying a
/// list of such items was dropped as unsupported although every item was there.
fn pieces_observed(item: &str, observed: &str) -> bool {
    let pieces: Vec<String> = item
        .split(['(', ')'])
        .map(normalize)
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    pieces.len() > 1 && pieces.iter().all(|p| observed.contains(&format!(" {p} ")))
}

/// [`unsupported`] on claims already looked up; `request` is the normalised request, whose values
/// vouch for nothing even where a result repeats them (the season a standings table was asked for).
fn unsupported_checks(checks: &[ClaimCheck], request: &str) -> bool {
    let values: Vec<&ClaimCheck> = checks.iter().filter(|c| c.claim.kind.is_value()).collect();
    let invented = values.iter().any(|c| !c.supported());
    let names: Vec<&ClaimCheck> = checks.iter().filter(|c| !c.claim.kind.is_value()).collect();
    let observed_names = names.iter().filter(|c| c.observed()).count();
    // A value the result holds vouches for the text, and so does a list copied from it (a count the
    // model made of 14 observed title types is not an invention).
    let vouched = values
        .iter()
        .any(|c| c.observed() && !request.contains(&normalize(&c.claim.text)))
        || observed_names >= MIN_LIST_VOUCH;
    if invented && !vouched {
        return true;
    }
    // Names are looked up loosely and prose yields noisy list items ("Berlin (id", "total shots"):
    // they decide only a text no observed value vouches for.
    let missing = names.iter().filter(|c| !c.supported()).count();
    !vouched && names.len() >= MIN_NAMES && missing * 2 > names.len()
}

/// Names and list items of a result that, copied together, vouch for a text.
const MIN_LIST_VOUCH: usize = 3;

/// Phrases of a fact that reports a failed or empty lookup rather than a value.
const NOTHING_FOUND: &[&str] = &[
    "could not",
    "couldn't",
    "did not return",
    "error",
    "failed",
    "no data",
    "no information",
    "no matching",
    "no result",
    "not found",
    "returned nothing",
    "unable to",
];

/// Whether a fact states a value the call's result holds (a number, an id, a name it found, or at
/// least two of its words), rather than that the lookup failed or found nothing: only such a fact
/// answers a part of the request.
pub fn states_value(fact: &str, evidence: &[Evidence]) -> bool {
    let lower = fact.to_lowercase();
    if NOTHING_FOUND.iter().any(|p| lower.contains(p)) {
        return false;
    }
    let text = neutral(fact);
    if check_claims(&text, evidence).iter().any(|c| c.observed()) {
        return true;
    }
    // A list of field names ("order_id; status") names where values are, it states none.
    let field_list = text
        .split([';', ','])
        .all(|item| item.split_whitespace().count() <= 1);
    if field_list {
        return false;
    }
    let observed: String = evidence
        .iter()
        .filter(|e| e.kind == SourceKind::Observation)
        .map(|e| normalize(&e.text))
        .collect();
    content_words(&text)
        .iter()
        .filter(|w| observed.contains(&format!(" {w} ")))
        .count()
        >= 2
}

/// The state's facts as the answer: those that state a value a tool returned and nothing the evidence
/// lacks. A field list ("order_id; status") states nothing, and a raw result the state kept when the
/// state manager wrote no fact is a JSON dump, not an answer.
fn from_facts(facts: &[String], evidence: &[Evidence]) -> String {
    let kept: Vec<&str> = facts
        .iter()
        .map(|f| f.trim().trim_end_matches('.'))
        .filter(|f| !f.is_empty() && !is_raw_result(f))
        .filter(|f| {
            let observed = check_claims(&neutral(f), evidence)
                .iter()
                .any(|c| c.observed());
            !unsupported(f, evidence) && observed
        })
        .collect();
    if kept.is_empty() {
        return String::new();
    }
    format!("Here is what I found: {}.", kept.join("; "))
}

/// A raw result kept as a fact (`search_for_x returned: {...}`, see `sum2act::raw_fact`).
fn is_raw_result(fact: &str) -> bool {
    fact.split_once(" returned: ")
        .is_some_and(|(name, _)| !name.trim().is_empty() && !name.contains(' '))
}

/// Sentences of one line: cut after `.`, `!` or `?` followed by a space, except after a list number
/// ("1. ") or a one-letter initial, which do not end a sentence.
pub fn split_sentences(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        let next_space = chars.get(k + 1).is_some_and(|(_, n)| n.is_whitespace());
        if !matches!(c, '.' | '!' | '?') || !next_space {
            continue;
        }
        let word = line[start..i].split_whitespace().last().unwrap_or("");
        let numbering = word.chars().all(|ch| ch.is_ascii_digit()) || word.chars().count() == 1;
        if c == '.' && numbering {
            continue;
        }
        out.push(line[start..=i].trim().to_string());
        start = i + c.len_utf8();
    }
    let rest = line[start..].trim();
    if !rest.is_empty() {
        out.push(rest.to_string());
    }
    out
}

/// The evidence a Sum2Act answer may draw on.
pub fn evidence(query: &str, calls: &[(String, String, String)]) -> Vec<Evidence> {
    let mut ev = Vec::new();
    for (label, arguments, observed) in calls {
        ev.push(Evidence::new(
            SourceKind::Observation,
            label.clone(),
            observed.clone(),
        ));
        ev.push(Evidence::new(
            SourceKind::Arguments,
            label.clone(),
            arguments.clone(),
        ));
    }
    ev.push(Evidence::new(SourceKind::Request, "request", query));
    ev
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_keep_list_numbers_and_decimals() {
        assert_eq!(
            split_sentences("1. Hotel A costs 12.5 EUR. It is near. Ok"),
            vec!["1. Hotel A costs 12.5 EUR.", "It is near.", "Ok"]
        );
    }

    #[test]
    fn values_or_most_names_missing_from_the_evidence_are_unsupported() {
        let ev = evidence(
            "Tell me about Lionel Messi's clubs.",
            &[(
                "step 1".into(),
                "{}".into(),
                r#"{"line_up": [{"name": "Ravi Silva"}], "date": "2024-07-20"}"#.into(),
            )],
        );
        assert!(unsupported(
            "Lionel Messi played for Barcelona, Manchester United and Arsenal.",
            &ev
        ));
        assert!(unsupported("The concert is on 2024-08-01.", &ev));
        assert!(!unsupported("Ravi Silva plays on 2024-07-20.", &ev));
        assert!(!unsupported("Lionel Messi is famous.", &ev));
        // A rewritten value beside an observed one stays; a value the request gave vouches for nothing.
        assert!(!unsupported("Ravi Silva plays on 2024-07-20 at 8 pm.", &ev));
        let season = evidence(
            "Show me the 2023 standings.",
            &[("s".into(), "{}".into(), "season 2023: City 91".into())],
        );
        assert!(unsupported(
            "City play Real Madrid on 2024-05-30 in the 2023 season.",
            &season
        ));
    }

    #[test]
    fn a_list_written_from_two_fields_of_each_item_is_supported() {
        // Each item joins two fields of one result entry ("Arabic (ar)"), and the count is the model's
        // own: the fact was once dropped as unsupported, and the part failed with the list at hand.
        let obs = r#"{"results": [{"text": "Arabic", "value": "ar"}, {"text": "Bengali", "value": "bn"}, {"text": "Chinese (Simplified)", "value": "zh-CN"}, {"text": "Dutch", "value": "nl"}]}"#;
        let ev = evidence(
            "Can you give me a list of languages?",
            &[("languages_for_x".into(), "{}".into(), obs.into())],
        );
        let fact =
            "Languages (4): Arabic (ar), Bengali (bn), Chinese (Simplified) (zh-CN), Dutch (nl)";
        assert!(!unsupported(fact, &ev));
        // Pieces not in the result still make an invented list.
        let invented = "Languages (4): Klingon (tlh), Elvish (elv), Dothraki (dth), Na'vi (nav)";
        assert!(unsupported(invented, &ev));
    }

    #[test]
    fn observed_values_vouch_for_a_text_whatever_its_prose_yields_as_names() {
        let inbox = r#"{"messages": [{"from": "noreply@github.com", "date": "2024-06-14 09:12:47", "body_text": "enter this code: 48213907. This code expires in 15 minutes."}]}"#;
        let ev = evidence(
            "Fetch the inbox messages.",
            &[("s".into(), "{}".into(), inbox.into())],
        );
        // Every value is observed; "a GitHub sign-up verification code" and "which expires in" are
        // list items of the prose, not names to find.
        assert!(!unsupported(
            "1. From noreply@github.com (2024-06-14 09:12:47): a GitHub sign-up verification code, 48213907, which expires in 15 minutes.",
            &ev
        ));
        let cities = evidence(
            "List the Flixbus cities.",
            &[(
                "s".into(),
                "{}".into(),
                r#"[{"name": "Berlin", "id": 88}, {"name": "Munich", "id": 94}]"#.into(),
            )],
        );
        assert!(!unsupported(
            "The cities list holds no Italian city: Berlin (id 88, DE), Munich (id 94, DE).",
            &cities
        ));
        // A count the model made of a list it copied whole is no invention.
        let types = evidence(
            "Which title types are there?",
            &[(
                "s".into(),
                "{}".into(),
                r#"["movie", "tvSeries", "tvEpisode", "videoGame"]"#.into(),
            )],
        );
        assert!(!unsupported(
            "4 title types: movie, tvSeries, tvEpisode, videoGame.",
            &types
        ));
        // A value kept by reference comes from an observation.
        assert!(!unsupported(
            "Top startup news (the API reports 50 results): [value 2.1]",
            &types
        ));
        // Invented names with no observed value are still unsupported.
        assert!(unsupported("Cities: Rome, Venice and Milan.", &cities));
    }

    #[test]
    fn a_looping_list_keeps_each_item_once() {
        let ev = evidence(
            "Who are the players?",
            &[("s".into(), "{}".into(), "Silva Aisha".into())],
        );
        let c = ground(
            "Players:\n1. Silva\n2. Aisha\n3. Silva\n4. Aisha",
            "Who are the players?",
            &ev,
            &Checklist::default(),
            &[],
        );
        assert_eq!(c.answer, "Players:\n1. Silva\n2. Aisha");
        assert_eq!(c.repeats_removed, 2);
    }

    #[test]
    fn prompt_echoes_and_repeated_sentences_are_removed() {
        let ev = evidence("What is the weather in Paris?", &[]);
        let c = ground(
            "What is the weather in Paris? It is sunny. It is sunny. I will call Finish with give_answer now.",
            "What is the weather in Paris?",
            &ev,
            &Checklist::default(),
            &[],
        );
        assert_eq!(c.answer, "It is sunny.");
        assert_eq!((c.echoes_removed, c.repeats_removed), (2, 1));
    }

    #[test]
    fn an_answer_stating_nothing_observed_is_written_from_the_facts() {
        let query = "Can you fetch my recent orders and their status?";
        let calls = [(
            "step 1 get_user_orders".to_string(),
            "{}".to_string(),
            r#"{"orders": [{"order_id": "62843965", "status": "in_transit"}]}"#.to_string(),
        )];
        let ev = evidence(query, &calls);
        let facts = ["Order 62843965 is in_transit".to_string()];
        let c = ground(
            "I can fetch the details of your recent orders.",
            query,
            &ev,
            &Checklist::default(),
            &facts,
        );
        assert_eq!(
            c.answer,
            "Here is what I found: Order 62843965 is in_transit."
        );
        assert!(c.rewritten);
        // An answer that does state an observed value is kept as written.
        let kept = ground(
            "Your order 62843965 is in transit.",
            query,
            &ev,
            &Checklist::default(),
            &facts,
        );
        assert_eq!(kept.answer, "Your order 62843965 is in transit.");
        assert!(!kept.rewritten);
        // Field names and raw JSON dumps are not facts to write an answer from: the text stays.
        let dumps = [
            "order_id; status; total_amount".to_string(),
            r#"get_user_orders returned: {"orders": [{"order_id": "62843965"}]}"#.to_string(),
        ];
        let raw = ground(
            "I can fetch your orders.",
            query,
            &ev,
            &Checklist::default(),
            &dumps,
        );
        assert_eq!(raw.answer, "I can fetch your orders.");
        assert!(!raw.rewritten);
        // No facts to write from: the text stays.
        let none = ground("It is sunny.", query, &ev, &Checklist::default(), &[]);
        assert_eq!(none.answer, "It is sunny.");
    }
}
