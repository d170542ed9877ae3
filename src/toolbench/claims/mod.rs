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
mod tests;
mod text;
pub mod units;

use serde::{Deserialize, Serialize};

pub use extract::extract_claims;
pub use lookup::check_claims;
pub use text::{content_words, normalize};

/// Longest answer read for claims (characters); the rest is ignored.
pub const MAX_ANSWER_CHARS: usize = 20_000;
/// Most claims kept per answer.
pub const MAX_CLAIMS: usize = 200;

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
        }
    }
}

/// Where a piece of evidence comes from. Observations are searched first, then the arguments the agent
/// sent, then the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    Observation,
    Arguments,
    Request,
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

    /// Supported by a tool observation (not only by the request or the agent's own arguments).
    pub fn observed(&self) -> bool {
        self.support
            .as_ref()
            .is_some_and(|s| s.kind == SourceKind::Observation)
    }
}
