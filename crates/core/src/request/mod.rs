//! The request model: what a user asked for, as *parts*, and what was found for each, as *facts*.
//!
//! The model decomposes the request and attributes facts; this module only checks what it says, with
//! structural rules that hold in any language (`check.rs`): a part is made of the request's words,
//! parts do not repeat each other, a fact belongs to a part that exists. A part's status is not
//! something anyone sets: it follows from the facts attributed to it (answered by facts F2, F5) or
//! from a reason it could not be found, so a part cannot be shown open while facts answer it, nor
//! answered with no fact behind it.

mod check;

pub use check::{MAX_PARTS, check_form, check_parts, checked_parts, whole_request, words};

use std::fmt::Write;

use serde::{Deserialize, Serialize};

/// Longest fact kept (characters): a fact states values, it is not a copied reply.
pub const MAX_FACT_CHARS: usize = 600;

/// Facts a request keeps at most: the state stays bounded however many rounds run.
pub const MAX_FACTS: usize = 40;

/// One thing the user asked for, in the request's own words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub text: String,
    /// Why no tool could answer it, once said (a part with facts is answered whatever this says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_found: Option<String>,
}

/// A fact found for a part: its values as a call returned them, and which call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// `F1`, `F2`, … in the order found.
    pub id: u32,
    /// Index of the part it answers (0-based).
    pub part: usize,
    pub text: String,
    /// The step of the call that returned it.
    pub call: u32,
}

/// Where a part stands, derived from its facts.
#[derive(Debug, Clone, PartialEq)]
pub enum Status<'a> {
    Open,
    Answered(Vec<u32>),
    NotFound(&'a str),
}

/// The parts of a request, how the user wants the answer given, and the facts found for the parts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub parts: Vec<Part>,
    /// How the answer is to be given (a report, a table, a language): asked, but found by no call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub form: Vec<String>,
    pub facts: Vec<Fact>,
}

impl Request {
    /// The request's parts and form as the model proposed them, each checked against its text
    /// (`check_parts`; a form is kept only when made of the request's words, and is never a part).
    pub fn new(query: &str, proposed: &[String], form: &[String]) -> Request {
        let parts: Vec<String> = check_parts(query, proposed);
        let form = check_form(query, form, &parts);
        Request {
            parts: parts
                .into_iter()
                .map(|text| Part {
                    text,
                    not_found: None,
                })
                .collect(),
            form,
            facts: Vec::new(),
        }
    }

    /// Attributes a fact to part `part` (1-based, as the model numbers them); `None` when there is no
    /// such part, the fact is empty, already known, or the facts are full.
    pub fn add_fact(&mut self, part: usize, text: &str, call: u32) -> Option<u32> {
        let text: String = text.trim().chars().take(MAX_FACT_CHARS).collect();
        let index = part.checked_sub(1).filter(|i| *i < self.parts.len())?;
        if text.is_empty()
            || self.facts.len() >= MAX_FACTS
            || self.facts.iter().any(|f| f.part == index && f.text == text)
        {
            return None;
        }
        let id = self.facts.len() as u32 + 1;
        self.facts.push(Fact {
            id,
            part: index,
            text,
            call,
        });
        Some(id)
    }

    /// Records why part `part` (1-based) could not be found.
    pub fn not_found(&mut self, part: usize, why: &str) -> bool {
        let Some(p) = part.checked_sub(1).and_then(|i| self.parts.get_mut(i)) else {
            return false;
        };
        let why = why.trim();
        p.not_found = Some(if why.is_empty() {
            "no tool returned it".into()
        } else {
            why.chars().take(200).collect()
        });
        true
    }

    /// Part `i`'s status (0-based).
    pub fn status(&self, i: usize) -> Status<'_> {
        let facts: Vec<u32> = self
            .facts
            .iter()
            .filter(|f| f.part == i)
            .map(|f| f.id)
            .collect();
        match (&self.parts[i].not_found, facts.is_empty()) {
            (_, false) => Status::Answered(facts),
            (Some(why), true) => Status::NotFound(why),
            (None, true) => Status::Open,
        }
    }

    /// Indexes of the parts neither answered nor given up on.
    pub fn open(&self) -> Vec<usize> {
        (0..self.parts.len())
            .filter(|i| self.status(*i) == Status::Open)
            .collect()
    }

    /// The parts, numbered, each with its status: `2. the weather in Lyon — answered by F3`.
    pub fn render_parts(&self) -> String {
        let mut out = String::new();
        for (i, p) in self.parts.iter().enumerate() {
            let status = match self.status(i) {
                Status::Open => "open".to_string(),
                Status::Answered(ids) => format!("answered by {}", fact_ids(&ids)),
                Status::NotFound(why) => format!("not found: {why}"),
            };
            let _ = writeln!(out, "{}. {} — {status}", i + 1, p.text);
        }
        out
    }

    /// The facts, each with its id, part and call: `F3 (part 2, call 4): …`.
    pub fn render_facts(&self) -> String {
        if self.facts.is_empty() {
            return "(none yet)\n".into();
        }
        let mut out = String::new();
        for f in &self.facts {
            let _ = writeln!(
                out,
                "F{} (part {}, call {}): {}",
                f.id,
                f.part + 1,
                f.call,
                f.text
            );
        }
        out
    }
}

/// `F1, F4`.
fn fact_ids(ids: &[u32]) -> String {
    ids.iter()
        .map(|id| format!("F{id}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
