//! The evidence judge (`--judge-mode evidence`): the request split into parts once, then per part and
//! vote one question by the rubric of `eval/README.md` ("is this part delivered?"), with every call
//! and its whole observation in view and the answer's values that the claim check found nowhere. The
//! parts decide; an unmatched value is evidence the judge weighs, not a veto on its own.

use serde::{Deserialize, Serialize};

use super::api_docs::{apis_called, own_description};
use super::evidence::CLAIM_OBSERVATION_CHARS;
use super::evidence::{EvidenceReport, tool_docs};
use super::input::Answer;
use super::judge::{Judge, PartQuestion};
use super::observations::{observations, render};
use super::{EvalError, Label};
use sum2act_core::toolbench::claims::content_words;

/// Who split the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SplitBy {
    #[default]
    Judge,
    /// The judge's split was unusable: the whole request is the one part.
    Fallback,
}

/// One part of the request and the judge's votes on it (`None`: unusable reply).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartResult {
    pub part: String,
    pub covered: Vec<Option<bool>>,
    pub reasons: Vec<String>,
}

/// One vote of the evidence judge.
#[derive(Debug, Clone, PartialEq)]
pub struct Vote {
    pub label: Label,
    pub reason: String,
    /// Raw reply of an unusable part question (the vote is then an error).
    pub unusable: Option<String>,
}

/// Everything the evidence judge found for one answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub split_by: SplitBy,
    pub parts: Vec<PartResult>,
    pub votes: Vec<Vote>,
}

/// The combined verdict of one vote from the part answers and the claim check: Unsolved when a part
/// is not delivered, or when the answer has concrete values found nowhere and none found in an
/// observation (nothing in it comes from the tools); Solved otherwise. Unmatched values beside
/// observed ones were shown to the judge with each part question, and its answers decide.
pub fn combine(
    parts: &[(String, Option<bool>)],
    evidence: &EvidenceReport,
) -> (Option<Label>, String) {
    if parts.iter().any(|(_, c)| c.is_none()) {
        return (None, "a part question got no usable reply".into());
    }
    let missing: Vec<&str> = parts
        .iter()
        .filter(|(_, c)| *c == Some(false))
        .map(|(p, _)| p.as_str())
        .collect();
    if !missing.is_empty() {
        return (
            Some(Label::Unsolved),
            format!("not delivered: {}", missing.join(" | ")),
        );
    }
    let unmatched = evidence.unsupported_list(true);
    if !unmatched.is_empty() && evidence.observed == 0 {
        return (
            Some(Label::Unsolved),
            format!(
                "no claim comes from a tool observation, and these values are found nowhere: {}",
                unmatched.join(", ")
            ),
        );
    }
    if unmatched.is_empty() {
        return (Some(Label::Solved), "every part delivered".into());
    }
    (
        Some(Label::Solved),
        format!(
            "every part delivered; values found in no observation, shown to the judge: {}",
            unmatched.join(", ")
        ),
    )
}

/// The unmatched values as the part question lists them.
fn unmatched_text(evidence: &EvidenceReport) -> String {
    let list = evidence.unsupported_list(false);
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

/// The reason of a part no tool call or result concerns.
pub const NOT_BACKED: &str =
    "no tool call, argument or result concerns this part (decided without the judge)";

/// Words that ask rather than name what is asked for, or name any tool at all; they do not tie a part
/// to a tool call.
const ASKING_WORDS: &[&str] = &[
    "api", "apis", "can", "could", "fetch", "find", "get", "give", "help", "know", "let", "like",
    "need", "provide", "retrieve", "show", "tell", "tool", "tools", "use", "using", "want",
    "would",
];

/// Whether some tool call (its function name, its documentation, arguments or whole result) shares a
/// content word with `part`: an answer cannot have taken a part from the tools when no call concerned
/// it ("the status of flight TP1350" after only an airport lookup). The documentation counts because
/// a name can be too short to say what a call is for (`me_for_ticketbud`: "Information about the
/// current token holder").
pub fn part_backed(answer: &Answer, part: &str) -> bool {
    let wanted: Vec<String> = content_words(part)
        .into_iter()
        .filter(|w| !ASKING_WORDS.contains(&w.as_str()))
        .collect();
    if wanted.is_empty() {
        return true;
    }
    let docs = tool_docs(answer);
    observations(answer, CLAIM_OBSERVATION_CHARS)
        .iter()
        .filter(|o| o.is_result())
        .any(|o| {
            let doc = docs
                .iter()
                .find(|(name, _)| *name == o.name)
                .map_or("", |(_, d)| d.as_str());
            let doc = own_description(doc);
            let words = content_words(&format!(
                "{} {} {} {}",
                o.name.replace('_', " "),
                doc,
                o.arguments,
                o.text
            ));
            wanted.iter().any(|w| words.contains(w))
        })
}

/// Runs the evidence judge on one answer: split (cached), then `votes` rounds of part questions.
pub async fn judge_answer(
    judge: &Judge,
    answer: &Answer,
    evidence: &EvidenceReport,
    votes: u32,
) -> Result<Judged, EvalError> {
    let ctx = answer.key.to_string();
    let query = &answer.converted.query;
    let (split_by, parts) = match judge.split_request(query, &ctx).await? {
        Some(p) => (SplitBy::Judge, p),
        None => (
            SplitBy::Fallback,
            sum2act_core::request::whole_request(query),
        ),
    };
    let text = answer.final_text();
    let mut results: Vec<PartResult> = parts
        .iter()
        .map(|p| PartResult {
            part: p.clone(),
            covered: Vec::new(),
            reasons: Vec::new(),
        })
        .collect();
    let observed = observations(answer, judge.options().max_observation_chars);
    let apis = apis_called(answer, &observed);
    let shown = render(&observed, judge.evidence_budget(&[query, &text, &apis], 1));
    let unmatched = unmatched_text(evidence);
    let backed: Vec<bool> = parts.iter().map(|p| part_backed(answer, p)).collect();
    let mut out = Vec::new();
    for vote in 0..votes {
        let mut this = Vec::new();
        let mut unusable = None;
        for (i, part) in parts.iter().enumerate() {
            if !backed[i] {
                // No call or result concerns this part: nothing to ask the judge.
                results[i].covered.push(Some(false));
                results[i].reasons.push(NOT_BACKED.into());
                this.push((part.clone(), Some(false)));
                continue;
            }
            let ask = PartQuestion {
                query,
                part,
                answer: &text,
                apis: &apis,
                results: &shown,
                unmatched: &unmatched,
                ctx: &ctx,
            };
            let reply = judge.part_covered(ask, vote).await?;
            let covered = reply.verdict.as_deref().map(|v| v == "yes");
            if covered.is_none() && unusable.is_none() {
                unusable = Some(reply.raw.clone());
            }
            results[i].covered.push(covered);
            results[i].reasons.push(reply.reason);
            this.push((part.clone(), covered));
        }
        let (label, reason) = combine(&this, evidence);
        out.push(Vote {
            label: label.unwrap_or(Label::Unsolved),
            reason,
            unusable: if label.is_none() {
                unusable.or(Some(String::new()))
            } else {
                None
            },
        });
    }
    Ok(Judged {
        split_by,
        parts: results,
        votes: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sum2act_core::toolbench::claims::{
        Claim, ClaimCheck, ClaimKind, MatchKind, SourceKind, Support,
    };

    fn check(kind: ClaimKind, text: &str, source: Option<SourceKind>) -> ClaimCheck {
        ClaimCheck {
            claim: Claim::new(kind, text, 0),
            support: source.map(|kind| Support {
                kind,
                label: "step 1 f".into(),
                matched: MatchKind::Exact,
                excerpt: String::new(),
            }),
        }
    }

    fn parts(covered: &[Option<bool>]) -> Vec<(String, Option<bool>)> {
        covered
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("part {i}"), *c))
            .collect()
    }

    #[test]
    fn parts_no_tool_call_concerns_are_not_backed() {
        use crate::QueryKey;
        use crate::input::{Converted, ConvertedAnswer};
        use serde_json::json;
        let answer = Answer {
            key: QueryKey::new("G1", 1),
            converted: Converted {
                query: "q".into(),
                available_tools: vec![],
                answer: ConvertedAnswer {
                    method: "m".into(),
                    total_steps: 2,
                    final_answer: String::new(),
                    answer_details: json!([{"role": "tool", "message": {"name": "airport_by_code_for_airport_info", "arguments": "{\"iata_code\": \"LIS\"}", "response": "{\"city\": \"Lisbon\"}"}, "next": []}]),
                },
            },
            record: None,
        };
        assert!(part_backed(
            &answer,
            "Tell me about the airport with IATA code LIS"
        ));
        assert!(
            part_backed(&answer, "What is the weather in Lisbon?"),
            "the result names Lisbon"
        );
        assert!(!part_backed(
            &answer,
            "give me the status of flight TP1350 on 2024-06-14"
        ));
        assert!(
            part_backed(&answer, "please help"),
            "nothing to tie: not decided here"
        );
    }

    /// The dev run's G1_tool 7971: "more about myself as the current token holder", answered from
    /// `me_for_ticketbud`, whose name shares no word with the part but whose documentation does.
    #[test]
    fn a_call_whose_documentation_names_the_part_backs_it() {
        use crate::QueryKey;
        use crate::input::{Converted, ConvertedAnswer};
        use serde_json::json;
        let doc = |name: &str, what: &str| json!({"name": name, "description": format!("This is the subfunction for tool \"ticketbud\", you can use this tool.The description of this function is: \"{what}\""), "parameters": {"type": "object", "properties": {}}});
        let answer = Answer {
            key: QueryKey::new("G1_tool", 7971),
            converted: Converted {
                query: "q".into(),
                available_tools: vec![
                    doc(
                        "me_for_ticketbud",
                        "Information about the current token holder",
                    ),
                    doc(
                        "tickets_for_an_event_for_ticketbud",
                        "All tickets for an event",
                    ),
                ],
                answer: ConvertedAnswer {
                    method: "m".into(),
                    total_steps: 2,
                    final_answer: String::new(),
                    answer_details: json!([{"role": "tool", "message": {"name": "me_for_ticketbud", "arguments": "{}", "response": "{\"user\": {\"name\": \"Sarah Whitman\"}}"}, "next": []}]),
                },
            },
            record: None,
        };
        assert!(part_backed(
            &answer,
            "Information about me as the current token holder"
        ));
        assert!(
            !part_backed(&answer, "all tickets sold for the festival"),
            "an offered API that was not called backs nothing"
        );
        assert!(
            !part_backed(&answer, "short URLs made with the bitly tool"),
            "ToolBench's boilerplate (\"you can use this tool\") ties no part"
        );
    }

    #[test]
    fn parts_decide_and_unmatched_values_weigh_but_do_not_veto() {
        let obs = Some(SourceKind::Observation);
        let good = EvidenceReport::new(vec![check(ClaimKind::Number, "21.4", obs)]);
        assert_eq!(
            combine(&parts(&[Some(true), Some(true)]), &good).0,
            Some(Label::Solved)
        );
        let (label, reason) = combine(&parts(&[Some(true), Some(false)]), &good);
        assert_eq!(label, Some(Label::Unsolved));
        assert!(reason.contains("not delivered: part 1"), "{reason}");
        assert_eq!(
            combine(&parts(&[Some(true), None]), &good).0,
            None,
            "unusable is an error"
        );
        // One value the check could not find, beside one it found: the judge saw it and said every
        // part is delivered, so the answer is Solved (the reason keeps the value).
        let one_unmatched = EvidenceReport::new(vec![
            check(ClaimKind::Number, "21.4", obs),
            check(ClaimKind::Date, "2024-01-02", None),
        ]);
        let (label, reason) = combine(&parts(&[Some(true)]), &one_unmatched);
        assert_eq!(label, Some(Label::Solved));
        assert!(reason.contains("2024-01-02"), "{reason}");
        // Nothing from the tools and a value found nowhere: Unsolved whatever the judge said.
        let invented = EvidenceReport::new(vec![
            check(ClaimKind::Id, "TP1350", Some(SourceKind::Request)),
            check(ClaimKind::Number, "14:35", None),
        ]);
        let (label, reason) = combine(&parts(&[Some(true)]), &invented);
        assert_eq!(label, Some(Label::Unsolved));
        assert!(reason.contains("14:35"), "{reason}");
        // A negative result restating the request's values ("+34 605 11 22 33 is not registered"):
        // nothing unmatched, so the judge's part answers decide.
        let negative = EvidenceReport::new(vec![check(
            ClaimKind::Phone,
            "+34 605 11 22 33",
            Some(SourceKind::Request),
        )]);
        assert_eq!(
            combine(&parts(&[Some(true)]), &negative).0,
            Some(Label::Solved)
        );
        // Names the check could not find are the judge's to weigh too.
        let names = EvidenceReport::new(vec![
            check(ClaimKind::Number, "21.4", obs),
            check(ClaimKind::Name, "Real Madrid", None),
            check(ClaimKind::Name, "Porto", None),
        ]);
        assert_eq!(
            combine(&parts(&[Some(true)]), &names).0,
            Some(Label::Solved)
        );
        // A lone capitalised word (Porto) is too common to flag: the hint lists specific names only.
        assert_eq!(unmatched_text(&names), "Real Madrid (name)");
        assert_eq!(unmatched_text(&good), "none");
        // No claims at all (a yes/no question answered in words): the parts decide.
        assert_eq!(
            combine(&parts(&[Some(true)]), &EvidenceReport::default()).0,
            Some(Label::Solved)
        );
    }
}
