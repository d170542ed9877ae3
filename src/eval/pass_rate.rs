//! Pass rate, SoPR-style: per query N independent judge votes; rules first (no Finish, gave up, empty
//! answer → Unsolved without asking); an Unsure vote is re-checked with the whole trajectory. Solved 1,
//! Unsure 0.5, Unsolved 0; mean ± population std over the N runs, per subset and overall.
//! Unlike StableToolBench, a missing answer counts as a failure (its number without them is reported too).

use std::collections::BTreeMap;

use futures::StreamExt;
use serde::{Deserialize, Serialize};

use super::input::AnswerSet;
use super::judge::Judge;
use super::stats::{mean, std_dev};
use super::{EvalError, Label, QueryKey};

#[derive(Debug, Clone)]
pub struct PassRateOptions {
    /// Independent judge runs per query.
    pub votes: u32,
    /// Judge calls in flight at once.
    pub concurrency: usize,
}

impl Default for PassRateOptions {
    fn default() -> Self {
        PassRateOptions {
            votes: 3,
            concurrency: 4,
        }
    }
}

/// How a query's labels were decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The judge voted.
    Judge,
    /// A rule decided (no Finish, gave up, empty answer): no judge call.
    Rule,
    /// No answer file: counted as Unsolved.
    Missing,
}

/// One query's votes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryVerdict {
    pub subset: String,
    pub query_id: u64,
    pub source: Source,
    /// One label per vote.
    pub labels: Vec<Label>,
    pub reasons: Vec<String>,
    /// Mean score over the votes (0..1).
    pub score: f64,
}

impl QueryVerdict {
    pub fn key(&self) -> QueryKey {
        QueryKey::new(self.subset.clone(), self.query_id)
    }

    /// The label of vote `i` (votes cycle when a caller asks for more rounds than there were votes).
    pub fn label(&self, i: usize) -> Label {
        if self.labels.is_empty() {
            return Label::Unsolved;
        }
        self.labels[i % self.labels.len()]
    }

    /// Majority over the votes: score above ½ Solved, below Unsolved, exactly ½ Unsure.
    pub fn majority(&self) -> Label {
        if self.score > 0.5 + 1e-9 {
            Label::Solved
        } else if self.score < 0.5 - 1e-9 {
            Label::Unsolved
        } else {
            Label::Unsure
        }
    }
}

/// The pass rate of a group of queries (a subset, or all).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupPassRate {
    pub subset: String,
    pub queries: usize,
    pub missing: usize,
    /// Queries decided by a rule without a judge call.
    pub by_rule: usize,
    /// The pass rate of each judge run, in percent.
    pub run_pass_rates: Vec<f64>,
    /// Mean and population std over the runs, in percent.
    pub pass_rate: f64,
    pub std: f64,
    /// The same with missing answers dropped, as StableToolBench computes it.
    pub pass_rate_without_missing: f64,
}

/// A full pass-rate evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassRate {
    pub judge: String,
    pub votes: u32,
    pub subsets: Vec<GroupPassRate>,
    pub overall: GroupPassRate,
    pub queries: Vec<QueryVerdict>,
}

impl PassRate {
    pub fn verdict(&self, key: &QueryKey) -> Option<&QueryVerdict> {
        self.queries
            .iter()
            .find(|q| q.subset == key.subset && q.query_id == key.query_id)
    }

    /// Per-query verdicts by key.
    pub fn by_key(&self) -> BTreeMap<QueryKey, &QueryVerdict> {
        self.queries.iter().map(|q| (q.key(), q)).collect()
    }
}

/// Scores every expected query of `set` with `judge`.
pub async fn pass_rate(
    set: &AnswerSet,
    judge: &Judge,
    options: &PassRateOptions,
) -> Result<PassRate, EvalError> {
    let votes = options.votes.max(1);
    let mut verdicts: BTreeMap<QueryKey, QueryVerdict> = BTreeMap::new();
    let mut jobs = Vec::new();
    for key in &set.expected {
        let base = QueryVerdict {
            subset: key.subset.clone(),
            query_id: key.query_id,
            source: Source::Judge,
            labels: vec![Label::Unsolved; votes as usize],
            reasons: vec![String::new(); votes as usize],
            score: 0.0,
        };
        match set.answers.get(key) {
            None => {
                let reasons = vec!["no answer file".to_string(); votes as usize];
                verdicts.insert(
                    key.clone(),
                    QueryVerdict {
                        source: Source::Missing,
                        reasons,
                        ..base
                    },
                );
            }
            Some(answer) => match answer.rule_failure() {
                Some(reason) => {
                    let reasons = vec![reason; votes as usize];
                    verdicts.insert(
                        key.clone(),
                        QueryVerdict {
                            source: Source::Rule,
                            reasons,
                            ..base
                        },
                    );
                }
                None => {
                    verdicts.insert(key.clone(), base);
                    for vote in 0..votes {
                        jobs.push((answer, vote));
                    }
                }
            },
        }
    }
    let results: Vec<Result<(QueryKey, u32, Label, String), EvalError>> =
        futures::stream::iter(jobs)
            .map(|(answer, vote)| async move {
                let ctx = answer.key.to_string();
                let query = &answer.converted.query;
                let text = answer.final_text();
                let first = judge.answer_status(query, &text, vote, &ctx).await?;
                if first.label != Label::Unsure {
                    return Ok((answer.key.clone(), vote, first.label, first.reason));
                }
                let trajectory = answer.trajectory_text(judge.options().max_trajectory_chars);
                let second = judge
                    .trajectory_status(query, &text, &trajectory, vote, &ctx)
                    .await?;
                Ok((
                    answer.key.clone(),
                    vote,
                    second.label,
                    format!("{} | re-check: {}", first.reason, second.reason),
                ))
            })
            .buffer_unordered(options.concurrency.max(1))
            .collect()
            .await;
    let saved = judge.save();
    for r in results {
        let (key, vote, label, reason) = r?;
        if let Some(v) = verdicts.get_mut(&key) {
            v.labels[vote as usize] = label;
            v.reasons[vote as usize] = reason;
        }
    }
    saved?;
    let mut queries: Vec<QueryVerdict> = verdicts.into_values().collect();
    for q in &mut queries {
        q.score = mean(&q.labels.iter().map(|l| l.score()).collect::<Vec<_>>());
    }
    Ok(summarise(judge.model_id(), votes, queries))
}

/// Builds the per-subset and overall numbers from per-query verdicts.
pub fn summarise(judge: &str, votes: u32, queries: Vec<QueryVerdict>) -> PassRate {
    let mut subsets: BTreeMap<&str, Vec<&QueryVerdict>> = BTreeMap::new();
    for q in &queries {
        subsets.entry(q.subset.as_str()).or_default().push(q);
    }
    let groups = subsets
        .iter()
        .map(|(name, qs)| group(name, qs, votes))
        .collect();
    let all: Vec<&QueryVerdict> = queries.iter().collect();
    let overall = group("overall", &all, votes);
    PassRate {
        judge: judge.to_string(),
        votes,
        subsets: groups,
        overall,
        queries,
    }
}

fn group(name: &str, qs: &[&QueryVerdict], votes: u32) -> GroupPassRate {
    let run = |r: usize, with_missing: bool| -> f64 {
        let scores: Vec<f64> = qs
            .iter()
            .filter(|q| with_missing || q.source != Source::Missing)
            .map(|q| q.label(r).score())
            .collect();
        mean(&scores) * 100.0
    };
    let runs: Vec<f64> = (0..votes as usize).map(|r| run(r, true)).collect();
    let without: Vec<f64> = (0..votes as usize).map(|r| run(r, false)).collect();
    GroupPassRate {
        subset: name.to_string(),
        queries: qs.len(),
        missing: qs.iter().filter(|q| q.source == Source::Missing).count(),
        by_rule: qs.iter().filter(|q| q.source == Source::Rule).count(),
        pass_rate: mean(&runs),
        std: std_dev(&runs),
        run_pass_rates: runs,
        pass_rate_without_missing: mean(&without),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::eval::cache::JudgeCache;
    use crate::eval::input::{Answer, Converted, ConvertedAnswer};
    use crate::eval::judge::JudgeOptions;
    use crate::llm::scripted::{ScriptedLlm, reply};
    use crate::prompts::Prompts;
    use serde_json::json;

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
        let pr = pass_rate(&s, &judge, &PassRateOptions::default())
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
        let s = set(vec![answer("G1", 1, "ANSWER-VAGUE", true)], &[]);
        let (llm, judge) = scripted_judge();
        let pr = pass_rate(
            &s,
            &judge,
            &PassRateOptions {
                votes: 1,
                concurrency: 1,
            },
        )
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
        assert!(
            prompts[1].contains("get_x_for_t"),
            "the re-check shows the calls: {}",
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
        let pr = pass_rate(
            &s,
            &judge,
            &PassRateOptions {
                votes: 2,
                concurrency: 2,
            },
        )
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
        let pr = pass_rate(&s, &judge, &PassRateOptions::default())
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
            pass_rate(&s, &judge, &PassRateOptions::default())
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
        let second = pass_rate(&s, &judge, &PassRateOptions::default())
            .await
            .unwrap();
        assert_eq!(first, second);
        assert_eq!(llm.requests().len(), calls, "no new judge calls");
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(text.lines().count(), calls);
        assert!(text.contains("\"prompt_hash\"") && text.contains("\"reason\":\"because\""));
    }
}
