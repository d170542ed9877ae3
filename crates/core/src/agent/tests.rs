//! The methods driven by a scripted model over a fake tool source: state updates, failure history,
//! limits, malformed replies, give-up, and DFSDT's search order and budget.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::sample_harness::{
    Turns, assert_one_reply_format, context_with, failed_reply, finish_saying, ok_reply,
    prompts_for, raw_call, run, state_reply, weather_task as task,
};
use super::sum2act::{State, Sum2Act};
use super::*;
use crate::llm::scripted::{ScriptedLlm, reply};
use crate::llm::{Completion, CompletionRequest};
use crate::tools::{ToolConfig, ToolError, ToolReply, ToolRequest, ToolSource};

/// Answers `get_weather` with a temperature, fails `broken_api`, and counts every call.
#[derive(Default)]
struct FakeSource {
    calls: Mutex<Vec<String>>,
}

#[async_trait]
impl ToolSource for FakeSource {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        if let Ok(mut c) = self.calls.lock() {
            c.push(format!("{} {}", request.api_name, request.tool_input));
        }
        Ok(match request.api_name.as_str() {
            "broken_api" => failed_reply(),
            _ => ok_reply(json!({"city": "Paris", "temperature_c": 21})),
        })
    }

    fn describe(&self) -> String {
        "fake".into()
    }
}

fn call(name: &str, args: Value) -> Completion {
    raw_call("thinking", name, &args.to_string())
}

fn finish(answer: &str) -> Completion {
    finish_saying("thinking", answer)
}

fn give_up() -> Completion {
    call("Finish", json!({"return_type": "give_up_and_restart"}))
}

fn weather() -> Completion {
    call("get_weather_for_weather", json!({"city": "Paris"}))
}

fn broken() -> Completion {
    call("broken_api_for_weather", json!({"city": "Paris"}))
}

struct Harness {
    llm: Arc<ScriptedLlm>,
    source: Arc<FakeSource>,
    ctx: SolveContext,
}

/// A context whose model answers router/react turns from `router` in order and state-manager calls
/// with one fixed fact.
fn harness(router: Vec<Completion>, options: AgentOptions) -> Harness {
    let router = Turns::new(router);
    let llm = Arc::new(ScriptedLlm::new(move |req: &CompletionRequest, _| {
        if req.purpose == "state" {
            return Ok(state_reply(&["Paris is 21 C"]));
        }
        router.next()
    }));
    let source = Arc::new(FakeSource::default());
    let ctx = fake_context(llm.clone(), source.clone(), options);
    Harness { llm, source, ctx }
}

/// A context over the weather task's functions answered by `source`.
fn fake_context(
    llm: Arc<ScriptedLlm>,
    source: Arc<FakeSource>,
    options: AgentOptions,
) -> SolveContext {
    context_with(
        llm,
        task().functions,
        source,
        ToolConfig::default(),
        options,
    )
}

fn tool_calls(h: &Harness) -> usize {
    h.source.calls.lock().map(|c| c.len()).unwrap_or(0)
}

fn router_prompts(h: &Harness) -> Vec<String> {
    prompts_for(&h.llm, "router")
}

#[test]
fn sum2act_success_updates_state_and_finishes() {
    let h = harness(
        vec![weather(), finish("It is 21 C in Paris.")],
        AgentOptions {
            fold_chars: crate::agent::FoldChars(0),
            ..AgentOptions::steps()
        },
    );
    let ep =
        run(Sum2Act::new(&h.ctx.options).solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.answer, "It is 21 C in Paris.");
    assert_eq!(ep.steps.len(), 2);
    let facts = &ep.steps[0]
        .state
        .as_ref()
        .map(|s| s["facts"].clone())
        .unwrap_or_default();
    assert_eq!(facts[0]["text"], "Paris is 21 C");
    // The router's second prompt carries the fact, not the raw observation.
    let prompts = router_prompts(&h);
    assert!(prompts[1].contains("Paris is 21 C"));
    assert!(!prompts[1].contains("temperature_c"));
    assert_eq!(ep.counters.llm_calls, 3);
    assert_eq!(ep.counters.tool_calls, 1);
    assert_eq!(ep.answer_file["answer_generation"]["valid_data"], true);
}

#[test]
fn sum2act_failure_is_recorded_and_not_repeated() {
    let h = harness(
        vec![broken(), broken(), weather(), finish("21 C")],
        AgentOptions::steps(),
    );
    let ep =
        run(Sum2Act::new(&h.ctx.options).solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    // The repeated failed call was not sent to the tool source again.
    assert_eq!(tool_calls(&h), 2);
    assert!(
        ep.steps[1]
            .notes
            .iter()
            .any(|n| n.contains("repeated a failed call"))
    );
    let prompts = router_prompts(&h);
    assert!(
        prompts[1].contains("broken_api_for_weather"),
        "{}",
        prompts[1]
    );
    assert!(prompts[1].contains("API not working"));
    let failures = &ep.steps[1]
        .state
        .as_ref()
        .map(|s| s["failures"].clone())
        .unwrap_or_default();
    assert_eq!(failures[0]["attempts"], 2);
    assert_eq!(ep.counters.failed_tool_calls, 1);
}

#[test]
fn sum2act_stops_at_step_limit_with_bounded_prompts() {
    let options = AgentOptions {
        budget: Budget {
            max_steps: 6,
            ..Budget::default()
        },
        ..AgentOptions::steps()
    };
    let turns: Vec<Completion> = (0..6)
        .map(|i| call("get_weather_for_weather", json!({"city": format!("C{i}")})))
        .collect();
    let h = harness(turns, options);
    let ep =
        run(Sum2Act::new(&h.ctx.options).solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::Limit);
    assert_eq!(ep.steps.len(), 6);
    assert_eq!(ep.answer_file["answer_generation"]["valid_data"], false);
}

#[test]
fn sum2act_recovers_from_malformed_reply() {
    let h = harness(
        vec![reply("I am not sure"), weather(), finish("21 C")],
        AgentOptions::steps(),
    );
    let ep =
        run(Sum2Act::new(&h.ctx.options).solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.steps.len(), 2);
    // The repair request showed the parse error to the model.
    let repair = &h.llm.requests()[1];
    assert!(
        repair
            .messages
            .last()
            .is_some_and(|m| m.content.contains("could not be used"))
    );
}

#[test]
fn sum2act_counts_doubly_malformed_reply_as_failed_step() {
    let h = harness(
        vec![reply("??"), reply("still no"), weather(), finish("21 C")],
        AgentOptions::steps(),
    );
    let ep =
        run(Sum2Act::new(&h.ctx.options).solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.steps.len(), 3);
    assert!(ep.steps[0].notes.iter().any(|n| n.contains("malformed")));
    assert!(router_prompts(&h)[2].contains("not a valid action"));
}

#[test]
fn a_result_the_state_manager_finds_nothing_in_is_a_failure_never_a_raw_fact() {
    let turns = AtomicUsize::new(0);
    let llm = Arc::new(ScriptedLlm::new(move |req: &CompletionRequest, _| {
        if req.purpose == "state" {
            return Ok(reply(&json!({"success": false, "new_facts": [], "failure_reason": "wrong argument", "wrong_facts": []}).to_string()));
        }
        Ok(if turns.fetch_add(1, Ordering::SeqCst) == 0 {
            weather()
        } else {
            finish("21 C")
        })
    }));
    let ctx = fake_context(
        llm,
        Arc::default(),
        AgentOptions {
            fold_chars: crate::agent::FoldChars(0),
            ..AgentOptions::steps()
        },
    );
    let ep = run(Sum2Act::new(&ctx.options).solve(&task(), &ctx)).unwrap_or_else(|e| panic!("{e}"));
    let state = ep.steps[0].state.clone().unwrap_or_default();
    // No "get_weather returned: {…}" dump: the call is a failure with the state manager's reason.
    assert_eq!(state["facts"], json!([]), "{state}");
    assert_eq!(state["failures"][0]["reason"], "wrong argument", "{state}");
    assert!(
        ep.steps[0]
            .notes
            .iter()
            .any(|n| n.contains("wrong argument"))
    );
}

#[test]
fn sum2act_must_finish_after_repeating_failed_calls() {
    let h = harness(
        vec![broken(), broken(), broken(), broken(), give_up()],
        AgentOptions::steps(),
    );
    let ep =
        run(Sum2Act::new(&h.ctx.options).solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveUp);
    assert_eq!(tool_calls(&h), 1);
    let reqs: Vec<CompletionRequest> = h
        .llm
        .requests()
        .into_iter()
        .filter(|r| r.purpose == "router")
        .collect();
    // After a repeat the router is told so and samples with a seeded temperature.
    assert!(!router_prompts(&h)[1].contains("repeated a call"));
    assert!(router_prompts(&h)[2].contains("repeated a call"));
    assert_eq!(reqs[1].temperature, 0.0);
    assert!(reqs[2].temperature > 0.0 && reqs[2].seed.is_some());
    // The third repeat makes the harness force a Finish.
    let last = reqs.last().map(|r| r.tool_choice.clone());
    assert_eq!(
        last,
        Some(crate::llm::ToolChoice::Function("Finish".into()))
    );
    assert!(ep.steps.last().is_some_and(|s| {
        s.notes
            .iter()
            .any(|n| n.contains("asked the router to finish"))
    }));
}

#[test]
fn sum2act_is_asked_to_finish_when_it_repeats_a_successful_call() {
    let h = harness(
        vec![weather(), weather(), finish("21 C")],
        AgentOptions::steps(),
    );
    let ep =
        run(Sum2Act::new(&h.ctx.options).solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.answer, "21 C");
    assert_eq!(tool_calls(&h), 1);
    assert_eq!(ep.steps.len(), 2);
}

#[test]
fn sum2act_give_up() {
    let h = harness(vec![give_up()], AgentOptions::steps());
    let ep =
        run(Sum2Act::new(&h.ctx.options).solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveUp);
    assert!(ep.answer.is_empty());
}

#[test]
fn sum2act_state_carries_over() {
    // The first Finish comes before any call answered the request: it is sent back once.
    let h = harness(
        vec![finish("still 21 C"), finish("still 21 C")],
        AgentOptions::steps(),
    );
    let mut state = State::default();
    state.record_failure(
        1,
        "broken_api_for_weather",
        "{}",
        "down",
        failure::FailureKind::Final,
    );
    let (ep, after) = run(Sum2Act::new(&h.ctx.options).solve_from(&task(), &h.ctx, state))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(after.failures.len(), 1);
    assert!(router_prompts(&h)[0].contains("down"));
}

#[test]
fn react_sees_history_and_respects_depth() {
    let options = AgentOptions {
        budget: Budget {
            max_depth: Some(6),
            ..Budget::default()
        },
        ..AgentOptions::steps()
    };
    let h = harness(vec![weather(), broken(), weather()], options);
    let ep = run(react::React::new(&h.ctx.options).solve(&task(), &h.ctx))
        .unwrap_or_else(|e| panic!("{e}"));
    // Each step with a thought is 3 levels: two steps reach depth 6.
    assert_eq!(ep.finish, FinishKind::Limit);
    assert_eq!(ep.steps.len(), 2);
    let second = &h.llm.requests()[1];
    assert!(
        second
            .messages
            .iter()
            .any(|m| m.content.contains("temperature_c"))
    );
    assert_eq!(ep.answer_file["trys"].as_array().map(Vec::len), Some(1));
}

#[test]
fn react_tries_again_after_give_up() {
    let options = AgentOptions {
        tries: 2,
        ..AgentOptions::steps()
    };
    let h = harness(vec![give_up(), weather(), finish("21 C")], options);
    let ep = run(react::React::new(&h.ctx.options).solve(&task(), &h.ctx))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.answer_file["try_count"], 2);
    assert_eq!(ep.answer_file["trys"][1]["win"], true);
    // The second try is a new conversation: its first call is call_1 again.
    let last = h
        .llm
        .requests()
        .pop()
        .map(|r| r.messages)
        .unwrap_or_default();
    let ids: Vec<_> = last.iter().filter_map(|m| m.tool_call_id.clone()).collect();
    assert_eq!(ids, vec!["call_1".to_string()]);
}

fn forces_finish(r: &CompletionRequest) -> bool {
    r.tool_choice == crate::llm::ToolChoice::Function("Finish".into())
}

#[test]
fn react_is_asked_to_finish_when_it_repeats_a_call() {
    let h = harness(
        vec![weather(), weather(), finish("21 C")],
        AgentOptions::steps(),
    );
    let ep = run(react::React::new(&h.ctx.options).solve(&task(), &h.ctx))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.answer, "21 C");
    // The repeat was not sent to the tool; the third request forced a Finish.
    assert_eq!(tool_calls(&h), 1);
    assert_eq!(ep.steps.len(), 2);
    assert!(ep.steps[1].notes.iter().any(|n| n.contains("repeated")));
    let reqs = h.llm.requests();
    assert_eq!(reqs.iter().filter(|r| forces_finish(r)).count(), 1);
    assert!(forces_finish(&reqs[2]));
}

#[test]
fn react_without_repeat_guard_runs_the_repeat() {
    let options = AgentOptions {
        repeat_guard: false,
        ..AgentOptions::steps()
    };
    let h = harness(vec![weather(), weather(), finish("21 C")], options);
    let ep = run(react::React::new(&h.ctx.options).solve(&task(), &h.ctx))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.steps.len(), 3);
    assert_eq!(ep.steps[1].action, "get_weather_for_weather");
    assert!(ep.steps[1].notes.is_empty());
    assert!(!h.llm.requests().iter().any(forces_finish));
}

#[test]
fn dfsdt_is_asked_to_finish_when_it_repeats_a_call_on_its_path() {
    let h = harness(
        vec![weather(), weather(), finish("21 C")],
        AgentOptions::steps(),
    );
    let ep = run(dfsdt::Dfsdt::new(&h.ctx.options).solve(&task(), &h.ctx))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(tool_calls(&h), 1);
    assert!(forces_finish(&h.llm.requests()[2]));
    assert_eq!(
        ep.answer_file["answer_generation"]["finish_type"],
        "give_answer"
    );
}

/// Levels per DFSDT step with our scripted replies (thought + action + input).
const LEVELS: u32 = 3;

fn is_diverse(r: &CompletionRequest) -> bool {
    r.messages
        .last()
        .is_some_and(|m| m.content.contains("not the first attempt"))
}

#[test]
fn dfsdt_backtracks_depth_first_with_diversity_prompts() {
    let options = AgentOptions {
        budget: Budget {
            max_depth: Some(2 * LEVELS),
            ..Budget::default()
        },
        width: 2,
        ..AgentOptions::steps()
    };
    let turns: Vec<Completion> = (0..6)
        .map(|i| call("get_weather_for_weather", json!({"city": format!("C{i}")})))
        .collect();
    let h = harness(turns, options);
    let ep = run(dfsdt::Dfsdt::new(&h.ctx.options).solve(&task(), &h.ctx))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::Limit);
    let reqs = h.llm.requests();
    assert_eq!(reqs.len(), 6);
    // root, child, child again, root again, new child, new child again.
    let depth_of = |r: &CompletionRequest| {
        r.messages
            .iter()
            .filter(|m| m.role == crate::llm::Role::Tool)
            .count()
    };
    let order: Vec<(usize, bool)> = reqs.iter().map(|r| (depth_of(r), is_diverse(r))).collect();
    assert_eq!(
        order,
        vec![
            (0, false),
            (1, false),
            (1, true),
            (0, true),
            (1, false),
            (1, true)
        ]
    );
    // The re-expansion lists the earlier attempt's call and output.
    let text = reqs[2]
        .messages
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    assert!(
        text.contains("C1") && text.contains("temperature_c"),
        "{text}"
    );
    assert_eq!(ep.answer_file["tree"]["size"], 1 + 6 * 3);
    // Each request shows one path from the root: its calls numbered call_1, call_2... along it, whatever
    // other branches ran before (ToolBench's conversation has no ids; ours must not leak the search), and
    // no earlier diversity prompt stays in a child's history (ToolBench marks it `valid: False`).
    for r in &reqs {
        let ids: Vec<String> = r
            .messages
            .iter()
            .filter(|m| m.role == crate::llm::Role::Tool)
            .map(|m| m.tool_call_id.clone().unwrap_or_default())
            .collect();
        let want: Vec<String> = (1..=ids.len()).map(|i| format!("call_{i}")).collect();
        assert_eq!(ids, want);
        let diversity = r
            .messages
            .iter()
            .filter(|m| m.content.contains("not the first attempt"));
        assert!(diversity.count() <= 1);
    }
    // The new child under the root (5th request) sees the root's messages and its own call, C3.
    let args = |r: &CompletionRequest| -> Vec<String> {
        r.messages
            .iter()
            .flat_map(|m| m.tool_calls.iter().map(|c| c.arguments.clone()))
            .collect()
    };
    assert_eq!(args(&reqs[4]), vec![r#"{"city":"C3"}"#.to_string()]);
}

#[test]
fn dfsdt_give_up_backs_off_an_extra_level() {
    let options = AgentOptions {
        budget: Budget {
            max_depth: Some(4 * LEVELS),
            ..Budget::default()
        },
        width: 2,
        ..AgentOptions::steps()
    };
    let h = harness(vec![weather(), give_up(), finish("21 C")], options);
    let ep = run(dfsdt::Dfsdt::new(&h.ctx.options).solve(&task(), &h.ctx))
        .unwrap_or_else(|e| panic!("{e}"));
    let reqs = h.llm.requests();
    assert_eq!(reqs.len(), 3);
    // After the give-up below the first child, the search resumes at the root, not at that child.
    assert_eq!(reqs[2].messages.len(), 3);
    assert!(is_diverse(&reqs[2]));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(
        ep.answer_file["answer_generation"]["finish_type"],
        "give_answer"
    );
    // The answer's path is its Finish alone; the weather call it was shown as an earlier attempt is
    // in the record with its whole reply (the give-up below it was never shown).
    let ours = &ep.to_json()["sum2act"];
    assert_eq!(ours["steps"].as_array().map(Vec::len), Some(1));
    assert_eq!(ours["attempts"][0]["action"], "get_weather_for_weather");
    assert!(ours["attempts"][0]["observation"]["response"].is_object());
}

#[test]
fn dfsdt_stops_at_budget() {
    let options = AgentOptions {
        budget: Budget {
            max_depth: Some(100),
            max_llm_calls: 3,
            ..Budget::default()
        },
        width: 2,
        ..AgentOptions::steps()
    };
    let turns: Vec<Completion> = (0..10)
        .map(|i| call("get_weather_for_weather", json!({"city": format!("C{i}")})))
        .collect();
    let h = harness(turns, options);
    let ep = run(dfsdt::Dfsdt::new(&h.ctx.options).solve(&task(), &h.ctx))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.llm.requests().len(), 3);
    assert_eq!(ep.details["out_of_budget"], true);
    assert_eq!(ep.finish, FinishKind::Limit);
    // The reply of the call that hit the budget is discarded: only two actions ran.
    assert_eq!(tool_calls(&h), 2);
}

#[test]
fn dfsdt_only_give_up_reports_give_up() {
    let options = AgentOptions {
        budget: Budget {
            max_depth: Some(LEVELS),
            ..Budget::default()
        },
        width: 1,
        ..AgentOptions::steps()
    };
    let h = harness(vec![give_up()], options);
    let ep = run(dfsdt::Dfsdt::new(&h.ctx.options).solve(&task(), &h.ctx))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveUp);
    assert_eq!(
        ep.answer_file["answer_generation"]["finish_type"],
        "give_up"
    );
    assert_eq!(ep.answer_file["answer_generation"]["valid_data"], true);
}

#[test]
fn every_method_writes_a_convertible_answer_file() {
    for method in ["sum2act", "react", "dfsdt"] {
        let h = harness(vec![weather(), finish("21 C")], AgentOptions::steps());
        let solver = solver(
            method.parse().unwrap_or_else(|e| panic!("{e}")),
            &h.ctx.options,
        );
        let ep = run(solver.solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ep.finish, FinishKind::GiveAnswer, "{method}");
        let file = ep.to_json();
        assert_eq!(file["answer_generation"]["query"], task().query);
        assert!(
            file["answer_generation"]["final_answer"]
                .as_str()
                .is_some_and(|s| s.contains("give_answer"))
        );
        let conv = crate::toolbench::answer::convert(&file, method);
        let last =
            crate::toolbench::answer::converted_final_step(&conv["answer"]).unwrap_or(Value::Null);
        assert_eq!(last["name"], "Finish", "{method}");
        let back = Episode::from_json(&file)
            .unwrap_or_else(|| panic!("{method}: episode does not read back"));
        assert_eq!(back.counters, ep.counters);
        assert_one_reply_format(&h.llm.requests());
    }
}

#[test]
fn a_repeat_samples_every_call_with_its_own_seed_and_repeat_zero_is_unchanged() {
    let routers = |sampling| {
        let mut h = harness(vec![weather(), finish("21 C")], AgentOptions::steps());
        h.ctx = h.ctx.with_sampling(sampling);
        run(Sum2Act::new(&h.ctx.options).solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"));
        h.llm
            .requests()
            .into_iter()
            .filter(|r| r.purpose == "router")
            .collect::<Vec<CompletionRequest>>()
    };
    let plain = routers(crate::agent::sampling::Sampling::for_repeat(9, 0));
    assert!(
        plain
            .iter()
            .all(|r| r.temperature == 0.0 && r.seed.is_none())
    );
    let one = routers(crate::agent::sampling::Sampling::for_repeat(9, 1));
    let two = routers(crate::agent::sampling::Sampling::for_repeat(9, 2));
    assert!(one.iter().all(|r| r.temperature > 0.0 && r.seed.is_some()));
    assert_ne!(one[0].seed, two[0].seed);
    assert_ne!(one[0].seed, one[1].seed);
}
