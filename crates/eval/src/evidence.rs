//! The evidence check of an answer: its specific claims looked up in what the agent saw (observations),
//! sent (arguments) and was asked (request). Deterministic, free, and the same for every judge.

use serde::{Deserialize, Serialize};

use super::input::Answer;
use super::observations::{Seen, observations};
use sum2act_core::toolbench::FINISH;
use sum2act_core::toolbench::claims::{ClaimCheck, Evidence, SourceKind, check_claims};

/// Per-answer result of the evidence check.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvidenceReport {
    pub claims: Vec<ClaimCheck>,
    pub supported: usize,
    pub unsupported: usize,
    /// Supported by a tool observation (not only by the request or the agent's arguments).
    pub observed: usize,
    /// Unsupported concrete values (numbers, dates, ids, URLs, e-mails): invented data.
    pub unsupported_values: usize,
    /// Unsupported names, quoted strings and list items (a looser match, weaker evidence).
    pub unsupported_words: usize,
}

impl EvidenceReport {
    pub fn new(claims: Vec<ClaimCheck>) -> Self {
        let supported = claims.iter().filter(|c| c.supported()).count();
        let observed = claims.iter().filter(|c| c.observed()).count();
        let unsupported_values = claims
            .iter()
            .filter(|c| !c.supported() && c.claim.kind.is_value())
            .count();
        EvidenceReport {
            supported,
            unsupported: claims.len() - supported,
            observed,
            unsupported_values,
            unsupported_words: claims.len() - supported - unsupported_values,
            claims,
        }
    }

    /// The unsupported claims, for reasons (`13.23 JPY (number)`): the concrete values, or with
    /// `values_only` false every claim specific enough to check (the judge's hint).
    pub fn unsupported_list(&self, values_only: bool) -> Vec<String> {
        self.claims
            .iter()
            .filter(|c| !c.supported() && (c.claim.kind.is_value() || !values_only && c.specific()))
            .map(|c| format!("{} ({})", c.claim.text, c.claim.kind.as_str()))
            .collect()
    }

    /// Share of the non-value claims (names, list items, quotes) with no support.
    pub fn unsupported_word_share(&self) -> f64 {
        let words = self
            .claims
            .iter()
            .filter(|c| !c.claim.kind.is_value())
            .count();
        if words == 0 {
            0.0
        } else {
            self.unsupported_words as f64 / words as f64
        }
    }
}

/// Longest observation the claim check reads (characters): far beyond what answers quote from, and
/// bounded so a huge reply cannot make the check slow.
pub const CLAIM_OBSERVATION_CHARS: usize = 200_000;

/// What an answer may draw on: one entry per observation (whole, from our record where the answer
/// file's copy is cut) and per call's arguments, the request, and the offered APIs' documentation
/// (searched last: an example id from the docs is not invented, though no tool returned it).
pub fn evidence_of(answer: &Answer) -> Vec<Evidence> {
    let mut out = vec![Evidence::new(
        SourceKind::Request,
        "request",
        answer.converted.query.clone(),
    )];
    for o in observations(answer, CLAIM_OBSERVATION_CHARS) {
        let label = match o.seen {
            Seen::EarlierAttempt => format!("earlier attempt {} {}", o.step, o.name),
            Seen::Path => format!("step {} {}", o.step, o.name),
            // The harness's words, not a tool's: nothing an answer may draw on.
            Seen::RefusedAnswer => continue,
        };
        out.push(Evidence::new(
            SourceKind::Observation,
            label.clone(),
            o.text,
        ));
        out.push(Evidence::new(SourceKind::Arguments, label, o.arguments));
    }
    for (name, doc) in tool_docs(answer) {
        let examples = parameter_examples(answer, &name);
        out.push(Evidence::new(
            SourceKind::Docs,
            format!("docs {name}"),
            format!("{doc} {examples}"),
        ));
    }
    out
}

/// The example and default values the documentation of function `name` gives its parameters ("the
/// team's ID, for example 465171" quotes one).
fn parameter_examples(answer: &Answer, name: &str) -> String {
    let mut out = Vec::new();
    for t in &answer.converted.available_tools {
        let f = t.get("function").unwrap_or(t);
        if f["name"].as_str() != Some(name) {
            continue;
        }
        for p in f["parameters"]["properties"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.values())
        {
            for key in ["example_value", "default"] {
                match &p[key] {
                    serde_json::Value::Null => {}
                    serde_json::Value::String(s) => out.push(s.clone()),
                    v => out.push(v.to_string()),
                }
            }
        }
    }
    out.join(" ")
}

/// The documentation the agent was shown: `(function name, description and parameter descriptions)`.
pub fn tool_docs(answer: &Answer) -> Vec<(String, String)> {
    answer
        .converted
        .available_tools
        .iter()
        .filter_map(|t| {
            let f = t.get("function").unwrap_or(t);
            let name = f["name"].as_str()?.to_string();
            if name == FINISH {
                return None;
            }
            let mut text = f["description"].as_str().unwrap_or("").to_string();
            if let Some(props) = f["parameters"]["properties"].as_object() {
                for p in props.values() {
                    if let Some(d) = p["description"].as_str() {
                        text.push_str(". ");
                        text.push_str(d);
                    }
                }
            }
            Some((name, text))
        })
        .collect()
}

/// Checks the claims of an answer's final text.
pub fn check_answer(answer: &Answer) -> EvidenceReport {
    EvidenceReport::new(check_claims(&answer.final_text(), &evidence_of(answer)))
}
