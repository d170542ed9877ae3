//! The specific claims of a final answer (numbers with units, dates, ids, URLs, e-mails, quoted or
//! capitalised names, list items) and their lookup in the evidence an agent had: tool observations, the
//! arguments it sent, the request. An answer whose specific values appear nowhere in that evidence made
//! them up. Low in the layers on purpose: the evaluator reports with it, and the agent loop may use it to
//! drop unsupported claims before finishing.

mod dates;
mod extract;
#[cfg(test)]
mod format_tests;
mod lookup;
mod numbers;
#[cfg(test)]
mod reading_tests;
mod scan;
#[cfg(test)]
mod tests;
mod text;
pub(crate) mod units;

use serde::{Deserialize, Serialize};

pub(crate) use extract::extract_claims;
pub use lookup::check_claims;
pub use text::content_words;
pub(crate) use text::normalize;

/// Longest answer read for claims (characters); the rest is ignored.
pub(crate) const MAX_ANSWER_CHARS: usize = 20_000;
/// Most claims kept per answer.
pub(crate) const MAX_CLAIMS: usize = 200;

/// What kind of specific value a claim is. Ordered by how strongly a missing value signals invention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    Url,
    Email,
    Date,
    /// A phone number (`+34 605 11 22 33`), matched by its digits in any grouping.
    Phone,
    Id,
    Number,
    Quoted,
    ListItem,
    Name,
}

impl ClaimKind {
    /// A concrete value (URL, e-mail, date, id, number): absent from the evidence, it was made up.
    /// Names and list items are matched more loosely, so a miss is weaker evidence.
    pub fn is_value(self) -> bool {
        matches!(
            self,
            ClaimKind::Url
                | ClaimKind::Email
                | ClaimKind::Date
                | ClaimKind::Phone
                | ClaimKind::Id
                | ClaimKind::Number
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ClaimKind::Url => "url",
            ClaimKind::Email => "email",
            ClaimKind::Date => "date",
            ClaimKind::Phone => "phone",
            ClaimKind::Id => "id",
            ClaimKind::Number => "number",
            ClaimKind::Quoted => "quoted",
            ClaimKind::ListItem => "list_item",
            ClaimKind::Name => "name",
        }
    }
}

/// One claim: its kind, its text as written in the answer and where it starts (byte offset).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    pub kind: ClaimKind,
    pub text: String,
    pub start: usize,
    /// Parsed value of a number (after separators and scale words), for numeric lookup.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub value: Option<f64>,
    /// Decimals written (numbers): the precision a matching evidence value is rounded to.
    #[serde(skip)]
    pub decimals: u32,
    /// `(year, month, day)` readings of a date (day 0: month precision); two when day and month are
    /// ambiguous (03/04/2024).
    #[serde(skip)]
    pub dates: Vec<(i32, u32, u32)>,
    /// The convertible unit a number was written with (`Gwei`, `min`, `°C`).
    #[serde(skip)]
    pub unit: Option<units::Unit>,
    /// How far a matching evidence value may be from `value` (half a unit of the last digit written).
    #[serde(skip)]
    pub tolerance: f64,
    /// A name's, quote's or list item's text with the values claimed on their own blanked out: what
    /// its words are matched by (`text` is the answer's own wording, for people).
    #[serde(skip)]
    pub masked: Option<String>,
}

impl Claim {
    /// A claim of `kind` written as `text` at byte `start`, with no value yet.
    pub fn new(kind: ClaimKind, text: &str, start: usize) -> Self {
        Claim {
            kind,
            text: text.to_string(),
            start,
            value: None,
            decimals: 0,
            dates: Vec::new(),
            unit: None,
            tolerance: 0.5,
            masked: None,
        }
    }

    /// The text the claim's words are matched by.
    pub(crate) fn match_text(&self) -> &str {
        self.masked.as_deref().unwrap_or(&self.text)
    }
}

/// Where a piece of evidence comes from. Observations are searched first, then the arguments the agent
/// sent, then the request, then the APIs' documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    Observation,
    Arguments,
    Request,
    /// The documentation of the APIs offered (an example id, an API's own name): not invented, but
    /// not a tool result either.
    Docs,
}

/// One text the answer may draw on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub kind: SourceKind,
    /// For people: `step 2 latest_rates_for_fx` or `request`.
    pub label: String,
    pub text: String,
}

impl Evidence {
    pub fn new(kind: SourceKind, label: impl Into<String>, text: impl Into<String>) -> Self {
        Evidence {
            kind,
            label: label.into(),
            text: text.into(),
        }
    }
}

/// How a claim was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// The value itself (numbers: after rounding to the answer's precision).
    Exact,
    /// Most content words of a name or list item, in one source.
    Words,
    /// A number that is the product or quotient of two evidence numbers (a conversion, a total).
    Derived,
    /// The value in another unit or scale (`5 Gwei` as `5000000000` wei, a bare `$274.5` in an answer
    /// that says "billions" as `274515000000`).
    Converted,
    /// The same letters and digits with case, spacing and punctuation ignored (`ORD2291` for
    /// `ORD-2291`, `McDonalds` for `McDonald's`, a phone number in another grouping).
    Loose,
}

/// The evidence that supports a claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Support {
    pub kind: SourceKind,
    pub label: String,
    pub matched: MatchKind,
    /// The passage around the match (at most ~160 characters).
    pub excerpt: String,
}

/// A claim and, when found, what supports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimCheck {
    pub claim: Claim,
    pub support: Option<Support>,
}

impl ClaimCheck {
    pub fn supported(&self) -> bool {
        self.support.is_some()
    }

    /// Worth a reader's check when found nowhere: a concrete value, or a name, quote or list item
    /// that reads as one (several capitalised words or digits, a word like `HepsiJet`), not a
    /// fragment of a sentence ("so I couldn't calculate it") or an ordinary capitalised word
    /// ("Turkish", "Cities").
    pub fn specific(&self) -> bool {
        let c = &self.claim;
        if c.kind.is_value() {
            return true;
        }
        let words: Vec<&str> = c
            .text
            .split(|ch: char| !(ch.is_alphanumeric() || ch == '\'' || ch == '’'))
            .filter(|w| !w.is_empty())
            .collect();
        let named = |w: &&str| {
            w.chars().next().is_some_and(char::is_uppercase)
                || w.chars().any(|c| c.is_ascii_digit())
        };
        // `HepsiJet`, `McIlroy`: a capital after a lower-case letter (not `PSG`, `YYYY.MM.DD`).
        let camel = |w: &&str| {
            w.chars()
                .zip(w.chars().skip(1))
                .any(|(a, b)| a.is_lowercase() && b.is_uppercase())
        };
        let generic = |w: &&str| text::is_generic(w);
        let words: Vec<&str> = words
            .into_iter()
            .skip_while(|w| text::is_stopword(&w.to_lowercase()))
            .filter(|w| !generic(w))
            .collect();
        let names = words.iter().filter(|w| named(w)).count();
        match c.kind {
            ClaimKind::Name => names >= 2 || words.iter().any(camel),
            // Values inside a list item or quote were claims of their own; what is left labels them.
            _ if c.masked.is_some() => false,
            _ if words.len() == 1 => {
                words.iter().any(camel) || words[0].chars().any(|c| c.is_ascii_digit())
            }
            _ => {
                words.len() <= 8 && names * 3 >= words.len() * 2 && words.first().is_some_and(named)
            }
        }
    }

    /// Supported by a tool observation (not only by the request or the agent's own arguments).
    pub fn observed(&self) -> bool {
        self.support
            .as_ref()
            .is_some_and(|s| s.kind == SourceKind::Observation)
    }
}
