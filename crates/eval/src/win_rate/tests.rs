use std::sync::Arc;

use super::*;
use crate::cache::JudgeCache;
use crate::input::{Converted, ConvertedAnswer};
use crate::judge::JudgeOptions;
use crate::pass_rate::{QueryVerdict, summarise as summarise_pass};
use crate::progress::Quiet;
use crate::stats::mean;
use serde_json::json;
use sum2act_core::llm::scripted::{ScriptedLlm, reply};
use sum2act_core::prompts::Prompts;

fn answer(id: u64, text: &str) -> Answer {
    let raw = json!({"return_type": "give_answer", "final_answer": text}).to_string();
    Answer {
        key: QueryKey::new("G1", id),
        converted: Converted {
            query: format!("q{id}"),
            available_tools: vec![],
            answer: ConvertedAnswer {
                method: "m".into(),
                total_steps: 3,
                final_answer: raw,
                answer_details: json!([{"role": "tool", "message": {"name": "Finish", "arguments": "{}", "response": ""}, "next": []}]),
            },
        },
        record: None,
    }
}

fn run(
    name: &str,
    answers: Vec<(u64, &str, Vec<Label>)>,
    expected: &[u64],
) -> (AnswerSet, PassRate) {
    let mut set = AnswerSet {
        method: name.into(),
        ..AnswerSet::default()
    };
    let mut verdicts = Vec::new();
    for id in expected {
        set.expected.insert(QueryKey::new("G1", *id));
    }
    for (id, text, labels) in answers {
        let a = answer(id, text);
        set.expected.insert(a.key.clone());
        set.answers.insert(a.key.clone(), a);
        let score = mean(&labels.iter().map(|l| l.score()).collect::<Vec<_>>());
        verdicts.push(QueryVerdict {
            subset: "G1".into(),
            query_id: id,
            source: Source::Judge,
            reasons: vec![String::new(); labels.len()],
            labels,
            score,
            ..QueryVerdict::default()
        });
    }
    (set, summarise_pass("j", 3, verdicts))
}

/// Prefers the answer containing "BEST" wherever it is shown; otherwise always picks A (so a
/// position-biased judge is visible when the order is not shuffled).
fn judge() -> (Arc<ScriptedLlm>, Judge) {
    let llm = Arc::new(ScriptedLlm::new(|req, _| {
        let p = &req.messages[0].content;
        let a = p.find("Answer A:").unwrap_or(0);
        let b = p.find("Answer B:").unwrap_or(0);
        let best = p.find("BEST");
        let pick = match best {
            Some(i) if i > b => "B",
            _ if a > 0 => "A",
            _ => "A",
        };
        Ok(reply(&format!(r#"{{"reason": "r", "better": "{pick}"}}"#)))
    }));
    let j = Judge::new(
        llm.clone(),
        Prompts::embedded(),
        JudgeCache::memory(),
        JudgeOptions::default(),
    );
    (llm, j)
}

const U: Label = Label::Unsolved;
const S: Label = Label::Solved;

#[tokio::test]
async fn status_shortcut_missing_and_judge() {
    let (ra, rp) = run(
        "ref",
        vec![
            (1, "ref solved", vec![S, S, S]),
            (2, "ref meh", vec![U, U, U]),
            (3, "same", vec![U, U, U]),
        ],
        &[4],
    );
    let (ca, cp) = run(
        "cand",
        vec![
            (1, "cand meh", vec![U, U, U]),
            (2, "cand BEST", vec![U, U, U]),
            (3, "same", vec![U, U, U]),
            (4, "cand only", vec![U, U, U]),
        ],
        &[],
    );
    let (llm, j) = judge();
    let c = compare(
        (&ra, &rp),
        (&ca, &cp),
        &j,
        &CompareOptions::default(),
        &Quiet,
    )
    .await
    .unwrap();
    let q = |id| c.queries.iter().find(|q| q.query_id == id).unwrap();
    assert_eq!(q(1).outcome, Outcome::Loss);
    assert!(
        q(1).rounds
            .iter()
            .all(|r| r.decided_by == DecidedBy::Status)
    );
    assert_eq!(q(2).outcome, Outcome::Win);
    assert!(q(2).rounds.iter().all(|r| r.decided_by == DecidedBy::Judge));
    assert_eq!(q(3).outcome, Outcome::Tie, "identical answers tie");
    assert_eq!(
        q(4).outcome,
        Outcome::Win,
        "the reference's missing answer loses"
    );
    assert_eq!(
        llm.requests().len(),
        3,
        "only query 2 goes to the judge, once per round"
    );
    let g = &c.overall;
    assert_eq!((g.wins, g.losses, g.ties), (2, 1, 1));
    assert_eq!(g.win_rate.estimate, 50.0, "ties count 0 in the win rate");
    assert_eq!(g.win_rate_ties_half, 62.5);
    assert!((g.pass_rate_difference.estimate - (-25.0)).abs() < 1e-9);
}

#[tokio::test]
async fn order_is_shuffled_per_round_and_seeded() {
    let key = QueryKey::new("G1", 7);
    let flips: Vec<bool> = (0..64).map(|r| candidate_first(42, &key, r)).collect();
    let firsts = flips.iter().filter(|f| **f).count();
    assert!((16..=48).contains(&firsts), "{firsts} of 64");
    assert_eq!(
        flips,
        (0..64)
            .map(|r| candidate_first(42, &key, r))
            .collect::<Vec<_>>()
    );
    assert_ne!(
        flips,
        (0..64)
            .map(|r| candidate_first(43, &key, r))
            .collect::<Vec<_>>()
    );

    // A judge that always says "A" cannot make one side win every round of every query.
    let llm = Arc::new(ScriptedLlm::new(|_, _| {
        Ok(reply(r#"{"reason": "r", "better": "A"}"#))
    }));
    let j = Judge::new(
        llm.clone(),
        Prompts::embedded(),
        JudgeCache::memory(),
        JudgeOptions::default(),
    );
    let answers = |tag: &'static str| {
        (1..=20)
            .map(move |i| (i, tag, vec![U, U, U]))
            .collect::<Vec<_>>()
    };
    let (ra, rp) = run("ref", answers("x"), &[]);
    let (ca, cp) = run("cand", answers("y"), &[]);
    let c = compare(
        (&ra, &rp),
        (&ca, &cp),
        &j,
        &CompareOptions::default(),
        &Quiet,
    )
    .await
    .unwrap();
    let shown: Vec<&Round> = c.queries.iter().flat_map(|q| &q.rounds).collect();
    let cand_first = shown.iter().filter(|r| r.candidate_first).count();
    assert!(cand_first > 10 && cand_first < 50, "{cand_first} of 60");
    for r in &shown {
        assert_eq!(r.winner == Winner::Candidate, r.candidate_first);
    }
    assert!(c.overall.wins > 0 && c.overall.losses > 0);
}

#[tokio::test]
async fn even_rounds_can_tie() {
    let llm = Arc::new(ScriptedLlm::new(|_, i| {
        Ok(reply(if i % 2 == 0 {
            r#"{"reason": "r", "better": "A"}"#
        } else {
            r#"{"reason": "r", "better": "B"}"#
        }))
    }));
    let j = Judge::new(
        llm,
        Prompts::embedded(),
        JudgeCache::memory(),
        JudgeOptions::default(),
    );
    let (ra, rp) = run("ref", vec![(1, "x", vec![U, U])], &[]);
    let (ca, cp) = run("cand", vec![(1, "y", vec![U, U])], &[]);
    let opts = CompareOptions {
        rounds: 2,
        concurrency: 1,
        ..CompareOptions::default()
    };
    let c = compare((&ra, &rp), (&ca, &cp), &j, &opts, &Quiet)
        .await
        .unwrap();
    let q = &c.queries[0];
    // Round 0 and round 1 are shown in some order; the judge answers A then B. Whatever the order,
    // the outcome is a tie only when each side won one round.
    assert_eq!(q.reference_rounds + q.candidate_rounds, 2);
    assert_eq!(q.outcome == Outcome::Tie, q.reference_rounds == 1);
    assert_eq!(c.overall.ties + c.overall.wins + c.overall.losses, 1);
}
