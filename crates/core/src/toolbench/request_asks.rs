//! What a request asks for, without a model, for the Sum2Act checklist: the request's clauses that ask
//! (a question, a request to the agent, "I'd like to know …"), none of its framing ("I'm a movie
//! critic", "Thank you!"), each whole. And the check that a split of the request keeps every ask:
//! a word the request asks about that no part holds means a part was dropped.

use std::collections::BTreeSet;

use super::claims::content_words;
use super::request_coordination::{
    coordinated_asks, keep_value_end, protect_values, restore_values,
};
use super::request_parts::{clauses, sentences, split_fallback};
use super::request_vocab::{
    ASKING_PHRASES, CONDITIONS, CONNECTIVES, FILLER, INFO_VERBS, NOT_PURPOSE_NEXT,
    NOT_PURPOSE_PREV, POINTING_BACK, REQUESTING,
};

/// Most parts kept per request (as `request_parts::MAX_PARTS`).
pub(crate) const MAX_ASKS: usize = 6;
/// Longest ask kept: a size guard for pathological input, far above a real request's sentence.
const ASK_SIZE_GUARD: usize = 1_000;

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ask {
    pub text: String,
    /// Its topic words (its purpose clause aside); of a vague need in the opening sentence, only its
    /// values ("I want to write a review of the product with SKU W003": SKU W003 must stay).
    pub required: BTreeSet<String>,
    /// Said as a statement ("I'm curious about …", "I want to …"), not a question or a request.
    statement: bool,
}

/// The request's asks, in order: whole clauses that ask for something, framing left out. Falls back
/// to the evaluator's splitter (`split_fallback`) when no clause asks.
pub fn asks(query: &str) -> Vec<String> {
    let found: Vec<String> = ask_list(query).into_iter().map(|a| a.text).collect();
    if found.is_empty() {
        return split_fallback(query);
    }
    found
}

/// The request's asks with what a split must keep of each (empty when no clause asks). A lead-in the
/// request after it makes precise is left out (`leads_into`), and so is an instruction about the
/// answer's form.
pub(crate) fn ask_list(query: &str) -> Vec<Ask> {
    // Values such as a Wi-Fi string (`WIFI:S:Home;T:WPA;P:x;;`) or a URL with `?` are not cut.
    let (safe, kept_values) = protect_values(query);
    let mut out: Vec<Ask> = Vec::new();
    // A need left out as a lead-in, kept in case a bare "Can you help me with that?" points back at it.
    let mut lead_in: Option<String> = None;
    // A sentence that asks nothing but names what the next ask is about ("Parcel PT77 has a return
    // label with a QR code. What link does the QR code hold?"): its values belong to that ask.
    let mut context: Option<String> = None;
    for (i, sentence) in sentences(&safe).into_iter().enumerate() {
        if is_thanks(sentence) {
            continue;
        }
        let opening = i == 0;
        let mut asked = false;
        for clause in own_clauses(sentence, opening) {
            let c = clean_whole(&restore_values(&clause, &kept_values));
            if is_format_instruction(&c) {
                continue;
            }
            let ask = if !asks_something(&c, opening) {
                if strength(&c, opening).is_some() {
                    lead_in = Some(c);
                }
                continue;
            } else if topic_words(&c).is_empty() {
                match lead_in.take() {
                    Some(need) => Ask::new(need, false),
                    None => continue,
                }
            } else {
                let mut ask = Ask::new(c, opening);
                if let Some(text) = with_context(context.take(), &ask.text) {
                    ask.text = text;
                }
                ask
            };
            asked = true;
            if !out.iter().any(|a| a.text == ask.text) {
                out.push(ask);
            }
            lead_in = None;
        }
        context = (!asked && has_values(sentence))
            .then(|| clean_whole(&restore_values(sentence, &kept_values)));
    }
    let mut kept: Vec<Ask> = Vec::new();
    for (i, ask) in out.iter().enumerate() {
        if !out.get(i + 1).is_some_and(|next| leads_into(ask, next)) {
            kept.push(ask.clone());
        }
    }
    kept.truncate(MAX_ASKS);
    kept
}

impl Ask {
    fn new(text: String, opening: bool) -> Self {
        // Asking verbs are how the user asks, not what ("interested in *reading* the news").
        let words: BTreeSet<String> = topic_words(without_purpose(&text))
            .into_iter()
            .filter(|w| !REQUESTING.iter().chain(INFO_VERBS).any(|v| same_stem(v, w)))
            .collect();
        let required = if opening && strength(&text, opening) == Some(Strength::Vague) {
            words
                .into_iter()
                .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
                .collect()
        } else {
            words
        };
        let lower = text.to_lowercase();
        let first = lower.split_whitespace().next().unwrap_or("");
        Ask {
            statement: !text.contains('?') && !REQUESTING.contains(&first),
            required,
            text,
        }
    }
}

/// Whether `ask` is a lead-in that the request after it makes precise: a statement with no values of
/// its own ("I'm curious about the credibility of media sources", "I want to explore the world of
/// cryptocurrencies") followed by a question or request on the same topic ("Can you fetch the
/// statistics on media sources?", "Please provide the latest crypto symbols").
fn leads_into(ask: &Ask, next: &Ask) -> bool {
    if !ask.statement || next.statement {
        return false;
    }
    let theirs = next.text.to_lowercase();
    let values_kept = values(&ask.text)
        .iter()
        .all(|v| theirs.contains(v.as_str()));
    let topics = topic_words(&next.text);
    values_kept
        && topic_words(&ask.text)
            .iter()
            .any(|w| topics.iter().any(|t| related(w, t)))
}

/// Two words of one topic: the same stem, or one a longer form of the other ("crypto",
/// "cryptocurrencies").
pub(crate) fn related(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    same_stem(a, b) || (short.len() >= MIN_PREFIX && long.starts_with(short))
}

/// Shortest word that counts as the start of a longer one of the same topic.
const MIN_PREFIX: usize = 5;

/// The clause's values, lower case: its numbers and quoted names.
fn values(clause: &str) -> Vec<String> {
    let lower = clause.to_lowercase();
    let mut out: Vec<String> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_string)
        .collect();
    for q in ['\'', '"'] {
        let pieces: Vec<&str> = lower.split(q).collect();
        // Odd pieces are inside quotes (an apostrophe inside a word starts no quote: "Messi's").
        for (k, p) in pieces.iter().enumerate().skip(1).step_by(2) {
            let opens = pieces[k - 1].is_empty() || pieces[k - 1].ends_with(' ');
            if opens && k + 1 < pieces.len() && !p.is_empty() {
                out.push(p.to_string());
            }
        }
    }
    out
}

/// An instruction about the answer's form, not a thing to find ("Please include the title and URL of
/// each article in the response", "Please use metric units").
fn is_format_instruction(clause: &str) -> bool {
    let lower = clause.to_lowercase();
    let in_the_answer = ["response", "answer", "reply", "output"].iter().any(|w| {
        ["in the ", "in your ", "in my "]
            .iter()
            .any(|p| lower.contains(&format!("{p}{w}")))
    });
    let units = lower.trim_start_matches("please ").starts_with("use ")
        && ["units", "format", "language"]
            .iter()
            .any(|w| lower.contains(w));
    in_the_answer || units
}

/// The ask without its purpose clause ("generate 5 GUIDs *to use as IDs for my friends' profiles*"):
/// why the user wants a thing is not a thing to find. A "to" is a purpose's when a topic word comes
/// before it and a lower-case verb after it ("to the venue", "to 'Titanic'", "to Venice",
/// "want to know" and "similar to" are not).
pub(crate) fn without_purpose(ask: &str) -> &str {
    let mut seen_topic = false;
    let mut prev = "";
    let mut start = 0;
    for w in ask.split(' ') {
        let bare = w.trim_matches(|c: char| !c.is_alphanumeric());
        let lower_prev = prev.to_lowercase();
        if w == "to" && seen_topic && !NOT_PURPOSE_PREV.contains(&lower_prev.as_str()) {
            let next = ask[start + w.len()..]
                .trim_start()
                .split(' ')
                .next()
                .unwrap_or("");
            let verb_like = !next.is_empty()
                && next.chars().all(|c| c.is_ascii_lowercase())
                && !NOT_PURPOSE_NEXT.contains(&next);
            if verb_like {
                return ask[..start].trim_end();
            }
        }
        if !topic_words(bare).is_empty() && !REQUESTING.contains(&bare.to_lowercase().as_str()) {
            seen_topic = true;
        }
        prev = bare;
        start += w.len() + 1;
    }
    ask
}

/// The topic words of `query`'s asks that none of `parts` holds (a word is held when a part has it,
/// or a word of the same stem: "trend" holds "trends"). Empty when the parts keep every ask.
#[cfg(test)]
pub(crate) fn missing_words(query: &str, parts: &[String]) -> BTreeSet<String> {
    let held: BTreeSet<String> = parts.iter().flat_map(|p| content_words(p)).collect();
    ask_list(query)
        .into_iter()
        .flat_map(|a| a.required)
        .filter(|w| !held.iter().any(|h| same_stem(h, w)))
        .collect()
}

/// A part as the checklist keeps it: whole (never cut), trimmed, without a leading connective.
pub(crate) fn clean_whole(part: &str) -> String {
    let mut t = keep_value_end(
        part.trim()
            .trim_start_matches(|c: char| c == ',' || c.is_whitespace()),
    );
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

/// Whether a part is the user talking about themselves ("I am a movie critic", "My family and I
/// are planning a trip") rather than something asked for.
pub(crate) fn is_framing(part: &str) -> bool {
    let lower = clean_whole(part).to_lowercase();
    let about_me = [
        "i ", "i'm ", "i've ", "my ", "we ", "we're ", "our ", "as a ",
    ]
    .iter()
    .any(|p| lower.starts_with(p));
    is_thanks(part) || (about_me && strength(part, false).is_none())
}

/// A clause's words that name what is asked about (no fillers, no asking verbs).
pub(crate) fn topic_words(text: &str) -> BTreeSet<String> {
    content_words(text)
        .into_iter()
        .filter(|w| !FILLER.contains(&w.as_str()))
        .collect()
}

/// Two words of the same stem: equal, or one is the other plus a plural or verb ending.
pub(crate) fn same_stem(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let ending = |stem: &str| {
        long.strip_prefix(stem)
            .is_some_and(|rest| matches!(rest, "s" | "es" | "ed" | "ing" | "d"))
    };
    // A silent e goes before an ending: "create", "creating".
    let silent_e = short.strip_suffix('e').is_some_and(&ending);
    a == b || (short.len() >= 4 && (ending(short) || silent_e))
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
        let clause = match turn_to_the_ask(&clause, opening) {
            Some(at) => clause[at..].to_string(),
            None => clause,
        };
        out.extend(coordinated_asks(&clause, sentence.contains('?')));
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
    match strength(clause, opening) {
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

fn strength(clause: &str, opening: bool) -> Option<Strength> {
    let lower = clause.to_lowercase();
    // "If it is done, get me the results": the condition asks nothing, what follows it may.
    let conditional = CONDITIONS.iter().any(|c| lower.starts_with(c));
    if conditional && let Some(at) = clause.find(", ") {
        return strength(&clause[at + 2..], opening);
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
        // "I need a variety of films" in the opening sentence sets the scene; later, it asks.
        let a_thing = w[0] == "need" && matches!(w[1], "a" | "an" | "the") && !opening;
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
/// `ask` after the sentence before it when that sentence names a value (an id, a quoted name) the ask
/// does not, and the ask points back at it ("… id qrf-1: which link does *it* point to?") or the
/// sentence is not about the user (framing stays out: "I'm a developer exploring Judge0 CE").
fn with_context(context: Option<String>, ask: &str) -> Option<String> {
    let context = context?;
    let lower = ask.to_lowercase();
    if values(&context).iter().all(|v| lower.contains(v.as_str())) {
        return None;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let points_back = words.iter().any(|w| POINTING_BACK.contains(w));
    // An ask naming no value at all needs an id the context gives ("My parcel PT7781XK shows as
    // delivered but I don't have it. What does the note in the photo say?").
    let names_an_id = !has_values(ask) && context.split_whitespace().any(is_id);
    if !points_back && !names_an_id && is_framing(&context) {
        return None;
    }
    let function_word = words.first().is_some_and(|w| REQUESTING.contains(w));
    let mut chars = ask.chars();
    let ask = match chars.next() {
        Some(f) if function_word => format!("{}{}", f.to_lowercase(), chars.as_str()),
        _ => ask.to_string(),
    };
    Some(format!("{context}: {ask}"))
}

/// An identifier: letters and at least two digits in one word (PT7781XK, tt1234567; not Judge0).
fn is_id(word: &str) -> bool {
    let w = word.trim_matches(|c: char| !c.is_alphanumeric());
    w.chars().filter(|c| c.is_ascii_digit()).count() >= 2
        && w.chars().filter(|c| c.is_alphabetic()).count() >= 2
}

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
        assert!(is_framing("I am a movie critic"));
        assert!(is_framing("Thank you for your help!"));
        assert!(!is_framing("I'd like the ratings of both movies"));
        assert!(!is_framing("ratings of the movies tt0111161 and tt0068646"));
        // A long ask is never cut.
        let long = format!("Can you list {}?", "the books and the films ".repeat(12));
        assert!(asks(&long)[0].ends_with('?'), "{:?}", asks(&long));
    }

    #[test]
    fn a_context_sentence_gives_its_id_to_the_ask_that_needs_it() {
        assert_eq!(
            asks("QR Forge has a stored QR code with id qrf-20f1e9. Which link does it point to?"),
            ["QR Forge has a stored QR code with id qrf-20f1e9: which link does it point to?"]
        );
        assert_eq!(
            asks(
                "My parcel PT7781XK shows as delivered but I don't have it. What does the note in the photo say?"
            ),
            [
                "My parcel PT7781XK shows as delivered but I don't have it: what does the note in the photo say?"
            ]
        );
        // Framing stays out when the ask neither points back nor lacks an id.
        assert_eq!(
            asks("I'm a developer exploring Judge0 CE. Can you list the languages of the tool?"),
            ["Can you list the languages of the tool?"]
        );
        // Two asks joined in one sentence, and a value with ; inside, kept whole.
        assert_eq!(
            asks("Make a QR code for WIFI:S:Home;T:WPA;P:x1;; and tell me the size of the image."),
            [
                "Make a QR code for WIFI:S:Home;T:WPA;P:x1;;",
                "tell me the size of the image"
            ]
        );
    }
}
