//! Splitting an instruction into the separate things it asks for. Multi-tool requests read
//! "Can you X? Additionally, Y. Lastly, Z.": each sentence, and each clause opened by a connective
//! ("also", "as well as", "and fetch …"), is an intent that deserves its own best API in the top
//! few. An opening sentence that only sets the scene ("I'm planning a trip with my family.") is
//! marked as context, so the ranker can weigh it less than the actual requests.

/// One part of an instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    pub text: String,
    /// A scene-setting opening sentence rather than a request.
    pub context: bool,
}

/// Words that open a new request inside a sentence.
const CONNECTIVES: &[&str] = &[
    "additionally",
    "also",
    "as well as",
    "besides",
    "finally",
    "furthermore",
    "in addition",
    "lastly",
    "moreover",
    "plus",
    "then",
];

/// After "and", these words start a new request ("… on Vimeo and fetch the related people").
const REQUEST_VERBS: &[&str] = &[
    "calculate",
    "can",
    "check",
    "convert",
    "could",
    "create",
    "fetch",
    "find",
    "generate",
    "get",
    "give",
    "list",
    "please",
    "provide",
    "recommend",
    "retrieve",
    "search",
    "show",
    "suggest",
    "tell",
    "translate",
];

/// Phrases that make a sentence a request even when it opens like a self-introduction.
const REQUEST_CUES: &[&str] = &[
    "can you",
    "could you",
    "please",
    "help me",
    "i need",
    "i would like",
    "i'd like",
    "i want to know",
];

/// Openings of scene-setting sentences.
const CONTEXT_OPENINGS: &[&str] = &[
    "i'm", "i am", "im", "my", "we're", "we are", "our", "as a", "being a",
];

/// Abbreviations whose full stop does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "st", "no",
];

/// Splits an instruction into intents, in order. Empty pieces are dropped; an instruction
/// without any split point is one intent.
pub fn split_intents(instruction: &str) -> Vec<Intent> {
    let sentences = split_sentences(instruction);
    let many = sentences.len() > 1;
    let mut out = Vec::new();
    for (i, sentence) in sentences.iter().enumerate() {
        let context = many && i == 0 && is_context(sentence);
        for clause in split_clauses(sentence) {
            if clause.chars().any(char::is_alphanumeric) {
                out.push(Intent {
                    text: clause,
                    context,
                });
            }
        }
    }
    out
}

/// Sentences end at `.`, `?`, `!` or `;` followed by white space (so `apple.com`, `1.5` and
/// `john.doe@gmail.com` stay whole), and at line breaks.
pub fn split_sentences(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 0..chars.len() {
        let c = chars[i];
        let next_blank = chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        let end = match c {
            '\n' => true,
            '?' | '!' | ';' => next_blank,
            '.' => next_blank && !ends_with_abbreviation(&chars[start..i]),
            _ => false,
        };
        if end {
            push_trimmed(&chars[start..=i], &mut out);
            start = i + 1;
        }
    }
    push_trimmed(&chars[start..], &mut out);
    out
}

fn push_trimmed(chars: &[char], out: &mut Vec<String>) {
    let s: String = chars.iter().collect();
    let s = s.trim();
    if !s.is_empty() {
        out.push(s.to_string());
    }
}

fn ends_with_abbreviation(before: &[char]) -> bool {
    let s: String = before.iter().collect();
    let word = s
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("")
        .to_lowercase();
    ABBREVIATIONS.contains(&word.as_str())
}

/// Lower-cased words with their byte ranges in `sentence`.
fn words(sentence: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in sentence
        .char_indices()
        .chain(std::iter::once((sentence.len(), ' ')))
    {
        let part_of_word = c.is_alphanumeric() || c == '\'';
        match (start, part_of_word) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                out.push((s, i, sentence[s..i].to_lowercase()));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Cuts a sentence before each connective, and before "and" when a request verb follows it.
fn split_clauses(sentence: &str) -> Vec<String> {
    let words = words(sentence);
    let mut cuts = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let matched = CONNECTIVES.iter().find_map(|c| {
            let parts: Vec<&str> = c.split(' ').collect();
            let hit = parts
                .iter()
                .enumerate()
                .all(|(j, p)| words.get(i + j).is_some_and(|w| w.2 == *p));
            hit.then_some(parts.len())
        });
        if let Some(n) = matched {
            cuts.push((words[i].0, words[i + n - 1].1));
            i += n;
            continue;
        }
        if words[i].2 == "and"
            && words
                .get(i + 1)
                .is_some_and(|w| REQUEST_VERBS.contains(&w.2.as_str()))
        {
            cuts.push((words[i].0, words[i].1));
        }
        i += 1;
    }
    let mut out = Vec::new();
    let mut from = 0;
    for (cut_start, cut_end) in cuts.into_iter().chain([(sentence.len(), sentence.len())]) {
        let clause = sentence[from..cut_start]
            .trim_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':'));
        if !clause.is_empty() {
            out.push(clause.to_string());
        }
        from = cut_end;
    }
    out
}

fn is_context(sentence: &str) -> bool {
    let lower = sentence.to_lowercase();
    let opens = CONTEXT_OPENINGS.iter().any(|o| {
        lower
            .strip_prefix(o)
            .is_some_and(|rest| rest.starts_with(' '))
    });
    opens && !lower.ends_with('?') && !REQUEST_CUES.iter().any(|c| lower.contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(intents: &[Intent]) -> Vec<&str> {
        intents.iter().map(|i| i.text.as_str()).collect()
    }

    #[test]
    fn sentences_end_at_stops_but_not_inside_names() {
        assert_eq!(
            split_sentences(
                "Check apple.com and 1.5 kg, e.g. flour. Email john.doe@gmail.com? Yes!"
            ),
            [
                "Check apple.com and 1.5 kg, e.g. flour.",
                "Email john.doe@gmail.com?",
                "Yes!"
            ]
        );
        assert_eq!(split_sentences("one\ntwo"), ["one", "two"]);
        assert!(split_sentences("  ").is_empty());
    }

    #[test]
    fn connectives_and_request_verbs_open_new_intents() {
        let intents = split_intents(
            "Can you search for videos on Vimeo and fetch the related people? \
             Additionally, give me a QR code as well as a short link.",
        );
        assert_eq!(
            texts(&intents),
            [
                "Can you search for videos on Vimeo",
                "fetch the related people?",
                "give me a QR code",
                "a short link."
            ]
        );
    }

    #[test]
    fn plain_lists_joined_by_and_stay_one_intent() {
        let intents = split_intents("Give me the volume, competition level and CPC for India.");
        assert_eq!(
            texts(&intents),
            ["Give me the volume, competition level and CPC for India."]
        );
        assert!(!intents[0].context);
    }

    #[test]
    fn a_scene_setting_opening_is_context() {
        let intents =
            split_intents("I'm planning a road trip with my family. Can you list radio stations?");
        assert_eq!(intents.len(), 2);
        assert!(intents[0].context);
        assert!(!intents[1].context);
        // A request that opens like an introduction is not context.
        let intents = split_intents("I'm stuck, can you convert 5 EUR? Thanks.");
        assert!(!intents[0].context);
        // A single sentence is never context.
        assert!(!split_intents("I'm looking for weather data")[0].context);
    }
}
