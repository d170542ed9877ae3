//! Issue 35, one scripted-model test per fault readers found with a strong model: Sum2Act must keep
//! what the tools returned and what the user asked. (1) one reply format per request; (2) the
//! checklist is the request; (3) a part is answered only by a value and fails only for good;
//! (4) facts keep their values, large ones by reference; (5) the state manager reads past ToolBench's
//! 1,024-character cut; (6) a retry is not a repeat, the nudge keeps the first answer, the answer has
//! room.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::agent::sample_harness::{
    Turns, assert_one_reply_format, context_with, failed_reply, finish_saying, ok_reply,
    prompt_text, prompts_for, raw_call, recorded_checklist, run,
};
use crate::agent::sum2act::Sum2Act;
use crate::agent::*;
use crate::llm::scripted::{ScriptedLlm, reply};
use crate::llm::{Completion, CompletionRequest, ToolChoice};
use crate::toolbench::fixture::{api_doc, string_param};
use crate::toolbench::request_asks::{is_framing, missing_words};
use crate::toolbench::{ApiDoc, Function, Task};
use crate::tools::{ToolConfig, ToolError, ToolReply, ToolRequest, ToolSource};

/// Answers each API with its scripted replies in order (the last one again after that); an API with
/// no script is down. Counts the calls.
#[derive(Default)]
pub(super) struct Source {
    replies: HashMap<&'static str, Vec<Result<Value, &'static str>>>,
    calls: Mutex<Vec<String>>,
}

impl Source {
    pub(super) fn with(
        mut self,
        api: &'static str,
        replies: Vec<Result<Value, &'static str>>,
    ) -> Self {
        self.replies.insert(api, replies);
        self
    }

    pub(super) fn calls(&self) -> Vec<String> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl ToolSource for Source {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        let n = match self.calls.lock() {
            Ok(mut c) => {
                c.push(request.api_name.clone());
                c.iter().filter(|a| **a == request.api_name).count() - 1
            }
            Err(_) => 0,
        };
        let Some(script) = self.replies.get(request.api_name.as_str()) else {
            return Ok(failed_reply());
        };
        match script.get(n).or(script.last()) {
            Some(Ok(v)) => Ok(ok_reply(v.clone())),
            Some(Err("timeout")) => Err(ToolError::Timeout(std::time::Duration::from_secs(15))),
            _ => Ok(failed_reply()),
        }
    }

    fn describe(&self) -> String {
        "issue 35 fake".into()
    }
}

fn function(tool: &str, api: &str, description: &str) -> Function {
    let doc = ApiDoc {
        api_description: Some(description.into()),
        ..api_doc(
            "Movies",
            tool,
            api,
            vec![string_param("q", "what to look up", json!(""))],
        )
    };
    Function::from_doc(&doc, tool)
}

pub(super) fn task(query: &str) -> Task {
    Task {
        subset: "G2_instruction".into(),
        query_id: 35,
        query: query.into(),
        functions: vec![
            function("imdb", "details", "details, rating and poster of a movie"),
            function("imdb", "comedies", "comedies of a year"),
            function("meteo", "weather", "weather of a city"),
        ],
        relevant: vec![],
    }
}

pub(super) fn call(name: &str, q: &str) -> Completion {
    raw_call("thinking", name, &json!({ "q": q }).to_string())
}

pub(super) fn finish(answer: &str) -> Completion {
    finish_saying("thinking", answer)
}

/// The state manager's reply.
pub(super) fn update(facts: &[&str], parts: &[u32]) -> Completion {
    reply(
        &json!({"success": true, "new_facts": facts, "failure_reason": "", "wrong_facts": [], "parts": parts})
            .to_string(),
    )
}

pub(super) type StateScript = dyn Fn(&str) -> Completion + Send + Sync;

pub(super) struct Harness {
    pub(super) llm: Arc<ScriptedLlm>,
    pub(super) source: Arc<Source>,
    pub(super) ctx: SolveContext,
    pub(super) task: Task,
}

/// Router turns from `router` (the answer call's too), state-manager replies from `state` (given its
/// prompt); the model splits the request into nothing (its asks are the checklist).
pub(super) fn harness(
    query: &str,
    router: Vec<Completion>,
    state: Box<StateScript>,
    source: Source,
    options: AgentOptions,
) -> Harness {
    harness_with_split(query, &[], router, state, source, options)
}

/// `harness` with the model's split of the request.
pub(super) fn harness_with_split(
    query: &str,
    split: &[&str],
    router: Vec<Completion>,
    state: Box<StateScript>,
    source: Source,
    options: AgentOptions,
) -> Harness {
    let router = Turns::new(router);
    let split = json!({ "subtasks": split }).to_string();
    let llm = Arc::new(ScriptedLlm::new(move |req: &CompletionRequest, _| {
        let prompt = prompt_text(req);
        match req.purpose.as_str() {
            "state" => Ok(state(&prompt)),
            "decompose" => Ok(reply(&split)),
            _ => router.next(),
        }
    }));
    let source = Arc::new(source);
    let task = task(query);
    // The caller makes no retries of its own: what the agent does after a timeout is under test.
    let config = ToolConfig {
        retries: 0,
        ..ToolConfig::default()
    };
    let ctx = context_with(
        llm.clone(),
        task.functions.clone(),
        source.clone(),
        config,
        options,
    );
    Harness {
        llm,
        source,
        ctx,
        task,
    }
}

pub(super) fn solve(h: &Harness) -> Episode {
    run(Sum2Act::new(&h.ctx.options).solve(&h.task, &h.ctx)).unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn parts(ep: &Episode) -> Value {
    ep.steps
        .last()
        .and_then(|s| s.state.clone())
        .map(|s| s["checklist"]["parts"].clone())
        .unwrap_or_default()
}

/// The reference the state manager's prompt gives the value at `path`.
fn reference(prompt: &str, path: &str) -> String {
    prompt
        .lines()
        .find(|l| l.contains(&format!("= {path} (")))
        .and_then(|l| l.trim_start_matches("- ").split(" = ").next())
        .unwrap_or("[value ?]")
        .to_string()
}

const MOVIE: &str = "Give me the rating, the poster image and the cast of the movie Inception.";

/// A details reply past ToolBench's 1,024-character cut: the rating after a long plot, a poster as
/// base64 data, a cast of 80 names.
fn inception() -> Value {
    let plot = "A thief who steals corporate secrets through dream-sharing technology. ".repeat(20);
    let poster = format!(
        "data:image/png;base64,{}",
        "iVBORw0KGgoAAAANSUhEUg".repeat(30)
    );
    let cast: Vec<String> = (1..=80).map(|i| format!("Actor Number{i}")).collect();
    json!({"title": "Inception", "plot": plot, "rating": "8.8", "poster": poster, "cast": cast})
}

/// A fact listing the first `n` actors of the cast.
fn cast_fact(n: usize) -> String {
    let names: Vec<String> = (1..=n).map(|i| format!("Actor Number{i}")).collect();
    format!("The cast of Inception: {}", names.join(", "))
}

#[test]
fn fault_1_one_reply_format_per_request() {
    let h = harness(
        MOVIE,
        vec![
            call("details_for_imdb", "Inception"),
            finish("Inception is rated 8.8."),
        ],
        Box::new(|_| update(&["Inception is rated 8.8"], &[1])),
        Source::default().with("details", vec![Ok(json!({"rating": "8.8"}))]),
        AgentOptions::steps(),
    );
    solve(&h);
    let requests = h.llm.requests();
    assert_one_reply_format(&requests);
    let router = requests.iter().find(|r| r.purpose == "router");
    let Some(router) = router else {
        panic!("no router call")
    };
    // Function calling is asked for, and only that.
    assert_eq!(router.tool_choice, ToolChoice::Required);
    assert!(
        !prompt_text(router).contains("JSON"),
        "{}",
        prompt_text(router)
    );
}

#[test]
fn fault_2_the_checklist_is_the_request_and_a_split_never_drops_an_ask() {
    let query = "I am a movie critic. Can you get the details of the movies tt0111161 and tt0068646? Also, tell me the top-ranked IMDb movie.";
    let give_up = raw_call(
        "",
        "Finish",
        &json!({"return_type": "give_up_and_restart"}).to_string(),
    );
    let llm = Arc::new(ScriptedLlm::new(move |req: &CompletionRequest, _| {
        Ok(match req.purpose.as_str() {
            // The split keeps the framing and one movie, and drops the top-ranked movie.
            "decompose" => reply(
                r#"{"subtasks": ["I am a movie critic", "the details of the movie tt0111161"]}"#,
            ),
            _ => give_up.clone(),
        })
    }));
    let t = task(query);
    let ctx = context_with(
        llm,
        t.functions.clone(),
        Arc::new(Source::default()),
        ToolConfig::default(),
        AgentOptions::steps(),
    );
    let ep = run(Sum2Act::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
    let checklist = recorded_checklist(&ep);
    assert_eq!(
        checklist,
        // The kept part (one movie) gives way to the whole ask it shortened: no duplicate part.
        vec![
            "Can you get the details of the movies tt0111161 and tt0068646?",
            "tell me the top-ranked IMDb movie",
        ]
    );
    assert!(missing_words(query, &checklist).is_empty());
    assert!(!checklist.iter().any(|p| is_framing(p)));
}

#[test]
fn fault_3_a_part_is_answered_only_by_a_value_and_not_failed_by_one_failure() {
    let query = "Find the comedies of 2010. Also, tell me the weather in Paris.";
    let h = harness(
        query,
        vec![
            call("weather_for_meteo", "Paris"),
            call("comedies_for_imdb", "2010 comedy"),
            finish("It is 21 C in Paris."),
            call("comedies_for_imdb", "2010"),
            finish("It is 21 C in Paris. Comedies of 2010: Easy A, Date Night."),
        ],
        Box::new(|prompt: &str| {
            if prompt.contains("weather_for_meteo") {
                // Named as no part: the code attributes it, as a partial answer.
                update(&["Paris is 21 C"], &[])
            } else if prompt.contains(r#"arguments {"q":"2010 comedy"}"#) {
                // A failed lookup written as a fact, and claimed to answer the part.
                update(
                    &["The comedies search returned no results for 2010 comedy"],
                    &[1],
                )
            } else {
                update(&["Comedies of 2010: Easy A, Date Night"], &[1])
            }
        }),
        Source::default()
            .with("weather", vec![Ok(json!({"city": "Paris", "temp_c": 21}))])
            .with(
                "comedies",
                vec![
                    Ok(json!({"results": []})),
                    Ok(json!({"results": ["Easy A", "Date Night"]})),
                ],
            ),
        AgentOptions {
            fold_chars: crate::agent::FoldChars(0),
            ..AgentOptions::steps()
        },
    );
    let ep = solve(&h);
    let router = prompts_for(&h.llm, "router");
    assert!(
        router[1].contains("2. [partly answered] tell me the weather in Paris"),
        "{}",
        router[1]
    );
    // "No results" answers nothing: the Finish was sent back naming the comedies part only.
    assert!(
        router[2].contains("1. [open] Find the comedies of 2010"),
        "{}",
        router[2]
    );
    assert!(
        ep.steps[2]
            .observation
            .error
            .contains("still open: 1. Find the comedies of 2010"),
        "{}",
        ep.steps[2].observation.error
    );
    assert!(!ep.steps[2].observation.error.contains("weather"));
    let parts = parts(&ep);
    assert_eq!(parts[0]["status"], "answered", "{parts}");
    assert_eq!(
        parts[0]["facts"],
        json!(["Comedies of 2010: Easy A, Date Night"]),
        "{parts}"
    );
    assert_eq!(parts[1]["status"], "answered", "{parts}");
}

#[test]
fn fault_3_a_timeout_is_retried_and_a_part_fails_only_when_its_tools_are_down() {
    let query = "Find the comedies of 2010. Also, tell me the weather in Paris.";
    // The weather times out once; the comedies API is down for good (and is the only tool for it).
    let h = harness(
        query,
        vec![
            call("weather_for_meteo", "Paris"),
            call("weather_for_meteo", "Paris"),
            call("comedies_for_imdb", "2010"),
            finish("It is 21 C in Paris."),
        ],
        Box::new(|_| update(&["Paris is 21 C"], &[2])),
        Source::default().with(
            "weather",
            vec![Err("timeout"), Ok(json!({"city": "Paris", "temp_c": 21}))],
        ),
        AgentOptions::steps(),
    );
    let ep = solve(&h);
    // The retry ran (it is not a repeat) and answered.
    assert_eq!(h.source.calls(), vec!["weather", "weather", "comedies"]);
    assert!(
        !ep.steps[1].notes.iter().any(|n| n.contains("not executed")),
        "{:?}",
        ep.steps[1].notes
    );
    let after_timeout = ep.steps[0].state.clone().unwrap_or_default();
    assert_eq!(
        after_timeout["checklist"]["parts"][1]["status"], "open",
        "{after_timeout}"
    );
    // The comedies part failed for good at once, so the Finish was not sent back.
    assert_eq!(ep.steps.len(), 4);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert!(
        ep.answer.contains("Not obtained: Find the comedies of 2010 (every offered tool for it failed (last: comedies_for_imdb failed: API not working error...))"),
        "{}",
        ep.answer
    );
}

#[test]
fn faults_4_and_5_facts_keep_whole_values_read_past_the_toolbench_cut() {
    let cast_fact = cast_fact(60);
    let fact = cast_fact.clone();
    let h = harness(
        MOVIE,
        vec![
            call("details_for_imdb", "Inception"),
            // The router writes the poster's reference; the answer gets the image itself.
            finish("Inception is rated 8.8. Poster: [value 1.1]"),
        ],
        Box::new(move |prompt: &str| {
            let poster = reference(prompt, "response.poster");
            // The rating stands after 1,400 characters of plot; the poster is not copied in.
            assert!(prompt.contains("\"rating\": \"8.8\""), "{prompt}");
            assert!(
                !prompt.contains("iVBORw0KGgoAAAANSUhEUgiVBORw0KGgo"),
                "{prompt}"
            );
            let poster_fact = format!("The poster of Inception: {poster}");
            update(&["Inception is rated 8.8", &poster_fact, &fact], &[1])
        }),
        Source::default().with("details", vec![Ok(inception())]),
        AgentOptions::steps(),
    );
    let ep = solve(&h);
    let state = ep.steps[0].state.clone().unwrap_or_default();
    // The 600-character list is kept whole, not cut at 300.
    assert_eq!(state["facts"][2]["text"], cast_fact.as_str(), "{state}");
    // The recorded observation is what the state manager read: past 1,024 characters.
    assert!(ep.steps[0].observation.text.contains("\"rating\": \"8.8\""));
    // The whole poster is in the answer.
    let poster = inception()["poster"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_default();
    assert!(ep.answer.contains(&poster), "{}", ep.answer);
    assert!(
        ep.answer.starts_with("Inception is rated 8.8."),
        "{}",
        ep.answer
    );
    // The state manager had room to write them.
    for r in h.llm.requests().iter().filter(|r| r.purpose == "state") {
        assert_eq!(r.max_tokens, DEFAULT_ANSWER_MAX_TOKENS);
    }
}

#[test]
fn fault_4_a_shortened_view_has_the_answer_written_from_the_whole_facts() {
    let long = cast_fact(40);
    let fact = long.clone();
    let whole = format!("Inception is rated 8.8. {long}.");
    let answer = whole.clone();
    let router = Turns::new(vec![
        call("details_for_imdb", "Inception"),
        finish(
            "Inception is rated 8.8. The cast is Actor Number1, Actor Number2 (list truncated).",
        ),
    ]);
    let llm = Arc::new(ScriptedLlm::new(
        move |req: &CompletionRequest, _| match req.purpose.as_str() {
            "state" => Ok(update(&["Inception is rated 8.8", &fact], &[1])),
            "answer" => Ok(finish_saying("", &answer)),
            _ => router.next(),
        },
    ));
    let t = task(MOVIE);
    let options = AgentOptions {
        state_token_budget: 80,
        ..AgentOptions::steps()
    };
    let source = Source::default().with("details", vec![Ok(inception())]);
    let ctx = context_with(
        llm.clone(),
        t.functions.clone(),
        Arc::new(source),
        ToolConfig::default(),
        options,
    );
    let ep = run(Sum2Act::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
    // The router saw the cast clipped; the answer call saw it whole and wrote the answer.
    let router = prompts_for(&llm, "router");
    assert!(!router[1].contains("Actor Number40"), "{}", router[1]);
    let answer_call = prompts_for(&llm, "answer");
    assert!(answer_call[0].contains(&long), "{}", answer_call[0]);
    assert!(
        answer_call[0].contains("(list truncated)"),
        "the router's draft is shown"
    );
    assert_eq!(ep.answer, whole);
    assert_one_reply_format(&llm.requests());
}

#[test]
fn fault_5_react_keeps_the_toolbench_cut_under_toolbench_settings() {
    let h = harness(
        MOVIE,
        vec![call("details_for_imdb", "Inception"), finish("8.8")],
        Box::new(|_| update(&[], &[])),
        Source::default().with("details", vec![Ok(inception())]),
        AgentOptions {
            budget: crate::agent::Budget::preset(crate::agent::Preset::Toolbench),
            ..AgentOptions::steps()
        },
    );
    run(react::React::new(&h.ctx.options).solve(&h.task, &h.ctx)).unwrap_or_else(|e| panic!("{e}"));
    let second = &h.llm.requests()[1];
    let tool = second
        .messages
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    assert_eq!(tool.chars().count(), 1024 + 3, "{tool}");
    assert!(!tool.contains("8.8"));
}

#[test]
fn fault_6_a_retry_is_no_repeat_for_the_baselines_and_the_nudge_keeps_the_first_answer() {
    // ReAct: the timed-out call is made again.
    let h = harness(
        "What is the weather in Paris?",
        vec![
            call("weather_for_meteo", "Paris"),
            call("weather_for_meteo", "Paris"),
            finish("It is 21 C in Paris."),
        ],
        Box::new(|_| update(&[], &[])),
        Source::default().with("weather", vec![Err("timeout"), Ok(json!({"temp_c": 21}))]),
        AgentOptions::steps(),
    );
    let ep = run(react::React::new(&h.ctx.options).solve(&h.task, &h.ctx))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h.source.calls(), vec!["weather", "weather"]);
    assert_eq!(ep.answer, "It is 21 C in Paris.");
    // Sum2Act: the second Finish (after the nudge) forgot the rating; it is kept from the first.
    let query = "Give me the rating of Inception. Also, tell me the weather in Paris.";
    let h = harness(
        query,
        vec![
            call("details_for_imdb", "Inception"),
            finish("Inception is rated 8.8 on IMDb."),
            call("weather_for_meteo", "Paris"),
            finish("It is 21 C in Paris."),
        ],
        Box::new(|prompt: &str| {
            if prompt.contains("details_for_imdb") {
                update(&["Inception is rated 8.8"], &[1])
            } else {
                update(&["Paris is 21 C"], &[2])
            }
        }),
        Source::default()
            .with("details", vec![Ok(json!({"rating": "8.8"}))])
            .with("weather", vec![Ok(json!({"temp_c": 21}))]),
        AgentOptions::steps(),
    );
    let ep = solve(&h);
    assert_eq!(
        ep.answer,
        "Inception is rated 8.8 on IMDb.\nIt is 21 C in Paris."
    );
    assert!(ep.steps[1].notes.iter().any(|n| n.contains("nudged")));
}
