//! Hostile-model tests of the harness (issue 17): a model that ignores a forced `Finish`, calls
//! functions that were not offered, writes replies cut at the token cap or megabytes long, and a
//! soak over seeded random scripts in which every episode must end with a Finish or a give-up.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

use super::common::HARNESS_GIVE_UP;
use super::sample_harness::{
    context_with, failed_reply, finish_saying, ok_reply, raw_call, run, state_reply,
    weather_task as task,
};
use super::*;
use crate::llm::scripted::{ScriptedLlm, reply};
use crate::llm::{Completion, CompletionRequest, LlmError};
use crate::tools::{ToolConfig, ToolError, ToolReply, ToolRequest, ToolSource};

/// The step-by-step methods, where the harness forces a `Finish` turn. `plan` and `graph` make a
/// fixed number of calls and answer in one final call, so a forced turn never arises there; they are
/// checked for the same outcome (a Finish or a give-up, never an error, within the limits) below.
const STEPWISE: [&str; 3] = ["sum2act", "react", "dfsdt"];
const ONE_ANSWER_CALL: [&str; 2] = ["plan", "graph"];

/// Answers `get_weather` with the city it was asked about, fails `broken_api`.
#[derive(Default)]
struct Source {
    calls: Mutex<usize>,
}

#[async_trait]
impl ToolSource for Source {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        if let Ok(mut n) = self.calls.lock() {
            *n += 1;
        }
        Ok(match request.api_name.as_str() {
            "broken_api" => failed_reply(),
            _ => ok_reply(json!({"input": request.tool_input, "temperature_c": 21})),
        })
    }

    fn describe(&self) -> String {
        "fake".into()
    }
}

fn call(name: &str, args: &str) -> Completion {
    raw_call("thinking", name, args)
}

fn weather(city: &str) -> Completion {
    call(
        "get_weather_for_weather",
        &json!({ "city": city }).to_string(),
    )
}

fn finish(answer: &str) -> Completion {
    finish_saying("thinking", answer)
}

type Turn = Box<dyn Fn(&CompletionRequest, usize) -> Result<Completion, LlmError> + Send + Sync>;

/// A context whose action turns come from `turn(request, n)`; the state manager always reports the
/// fact `fact`.
fn context(
    turn: Turn,
    fact: &'static str,
    options: AgentOptions,
) -> (SolveContext, Arc<ScriptedLlm>) {
    let turns = AtomicUsize::new(0);
    let llm = Arc::new(ScriptedLlm::new(move |req: &CompletionRequest, _| {
        if req.purpose == "state" {
            return Ok(state_reply(&[fact]));
        }
        turn(req, turns.fetch_add(1, Ordering::SeqCst))
    }));
    let source = Arc::new(Source::default());
    let ctx = context_with(
        llm.clone(),
        task().functions,
        source,
        ToolConfig::default(),
        options,
    );
    (ctx, llm)
}

fn solve(method: &str, ctx: &SolveContext) -> Episode {
    let solver = solver(
        method.parse().unwrap_or_else(|e| panic!("{e}")),
        &ctx.options,
    );
    run(solver.solve(&task(), ctx)).unwrap_or_else(|e| panic!("{method}: {e}"))
}

fn forced(r: &CompletionRequest) -> bool {
    r.tool_choice == crate::llm::ToolChoice::Function("Finish".into())
}

#[test]
fn an_ignored_forced_finish_ends_the_episode_for_every_method() {
    for method in STEPWISE {
        // The same call every time, whatever `tool_choice` says (some servers ignore it).
        let (ctx, llm) = context(
            Box::new(|_, _| Ok(weather("Paris"))),
            "Paris is 21 C",
            AgentOptions::steps(),
        );
        let ep = solve(method, &ctx);
        assert_eq!(ep.finish, FinishKind::GiveUp, "{method}");
        let last = ep
            .steps
            .last()
            .unwrap_or_else(|| panic!("{method}: no steps"));
        assert_eq!(last.thought, HARNESS_GIVE_UP, "{method}");
        assert!(
            last.notes
                .iter()
                .any(|n| n.contains("ignored the forced Finish")),
            "{method}: {:?}",
            last.notes
        );
        assert_eq!(last.observation.code, 4, "{method}");
        // One forced turn, then the harness ended it: no second try, no further search.
        assert_eq!(
            llm.requests().iter().filter(|r| forced(r)).count(),
            1,
            "{method}"
        );
        assert!(ep.steps.len() <= 3, "{method}: {} steps", ep.steps.len());
    }
    for method in ONE_ANSWER_CALL {
        let (ctx, llm) = context(
            Box::new(|_, _| Ok(weather("Paris"))),
            "Paris is 21 C",
            AgentOptions::steps(),
        );
        let ep = solve(method, &ctx);
        assert!(
            matches!(ep.finish, FinishKind::GiveUp | FinishKind::GiveAnswer),
            "{method}: {:?}",
            ep.finish
        );
        assert!(
            llm.requests().len() <= 8,
            "{method}: {} calls",
            llm.requests().len()
        );
    }
}

#[test]
fn an_unreadable_forced_finish_ends_the_episode_too() {
    let (ctx, _) = context(
        Box::new(|r: &CompletionRequest, _| {
            Ok(if forced(r) {
                reply("no")
            } else {
                weather("Paris")
            })
        }),
        "Paris is 21 C",
        AgentOptions::steps(),
    );
    let ep = solve("sum2act", &ctx);
    assert_eq!(ep.finish, FinishKind::GiveUp);
    assert_eq!(ep.steps.len(), 2);
}

#[test]
fn three_repeats_of_a_failed_call_in_a_row_end_the_episode() {
    let broken = || call("broken_api_for_weather", "{\"city\": \"Paris\"}");
    let (ctx, llm) = context(
        Box::new(move |_, _| Ok(broken())),
        "-",
        AgentOptions::steps(),
    );
    let ep = solve("sum2act", &ctx);
    assert_eq!(ep.finish, FinishKind::GiveUp);
    // The call, three repeats (the third is the forced Finish the harness ended).
    assert_eq!(
        ep.steps.len(),
        4,
        "{:#?}",
        ep.steps.iter().map(|s| &s.notes).collect::<Vec<_>>()
    );
    assert_eq!(llm.requests().iter().filter(|r| forced(r)).count(), 1);
    // Repeats cite the step where the call first failed.
    assert!(
        ep.steps[2]
            .observation
            .error
            .contains("already failed at step 1"),
        "{}",
        ep.steps[2].observation.error
    );
}

/// A model that ignores `tool_choice` and picks among a few calls at random (seeded): hallucinated
/// names, a failing API, three cities, now and then a final answer. (Unreadable replies are left
/// out: ReAct and DFSDT prune a chain on one, as ToolBench does, which is tested on its own.)
fn random_model(seed: u64) -> Turn {
    let rng = Mutex::new(StdRng::seed_from_u64(seed));
    Box::new(move |_, _| {
        let k = rng.lock().map(|mut r| r.gen_range(0..19)).unwrap_or(0);
        Ok(match k {
            0 => finish("It is 21 C."),
            1..=3 => call("no_such_api", "{}"),
            4..=7 => call("broken_api_for_weather", "{\"city\": \"Paris\"}"),
            n => weather(["Paris", "Lyon", "Nice"][n as usize % 3]),
        })
    })
}

#[test]
fn soak_a_model_that_ignores_tool_choice_never_runs_to_the_limit() {
    // Step and depth limits far above what a repeat-free run of this call set can take, so only a
    // Finish or the harness's give-up may end an episode.
    let options = AgentOptions {
        budget: Budget {
            max_steps: 30,
            max_depth: Some(90),
            ..Budget::default()
        },
        ..AgentOptions::steps()
    };
    let mut ends = std::collections::BTreeMap::new();
    for method in Method::ALL.map(Method::name) {
        for seed in 0..40 {
            let (ctx, _) = context(random_model(seed), "it is 21 C", options.clone());
            let ep = solve(method, &ctx);
            assert!(
                matches!(ep.finish, FinishKind::GiveAnswer | FinishKind::GiveUp),
                "{method} seed {seed}: ended {:?} after {} steps",
                ep.finish,
                ep.steps.len()
            );
            assert!(
                ep.steps.len() <= 30,
                "{method} seed {seed}: {} steps",
                ep.steps.len()
            );
            assert!(ep.counters.llm_calls <= 200, "{method} seed {seed}");
            *ends.entry((method, ep.finish.as_str())).or_insert(0) += 1;
        }
    }
    // The script does reach both endings (the test is not vacuous).
    assert!(
        ends.keys().any(|(_, f)| *f == "give_up") && ends.keys().any(|(_, f)| *f == "give_answer"),
        "{ends:?}"
    );
}

#[test]
fn a_function_that_was_not_offered_is_a_hallucinated_call_and_the_episode_goes_on() {
    let script = [call("get_stock_price", "{\"s\": 1}"), finish("21 C")];
    let (ctx, _) = context(
        Box::new(move |_, i| Ok(script[i.min(1)].clone())),
        "-",
        AgentOptions::steps(),
    );
    let ep = solve("sum2act", &ctx);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.steps[0].observation.code, 1);
    assert!(
        ep.steps[0]
            .observation
            .text
            .contains("No such function name")
    );
    assert_eq!(ep.counters.hallucinated_calls, 1);
}

#[test]
fn a_finish_cut_at_the_token_cap_keeps_its_answer() {
    // The embedded model's cut JSON action, and an endpoint's native call with cut arguments.
    let cut_json = "{\"name\": \"Finish\", \"arguments\": {\"return_type\": \"give_answer\", \"final_answer\": \"It is 21 C in Par";
    let (ctx, _) = context(
        Box::new(move |_, _| {
            Err(LlmError::Truncated {
                max_tokens: 16,
                content: cut_json.into(),
            })
        }),
        "-",
        AgentOptions::steps(),
    );
    for method in STEPWISE {
        let ep = solve(method, &ctx);
        assert_eq!(ep.finish, FinishKind::GiveAnswer, "{method}");
        // Sum2Act keeps only what was observed: no call was made, so "21 C" goes and the part is
        // stated as not obtained.
        if method == "sum2act" {
            assert!(ep.answer.starts_with("Not obtained"), "{}", ep.answer);
        } else {
            assert_eq!(ep.answer, "It is 21 C in Par", "{method}");
        }
        assert!(ep.steps[0].thought.contains("cut"), "{method}");
        assert!(ep.counters.cut_replies >= 1, "{method}");
    }
    let native = Completion {
        finish_reason: Some("length".into()),
        ..call(
            "Finish",
            "{\"return_type\": \"give_answer\", \"final_answer\": \"It is 21",
        )
    };
    let (ctx, llm) = context(
        Box::new(move |_, _| Ok(native.clone())),
        "-",
        AgentOptions::steps(),
    );
    let ep = solve("sum2act", &ctx);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    // The cut Finish was read both times (the first, with the request still open, was sent back),
    // each after it was asked for again once with the answer's token budget.
    assert!(ep.steps.iter().all(|s| s.action == "Finish"));
    assert_eq!(ep.counters.cut_replies, 4);
    let caps: Vec<u32> = llm.requests().iter().map(|r| r.max_tokens).collect();
    let (step, answer) = (AgentOptions::steps().max_tokens, DEFAULT_ANSWER_MAX_TOKENS);
    assert_eq!(caps, vec![step, answer, step, answer]);
}

#[test]
fn a_cut_tool_call_is_not_run_but_repaired() {
    let cut = "{\"name\": \"get_weather_for_weather\", \"arguments\": {\"city\": \"Par";
    let (ctx, llm) = context(
        Box::new(move |_, i| match i {
            0 => Err(LlmError::Truncated {
                max_tokens: 8,
                content: cut.into(),
            }),
            _ => Ok(finish("21 C")),
        }),
        "-",
        AgentOptions::steps(),
    );
    let ep = solve("sum2act", &ctx);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    // The cut reply was shown back to the model as malformed, not run and not an episode error
    // (then an early Finish sent back once, and the Finish).
    assert_eq!(llm.requests().len(), 3);
    assert!(ep.error.is_none());
}

#[test]
fn megabyte_replies_are_capped_everywhere() {
    let huge = "x".repeat(10 * 1024 * 1024);
    let options = AgentOptions {
        max_reply_bytes: 64 * 1024,
        ..AgentOptions::steps()
    };
    for method in Method::ALL.map(Method::name) {
        let args = json!({ "city": huge }).to_string();
        let answer = huge.clone();
        let (ctx, llm) = context(
            Box::new(move |_, i| {
                Ok(match i {
                    0 => call("get_weather_for_weather", &args),
                    _ => finish(&answer),
                })
            }),
            "-",
            options.clone(),
        );
        let ep = solve(method, &ctx);
        let file = serde_json::to_string(&ep.to_json()).unwrap_or_default();
        // A step keeps the cut arguments a few times over (step, observation, answer-file chain):
        // bounded by a small multiple of the cap, where it was 10 MB per copy.
        assert!(
            file.len() < 2 * 1024 * 1024,
            "{method}: answer file of {} bytes",
            file.len()
        );
        // The model's answer is cut at the cap; Sum2Act may append its own (bounded) "Not obtained"
        // lines for failed parts.
        assert!(ep.answer.len() <= 64 * 1024 + 4 * 1024, "{method}");
        assert!(ep.counters.cut_replies >= 2, "{method}: {:?}", ep.counters);
        for r in llm.requests() {
            let sent: usize = r
                .messages
                .iter()
                .map(|m| {
                    m.content.len()
                        + m.tool_calls
                            .iter()
                            .map(|c| c.arguments.len())
                            .sum::<usize>()
                })
                .sum();
            assert!(sent < 256 * 1024, "{method}: a prompt of {sent} bytes");
        }
    }
}

#[test]
fn a_call_with_nothing_new_is_not_reported_as_failed() {
    let script = [weather("Paris"), weather("paris"), finish("21 C")];
    let (ctx, llm) = context(
        Box::new(move |_, i| Ok(script[i.min(2)].clone())),
        "Paris is 21 C",
        AgentOptions {
            fold_chars: crate::agent::FoldChars(0),
            ..AgentOptions::steps()
        },
    );
    let ep = solve("sum2act", &ctx);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.counters.redundant_calls, 1);
    assert_eq!(ep.counters.failed_tool_calls, 0);
    let state = ep.steps[1].state.clone().unwrap_or_default();
    assert_eq!(state["failures"], json!([]), "{state}");
    assert_eq!(state["redundant"][0]["step"], 2, "{state}");
    let third: String = llm
        .requests()
        .iter()
        .filter(|r| r.purpose == "router")
        .nth(2)
        .map(|r| r.messages.iter().map(|m| m.content.clone()).collect())
        .unwrap_or_default();
    assert!(third.contains("added nothing new"), "{third}");
    assert!(!third.contains("already failed"), "{third}");
    assert!(third.contains("Failed calls:\n(none)"), "{third}");
}

#[test]
fn a_forced_finish_that_repeats_a_failed_finish_ends_the_episode() {
    // A Finish without its answer fails (code 2); forced to finish, the model sends it again and again.
    let bad = || call("Finish", "{\"return_type\": \"give_answer\"}");
    for method in STEPWISE {
        let (ctx, _) = context(
            Box::new(move |_, _| Ok(bad())),
            "-",
            AgentOptions {
                budget: Budget {
                    max_depth: Some(90),
                    ..Budget::default()
                },
                ..AgentOptions::steps()
            },
        );
        let ep = solve(method, &ctx);
        assert_eq!(ep.finish, FinishKind::GiveUp, "{method}");
        assert!(ep.steps.len() <= 4, "{method}: {} steps", ep.steps.len());
        assert_eq!(
            ep.steps.last().map(|s| s.thought.as_str()),
            Some(HARNESS_GIVE_UP),
            "{method}"
        );
    }
}

#[test]
fn an_unreachable_state_manager_ends_the_episode_and_the_call_is_not_a_failure() {
    let turns = AtomicUsize::new(0);
    let llm = Arc::new(ScriptedLlm::new(move |req: &CompletionRequest, _| {
        if req.purpose == "state" {
            return Err(LlmError::Unreachable {
                endpoint: "http://127.0.0.1:9/v1".into(),
                message: "connection refused".into(),
            });
        }
        Ok(match turns.fetch_add(1, Ordering::SeqCst) {
            0 => weather("Paris"),
            _ => finish("21 C"),
        })
    }));
    let ctx = context_with(
        llm,
        task().functions,
        Arc::new(Source::default()),
        ToolConfig::default(),
        AgentOptions {
            fold_chars: crate::agent::FoldChars(0),
            ..AgentOptions::steps()
        },
    );
    let ep = solve("sum2act", &ctx);
    assert_eq!(ep.finish, FinishKind::Error, "{:?}", ep.steps);
    assert_eq!(ep.counters.failed_tool_calls, 0);
    let failures = ep.steps[0].state.as_ref().map(|s| s["failures"].clone());
    assert_eq!(
        failures,
        Some(json!([])),
        "the call that worked is no failure"
    );
    assert!(
        ep.steps[0]
            .notes
            .iter()
            .any(|n| n.contains("state manager unavailable"))
    );
}
