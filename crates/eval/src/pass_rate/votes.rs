//! The judge's votes on one answer: the evidence judge's per-part questions, or the ToolEval-style label
//! with a re-check of an Unsure against the whole trajectory.

use crate::api_docs::apis_called;
use crate::evidence::EvidenceReport;
use crate::evidence_judge::{PartResult, SplitBy, judge_answer};
use crate::input::Answer;
use crate::judge::{Judge, Verdict};
use crate::observations::{observations, render};
use crate::{EvalError, Label, QueryKey};

/// What the judge said about one answer.
pub(super) struct Judged {
    pub key: QueryKey,
    pub labels: Vec<Label>,
    pub reasons: Vec<String>,
    pub unusable: Vec<String>,
    pub parts: Vec<PartResult>,
    pub split_by: Option<SplitBy>,
}

/// The evidence judge's votes.
pub(super) async fn evidence_votes(
    judge: &Judge,
    answer: &Answer,
    evidence: &EvidenceReport,
    votes: u32,
) -> Result<Judged, EvalError> {
    let judged = judge_answer(judge, answer, evidence, votes).await?;
    let unusable = judged
        .votes
        .iter()
        .filter_map(|v| v.unusable.clone())
        .collect();
    Ok(Judged {
        key: answer.key.clone(),
        labels: judged.votes.iter().map(|v| v.label).collect(),
        reasons: judged.votes.iter().map(|v| v.reason.clone()).collect(),
        unusable,
        parts: judged.parts,
        split_by: Some(judged.split_by),
    })
}

/// The ToolEval-style votes: an Unsure is asked again with the trajectory in view.
pub(super) async fn tooleval_votes(
    judge: &Judge,
    answer: &Answer,
    votes: u32,
) -> Result<Judged, EvalError> {
    let ctx = answer.key.to_string();
    let query = &answer.converted.query;
    let text = answer.final_text();
    let mut out = Judged {
        key: answer.key.clone(),
        labels: Vec::new(),
        reasons: Vec::new(),
        unusable: Vec::new(),
        parts: Vec::new(),
        split_by: None,
    };
    for vote in 0..votes {
        let first = judge.answer_status(query, &text, vote, &ctx).await?;
        let verdict = if first.unusable.is_none() && first.label == Label::Unsure {
            let observed = observations(answer, judge.options().max_observation_chars);
            let apis = apis_called(answer, &observed);
            let budget = judge.evidence_budget(&[query, &text, &apis], 1);
            let trajectory = render(&observed, budget);
            let second = judge
                .trajectory_status(query, &text, (&apis, &trajectory), vote, &ctx)
                .await?;
            Verdict {
                reason: format!("{} | re-check: {}", first.reason, second.reason),
                ..second
            }
        } else {
            first
        };
        if let Some(raw) = verdict.unusable {
            out.unusable.push(raw);
        }
        out.labels.push(verdict.label);
        out.reasons.push(verdict.reason);
    }
    Ok(out)
}
