//! The evidence judge (`--judge-mode evidence`): the request split into parts once, one narrow yes/no
//! question per part and vote with the relevant observation excerpts, and the claim check. Solved only
//! when every part is covered and every concrete value is supported; Unsolved when a part is missing or a
//! value is invented; Unsure otherwise.

use serde::{Deserialize, Serialize};

use super::evidence::EvidenceReport;
use super::input::{Answer, cut};
use super::judge::Judge;
use super::requirements::split_fallback;
use super::{EvalError, Label};
use crate::toolbench::FINISH;
use crate::toolbench::claims::content_words;

/// Observation excerpts shown per part, and their length.
const EXCERPTS_PER_PART: usize = 2;
const EXCERPT_CHARS: usize = 600;
/// Share of unsupported names and list items above which an answer is only Unsure.
const MAX_UNSUPPORTED_WORD_SHARE: f64 = 0.5;

/// Who split the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SplitBy {
    #[default]
    Judge,
    /// The judge's split was unusable: the deterministic splitter.
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

/// The combined verdict of one vote from the part answers and the claim check.
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
            format!("not covered: {}", missing.join(" | ")),
        );
    }
    if evidence.unsupported_values > 0 {
        return (
            Some(Label::Unsolved),
            format!(
                "values found in no observation, argument or the request: {}",
                evidence.unsupported_list(true).join(", ")
            ),
        );
    }
    if !evidence.claims.is_empty() && evidence.observed == 0 {
        return (
            Some(Label::Unsure),
            "every part judged covered, but no claim of the answer comes from a tool observation"
                .into(),
        );
    }
    if evidence.unsupported_word_share() > MAX_UNSUPPORTED_WORD_SHARE {
        return (
            Some(Label::Unsure),
            format!(
                "every part judged covered, but most names and items are unsupported: {}",
                evidence.unsupported_list(false).join(", ")
            ),
        );
    }
    (
        Some(Label::Solved),
        "every part covered; every concrete value supported".into(),
    )
}

/// The reason of a part no tool call or result concerns.
pub const NOT_BACKED: &str =
    "no tool call, argument or result concerns this part (decided without the judge)";

/// Words that ask rather than name what is asked for; they do not tie a part to a tool call.
const ASKING_WORDS: &[&str] = &[
    "can", "could", "find", "get", "give", "help", "know", "let", "like", "need", "provide",
    "show", "tell", "want", "would",
];

/// Whether some tool call (its function name, arguments or result) shares a content word with `part`:
/// an answer cannot have taken a part from the tools when no call concerned it ("the status of flight
/// TP1350" after only an airport lookup).
pub fn part_backed(answer: &Answer, part: &str) -> bool {
    let wanted: Vec<String> = content_words(part)
        .into_iter()
        .filter(|w| !ASKING_WORDS.contains(&w.as_str()))
        .collect();
    if wanted.is_empty() {
        return true;
    }
    answer
        .tool_steps()
        .iter()
        .filter(|s| s.name != FINISH)
        .any(|s| {
            let words = content_words(&format!(
                "{} {} {}",
                s.name.replace('_', " "),
                s.arguments,
                s.response
            ));
            wanted.iter().any(|w| words.contains(w))
        })
}

/// The observation excerpts most relevant to `part` (by shared content words), numbered by step.
pub fn excerpts_for(answer: &Answer, part: &str) -> String {
    let wanted = content_words(part);
    let mut scored: Vec<(usize, usize, String)> = answer
        .tool_steps()
        .iter()
        .enumerate()
        .filter(|(_, s)| s.name != FINISH)
        .map(|(i, s)| {
            let words = content_words(&format!("{} {} {}", s.name, s.arguments, s.response));
            let overlap = wanted.iter().filter(|w| words.contains(*w)).count();
            let text = format!(
                "step {} {}({}): {}",
                i + 1,
                s.name,
                cut(&s.arguments, 150),
                cut(&s.response, EXCERPT_CHARS)
            );
            (overlap, i, text)
        })
        .collect();
    if scored.is_empty() {
        return "(the assistant called no API)".into();
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(EXCERPTS_PER_PART)
        .map(|(_, _, t)| t)
        .collect::<Vec<_>>()
        .join("\n")
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
        None => (SplitBy::Fallback, split_fallback(query)),
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
    let excerpts: Vec<String> = parts.iter().map(|p| excerpts_for(answer, p)).collect();
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
            let reply = judge
                .part_covered(query, part, &text, &excerpts[i], vote, &ctx)
                .await?;
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
    use crate::toolbench::claims::{Claim, ClaimCheck, ClaimKind, MatchKind, SourceKind, Support};

    fn check(kind: ClaimKind, text: &str, source: Option<SourceKind>) -> ClaimCheck {
        ClaimCheck {
            claim: Claim {
                kind,
                text: text.into(),
                start: 0,
                value: None,
                decimals: 0,
                dates: Vec::new(),
            },
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
        use crate::eval::QueryKey;
        use crate::eval::input::{Converted, ConvertedAnswer};
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

    #[test]
    fn verdict_rules() {
        let obs = Some(SourceKind::Observation);
        let good = EvidenceReport::new(vec![check(ClaimKind::Number, "21.4", obs)]);
        assert_eq!(
            combine(&parts(&[Some(true), Some(true)]), &good).0,
            Some(Label::Solved)
        );
        let (label, reason) = combine(&parts(&[Some(true), Some(false)]), &good);
        assert_eq!(label, Some(Label::Unsolved));
        assert!(reason.contains("part 1"));
        assert_eq!(
            combine(&parts(&[Some(true), None]), &good).0,
            None,
            "unusable is an error"
        );
        let invented = EvidenceReport::new(vec![
            check(ClaimKind::Number, "21.4", obs),
            check(ClaimKind::Date, "2024-01-02", None),
        ]);
        let (label, reason) = combine(&parts(&[Some(true)]), &invented);
        assert_eq!(label, Some(Label::Unsolved));
        assert!(reason.contains("2024-01-02"));
        let echo = EvidenceReport::new(vec![check(
            ClaimKind::Id,
            "TP1350",
            Some(SourceKind::Request),
        )]);
        assert_eq!(combine(&parts(&[Some(true)]), &echo).0, Some(Label::Unsure));
        let names = EvidenceReport::new(vec![
            check(ClaimKind::Number, "21.4", obs),
            check(ClaimKind::Name, "Real Madrid", None),
            check(ClaimKind::Name, "Porto", None),
            check(ClaimKind::Name, "Lisbon", obs),
        ]);
        assert_eq!(
            combine(&parts(&[Some(true)]), &names).0,
            Some(Label::Unsure)
        );
        // No claims at all (a yes/no question answered in words): the parts decide.
        assert_eq!(
            combine(&parts(&[Some(true)]), &EvidenceReport::default()).0,
            Some(Label::Solved)
        );
    }
}
