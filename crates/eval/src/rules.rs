//! Verdicts no model is asked for: an answer that never finished, gave up, errored, is empty or cut off,
//! or only restates the request or a tool's documentation is Unsolved. Each verdict names its rule.

use serde::{Deserialize, Serialize};

use std::collections::BTreeSet;

use super::evidence::{CLAIM_OBSERVATION_CHARS, EvidenceReport, tool_docs};
use super::input::Answer;
use super::observations::observations;
use sum2act_core::toolbench::FINISH;
use sum2act_core::toolbench::answer::FinishKind;
use sum2act_core::toolbench::claims::content_words;

/// The rule that decided a verdict without a judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The episode ended without a Finish call (no `Finish` at the end of the trajectory).
    NoFinish,
    /// The agent gave up (`give_up_and_restart`, finish `give_up`).
    GaveUp,
    /// The episode ended in a harness or model error.
    Error,
    /// The step or call limit ended the episode.
    Limit,
    EmptyAnswer,
    /// The Finish arguments were cut off (unterminated JSON).
    CutOff,
    /// Every sentence of the answer repeats the request, with no fact from a tool.
    RestatesRequest,
    /// The answer repeats a tool's documentation instead of its results.
    RestatesDocs,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::NoFinish => "no_finish",
            Rule::GaveUp => "gave_up",
            Rule::Error => "error",
            Rule::Limit => "limit",
            Rule::EmptyAnswer => "empty_answer",
            Rule::CutOff => "cut_off",
            Rule::RestatesRequest => "restates_request",
            Rule::RestatesDocs => "restates_docs",
        }
    }
}

/// A rule's verdict (always Unsolved) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleHit {
    pub rule: Rule,
    pub detail: String,
}

/// Share of a sentence's content words found in the request or one tool's documentation that makes it
/// a restatement.
const RESTATE_SHARE: f64 = 0.75;
/// Sentences shorter than this (content words) say too little to call restatements.
const MIN_SENTENCE_WORDS: usize = 3;

/// The rule that makes `answer` Unsolved, if any. `evidence` is its claim check (restatement needs it:
/// a sentence carrying a fact from an observation is an answer, whatever its wording).
pub fn decide(answer: &Answer, evidence: &EvidenceReport) -> Option<RuleHit> {
    finish_rule(answer).or_else(|| restatement(answer, evidence))
}

fn hit(rule: Rule, detail: impl Into<String>) -> Option<RuleHit> {
    Some(RuleHit {
        rule,
        detail: detail.into(),
    })
}

/// The rules about how the episode ended (the only ones the ToolEval-style judge applies, as ToolEval).
/// Unlike ToolEval, a give-up that writes an answer is judged by what it says: saying plainly that a
/// part could not be obtained, after the tools were called for it, is no giving up (the rubric).
pub fn finish_rule(answer: &Answer) -> Option<RuleHit> {
    let written = !answer.final_text().trim().is_empty();
    if let Some(r) = &answer.record {
        let rule = match r.finish.kind() {
            Some(FinishKind::GiveAnswer) => None,
            Some(FinishKind::GiveUp) if written => None,
            Some(FinishKind::GiveUp) => Some(Rule::GaveUp),
            Some(FinishKind::Error) => Some(Rule::Error),
            Some(FinishKind::Limit) => Some(Rule::Limit),
            None => Some(Rule::NoFinish),
        };
        if let Some(rule) = rule {
            let name = match r.finish.as_str() {
                "" => "none",
                name => name,
            };
            return hit(rule, format!("no final answer (finish: {name})"));
        }
    }
    let raw = &answer.converted.answer.final_answer;
    if raw.contains("give_up_and_restart") && !written {
        return hit(Rule::GaveUp, "gave up (give_up_and_restart)");
    }
    match answer.tool_steps().last() {
        Some(step) if step.name == FINISH => {}
        _ => {
            return hit(
                Rule::NoFinish,
                "the trajectory does not end with a Finish call",
            );
        }
    }
    if raw.trim().is_empty() || answer.final_text().trim().is_empty() {
        return hit(Rule::EmptyAnswer, "empty final answer");
    }
    let trimmed = raw.trim();
    if trimmed.starts_with('{') && serde_json::from_str::<serde_json::Value>(trimmed).is_err() {
        return hit(
            Rule::CutOff,
            "the Finish arguments are cut off (unterminated JSON)",
        );
    }
    None
}

pub use sum2act_core::toolbench::request_parts::sentences;

/// The content words of the values (not the keys) of every observation: what the tools said.
fn value_words(answer: &Answer) -> BTreeSet<String> {
    fn collect(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::String(s) => {
                out.push_str(s);
                out.push(' ');
            }
            serde_json::Value::Array(items) => items.iter().for_each(|i| collect(i, out)),
            serde_json::Value::Object(map) => map.values().for_each(|i| collect(i, out)),
            _ => {}
        }
    }
    let mut text = String::new();
    for o in observations(answer, CLAIM_OBSERVATION_CHARS)
        .into_iter()
        .filter(|o| o.is_result())
    {
        match serde_json::from_str::<serde_json::Value>(&o.text) {
            Ok(v) => collect(&v, &mut text),
            Err(_) => text.push_str(&o.text),
        }
        text.push(' ');
    }
    content_words(&text)
}

fn restatement(answer: &Answer, evidence: &EvidenceReport) -> Option<RuleHit> {
    if evidence.observed > 0 {
        return None;
    }
    let text = answer.final_text();
    let request = content_words(&answer.converted.query);
    // Words of the tools' replies the request does not have: a sentence with one reports a result
    // ("the number is not registered"), whatever else it repeats.
    let reported: BTreeSet<String> = value_words(answer)
        .into_iter()
        .filter(|w| !request.contains(w))
        .collect();
    let docs: Vec<(String, BTreeSet<String>)> = tool_docs(answer)
        .into_iter()
        .map(|(name, doc)| (name, content_words(&doc)))
        .collect();
    let mut judged = 0;
    let mut doc_hits: Vec<String> = Vec::new();
    for s in sentences(&text) {
        let words = content_words(s);
        if words.len() < MIN_SENTENCE_WORDS {
            continue;
        }
        if words.iter().any(|w| reported.contains(w)) {
            return None;
        }
        judged += 1;
        let known = |d: &BTreeSet<String>| {
            words
                .iter()
                .filter(|w| d.contains(*w) || request.contains(*w))
                .count() as f64
                / words.len() as f64
        };
        let doc_only = |d: &BTreeSet<String>| {
            words
                .iter()
                .filter(|w| d.contains(*w) && !request.contains(*w))
                .count()
        };
        let from_doc = docs
            .iter()
            .find(|(_, d)| doc_only(d) >= 2 && known(d) >= RESTATE_SHARE);
        if let Some((name, _)) = from_doc {
            doc_hits.push(name.clone());
        } else if known(&BTreeSet::new()) < RESTATE_SHARE {
            return None;
        }
    }
    if judged == 0 {
        return None;
    }
    if doc_hits.is_empty() {
        hit(
            Rule::RestatesRequest,
            "the answer restates the request and gives no fact from any tool result",
        )
    } else {
        doc_hits.dedup();
        hit(
            Rule::RestatesDocs,
            format!(
                "the answer restates the documentation of {} instead of its results",
                doc_hits.join(", ")
            ),
        )
    }
}

impl Answer {
    /// Why this answer is Unsolved without asking the judge, if it is: no Finish, gave up, error, empty or
    /// cut-off answer (see [`finish_rule`]).
    pub fn rule_failure(&self) -> Option<String> {
        finish_rule(self).map(|h| h.detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::QueryKey;
    use crate::evidence::check_answer;
    use crate::input::{Converted, ConvertedAnswer, Record};
    use serde_json::json;

    fn answer(query: &str, final_answer: &str, response: &str) -> Answer {
        let raw = json!({"return_type": "give_answer", "final_answer": final_answer}).to_string();
        Answer {
            key: QueryKey::new("G1", 1),
            converted: Converted {
                query: query.into(),
                available_tools: vec![
                    json!({"name": "flight_status_for_x", "description": "Status of a flight on a date: scheduled and estimated times, gate, terminal and delay.", "parameters": {"properties": {"date": {"description": "Departure date"}}}}),
                ],
                answer: ConvertedAnswer {
                    method: "m".into(),
                    total_steps: 3,
                    final_answer: raw,
                    answer_details: json!([{"role": "tool", "message": {"name": "flight_status_for_x", "arguments": "{}", "response": response}, "next": [
                        {"role": "tool", "message": {"name": "Finish", "arguments": "{}", "response": ""}, "next": []}]}]),
                },
            },
            record: None,
        }
    }

    fn rule(a: &Answer) -> Option<Rule> {
        decide(a, &check_answer(a)).map(|h| h.rule)
    }

    #[test]
    fn a_give_up_that_writes_what_could_not_be_obtained_goes_to_the_judge() {
        // The rubric: saying plainly what could not be obtained is no giving up; only a give-up that
        // writes nothing is failed by rule.
        let mut a = answer("q", "", "{}");
        a.converted.answer.final_answer = json!({"return_type": "give_up_and_restart",
            "final_answer": "The account call answered Unauthorized: a login token is needed."})
        .to_string();
        a.record = Some(Record {
            finish: "give_up".into(),
            ..Record::default()
        });
        assert_eq!(finish_rule(&a).map(|h| h.rule), None);
        a.converted.answer.final_answer =
            json!({"return_type": "give_up_and_restart", "final_answer": ""}).to_string();
        assert_eq!(finish_rule(&a).map(|h| h.rule), Some(Rule::GaveUp));
    }

    #[test]
    fn finish_rules_name_themselves() {
        let mut a = answer("q", "", "{}");
        for (finish, want) in [
            ("give_up", Rule::GaveUp),
            ("error", Rule::Error),
            ("limit", Rule::Limit),
            ("", Rule::NoFinish),
        ] {
            a.record = Some(Record {
                finish: finish.into(),
                ..Record::default()
            });
            assert_eq!(rule(&a), Some(want), "{finish}");
        }
        let mut cut = answer("q", "x", "{}");
        cut.converted.answer.final_answer =
            "{\"return_type\": \"give_answer\", \"final_answer\": \"The gate is".into();
        assert_eq!(rule(&cut), Some(Rule::CutOff));
        assert_eq!(rule(&answer("q", " ", "{}")), Some(Rule::EmptyAnswer));
    }

    #[test]
    fn restating_docs_or_request_is_unsolved_but_facts_from_tools_are_not() {
        let q = "Give me the status of flight TP1350 on 2024-06-14.";
        let docs = answer(
            q,
            "The flight TP1350 on 2024-06-14 has scheduled and estimated times, gate, terminal and delay.",
            r#"{"error": "", "response": {"gate": "B12"}}"#,
        );
        assert_eq!(rule(&docs), Some(Rule::RestatesDocs));
        let echo = answer(
            q,
            "Here is the status of flight TP1350 on 2024-06-14.",
            "{}",
        );
        assert_eq!(rule(&echo), Some(Rule::RestatesRequest));
        let real = answer(
            q,
            "Flight TP1350 on 2024-06-14 departs from gate B12 with its scheduled and estimated times.",
            r#"{"error": "", "response": {"gate": "B12"}}"#,
        );
        assert_eq!(
            rule(&real),
            None,
            "a fact from the observation is an answer"
        );
        let other = answer(
            q,
            "The flight was delayed because of heavy fog over the airport.",
            "{}",
        );
        assert_eq!(
            rule(&other),
            None,
            "new words are not a restatement (the judge decides)"
        );
        // A negative result the tool returned, in the request's own words otherwise.
        let negative = answer(
            q,
            "The status of flight TP1350 on 2024-06-14 is not available: flight not found.",
            r#"{"error": "", "response": {"message": "Flight not found"}}"#,
        );
        assert_eq!(
            rule(&negative),
            None,
            "a reported result, not a restatement"
        );
        let key_only = answer(
            q,
            "Here is the status of flight TP1350 on 2024-06-14 message.",
            r#"{"error": "", "response": {"message": ""}}"#,
        );
        assert_eq!(
            rule(&key_only),
            Some(Rule::RestatesRequest),
            "a JSON key is not a result"
        );
    }

    #[test]
    fn sentences_split_on_terminators_not_decimals() {
        assert_eq!(
            sentences("It is 21.4 C. Humid!\nWindy; calm"),
            vec!["It is 21.4 C.", "Humid!", "Windy;", "calm"]
        );
    }
}
