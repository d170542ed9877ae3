//! Sum2Act in rounds, driven by a scripted model: one model call per round, results read once, facts
//! kept with their call, repeats not run, the answer never refused, the budget's last call answers.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::agent::sample_harness::{
    Turns, context_with, failed_reply, ok_reply, prompts_for, run, weather_function,
};
use crate::agent::sum2act::Sum2Act;
use crate::agent::*;
use crate::llm::scripted::{ScriptedLlm, reply};
use crate::toolbench::Task;
use crate::tools::{ToolConfig, ToolError, ToolReply, ToolRequest, ToolSource};

const QUERY: &str = "What is the temperature in Paris, and in Rome?";

#[derive(Default)]
struct Source {
    calls: Mutex<Vec<String>>,
}

#[async_trait]
impl ToolSource for Source {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        // The arguments as a string of JSON or an object.
        let input = match &request.tool_input {
            Value::String(s) => serde_json::from_str(s).unwrap_or_default(),
            v => v.clone(),
        };
        let city = input["city"].as_str().unwrap_or_default().to_string();
        if let Ok(mut c) = self.calls.lock() {
            c.push(format!("{}:{city}", request.api_name));
        }
        Ok(match (request.api_name.as_str(), city.as_str()) {
            ("get_weather", "Paris") => ok_reply(json!({"city": "Paris", "temp_c": 21})),
            ("get_weather", "Rome") => ok_reply(json!({"city": "Rome", "temp_c": 26})),
            _ => failed_reply(),
        })
    }

    fn describe(&self) -> String {
        "rounds fake".into()
    }
}

struct Harness {
    llm: Arc<ScriptedLlm>,
    source: Arc<Source>,
    ctx: SolveContext,
}

fn harness(turns: Vec<Value>, options: AgentOptions) -> Harness {
    let turns = Turns::new(turns.iter().map(|t| reply(&t.to_string())).collect());
    let llm = Arc::new(ScriptedLlm::new(move |_, _| turns.next()));
    let source = Arc::new(Source::default());
    let ctx = context_with(
        llm.clone(),
        task().functions,
        source.clone(),
        ToolConfig::default(),
        AgentOptions {
            rounds: true,
            ..options
        },
    );
    Harness { llm, source, ctx }
}

fn task() -> Task {
    Task {
        subset: "G1_instruction".into(),
        query_id: 3,
        query: QUERY.into(),
        functions: vec![
            weather_function("get_weather"),
            weather_function("broken_api"),
        ],
        relevant: vec![],
    }
}

fn solve(h: &Harness) -> Episode {
    run(Sum2Act::new(&h.ctx.options).solve(&task(), &h.ctx)).unwrap_or_else(|e| panic!("{e}"))
}

fn weather(part: u32, city: &str) -> Value {
    json!({"part": part, "tool": "get_weather_for_weather", "args": {"city": city}})
}

fn opening(calls: Vec<Value>) -> Value {
    json!({"parts": ["the temperature in Paris", "the temperature in Rome"], "calls": calls})
}

/// Asserts that `prompt` holds `text`, showing the prompt when it does not.
fn shows(prompt: &str, text: &str) {
    assert!(prompt.contains(text), "{text:?} not in:\n{prompt}");
}

fn calls(h: &Harness) -> Vec<String> {
    h.source.calls.lock().map(|c| c.clone()).unwrap_or_default()
}

#[test]
fn two_parts_take_two_model_calls_and_the_round_reads_only_its_results() {
    let answer = "Paris: 21 C. Rome: 26 C.";
    let h = harness(
        vec![
            opening(vec![weather(1, "Paris"), weather(2, "Rome")]),
            json!({"facts": [{"part": 1, "call": 1, "fact": "Paris is 21 C"}, {"part": 2, "call": 2, "fact": "Rome is 26 C"}], "answer": answer}),
        ],
        AgentOptions::default(),
    );
    let ep = solve(&h);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.answer, answer);
    assert_eq!(calls(&h), vec!["get_weather:Paris", "get_weather:Rome"]);
    assert_eq!(ep.counters.llm_calls, 2);
    let prompts = prompts_for(&h.llm, "router");
    shows(&prompts[1], "[call 1] get_weather_for_weather");
    shows(&prompts[1], r#""temp_c": 26"#);
    assert!(prompts[1].contains("1. the temperature in Paris — open"));
    // The facts are kept with the call that returned them, and answer their parts.
    let request = &ep.steps.last().and_then(|s| s.state.clone()).unwrap();
    assert_eq!(request["facts"][1]["call"], 2, "{request}");
    assert_eq!(request["facts"][1]["part"], 1, "{request}");
}

#[test]
fn a_failed_call_is_listed_a_repeat_is_not_run_and_facts_of_no_call_are_dropped() {
    let h = harness(
        vec![
            opening(vec![
                weather(1, "Paris"),
                json!({"part": 2, "tool": "broken_api_for_weather", "args": {"city": "Rome"}}),
            ]),
            json!({"facts": [{"part": 1, "call": 1, "fact": "Paris is 21 C"}, {"part": 2, "call": 9, "fact": "Rome is 30 C"}], "calls": [weather(1, "Paris"), weather(2, "Rome")]}),
            json!({"facts": [{"part": 2, "call": 3, "fact": "Rome is 26 C"}], "answer": "Paris 21 C, Rome 26 C."}),
        ],
        AgentOptions::default(),
    );
    let ep = solve(&h);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    let made = calls(&h);
    assert_eq!(
        made,
        vec!["get_weather:Paris", "broken_api:Rome", "get_weather:Rome"]
    );
    let prompts = prompts_for(&h.llm, "router");
    shows(&prompts[2], "- call 2: broken_api_for_weather");
    shows(&prompts[2], "[not run] get_weather_for_weather");
    // "Rome is 30 C" named a call that was never made: not kept, so part 2 stayed open.
    shows(&prompts[2], "2. the temperature in Rome — open");
    assert!(!prompts[2].contains("30 C"));
}

#[test]
fn with_the_steps_spent_the_last_call_answers_and_is_never_refused() {
    let h = harness(
        vec![
            opening(vec![weather(1, "Paris"), weather(2, "Rome")]),
            json!({"facts": [{"part": 1, "call": 1, "fact": "Paris is 21 C"}], "not_found": [{"part": 2, "why": "no call was left"}], "answer": "Paris is 21 C; Rome's temperature was not found."}),
        ],
        AgentOptions {
            budget: Budget {
                max_steps: 2,
                ..Budget::default()
            },
            ..AgentOptions::default()
        },
    );
    let ep = solve(&h);
    assert_eq!(
        calls(&h),
        vec!["get_weather:Paris"],
        "one call, then Finish"
    );
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    let prompts = prompts_for(&h.llm, "router");
    shows(&prompts[1], "No more calls can be made");
}

#[test]
fn an_unreadable_reply_is_asked_again_once_then_the_episode_gives_up() {
    let h = harness(
        vec![
            json!("not an object"),
            opening(vec![]),
            json!({"facts": []}),
            json!({"facts": []}),
        ],
        AgentOptions::default(),
    );
    let ep = solve(&h);
    assert_eq!(ep.finish, FinishKind::GiveUp);
    let prompts = prompts_for(&h.llm, "router");
    shows(&prompts[1], "could not be read");
    // No calls proposed and no answer: the next call had to answer, and wrote none.
    assert!(calls(&h).is_empty());
    assert!(prompts[prompts.len() - 1].contains("No more calls can be made"));
}
