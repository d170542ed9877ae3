//! Pass rate, SoPR-style: per query N independent judge votes; rules first (no Finish, gave up, empty,
//! cut off, and under the evidence judge a restatement → Unsolved without asking). The evidence judge
//! asks one question per part of the request; the ToolEval-style judge re-checks an Unsure vote with the
//! whole trajectory. Solved 1, Unsure 0.5, Unsolved 0; mean ± population std over the N judge runs and a
//! bootstrap 95% interval over queries, per subset and overall. A vote the judge never answered usably is
//! an error: counted (and scored 0), never a silent Unsure.
//! Unlike StableToolBench, a missing answer counts as a failure (its number without them is reported too).

use std::collections::BTreeMap;

use futures::StreamExt;
use serde::{Deserialize, Serialize};

use super::evidence::{EvidenceReport, check_answer};
use super::evidence_judge::{PartResult, SplitBy, judge_answer};
use super::input::{Answer, AnswerSet};
use super::judge::Judge;
use super::rules::{Rule, decide, finish_rule};
use super::stats::{Interval, bootstrap_mean, mean, std_dev};
use super::{EvalError, JudgeMode, Label, QueryKey};

/// Bootstrap resamples of the interval over queries.
const RESAMPLES: usize = 2000;

#[derive(Debug, Clone)]
pub struct PassRateOptions {
    /// Independent judge runs per query.
    pub votes: u32,
    /// Judge calls in flight at once.
    pub concurrency: usize,
    pub mode: JudgeMode,
    /// Seed of the bootstrap over queries.
    pub seed: u64,
}

impl Default for PassRateOptions {
    fn default() -> Self {
        PassRateOptions {
            votes: 3,
            concurrency: 4,
            mode: JudgeMode::Evidence,
            seed: 42,
        }
    }
}

/// How a query's labels were decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The judge voted.
    #[default]
    Judge,
    /// A rule decided (no Finish, gave up, empty answer): no judge call.
    Rule,
    /// No answer file: counted as Unsolved.
    Missing,
}

/// One query's votes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct QueryVerdict {
    pub subset: String,
    pub query_id: u64,
    pub source: Source,
    /// The rule that decided (when `source` is `rule`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<Rule>,
    /// One label per vote.
    pub labels: Vec<Label>,
    pub reasons: Vec<String>,
    /// Mean score over the votes (0..1).
    pub score: f64,
    /// Votes with no usable judge reply (scored 0) and their raw replies.
    #[serde(default)]
    pub unusable: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unusable_replies: Vec<String>,
    /// The claim check of the answer (absent for missing answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceReport>,
    /// The evidence judge's parts of the request and its votes on each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PartResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_by: Option<SplitBy>,
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
    /// Bootstrap 95% interval of the pass rate over queries (query scores resampled), in percent.
    #[serde(default = "zero_interval")]
    pub ci: Interval,
    /// Votes with no usable judge reply, of `judged_votes` asked.
    #[serde(default)]
    pub unusable_votes: u64,
    #[serde(default)]
    pub judged_votes: u64,
    /// Judge-free: answers that finished with a final answer no rule rejected, in percent.
    #[serde(default)]
    pub answered: f64,
    /// Judge-free: answers with at least one claim from an observation and no invented value, in percent.
    #[serde(default)]
    pub evidence_backed: f64,
    /// Claims checked, supported, and answers with an invented (unsupported) value.
    #[serde(default)]
    pub claims: usize,
    #[serde(default)]
    pub claims_supported: usize,
    #[serde(default)]
    pub answers_with_invented_values: usize,
}

fn zero_interval() -> Interval {
    Interval {
        estimate: 0.0,
        low: 0.0,
        high: 0.0,
    }
}

/// A full pass-rate evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassRate {
    pub judge: String,
    /// Which judge produced the labels.
    #[serde(default)]
    pub mode: JudgeMode,
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

/// What the judge said about one answer.
struct Judged {
    key: QueryKey,
    labels: Vec<Label>,
    reasons: Vec<String>,
    unusable: Vec<String>,
    parts: Vec<PartResult>,
    split_by: Option<SplitBy>,
}

/// The verdicts decided before any judge (missing answers, rules) with every answer's claim check, and
/// the answers left for the judge.
fn prepare(
    set: &AnswerSet,
    mode: JudgeMode,
    votes: u32,
) -> (BTreeMap<QueryKey, QueryVerdict>, Vec<&Answer>) {
    let mut verdicts: BTreeMap<QueryKey, QueryVerdict> = BTreeMap::new();
    let mut jobs = Vec::new();
    for key in &set.expected {
        let base = QueryVerdict {
            subset: key.subset.clone(),
            query_id: key.query_id,
            labels: vec![Label::Unsolved; votes as usize],
            reasons: vec![String::new(); votes as usize],
            ..QueryVerdict::default()
        };
        let Some(answer) = set.answers.get(key) else {
            let reasons = vec!["no answer file".to_string(); votes as usize];
            let v = QueryVerdict {
                source: Source::Missing,
                reasons,
                ..base
            };
            verdicts.insert(key.clone(), v);
            continue;
        };
        let evidence = check_answer(answer);
        let hit = match mode {
            JudgeMode::Evidence => decide(answer, &evidence),
            JudgeMode::Tooleval => finish_rule(answer),
        };
        let mut v = QueryVerdict {
            evidence: Some(evidence),
            ..base
        };
        if let Some(hit) = hit {
            v.source = Source::Rule;
            v.rule = Some(hit.rule);
            v.reasons = vec![hit.detail; votes as usize];
        } else {
            jobs.push(answer);
        }
        verdicts.insert(key.clone(), v);
    }
    (verdicts, jobs)
}

/// The judge-free figures alone (rules and the evidence check, no votes): what `eval --no-judge` prints.
pub fn evidence_only(set: &AnswerSet) -> PassRate {
    let (verdicts, _) = prepare(set, JudgeMode::Evidence, 0);
    summarise("none", 0, verdicts.into_values().collect())
}

/// Scores every expected query of `set` with `judge`.
pub async fn pass_rate(
    set: &AnswerSet,
    judge: &Judge,
    options: &PassRateOptions,
) -> Result<PassRate, EvalError> {
    let votes = options.votes.max(1);
    let (mut verdicts, jobs) = prepare(set, options.mode, votes);
    let verdicts_ref = &verdicts;
    let results: Vec<Result<Judged, EvalError>> = futures::stream::iter(jobs)
        .map(|answer| async move {
            let evidence = verdicts_ref
                .get(&answer.key)
                .and_then(|v| v.evidence.clone())
                .unwrap_or_default();
            match options.mode {
                JudgeMode::Evidence => evidence_votes(judge, answer, &evidence, votes).await,
                JudgeMode::Tooleval => tooleval_votes(judge, answer, votes).await,
            }
        })
        .buffer_unordered(options.concurrency.max(1))
        .collect()
        .await;
    // The log keeps every vote made, also when a later call failed: a rerun resumes from it.
    let saved = judge.save();
    let mut first_error = None;
    for r in results {
        match r {
            Ok(j) => {
                if let Some(v) = verdicts.get_mut(&j.key) {
                    v.unusable = j.unusable.len() as u32;
                    v.unusable_replies = j.unusable;
                    v.labels = j.labels;
                    v.reasons = j.reasons;
                    v.parts = j.parts;
                    v.split_by = j.split_by;
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    saved?;
    let mut queries: Vec<QueryVerdict> = verdicts.into_values().collect();
    for q in &mut queries {
        q.score = mean(&q.labels.iter().map(|l| l.score()).collect::<Vec<_>>());
    }
    let mut pr = summarise(judge.model_id(), votes, queries);
    pr.mode = options.mode;
    pr.subsets
        .iter_mut()
        .chain(std::iter::once(&mut pr.overall))
        .for_each(|g| g.ci = interval_of(&pr.queries, &g.subset, options.seed));
    Ok(pr)
}

/// Bootstrap 95% interval over the queries of a group (`overall`: all).
fn interval_of(queries: &[QueryVerdict], subset: &str, seed: u64) -> Interval {
    let scores: Vec<f64> = queries
        .iter()
        .filter(|q| subset == "overall" || q.subset == subset)
        .map(|q| q.score * 100.0)
        .collect();
    bootstrap_mean(&scores, RESAMPLES, seed)
}

async fn evidence_votes(
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

async fn tooleval_votes(judge: &Judge, answer: &Answer, votes: u32) -> Result<Judged, EvalError> {
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
            let trajectory = answer.trajectory_text(judge.options().max_trajectory_chars);
            let second = judge
                .trajectory_status(query, &text, &trajectory, vote, &ctx)
                .await?;
            super::judge::Verdict {
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
        mode: JudgeMode::default(),
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
    let n = qs.len().max(1) as f64;
    let reports: Vec<&EvidenceReport> = qs.iter().filter_map(|q| q.evidence.as_ref()).collect();
    let backed = qs
        .iter()
        .filter(|q| {
            q.source != Source::Rule
                && q.evidence
                    .as_ref()
                    .is_some_and(|e| e.observed > 0 && e.unsupported_values == 0)
        })
        .count();
    let answered = qs
        .iter()
        .filter(|q| q.source == Source::Judge && q.evidence.is_some())
        .count();
    GroupPassRate {
        subset: name.to_string(),
        queries: qs.len(),
        missing: qs.iter().filter(|q| q.source == Source::Missing).count(),
        by_rule: qs.iter().filter(|q| q.source == Source::Rule).count(),
        pass_rate: mean(&runs),
        std: std_dev(&runs),
        run_pass_rates: runs,
        pass_rate_without_missing: mean(&without),
        ci: zero_interval(),
        unusable_votes: qs.iter().map(|q| u64::from(q.unusable)).sum(),
        judged_votes: qs
            .iter()
            .filter(|q| q.source == Source::Judge && q.evidence.is_some())
            .map(|q| q.labels.len() as u64)
            .sum(),
        answered: answered as f64 / n * 100.0,
        evidence_backed: backed as f64 / n * 100.0,
        claims: reports.iter().map(|e| e.claims.len()).sum(),
        claims_supported: reports.iter().map(|e| e.supported).sum(),
        answers_with_invented_values: reports.iter().filter(|e| e.unsupported_values > 0).count(),
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
        let pr = pass_rate(&s, &judge, &tooleval(3, 4)).await.unwrap();
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
        let pr = pass_rate(&s, &judge, &tooleval(1, 1)).await.unwrap();
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
        let pr = pass_rate(&s, &judge, &tooleval(2, 2)).await.unwrap();
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
        let pr = pass_rate(&s, &judge, &tooleval(3, 4)).await.unwrap();
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
            pass_rate(&s, &judge, &tooleval(3, 4)).await.unwrap()
        };
        let calls = llm.requests().len();
        let judge = Judge::new(
            llm.clone(),
            Prompts::embedded(),
            JudgeCache::open(&log).unwrap(),
            JudgeOptions::default(),
        );
        let second = pass_rate(&s, &judge, &tooleval(3, 4)).await.unwrap();
        assert_eq!(first, second);
        assert_eq!(llm.requests().len(), calls, "no new judge calls");
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(text.lines().count(), calls);
        assert!(text.contains("\"prompt_hash\"") && text.contains("\"reason\":\"because\""));
    }
}
