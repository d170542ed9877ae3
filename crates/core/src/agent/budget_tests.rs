//! Every method runs under the one budget: each reads the same characters of a tool reply, none
//! makes a tool call past the limit, and the prompt policies reach every method's prompt or none.
//! Sum2Act runs in both its loops: in rounds (the default) and in steps (`--steps`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde_json::json;

use super::budget::{Budget, Preset, RetryPrompt};
use super::sample_harness::{
    context_with, finish_saying, ok_reply, prompt_text, raw_call, run, schema, state_reply,
    weather_task,
};
use super::{AgentOptions, Method, solver};
use crate::llm::scripted::{ScriptedLlm, reply};
use crate::llm::{Completion, CompletionRequest};
use crate::tools::{ToolConfig, ToolError, ToolReply, ToolRequest, ToolSource};

/// Where the long reply ends: a method read the whole reply when its model was shown this.
const END: &str = "END-OF-THE-LONG-REPLY";
/// Words of the long reply before its end marker: `w0001 w0002 ...`, 6 characters each, 12,000 in all
/// (words, not one opaque string, which a reader would be given by reference).
const WORDS: usize = 2_000;
const LONG: usize = WORDS * 6;

/// A weather API whose every reply is 12,000 characters long, its last words the end marker.
struct LongReplies;

#[async_trait]
impl ToolSource for LongReplies {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        let city = request.tool_input.to_string();
        Ok(ok_reply(
            json!({"city": city, "report": format!("{}{END}", words(WORDS))}),
        ))
    }

    fn describe(&self) -> String {
        "long replies".into()
    }
}

fn words(n: usize) -> String {
    (1..=n).map(|i| format!("w{i:04} ")).collect()
}

fn weather(city: &str) -> Completion {
    raw_call(
        "thinking",
        "get_weather_for_weather",
        &json!({ "city": city }).to_string(),
    )
}

/// A model for every method: the planners plan one weather call, graph scores and ranks it; the
/// step-by-step methods call the weather in `calls` cities, then finish.
fn model(calls: usize) -> Arc<ScriptedLlm> {
    let turns = AtomicUsize::new(0);
    Arc::new(ScriptedLlm::new(move |req: &CompletionRequest, _| {
        // Sum2Act in rounds: the opening calls the weather in `calls` cities, the round answers.
        if schema(req)["properties"]["parts"].is_object() {
            let calls: Vec<_> = ["Paris", "Lyon", "Nice", "Lille"]
                .iter()
                .take(calls)
                .map(|c| json!({"part": 1, "tool": "get_weather_for_weather", "args": {"city": c}}))
                .collect();
            return Ok(reply(
                &json!({"parts": ["the weather"], "calls": calls}).to_string(),
            ));
        }
        if schema(req)["properties"]["facts"].is_object() {
            return Ok(reply(
                &json!({"facts": [], "answer": "It is sunny."}).to_string(),
            ));
        }
        let v = match req.purpose.as_str() {
            "state" => return Ok(state_reply(&["the weather report was read"])),
            "plan" => {
                json!({"tasks": [{"id": 1, "tool": "get_weather_for_weather", "args": {"city": "Paris"}, "dep": [-1]}]})
            }
            "decompose" => {
                json!({"subtasks": [{"task": "the weather in Paris", "inputs": [], "outputs": ["report"]}]})
            }
            "score" => {
                json!({"scores": [{"tool": "get_weather_for_weather", "score": 5}, {"tool": "broken_api_for_weather", "score": 1}]})
            }
            "rank" => json!({"order": [1]}),
            "arguments" => json!({"call_1": {"city": "Paris"}}),
            "respond" | "answer" => return Ok(finish_saying("", "It is sunny.")),
            _ => {
                let n = turns.fetch_add(1, Ordering::SeqCst);
                return Ok(if n < calls {
                    weather(["Paris", "Lyon", "Nice", "Lille"][n % 4])
                } else {
                    finish_saying("done", "It is sunny.")
                });
            }
        };
        Ok(reply(&v.to_string()))
    }))
}

/// Every method, Sum2Act in both loops: `(method, rounds)`.
fn variants() -> Vec<(Method, bool)> {
    let mut out: Vec<(Method, bool)> = Method::ALL.iter().map(|m| (*m, false)).collect();
    out.push((Method::Sum2act, true));
    out
}

/// Solves the weather task with `method` under `budget` (Sum2Act in rounds with `rounds`); the
/// episode's counters and every prompt its model was shown.
fn solve(method: Method, budget: Budget, calls: usize) -> (super::Episode, Vec<String>) {
    solve_in(method, false, budget, calls)
}

fn solve_in(
    method: Method,
    rounds: bool,
    budget: Budget,
    calls: usize,
) -> (super::Episode, Vec<String>) {
    let llm = model(calls);
    let options = AgentOptions {
        budget: budget.clone(),
        rounds,
        ..AgentOptions::steps()
    };
    let task = weather_task();
    let ctx = context_with(
        llm.clone(),
        task.functions.clone(),
        Arc::new(LongReplies),
        ToolConfig::default(),
        options,
    );
    let ep = run(solver(method, &ctx.options).solve(&task, &ctx))
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    let prompts = llm.requests().iter().map(prompt_text).collect();
    (ep, prompts)
}

#[test]
fn every_method_reads_the_whole_reply_under_the_equal_budget() {
    for (method, rounds) in variants() {
        let (ep, prompts) = solve_in(method, rounds, Budget::default(), 1);
        assert!(ep.counters.tool_calls >= 1, "{method}: no tool call");
        assert!(
            prompts.iter().any(|p| p.contains(END)),
            "{method}: its model never read the end of a {LONG}-character reply"
        );
    }
}

#[test]
fn every_method_reads_the_same_cut_when_the_budget_is_smaller() {
    let budget = Budget {
        observation_chars: 2_000,
        ..Budget::default()
    };
    for (method, rounds) in variants() {
        let (ep, prompts) = solve_in(method, rounds, budget.clone(), 1);
        assert!(ep.counters.tool_calls >= 1, "{method}: no tool call");
        assert!(
            !prompts.iter().any(|p| p.contains(END)),
            "{method}: its model read past the budget's 2,000 characters"
        );
        // And each read up to the cut: word 300 (characters 1,795-1,800 of the report) is in a prompt.
        assert!(
            prompts.iter().any(|p| p.contains("w0300 ")),
            "{method}: its model read less than the budget"
        );
    }
}

#[test]
fn no_method_makes_a_tool_call_past_the_limit() {
    let budget = Budget {
        max_tool_calls: Some(2),
        ..Budget::default()
    };
    for method in [Method::Sum2act, Method::React, Method::Dfsdt] {
        let (ep, _) = solve(method, budget.clone(), 4);
        assert_eq!(ep.counters.tool_calls, 2, "{method}");
        assert!(ep.counters.over_budget_calls >= 1, "{method}");
        let refused = ep.steps.iter().any(|s| {
            s.observation
                .error
                .contains("budget of 2 tool calls is spent")
        });
        assert!(
            refused,
            "{method}: the model was not told the budget is spent"
        );
    }
    // In rounds the loop does not make the calls past the limit at all; the last call is told so.
    let (ep, prompts) = solve_in(Method::Sum2act, true, budget, 4);
    assert_eq!(ep.counters.tool_calls, 2);
    assert!(
        prompts
            .iter()
            .any(|p| p.contains("No more calls can be made"))
    );
}

#[test]
fn the_assume_missing_policy_reaches_every_method_or_none() {
    let sentence = "call the tool with the most plausible one";
    let router = "use the most plausible one";
    for (on, label) in [(true, "on"), (false, "off")] {
        let budget = Budget {
            assume_missing: on,
            ..Budget::default()
        };
        for (method, rounds) in variants() {
            let (_, prompts) = solve_in(method, rounds, budget.clone(), 1);
            let told = prompts
                .iter()
                .any(|p| p.contains(sentence) || p.contains(router));
            assert_eq!(told, on, "{method} with the policy {label}");
        }
    }
}

#[test]
fn the_presets_differ_only_in_what_toolbench_published() {
    let t = Budget::preset(Preset::Toolbench);
    assert_eq!(
        (t.observation_chars, t.max_depth, t.retry_prompt),
        (1024, Some(12), RetryPrompt::Toolbench)
    );
    // ReAct under ToolBench's settings reads 1,024 characters, as the published baselines did.
    let (_, prompts) = solve(Method::React, t, 1);
    assert!(prompts.iter().any(|p| p.contains("w0150 ")));
    assert!(!prompts.iter().any(|p| p.contains("w0200 ")));
}
