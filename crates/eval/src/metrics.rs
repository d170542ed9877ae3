//! Judge-free metrics: cheap, exact, and comparable across judges. Per subset and overall: finish rate,
//! steps, LLM calls, tokens and cost per query and per solved query, tool-call error rate and
//! hallucinated-function rate. Our answer files carry exact counters; converted files from other
//! harnesses only allow what their trajectories show (no LLM calls, tokens or cost).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::input::{Answer, AnswerSet};
use super::pass_rate::PassRate;
use sum2act_core::toolbench::FINISH;
use sum2act_core::toolbench::answer::FinishKind;

/// Name ToolBench substitutes for a call to a function that does not exist.
const HALLUCINATED_NAME: &str = "invalid_hallucination_function_name";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub subset: String,
    pub queries: usize,
    /// Queries with an answer file (the averages are over these).
    pub answered: usize,
    /// Share (percent) of answered queries that ended with Finish give_answer.
    pub finish_rate: f64,
    pub avg_steps: f64,
    pub avg_llm_calls: Option<f64>,
    pub avg_tokens: Option<f64>,
    pub avg_cost_usd: Option<f64>,
    /// Totals divided by the number of solved queries (pass-rate score summed), when judged.
    pub tokens_per_solved: Option<f64>,
    pub cost_per_solved_usd: Option<f64>,
    pub tool_calls: u64,
    /// Percent of tool calls that returned an error.
    pub tool_error_rate: f64,
    /// Percent of tool calls naming a function that was not offered.
    pub hallucination_rate: f64,
}

/// Per-answer counts, from our record when present, else from the trajectory.
#[derive(Debug, Clone, Default)]
struct Counts {
    finished: bool,
    steps: u64,
    llm_calls: Option<u64>,
    tokens: Option<u64>,
    cost: Option<f64>,
    tool_calls: u64,
    failed: u64,
    hallucinated: u64,
}

fn counts(a: &Answer) -> Counts {
    if let Some(r) = &a.record {
        let c = &r.counters;
        return Counts {
            finished: r.finish.is(FinishKind::GiveAnswer),
            steps: c.steps,
            llm_calls: Some(c.llm_calls),
            tokens: Some(c.prompt_tokens + c.completion_tokens),
            cost: Some(c.cost_usd),
            tool_calls: c.tool_calls,
            failed: c.failed_tool_calls,
            hallucinated: c.hallucinated_calls,
        };
    }
    let steps = a.tool_steps();
    let offered = a.available_names();
    let calls: Vec<_> = steps.iter().filter(|s| s.name != FINISH).collect();
    Counts {
        finished: a.rule_failure().is_none(),
        steps: a.converted.answer.total_steps.saturating_sub(2),
        llm_calls: None,
        tokens: None,
        cost: None,
        tool_calls: calls.len() as u64,
        failed: calls
            .iter()
            .filter(|s| is_error_response(&s.response))
            .count() as u64,
        hallucinated: calls
            .iter()
            .filter(|s| {
                s.name == HALLUCINATED_NAME || (!offered.is_empty() && !offered.contains(&s.name))
            })
            .count() as u64,
    }
}

/// A tool observation `{"error": "...", "response": ...}` with a non-empty error.
fn is_error_response(text: &str) -> bool {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => v
            .get("error")
            .and_then(Value::as_str)
            .is_some_and(|e| !e.is_empty()),
        Err(_) => false,
    }
}

/// An answer's counters (absent when it is missing) and its pass-rate score (when judged).
type CountsAndScore = (Option<Counts>, Option<f64>);

/// Metrics per subset, then overall (last).
pub fn metrics(set: &AnswerSet, pass: Option<&PassRate>) -> Vec<Metrics> {
    let scores = pass.map(|p| p.by_key());
    let mut groups: BTreeMap<String, Vec<CountsAndScore>> = BTreeMap::new();
    for key in &set.expected {
        let c = set.answers.get(key).map(counts);
        let s = scores.as_ref().map(|m| m.get(key).map_or(0.0, |v| v.score));
        groups
            .entry(key.subset.clone())
            .or_default()
            .push((c.clone(), s));
        groups
            .entry("\u{10ffff}overall".into())
            .or_default()
            .push((c, s));
    }
    groups
        .into_iter()
        .map(|(name, rows)| group(name.trim_start_matches('\u{10ffff}'), &rows, pass.is_some()))
        .collect()
}

fn group(name: &str, rows: &[(Option<Counts>, Option<f64>)], judged: bool) -> Metrics {
    let answered: Vec<&Counts> = rows.iter().filter_map(|(c, _)| c.as_ref()).collect();
    let n = answered.len();
    let avg = |f: &dyn Fn(&Counts) -> f64| {
        if n == 0 {
            0.0
        } else {
            answered.iter().map(|c| f(c)).sum::<f64>() / n as f64
        }
    };
    let all_known = |f: &dyn Fn(&Counts) -> Option<f64>| -> Option<f64> {
        let vals: Option<Vec<f64>> = answered.iter().map(|c| f(c)).collect();
        vals.filter(|v| !v.is_empty()).map(|v| v.iter().sum())
    };
    let total_tokens = all_known(&|c| c.tokens.map(|t| t as f64));
    let total_cost = all_known(&|c| c.cost);
    let total_calls = all_known(&|c| c.llm_calls.map(|t| t as f64));
    let solved: f64 = rows.iter().filter_map(|(_, s)| *s).sum();
    let per_solved =
        |total: Option<f64>| total.filter(|_| judged && solved > 0.0).map(|t| t / solved);
    let tool_calls: u64 = answered.iter().map(|c| c.tool_calls).sum();
    let pct = |x: u64| {
        if tool_calls == 0 {
            0.0
        } else {
            x as f64 / tool_calls as f64 * 100.0
        }
    };
    Metrics {
        subset: name.to_string(),
        queries: rows.len(),
        answered: n,
        finish_rate: avg(&|c| if c.finished { 100.0 } else { 0.0 }),
        avg_steps: avg(&|c| c.steps as f64),
        avg_llm_calls: total_calls.map(|t| t / n as f64),
        avg_tokens: total_tokens.map(|t| t / n as f64),
        avg_cost_usd: total_cost.map(|t| t / n as f64),
        tokens_per_solved: per_solved(total_tokens),
        cost_per_solved_usd: per_solved(total_cost),
        tool_calls,
        tool_error_rate: pct(answered.iter().map(|c| c.failed).sum()),
        hallucination_rate: pct(answered.iter().map(|c| c.hallucinated).sum()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::QueryKey;
    use crate::input::{Converted, ConvertedAnswer, Counters, Record};
    use serde_json::json;

    fn converted_answer(id: u64) -> Answer {
        let details = json!([{"role": "system", "message": "", "next": [{"role": "user", "message": "", "next": [
            {"role": "tool", "message": {"name": "get_x_for_t", "arguments": "{}", "response": "{\"error\": \"Rate limit\", \"response\": \"\"}"}, "next": [
            {"role": "tool", "message": {"name": "made_up_for_t", "arguments": "{}", "response": "{\"error\": \"\", \"response\": 1}"}, "next": [
            {"role": "tool", "message": {"name": "Finish", "arguments": "{}", "response": ""}, "next": []}]}]}]}]}]);
        Answer {
            key: QueryKey::new("G1", id),
            converted: Converted {
                query: "q".into(),
                available_tools: vec![json!({"name": "get_x_for_t"}), json!({"name": "Finish"})],
                answer: ConvertedAnswer {
                    method: "m".into(),
                    total_steps: 5,
                    final_answer: "{\"return_type\": \"give_answer\", \"final_answer\": \"x\"}"
                        .into(),
                    answer_details: details,
                },
            },
            record: None,
        }
    }

    #[test]
    fn converted_trajectories_give_error_and_hallucination_rates() {
        let mut set = AnswerSet::default();
        let a = converted_answer(1);
        set.expected.insert(a.key.clone());
        set.expected.insert(QueryKey::new("G1", 2));
        set.answers.insert(a.key.clone(), a);
        let m = metrics(&set, None);
        assert_eq!(m.len(), 2);
        assert_eq!(m[1].subset, "overall");
        let g = &m[0];
        assert_eq!((g.queries, g.answered, g.tool_calls), (2, 1, 2));
        assert_eq!(g.finish_rate, 100.0);
        assert_eq!(g.avg_steps, 3.0);
        assert_eq!((g.tool_error_rate, g.hallucination_rate), (50.0, 50.0));
        assert_eq!(g.avg_tokens, None, "converted files carry no token counts");
    }

    #[test]
    fn our_counters_give_costs_per_solved_query() {
        let mut set = AnswerSet::default();
        for (id, finish, cost) in [
            (1, FinishKind::GiveAnswer, 0.02),
            (2, FinishKind::GiveUp, 0.04),
        ] {
            let mut a = converted_answer(id);
            a.record = Some(Record {
                finish: finish.into(),
                counters: Counters {
                    llm_calls: 4,
                    prompt_tokens: 900,
                    completion_tokens: 100,
                    tool_calls: 3,
                    failed_tool_calls: 1,
                    steps: 4,
                    cost_usd: cost,
                    ..Counters::default()
                },
                ..Record::default()
            });
            set.expected.insert(a.key.clone());
            set.answers.insert(a.key.clone(), a);
        }
        let verdicts = vec![crate::pass_rate::QueryVerdict {
            subset: "G1".into(),
            query_id: 1,
            source: crate::pass_rate::Source::Judge,
            labels: vec![crate::Label::Solved],
            reasons: vec![String::new()],
            score: 1.0,
            ..Default::default()
        }];
        let pr = crate::pass_rate::summarise("j", 1, verdicts);
        let g = &metrics(&set, Some(&pr))[0];
        assert_eq!(g.finish_rate, 50.0);
        assert_eq!(g.avg_llm_calls, Some(4.0));
        assert_eq!(g.avg_tokens, Some(1000.0));
        assert!((g.cost_per_solved_usd.unwrap() - 0.06).abs() < 1e-12);
        assert_eq!(g.tokens_per_solved, Some(2000.0));
        assert!((g.tool_error_rate - 100.0 / 3.0).abs() < 1e-9);
    }
}
