//! Sum2Act's checklist driven by a scripted model: every part of a multi-part request is worked on, an
//! early Finish is sent back once, failed parts are stated as not obtained, unsupported values are
//! removed from the answer, and a parameter error teaches the router about the tool's sibling APIs.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::agent::sample_harness::{
    Turns, context_with, failed_reply, finish_saying, ok_reply, prompt_text, prompts_for, raw_call,
    recorded_checklist, run,
};
use crate::agent::sum2act::Sum2Act;
use crate::agent::*;
use crate::llm::scripted::{ScriptedLlm, reply};
use crate::llm::{Completion, CompletionRequest};
use crate::toolbench::fixture::{api_doc, string_param};
use crate::toolbench::request_asks::{is_framing, missing_words};
use crate::toolbench::{ApiDoc, Function, Task};
use crate::tools::{ToolConfig, ToolError, ToolReply, ToolRequest, ToolSource};

const QUERY: &str =
    "Tell me the weather in Paris, and find hotels near the Eiffel Tower for my trip.";

/// Weather and hotels answer; `broken` and everything else fail.
#[derive(Default)]
struct Source {
    calls: Mutex<Vec<String>>,
}

#[async_trait]
impl ToolSource for Source {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        if let Ok(mut c) = self.calls.lock() {
            c.push(request.api_name.clone());
        }
        Ok(match request.api_name.as_str() {
            "weather" => ok_reply(json!({"city": "Paris", "temperature_c": 21})),
            "hotels" => {
                ok_reply(json!({"hotels": [{"name": "Hotel Lutetia", "near": "Eiffel Tower"}]}))
            }
            "team_totals" | "league_leaders" => ok_reply(json!({"leader": "Ajax"})),
            "lodging" => ok_reply(json!({"results": [{"name": "Hotel Lutetia", "km": 0.8}]})),
            _ => failed_reply(),
        })
    }

    fn describe(&self) -> String {
        "checklist fake".into()
    }
}

fn function(tool: &str, api: &str, params: &[&str]) -> Function {
    let param = |p: &&str| string_param(p, &format!("{p} to look up"), json!(""));
    let doc = ApiDoc {
        api_description: Some(format!("{api} of {tool}")),
        ..api_doc("Travel", tool, api, params.iter().map(param).collect())
    };
    Function::from_doc(&doc, tool)
}

fn task() -> Task {
    Task {
        subset: "G2_instruction".into(),
        query_id: 11,
        query: QUERY.into(),
        functions: vec![
            function("meteo", "weather", &["city"]),
            function("booking", "hotels", &["place"]),
            function("booking", "broken", &["place"]),
            function("booking", "lodging", &[]),
            function("stats", "team_totals", &[]),
            function("stats", "league_leaders", &[]),
        ],
        relevant: vec![],
    }
}

fn call(name: &str, args: Value) -> Completion {
    raw_call("thinking", name, &args.to_string())
}

fn finish(answer: &str) -> Completion {
    finish_saying("thinking", answer)
}

fn weather() -> Completion {
    call("weather_for_meteo", json!({"city": "Paris"}))
}

fn hotels() -> Completion {
    call("hotels_for_booking", json!({"place": "Eiffel Tower"}))
}

/// The state manager's facts, from the call its prompt names (it never names a part: the code must
/// attribute the facts to parts itself).
fn state_reply(prompt: &str) -> Completion {
    if prompt.contains("league_leaders_for_stats") {
        // Invented facts, claimed to answer both parts.
        return reply(
            &json!({"success": true, "new_facts": ["Paris is 35 C", "Hotel Ritz has 12 rooms"], "failure_reason": "", "wrong_facts": [], "parts": [1, 2]})
                .to_string(),
        );
    }
    let facts: Vec<&str> = if prompt.contains("weather_for_meteo") {
        vec!["Paris is 21 C"]
    } else if prompt.contains("hotels_for_booking") {
        vec!["Hotel Lutetia is near the Eiffel Tower"]
    } else if prompt.contains("team_totals_for_stats") {
        // Invented: the result only says who leads.
        vec!["Barcelona has 42 titles", "Ajax leads"]
    } else {
        vec!["Ajax leads"]
    };
    reply(
        &json!({"success": true, "new_facts": facts, "failure_reason": "", "wrong_facts": [], "parts": []})
            .to_string(),
    )
}

struct Harness {
    llm: Arc<ScriptedLlm>,
    source: Arc<Source>,
    ctx: SolveContext,
}

/// Router turns come from `router` in order; the model's split of the request is unusable (an answer
/// and a tool name, not parts), so the deterministic splitter's parts are kept.
fn harness(router: Vec<Completion>) -> Harness {
    harness_with(router, AgentOptions::steps())
}

/// [`harness`] with `options`.
fn harness_with(router: Vec<Completion>, options: AgentOptions) -> Harness {
    let router = Turns::new(router);
    let llm = Arc::new(ScriptedLlm::new(move |req: &CompletionRequest, _| {
        let prompt = prompt_text(req);
        match req.purpose.as_str() {
            "state" => return Ok(state_reply(&prompt)),
            "decompose" => {
                return Ok(reply(
                    r#"{"subtasks": ["It is 30 C in Paris", "hotels_for_booking Eiffel Tower"]}"#,
                ));
            }
            _ => {}
        }
        router.next()
    }));
    let source = Arc::new(Source::default());
    // Strict parameters, so an undeclared argument is a parameter error (the lessons' input); by
    // default the caller passes such arguments on, as ToolBench does.
    let config = ToolConfig {
        strict_params: true,
        ..ToolConfig::default()
    };
    let ctx = context_with(
        llm.clone(),
        task().functions,
        source.clone(),
        config,
        options,
    );
    Harness { llm, source, ctx }
}

fn solve(h: &Harness) -> Episode {
    run(Sum2Act::new(&h.ctx.options).solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"))
}

fn router_prompts(h: &Harness) -> Vec<String> {
    prompts_for(&h.llm, "router")
}

fn calls(h: &Harness) -> Vec<String> {
    h.source.calls.lock().map(|c| c.clone()).unwrap_or_default()
}

fn checklist(ep: &Episode) -> Value {
    ep.steps
        .last()
        .and_then(|s| s.state.clone())
        .map(|s| s["checklist"]["parts"].clone())
        .unwrap_or_default()
}

#[test]
fn a_multi_part_request_is_not_finished_after_the_first_part() {
    let h = harness(vec![
        weather(),
        finish("It is 21 C in Paris."),
        hotels(),
        finish("It is 21 C in Paris. Hotel Lutetia is near the Eiffel Tower."),
    ]);
    let ep = solve(&h);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(calls(&h), vec!["weather", "hotels"]);
    assert_eq!(
        ep.answer,
        "It is 21 C in Paris. Hotel Lutetia is near the Eiffel Tower."
    );
    let parts = checklist(&ep);
    assert_eq!(parts[0]["status"], "answered", "{parts}");
    assert_eq!(parts[1]["status"], "answered", "{parts}");
    assert_eq!(parts[0]["facts"][0], "Paris is 21 C", "{parts}");
    // The router saw the checklist, with the first part partly answered once the weather came back
    // (the state manager named no part as answered completely); the Finish settled it as answered.
    let prompts = router_prompts(&h);
    assert!(
        prompts[0].contains("1. [open] Tell me the weather in Paris"),
        "{}",
        prompts[0]
    );
    assert!(
        prompts[1].contains("1. [partly answered] Tell me the weather in Paris"),
        "{}",
        prompts[1]
    );
    assert!(
        prompts[1].contains("2. [open] find hotels near the Eiffel Tower"),
        "{}",
        prompts[1]
    );
}

/// The step was not run but nudged, naming the open hotels part.
fn assert_nudged_for_hotels(step: &episode::Step) {
    assert!(
        step.notes.iter().any(|n| n.contains("nudged")),
        "{:?}",
        step.notes
    );
    assert!(
        step.observation
            .error
            .contains("2. find hotels near the Eiffel Tower"),
        "{}",
        step.observation.error
    );
}

#[test]
fn an_early_finish_is_nudged_once_naming_the_open_parts() {
    let h = harness(vec![
        weather(),
        finish("It is 21 C in Paris."),
        hotels(),
        finish("Done."),
    ]);
    let ep = solve(&h);
    // The early Finish was not run: it became a step the router was told about.
    assert_eq!(ep.steps[1].action, "Finish");
    assert!(ep.steps[1].observation.finish.is_none());
    assert_nudged_for_hotels(&ep.steps[1]);
    let prompts = router_prompts(&h);
    assert!(
        prompts[2].contains("still open: 2. find hotels"),
        "{}",
        prompts[2]
    );
    assert!(
        !prompts[3].contains("still open"),
        "the nudge is shown once"
    );
}

#[test]
fn repeating_an_answered_call_with_parts_open_is_nudged_not_finished() {
    let h = harness(vec![
        weather(),
        weather(),
        hotels(),
        finish("It is 21 C in Paris. Hotel Lutetia is near the Eiffel Tower."),
    ]);
    let ep = solve(&h);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    // The repeat was not run and did not end the episode: the router was told what is still open.
    assert_eq!(ep.steps[1].action, "weather_for_meteo");
    assert_nudged_for_hotels(&ep.steps[1]);
    assert_eq!(ep.steps[2].action, "hotels_for_booking");
    assert_eq!(ep.steps.len(), 4);
    let prompts = router_prompts(&h);
    assert!(
        prompts[2].contains("still open: 2. find hotels"),
        "{}",
        prompts[2]
    );
    let parts = checklist(&ep);
    assert_eq!(parts[1]["status"], "answered", "{parts}");
}

#[test]
fn a_second_early_finish_states_the_open_part_as_not_obtained() {
    let h = harness(vec![
        weather(),
        finish("It is 21 C in Paris."),
        finish("It is 21 C in Paris."),
    ]);
    let ep = solve(&h);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.steps.len(), 3, "one nudge, not two");
    assert_eq!(
        ep.answer,
        "It is 21 C in Paris.\nNot obtained: find hotels near the Eiffel Tower for my trip (no call answered it before Finish)."
    );
}

#[test]
fn a_failed_part_is_stated_as_not_obtained_with_why() {
    let h = harness(vec![
        weather(),
        call("broken_for_booking", json!({"place": "Eiffel Tower"})),
        finish("It is 21 C in Paris. Hotel Lutetia has rooms."),
        finish("It is 21 C in Paris. Hotel Lutetia has rooms."),
    ]);
    let ep = solve(&h);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    // One failed call does not fail the hotels part (hotels_for_booking was never tried): the first
    // Finish was sent back, the second stated the part as not obtained with the failed call's reason.
    assert_eq!(ep.steps.len(), 4);
    assert_nudged_for_hotels(&ep.steps[2]);
    let parts = checklist(&ep);
    assert_eq!(parts[1]["status"], "failed", "{parts}");
    assert!(
        ep.answer.starts_with("It is 21 C in Paris."),
        "{}",
        ep.answer
    );
    assert!(
        ep.answer.contains(
            "Not obtained: find hotels near the Eiffel Tower for my trip (broken_for_booking failed: API not working error"
        ),
        "{}",
        ep.answer
    );
}

#[test]
fn a_claim_no_observation_supports_is_removed_before_finish() {
    let h = harness(vec![
        weather(),
        hotels(),
        finish(
            "It is 21 C in Paris. Hotel Lutetia is near the Eiffel Tower. Call +33 1 49 54 46 00 or write to book@lutetia.com.",
        ),
    ]);
    let ep = solve(&h);
    assert_eq!(
        ep.answer,
        "It is 21 C in Paris. Hotel Lutetia is near the Eiffel Tower."
    );
    let last = ep
        .steps
        .last()
        .map(|s| s.notes.join("; "))
        .unwrap_or_default();
    assert!(
        last.contains("1 sentence(s) with unsupported values removed"),
        "{last}"
    );
    // The answer file carries the cleaned answer too.
    let finish_args = ep
        .steps
        .last()
        .map(|s| s.arguments.clone())
        .unwrap_or_default();
    assert!(!finish_args.contains("lutetia.com"), "{finish_args}");
}

#[test]
fn a_parameter_error_is_generalised_to_the_sibling_apis() {
    let h = harness(vec![
        call("team_totals_for_stats", json!({"team": "Ajax"})),
        call("league_leaders_for_stats", json!({})),
        weather(),
        hotels(),
        finish("It is 21 C in Paris. Hotel Lutetia is near the Eiffel Tower."),
    ]);
    let ep = solve(&h);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    let prompts = router_prompts(&h);
    assert!(
        prompts[1].contains("tool stats's APIs take no parameters: call them with {}"),
        "{}",
        prompts[1]
    );
    // Not a lesson from a call that never reached a parameter check.
    assert!(!prompts[0].contains("Lessons from failures"));
    assert_eq!(calls(&h), vec!["league_leaders", "weather", "hotels"]);
}

#[test]
fn a_fact_the_result_does_not_hold_is_not_kept() {
    let h = harness(vec![
        call("team_totals_for_stats", json!({})),
        weather(),
        hotels(),
        finish(
            "Barcelona has 42 titles. It is 21 C in Paris. Hotel Lutetia is near the Eiffel Tower.",
        ),
    ]);
    let ep = solve(&h);
    let state = ep.steps[0].state.clone().unwrap_or_default();
    let facts: Vec<String> = state["facts"]
        .as_array()
        .map(|a| a.iter().map(|f| f["text"].to_string()).collect())
        .unwrap_or_default();
    assert_eq!(facts, vec!["\"Ajax leads\""], "{state}");
    assert!(
        ep.steps[0]
            .notes
            .iter()
            .any(|n| n.contains("1 fact(s) the result does not hold"))
    );
    // And the answer does not repeat it.
    assert_eq!(
        ep.answer,
        "It is 21 C in Paris. Hotel Lutetia is near the Eiffel Tower."
    );
}

#[test]
fn parts_named_for_invented_facts_stay_open() {
    let h = harness(vec![
        call("league_leaders_for_stats", json!({})),
        finish("It is 35 C in Paris."),
        finish("It is 35 C in Paris."),
    ]);
    let ep = solve(&h);
    // The state manager's facts were dropped, so its part numbers were not believed: the first Finish
    // was nudged and the parts are reported as not obtained, without the invented temperature.
    assert!(ep.steps[1].notes.iter().any(|n| n.contains("nudged")));
    let parts = checklist(&ep);
    assert_eq!(parts[0]["status"], "failed", "{parts}");
    assert_eq!(parts[1]["status"], "failed", "{parts}");
    assert!(
        ep.answer
            .starts_with("Not obtained: Tell me the weather in Paris"),
        "{}",
        ep.answer
    );
    assert!(!ep.answer.contains("35"), "{}", ep.answer);
}

/// Every `*_sum2act.json` answer file under `dir`, recursively.
fn answer_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.filter_map(Result::ok).map(|e| e.path()) {
        if path.is_dir() {
            answer_files(&path, out);
        } else if path.to_string_lossy().ends_with("_sum2act.json") {
            out.push(path);
        }
    }
}

/// The recorded checklists of Sum2Act runs keep every ask of their request and hold no framing: the
/// shipped reference runs, and any run folders in `SUM2ACT_CHECKLIST_RUNS` (`:`-separated; the
/// strong-model reference runs are checked this way).
#[test]
fn recorded_checklists_keep_every_ask() {
    let mut dirs = vec![crate::toolbench::source_root().join("eval/reference")];
    if let Ok(extra) = std::env::var("SUM2ACT_CHECKLIST_RUNS") {
        dirs.extend(extra.split(':').filter(|d| !d.is_empty()).map(Into::into));
    }
    let mut files = Vec::new();
    for d in &dirs {
        answer_files(d, &mut files);
    }
    let mut checked = 0;
    let mut wrong = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let Some(ep) = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| Episode::from_json(&v))
        else {
            continue;
        };
        let parts = recorded_checklist(&ep);
        if parts.is_empty() {
            continue;
        }
        checked += 1;
        let missing = missing_words(&ep.query, &parts);
        let framing: Vec<&String> = parts.iter().filter(|p| is_framing(p)).collect();
        if !missing.is_empty() || !framing.is_empty() {
            wrong.push(format!(
                "{}: dropped {missing:?}, framing {framing:?}",
                f.display()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{checked} checklists checked:\n{}",
        wrong.join("\n")
    );
}

/// Sum2Act with `--calls-at-once`, `--fold-chars 1200` and `--tool-docs schemas` (`sum2act@lean`).
fn lean() -> AgentOptions {
    AgentOptions {
        calls_at_once: true,
        fold_chars: crate::agent::FoldChars(1_200),
        tool_docs: crate::agent::ToolDocs::Schemas,
        ..AgentOptions::steps()
    }
}

/// One router reply calling several tools: each runs, one per step, before the router is asked again.
fn calls_at_once(calls: &[Completion]) -> Completion {
    Completion {
        tool_calls: calls.iter().flat_map(|c| c.tool_calls.clone()).collect(),
        ..calls[0].clone()
    }
}

#[test]
fn independent_parts_are_called_at_once_and_small_results_read_without_a_state_manager() {
    let answer = "It is 21 C in Paris. Hotel Lutetia is near the Eiffel Tower.";
    let h = harness_with(
        vec![
            calls_at_once(&[weather(), hotels(), finish("too early")]),
            finish(answer),
        ],
        lean(),
    );
    let ep = solve(&h);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.answer, answer);
    assert_eq!(calls(&h), vec!["weather", "hotels"]);
    // Two router calls for two tool calls, and no state-manager call: both results were small JSON.
    let prompts = router_prompts(&h);
    assert_eq!(prompts.len(), 2);
    assert!(prompts_for(&h.llm, "state").is_empty());
    // The router read the results as the APIs returned them.
    assert!(
        prompts[1].contains(r#""temperature_c":21"#),
        "{}",
        prompts[1]
    );
    assert!(prompts[1].contains("Hotel Lutetia"), "{}", prompts[1]);
    // The Finish written before the results was not run; the step says so.
    assert!(
        ep.steps[0].notes.iter().any(|n| n.contains("not run")),
        "{:?}",
        ep.steps[0].notes
    );
    assert!(ep.steps[1].notes.iter().any(|n| n.contains("further call")));
    // Both parts answered, neither reported as not obtained.
    let parts = checklist(&ep);
    assert_eq!(parts[0]["status"], "answered", "{parts}");
    assert_eq!(parts[1]["status"], "answered", "{parts}");
    assert!(!ep.answer.contains("Not obtained"));
}

#[test]
fn a_part_a_folded_result_may_answer_is_not_nudged_nor_reported_missing() {
    // The hotels result shares no word with its part ("find hotels near the Eiffel Tower" against a
    // `lodging` call): only the router, who read it, knows it answers the part.
    let h = harness_with(
        vec![
            calls_at_once(&[weather(), call("lodging_for_booking", json!({}))]),
            finish("It is 21 C in Paris. Hotel Lutetia is near the Eiffel Tower."),
        ],
        lean(),
    );
    let ep = solve(&h);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(router_prompts(&h).len(), 2, "the Finish was not sent back");
    assert!(!ep.answer.contains("Not obtained"), "{}", ep.answer);
}
