use std::sync::Arc;

use super::*;
use crate::cache::JudgeCache;
use crate::input::{Answer, Converted, ConvertedAnswer};
use crate::judge::JudgeOptions;
use crate::progress::Quiet;
use crate::stats::std_dev;
use serde_json::json;
use sum2act_core::llm::scripted::{ScriptedLlm, reply};
use sum2act_core::prompts::Prompts;

fn answer(subset: &str, id: u64, final_text: &str, finish: bool) -> Answer {
    let steps = if finish {
        json!([{"role": "tool", "message": {"name": "get_x_for_t", "arguments": "{}", "response": "{\"error\": \"\", \"response\": 1}"}, "next": [
            {"role": "tool", "message": {"name": "Finish", "arguments": "{}", "response": ""}, "next": []}]}])
    } else {
        json!([{"role": "tool", "message": {"name": "get_x_for_t", "arguments": "{}", "response": ""}, "next": []}])
    };
    let raw = if finish {
        json!({"return_type": "give_answer", "final_answer": final_text}).to_string()
    } else {
        String::new()
    };
    Answer {
        key: QueryKey::new(subset, id),
        converted: Converted {
            query: format!("question {id}"),
            available_tools: vec![],
            answer: ConvertedAnswer {
                method: "m".into(),
                total_steps: 4,
                final_answer: raw,
                answer_details: json!([{"role": "system", "message": "", "next": [{"role": "user", "message": "", "next": steps}]}]),
            },
        },
        record: None,
    }
}

fn tooleval(votes: u32, concurrency: usize) -> PassRateOptions {
    PassRateOptions {
        votes,
        concurrency,
        mode: JudgeMode::Tooleval,
        ..PassRateOptions::default()
    }
}

fn set(answers: Vec<Answer>, extra_expected: &[(&str, u64)]) -> AnswerSet {
    let mut s = AnswerSet::default();
    for a in answers {
        s.expected.insert(a.key.clone());
        s.answers.insert(a.key.clone(), a);
    }
    for (subset, id) in extra_expected {
        s.expected.insert(QueryKey::new(*subset, *id));
    }
    s
}

/// A judge whose verdict depends on the answer text and the vote (the seed), and on which prompt.
fn scripted_judge() -> (Arc<ScriptedLlm>, Judge) {
    let llm = Arc::new(ScriptedLlm::new(|req, _| {
        let prompt = &req.messages[0].content;
        let vote = (req.seed.unwrap_or(0) - 42) / 1000;
        let trajectory = prompt.contains("API calls and results");
        let label = if prompt.contains("ANSWER-GOOD") {
            "Solved"
        } else if prompt.contains("ANSWER-BAD") {
            "Unsolved"
        } else if prompt.contains("ANSWER-SPLIT") {
            if vote == 0 { "Unsolved" } else { "Solved" }
        } else if trajectory {
            // ANSWER-VAGUE: Unsure at first, then settled with the trajectory.
            "Solved"
        } else {
            "Unsure"
        };
        Ok(reply(&format!(
            r#"{{"reason": "because", "answer_status": "{label}"}}"#
        )))
    }));
    let judge = Judge::new(
        llm.clone(),
        Prompts::embedded(),
        JudgeCache::memory(),
        JudgeOptions::default(),
    );
    (llm, judge)
}

#[tokio::test]
async fn labels_aggregate_per_subset_and_overall() {
    let s = set(
        vec![
            answer("G1", 1, "ANSWER-GOOD", true),
            answer("G1", 2, "ANSWER-BAD", true),
            answer("G1", 3, "ANSWER-SPLIT", true),
            answer("G2", 1, "ANSWER-GOOD", true),
        ],
        &[],
    );
    let (_, judge) = scripted_judge();
    let pr = pass_rate(&s, &judge, &tooleval(3, 4), &Quiet)
        .await
        .unwrap();
    let g1 = &pr.subsets[0];
    assert_eq!(g1.subset, "G1");
    // Run 0: 1 + 0 + 0 = 1/3; runs 1 and 2: 1 + 0 + 1 = 2/3.
    let expected = [100.0 / 3.0, 200.0 / 3.0, 200.0 / 3.0];
    for (got, want) in g1.run_pass_rates.iter().zip(expected) {
        assert!((got - want).abs() < 1e-9, "{:?}", g1.run_pass_rates);
    }
    assert!((g1.pass_rate - 500.0 / 9.0).abs() < 1e-9);
    assert!((g1.std - std_dev(&expected)).abs() < 1e-9);
    assert_eq!(pr.subsets[1].pass_rate, 100.0);
    // Overall pools queries (4), it does not average subsets.
    assert!((pr.overall.run_pass_rates[0] - 50.0).abs() < 1e-9);
    let split = pr.verdict(&QueryKey::new("G1", 3)).unwrap();
    assert_eq!(
        split.labels,
        vec![Label::Unsolved, Label::Solved, Label::Solved]
    );
    assert_eq!(split.majority(), Label::Solved);
}

#[tokio::test]
async fn unsure_is_rechecked_with_the_trajectory() {
    let mut vague = answer("G1", 1, "ANSWER-VAGUE", true);
    vague.converted.available_tools = vec![json!({"name": "get_x_for_t", "description": "Gets x.",
        "parameters": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}})];
    let s = set(vec![vague], &[]);
    let (llm, judge) = scripted_judge();
    let pr = pass_rate(&s, &judge, &tooleval(1, 1), &Quiet)
        .await
        .unwrap();
    assert_eq!(pr.queries[0].labels, vec![Label::Solved]);
    assert!(pr.queries[0].reasons[0].contains("re-check"));
    let prompts: Vec<String> = llm
        .requests()
        .iter()
        .map(|r| r.messages[0].content.clone())
        .collect();
    assert_eq!(prompts.len(), 2);
    let apis = "APIs called (each once, as offered to the assistant: what it does and the parameters it takes):\n\
                - get_x_for_t: Gets x. Parameters: id (string, required).\n\n\
                API calls and results, in order:\nstep 1: get_x_for_t({})";
    assert!(
        prompts[1].contains(apis),
        "the re-check shows the called APIs, then the calls: {}",
        prompts[1]
    );
}

#[tokio::test]
async fn unsure_that_stays_unsure_scores_half() {
    let llm = Arc::new(ScriptedLlm::new(|_, _| {
        Ok(reply(r#"{"reason": "?", "answer_status": "Unsure"}"#))
    }));
    let judge = Judge::new(
        llm,
        Prompts::embedded(),
        JudgeCache::memory(),
        JudgeOptions::default(),
    );
    let s = set(vec![answer("G1", 1, "whatever", true)], &[]);
    let pr = pass_rate(&s, &judge, &tooleval(2, 2), &Quiet)
        .await
        .unwrap();
    assert_eq!(pr.overall.pass_rate, 50.0);
    assert_eq!(pr.queries[0].majority(), Label::Unsure);
}

#[tokio::test]
async fn rules_and_missing_answers_never_reach_the_judge() {
    let s = set(
        vec![
            answer("G1", 1, "ANSWER-GOOD", true),
            answer("G1", 2, "", false),
            answer("G1", 3, "", true),
        ],
        &[("G1", 4)],
    );
    let (llm, judge) = scripted_judge();
    let pr = pass_rate(&s, &judge, &tooleval(3, 4), &Quiet)
        .await
        .unwrap();
    assert_eq!(
        llm.requests().len(),
        3,
        "only query 1 is judged, once per vote"
    );
    let g = &pr.overall;
    assert_eq!((g.queries, g.missing, g.by_rule), (4, 1, 2));
    assert_eq!(g.pass_rate, 25.0, "missing counts as a failure");
    assert!((g.pass_rate_without_missing - 100.0 / 3.0).abs() < 1e-9);
    assert_eq!(
        pr.verdict(&QueryKey::new("G1", 4)).unwrap().source,
        Source::Missing
    );
    assert_eq!(
        pr.verdict(&QueryKey::new("G1", 2)).unwrap().source,
        Source::Rule
    );
    assert_eq!(
        pr.verdict(&QueryKey::new("G1", 3)).unwrap().reasons[0],
        "empty final answer"
    );
}

/// Counts what a judging pass tells its progress.
#[derive(Default)]
struct Counted {
    total: std::sync::atomic::AtomicUsize,
    judged: std::sync::atomic::AtomicUsize,
    ended: std::sync::atomic::AtomicBool,
}

impl JudgeProgress for Counted {
    fn start(&self, total: usize) {
        self.total.store(total, std::sync::atomic::Ordering::SeqCst);
    }
    fn judged(&self) {
        self.judged
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    fn end(&self) {
        self.ended.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test]
async fn progress_counts_the_answers_the_judge_reads() {
    let s = set(
        vec![
            answer("G1", 1, "ANSWER-GOOD", true),
            answer("G1", 2, "ANSWER-BAD", true),
            answer("G1", 3, "", false),
        ],
        &[("G1", 4)],
    );
    let (_, judge) = scripted_judge();
    let counted = Counted::default();
    pass_rate(&s, &judge, &tooleval(3, 2), &counted)
        .await
        .unwrap();
    use std::sync::atomic::Ordering::SeqCst;
    assert_eq!(
        (counted.total.load(SeqCst), counted.judged.load(SeqCst)),
        (2, 2),
        "answers decided by a rule or missing are not counted"
    );
    assert!(counted.ended.load(SeqCst));
}

#[tokio::test]
async fn rerun_is_free_and_identical() {
    let s = set(
        vec![
            answer("G1", 1, "ANSWER-SPLIT", true),
            answer("G1", 2, "ANSWER-VAGUE", true),
        ],
        &[],
    );
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("judge_log.jsonl");
    let (llm, _) = scripted_judge();
    let first = {
        let judge = Judge::new(
            llm.clone(),
            Prompts::embedded(),
            JudgeCache::open(&log).unwrap(),
            JudgeOptions::default(),
        );
        pass_rate(&s, &judge, &tooleval(3, 4), &Quiet)
            .await
            .unwrap()
    };
    let calls = llm.requests().len();
    let judge = Judge::new(
        llm.clone(),
        Prompts::embedded(),
        JudgeCache::open(&log).unwrap(),
        JudgeOptions::default(),
    );
    let second = pass_rate(&s, &judge, &tooleval(3, 4), &Quiet)
        .await
        .unwrap();
    assert_eq!(first, second);
    assert_eq!(llm.requests().len(), calls, "no new judge calls");
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), calls);
    assert!(text.contains("\"prompt_hash\"") && text.contains("\"reason\":\"because\""));
}
