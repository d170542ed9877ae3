//! Text analysis for API retrieval. ToolBench names are code-like (`getUserTweets`, `search_by_title`,
//! `TheClique`), so words are split at snake_case, camelCase and letter/digit boundaries before
//! lower-casing, stop-word removal and English (Snowball) stemming. Documents and queries go through
//! the same functions, and documents are handed to tantivy pre-tokenized so both sides agree exactly.

use tantivy::tokenizer::{Language, Stemmer, TextAnalyzer, TokenStream, WhitespaceTokenizer};

/// Words that carry no retrieval signal in requests or API docs ("Can you get me …").
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "additionally",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "for",
    "from",
    "get",
    "give",
    "had",
    "has",
    "have",
    "how",
    "i",
    "if",
    "im",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "know",
    "let",
    "like",
    "m",
    "me",
    "more",
    "most",
    "my",
    "need",
    "no",
    "not",
    "of",
    "on",
    "or",
    "other",
    "our",
    "please",
    "provide",
    "s",
    "should",
    "so",
    "some",
    "such",
    "t",
    "tell",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "to",
    "too",
    "us",
    "very",
    "want",
    "was",
    "we",
    "what",
    "when",
    "where",
    "which",
    "who",
    "will",
    "with",
    "would",
    "you",
    "your",
    "find",
];

fn is_stop(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// Letter/digit alternations from which a run is an identifier, not words (`B2BHint` has 2).
const OPAQUE_DIGIT_CHANGES: usize = 4;

/// Splits text into lower-cased words: runs of letters/digits, cut at camelCase humps, acronym ends
/// (`HTMLParser` → html, parser) and letter/digit changes (`v2` → v, 2).
pub fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run: Vec<char> = Vec::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() {
            run.push(c);
        } else if !run.is_empty() {
            split_run(&run, &mut out);
            run.clear();
        }
    }
    out
}

fn split_run(run: &[char], out: &mut Vec<String>) {
    // An opaque identifier (a hash, a wallet address, an API key) is one word: its pieces
    // (`0x39D2f3eF…` → x, 39, d, 2, f, …) would match anything with a `d` or a `2`.
    let digit_changes = run
        .windows(2)
        .filter(|w| w[0].is_numeric() != w[1].is_numeric())
        .count();
    if digit_changes >= OPAQUE_DIGIT_CHANGES {
        out.push(run.iter().collect::<String>().to_lowercase());
        return;
    }
    let mut start = 0;
    for i in 1..run.len() {
        let (prev, cur) = (run[i - 1], run[i]);
        let digit_change = prev.is_numeric() != cur.is_numeric();
        let hump = prev.is_lowercase() && cur.is_uppercase();
        // A plural acronym (`GUIDs`, `URLs`) is one word, not `GUI` + `Ds`.
        let plural = run.get(i + 1) == Some(&'s') && i + 2 == run.len();
        let acronym_end = prev.is_uppercase()
            && cur.is_uppercase()
            && run.get(i + 1).is_some_and(|n| n.is_lowercase())
            && !run.get(i + 2).is_some_and(|n| n.is_numeric())
            && !plural;
        // A version suffix after an acronym: `UUIDv4` → uuid, v, 4.
        let version = prev.is_uppercase()
            && cur.is_lowercase()
            && run.get(i + 1).is_some_and(|n| n.is_numeric());
        if digit_change || hump || acronym_end || version {
            out.push(run[start..i].iter().collect::<String>().to_lowercase());
            start = i;
        }
    }
    out.push(run[start..].iter().collect::<String>().to_lowercase());
}

/// The analysis chain shared by the index and the queries.
#[derive(Clone)]
pub struct Analyzer {
    stemmer: TextAnalyzer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer {
            stemmer: TextAnalyzer::builder(WhitespaceTokenizer::default())
                .filter(Stemmer::new(Language::English))
                .build(),
        }
    }
}

impl Analyzer {
    fn stem_words(&self, words: &[String]) -> Vec<String> {
        let mut stemmer = self.stemmer.clone();
        let joined = words.join(" ");
        let mut stream = stemmer.token_stream(&joined);
        let mut out = Vec::with_capacity(words.len());
        while let Some(token) = stream.next() {
            out.push(token.text.clone());
        }
        out
    }

    /// Content terms: split, stop words dropped, stemmed.
    pub fn terms(&self, text: &str) -> Vec<String> {
        let words: Vec<String> = split_words(text)
            .into_iter()
            .filter(|w| !is_stop(w))
            .collect();
        self.stem_words(&words)
    }

    /// Adjacent stemmed word pairs (stop words kept), so that a request naming an API or tool
    /// ("the Read Inbox API") outscores docs that merely share its words.
    pub fn bigrams(&self, text: &str) -> Vec<String> {
        let stems = self.stem_words(&split_words(text));
        stems
            .windows(2)
            .map(|w| format!("{}_{}", w[0], w[1]))
            .collect()
    }
}

/// The plain tokenization of the BM25 baseline: lower-cased runs of letters and digits.
pub fn simple_terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_code_like_names() {
        assert_eq!(split_words("getUserTweets"), ["get", "user", "tweets"]);
        assert_eq!(split_words("search_by_title"), ["search", "by", "title"]);
        assert_eq!(split_words("HTMLParser v2"), ["html", "parser", "v", "2"]);
        assert_eq!(
            split_words("/v1/cryptosymbols"),
            ["v", "1", "cryptosymbols"]
        );
        assert_eq!(split_words("TheClique"), ["the", "clique"]);
        assert_eq!(
            split_words("UUIDv4 generator"),
            ["uuid", "v", "4", "generator"]
        );
        assert_eq!(split_words("Çiçeksepeti"), ["çiçeksepeti"]);
        assert_eq!(split_words("5 GUIDs, URLs"), ["5", "guids", "urls"]);
        assert_eq!(split_words("IDs"), ["ids"]);
        assert_eq!(
            split_words("B2BHint tt1877830"),
            ["b", "2", "b", "hint", "tt", "1877830"]
        );
        assert_eq!(
            split_words("wallet 0x39D2f3eF8a5C"),
            ["wallet", "0x39d2f3ef8a5c"]
        );
    }

    #[test]
    fn terms_drop_stop_words_and_stem() {
        let a = Analyzer::default();
        assert_eq!(
            a.terms("Can you get me the Streaming Links?"),
            ["stream", "link"]
        );
        assert_eq!(a.terms("searchVideos"), ["search", "video"]);
        // Query and document forms of a word meet at the same stem.
        assert_eq!(a.terms("exercises"), a.terms("Exercise"));
    }

    #[test]
    fn bigrams_keep_order_and_stop_words() {
        let a = Analyzer::default();
        assert_eq!(a.bigrams("Read Inbox"), ["read_inbox"]);
        assert_eq!(a.bigrams("Get a list"), ["get_a", "a_list"]);
        assert!(a.bigrams("single").is_empty());
    }

    #[test]
    fn simple_terms_only_lowercase_and_split() {
        assert_eq!(simple_terms("Get User-Tweets!"), ["get", "user", "tweets"]);
    }
}
