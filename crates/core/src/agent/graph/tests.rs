//! The graph method on the shipped sample with a scripted model: decomposition, relevance-scored
//! search, ranking, execution with placeholders from graph edges, parallel subtasks, the state
//! memory and fallbacks.

use std::sync::Arc;

use serde_json::{Value, json};

use super::memory::Memory;
use super::*;
use crate::agent::plan::execute::Prepare;
use crate::agent::sample_harness::{
    SampleSource, assert_one_reply_format, context, finish_saying, prompt_text, raw_call, run,
    schema, task, tools_called,
};
use crate::agent::{FinishKind, Strategy};
use crate::llm::scripted::{ScriptedLlm, reply};
use crate::llm::{Completion, CompletionRequest, LlmError};
use crate::tools::graph_catalogue::CatalogueGraph;

/// Relevance the scripted model gives: 5 for the tool that answers the subtask, 3 for the one that
/// finds what it needs, 1 otherwise.
fn relevance(subtask: &str, tool: &str) -> u32 {
    let table: &[(&str, &str, u32)] = &[
        ("cast", "movie_cast", 5),
        ("cast", "search_movies", 3),
        ("roster", "team_roster", 5),
        ("convert", "convert_currency", 5),
        ("stream", "where_to_watch", 5),
        ("details", "movie_details", 5),
        ("details", "search_movies", 3),
    ];
    table
        .iter()
        .find(|(s, t, _)| subtask.contains(s) && tool.starts_with(t))
        .map_or(1, |(_, _, n)| *n)
}

fn scores(req: &CompletionRequest) -> Value {
    let text = prompt_text(req);
    let subtask = text
        .lines()
        .find_map(|l| l.strip_prefix("Subtask: "))
        .unwrap_or("")
        .to_lowercase();
    let names = schema(req)["properties"]["scores"]["items"]["properties"]["tool"]["enum"].clone();
    let list: Vec<Value> = names
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|n| json!({"tool": n, "score": relevance(&subtask, n)}))
        .collect();
    json!({"scores": list})
}

/// A scripted model: the given decomposition, table relevance, the first solution ranked first.
fn model(subtasks: Value, args: Option<Value>) -> Arc<ScriptedLlm> {
    model_answering(subtasks, args, || Ok(finish_saying("", "done")))
}

/// `model` with the answer call's reply given.
fn model_answering(
    subtasks: Value,
    args: Option<Value>,
    answer: impl Fn() -> Result<Completion, LlmError> + Send + Sync + 'static,
) -> Arc<ScriptedLlm> {
    Arc::new(ScriptedLlm::new(move |req: &CompletionRequest, _| {
        let v = match req.purpose.as_str() {
            "decompose" => subtasks.clone(),
            "score" => scores(req),
            "rank" => json!({"order": [1]}),
            "arguments" => args.clone().unwrap_or(json!({})),
            "respond" => return answer(),
            other => return Err(LlmError::InvalidResponse(format!("unexpected {other}"))),
        };
        Ok(reply(&v.to_string()))
    }))
}

fn options(strategy: Strategy, parallel: usize) -> AgentOptions {
    AgentOptions {
        strategy,
        parallel,
        ..AgentOptions::default()
    }
}

fn matrix_cast() -> Value {
    json!({"subtasks": [{"task": "Find the cast of The Matrix", "inputs": [{"name": "title", "value": "The Matrix"}], "outputs": ["cast"]}]})
}

#[test]
fn graph_finds_and_runs_a_two_step_path_with_every_strategy() {
    // G1_category 203: the cast needs a movie id, which only the search provides.
    let t = task("G1_category", 203);
    for strategy in [
        Strategy::Greedy,
        Strategy::Beam,
        Strategy::Adaptive,
        Strategy::Exhaustive,
    ] {
        let llm = model(matrix_cast(), None);
        let source = Arc::new(SampleSource::new(0, &[]));
        let ctx = context(llm.clone(), &t, source.clone(), options(strategy, 4));
        let ep =
            run(GraphSearch::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
        let name = strategy.as_str();
        assert_eq!(ep.finish, FinishKind::GiveAnswer, "{name}: {}", ep.details);
        assert_eq!(
            tools_called(&ep),
            vec![
                "search_movies_for_cinebase",
                "movie_cast_for_cinebase",
                "Finish"
            ],
            "{name}"
        );
        // The edge search.results[0].movie_id -> cast(movie_id) carried the recorded id.
        assert_eq!(
            ep.steps[1].arguments, r#"{"movie_id":"cb0133093"}"#,
            "{name}"
        );
        assert_eq!(ep.details["strategy"], name);
        let best = &ep.details["searches"][0]["solutions"][0]["tools"];
        assert_eq!(
            best,
            &json!(["search_movies_for_cinebase", "movie_cast_for_cinebase"]),
            "{name}"
        );
        let file = ep.to_json();
        assert_eq!(file["answer_generation"]["valid_data"], true);
        let conv = crate::toolbench::answer::convert(&file, "graph");
        let last =
            crate::toolbench::answer::converted_final_step(&conv["answer"]).unwrap_or(Value::Null);
        assert_eq!(last["name"], "Finish");
        assert_one_reply_format(&llm.requests());
    }
}

#[test]
fn exhaustive_scores_more_than_greedy_and_ranks_several_solutions() {
    let t = task("G1_category", 203);
    let calls = |strategy| {
        let llm = model(matrix_cast(), None);
        let ctx = context(
            llm.clone(),
            &t,
            Arc::new(SampleSource::new(0, &[])),
            options(strategy, 4),
        );
        let ep =
            run(GraphSearch::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
        let ranked = llm.requests().iter().any(|r| r.purpose == "rank");
        (
            ep.details["searches"][0]["expansions"]
                .as_u64()
                .unwrap_or(0),
            ranked,
            ep,
        )
    };
    let (greedy, greedy_ranked, _) = calls(Strategy::Greedy);
    let (exhaustive, exhaustive_ranked, ep) = calls(Strategy::Exhaustive);
    assert!(exhaustive > greedy, "{exhaustive} vs {greedy}");
    assert!(!greedy_ranked);
    assert!(exhaustive_ranked);
    assert!(
        ep.details["searches"][0]["solutions"]
            .as_array()
            .is_some_and(|s| s.len() > 1)
    );
}

#[test]
fn independent_subtasks_run_in_parallel() {
    // G3_instruction 603: roster and currency conversion.
    let t = task("G3_instruction", 603);
    let subtasks = json!({"subtasks": [
        {"task": "Show the Los Angeles Lakers roster", "inputs": [{"name": "team", "value": "Los Angeles Lakers"}], "outputs": ["roster"]},
        {"task": "Convert 120 USD into EUR", "inputs": [{"name": "amount", "value": "120"}, {"name": "from_currency", "value": "USD"}, {"name": "to_currency", "value": "EUR"}], "outputs": ["result"]},
    ]});
    let llm = model(subtasks, None);
    let ctx = context(
        llm,
        &t,
        Arc::new(SampleSource::new(120, &[])),
        options(Strategy::Adaptive, 4),
    );
    let ep = run(GraphSearch::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer, "{}", ep.details);
    let mut called = tools_called(&ep);
    called.sort();
    assert_eq!(
        called,
        vec![
            "Finish",
            "convert_currency_for_fx_rates_hub",
            "team_roster_for_court_stats"
        ]
    );
    assert_eq!(
        ep.details["execution"]["overlaps"].as_array().map(Vec::len),
        Some(1)
    );
}

#[test]
fn missing_values_are_asked_for_once_per_solution() {
    // The decomposition gave no inputs: the model fills the title in one call.
    let t = task("G1_category", 203);
    let subtasks = json!({"subtasks": [{"task": "Find the cast of The Matrix", "inputs": [], "outputs": ["cast"]}]});
    let llm = model(subtasks, Some(json!({"call_1": {"title": "The Matrix"}})));
    let ctx = context(
        llm.clone(),
        &t,
        Arc::new(SampleSource::new(0, &[])),
        options(Strategy::Greedy, 4),
    );
    let ep = run(GraphSearch::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
    assert_eq!(ep.steps[0].arguments, r#"{"title":"The Matrix"}"#);
    let asked = llm
        .requests()
        .iter()
        .filter(|r| r.purpose == "arguments")
        .count();
    assert_eq!(asked, 1);
}

#[test]
fn a_failed_solution_falls_back_to_the_next() {
    // Movie details fail; the subtask's second solution (the cast) runs on the stored search output.
    let t = task("G2_instruction", 402);
    let subtasks = json!({"subtasks": [{"task": "Give the details and cast of Inception", "inputs": [{"name": "title", "value": "Inception"}], "outputs": ["details"]}]});
    let llm = model(subtasks, None);
    let source = Arc::new(SampleSource::new(0, &["movie_details"]));
    let ctx = context(llm, &t, source, options(Strategy::Exhaustive, 4));
    let ep = run(GraphSearch::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        ep.details["execution"]["runs"][1]["status"], "failed",
        "{}",
        ep.details
    );
    let fallback = &ep.details["fallback"]["runs"];
    assert!(
        fallback.as_array().is_some_and(|r| !r.is_empty()),
        "{}",
        ep.details
    );
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
}

#[test]
fn the_state_memory_corrects_a_made_up_identifier() {
    let t = task("G1_category", 203);
    let graph = ToolGraph::build(&t.functions);
    let memory = Memory::new(&graph, &t.query);
    let search = ExecTask {
        id: 1,
        tool: "search_movies_for_cinebase".into(),
        args: Map::new(),
        deps: vec![],
    };
    memory.remember(
        &search,
        &json!({"results": [{"movie_id": "cb0133093", "title": "The Matrix"}]}),
    );
    let cast = ExecTask {
        id: 2,
        tool: "movie_cast_for_cinebase".into(),
        args: json!({"movie_id": "tt0133093"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        deps: vec![],
    };
    let mut notes = Vec::new();
    let args = memory
        .prepare(&cast, &Outputs::new(), &mut notes)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(args["movie_id"], "cb0133093");
    assert!(notes[0].contains("corrected from memory"), "{notes:?}");
    // A value the request or a result gave is left alone.
    let ok = ExecTask {
        args: json!({"movie_id": "cb0133093"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ..cast
    };
    let mut notes = Vec::new();
    let args = memory
        .prepare(&ok, &Outputs::new(), &mut notes)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(args["movie_id"], "cb0133093");
    assert!(notes.is_empty());
}

#[test]
fn a_call_two_subtasks_share_is_made_once() {
    // Both subtasks need the search for The Matrix: it runs once and feeds both.
    let t = task("G1_category", 203);
    let subtasks = json!({"subtasks": [
        {"task": "Find the cast of The Matrix", "inputs": [{"name": "title", "value": "The Matrix"}], "outputs": ["cast"]},
        {"task": "Find the details of The Matrix", "inputs": [{"name": "title", "value": "The Matrix"}], "outputs": ["plot"]},
    ]});
    let llm = model(subtasks, None);
    let source = Arc::new(SampleSource::new(0, &[]));
    let ctx = context(llm, &t, source.clone(), options(Strategy::Greedy, 4));
    let ep = run(GraphSearch::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ep.finish, FinishKind::GiveAnswer, "{}", ep.details);
    let searches = source
        .calls()
        .iter()
        .filter(|c| c.starts_with("search_movies"))
        .count();
    assert_eq!(searches, 1, "{:?}", source.calls());
    let mut called = tools_called(&ep);
    called.sort();
    assert_eq!(
        called,
        vec![
            "Finish",
            "movie_cast_for_cinebase",
            "movie_details_for_cinebase",
            "search_movies_for_cinebase"
        ]
    );
}

#[test]
fn with_the_whole_catalogue_the_model_rates_a_shortlist() {
    // All 40 sample APIs offered: each rating call sees at most 10, and the path is still found.
    let mut t = task("G1_category", 203);
    let catalog = crate::agent::sample_harness::catalog();
    t.functions = catalog
        .api_docs()
        .map(|(tool, doc)| Function::from_doc(&doc, &tool.standard_name))
        .collect();
    let llm = model(matrix_cast(), None);
    let ctx = context(
        llm.clone(),
        &t,
        Arc::new(SampleSource::new(0, &[])),
        options(Strategy::Adaptive, 4),
    );
    let ep = run(GraphSearch::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        tools_called(&ep),
        vec![
            "search_movies_for_cinebase",
            "movie_cast_for_cinebase",
            "Finish"
        ]
    );
    for r in llm.requests().iter().filter(|r| r.purpose == "score") {
        let n = schema(r)["properties"]["scores"]["maxItems"]
            .as_u64()
            .unwrap_or(0);
        assert!(n <= 10, "{n} tools in one rating call");
    }
}

#[test]
fn another_subtask_lends_identifiers_only() {
    // G2_instruction 402: the streaming subtask needs a title; the details call's `title` field is
    // not wired into it (only ids cross subtasks), so the model is asked for it.
    let t = task("G2_instruction", 402);
    let subtasks = json!({"subtasks": [
        {"task": "Get the details of Inception", "inputs": [{"name": "title", "value": "Inception"}], "outputs": ["plot"]},
        {"task": "Where to stream it in the UK", "inputs": [{"name": "country", "value": "UK"}], "outputs": ["services"]},
    ]});
    let llm = model(subtasks, Some(json!({"call_1": {"title": "Inception"}})));
    let ctx = context(
        llm.clone(),
        &t,
        Arc::new(SampleSource::new(0, &[])),
        options(Strategy::Adaptive, 4),
    );
    let ep = run(GraphSearch::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
    let watch = ep
        .steps
        .iter()
        .find(|s| s.action == "where_to_watch_for_streamfinder")
        .map(|s| s.arguments.clone())
        .unwrap_or_default();
    let watch: Value = serde_json::from_str(&watch).unwrap_or(Value::Null);
    assert_eq!(
        watch,
        json!({"title": "Inception", "country": "UK"}),
        "{}",
        ep.details
    );
    assert_eq!(
        llm.requests()
            .iter()
            .filter(|r| r.purpose == "arguments")
            .count(),
        1
    );
}

#[test]
fn an_answer_cut_at_the_token_cap_is_kept() {
    // The embedded model's cut JSON (an error carrying the text) and an endpoint's native call
    // whose arguments stop mid-string: both end with the answer up to the cut, not an error.
    let t = task("G1_category", 203);
    let cut_text = r#"{"name": "Finish", "arguments": {"return_type": "give_answer", "final_answer": "The cast of The Matrix is Keanu Ree"#;
    let replies: [Box<dyn Fn() -> Result<Completion, LlmError> + Send + Sync>; 2] = [
        Box::new(move || {
            Err(LlmError::Truncated {
                max_tokens: 384,
                content: cut_text.into(),
            })
        }),
        Box::new(|| {
            Ok(Completion {
                finish_reason: Some("length".into()),
                ..raw_call(
                    "",
                    "Finish",
                    r#"{"return_type": "give_answer", "final_answer": "The cast of The Matrix is Keanu Ree"#,
                )
            })
        }),
    ];
    for answer in replies {
        let llm = model_answering(matrix_cast(), None, answer);
        let ctx = context(
            llm,
            &t,
            Arc::new(SampleSource::new(0, &[])),
            options(Strategy::Adaptive, 4),
        );
        let ep =
            run(GraphSearch::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ep.finish, FinishKind::GiveAnswer, "{:?}", ep.error);
        assert!(ep.error.is_none());
        assert_eq!(ep.answer, "The cast of The Matrix is Keanu Ree");
        let last = ep.steps.last().unwrap_or_else(|| panic!("no steps"));
        assert_eq!(last.action, "Finish");
        assert!(last.thought.contains("cut"), "{}", last.thought);
        assert!(
            last.notes.iter().any(|n| n.contains("token cap")),
            "{:?}",
            last.notes
        );
        assert!(ep.counters.cut_replies >= 1);
    }
}

#[test]
fn catalogue_tool_sets_search_the_shared_catalogue_graph() {
    let catalog = crate::agent::sample_harness::catalog();
    let all: Vec<Function> = catalog
        .api_docs()
        .map(|(tool, doc)| Function::from_doc(&doc, &tool.standard_name))
        .collect();
    let shared = CatalogueGraph::new(ToolGraph::build(&all));
    // As a retriever ranks them: cast first, the search it needs later, with unrelated APIs.
    let pick = |name: &str| all.iter().find(|f| f.name.starts_with(name)).cloned();
    let retrieved: Vec<Function> = [
        "movie_cast",
        "team_roster",
        "search_movies",
        "convert_currency",
    ]
    .iter()
    .filter_map(|n| pick(n))
    .collect();
    assert_eq!(retrieved.len(), 4);
    let cases = [
        (all.clone(), Some(shared.clone()), "catalogue"),
        (
            retrieved.clone(),
            Some(shared.clone()),
            "catalogue_subgraph",
        ),
        (retrieved, None, "built"),
    ];
    for (functions, catalogue_graph, from) in cases {
        let mut t = task("G1_category", 203);
        t.functions = functions;
        let mut opts = options(Strategy::Adaptive, 4);
        opts.catalogue_graph = catalogue_graph;
        let ctx = context(
            model(matrix_cast(), None),
            &t,
            Arc::new(SampleSource::new(0, &[])),
            opts,
        );
        let solver = GraphSearch::new(&ctx.options);
        let ep = run(solver.solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ep.details["graph_from"], from);
        assert_eq!(
            ep.details["graph"]["apis"].as_u64(),
            Some(t.functions.len() as u64),
            "{from}"
        );
        assert_eq!(
            tools_called(&ep),
            vec![
                "search_movies_for_cinebase",
                "movie_cast_for_cinebase",
                "Finish"
            ],
            "{from}"
        );
        // The whole catalogue is the shared graph itself, not a copy.
        let (graph, _) = solver.graph_for(&t.functions);
        if from == "catalogue" {
            assert!(Arc::ptr_eq(&graph, shared.graph()));
        } else {
            assert!(!Arc::ptr_eq(&graph, shared.graph()));
        }
    }
}

#[test]
fn a_value_naming_an_earlier_call_becomes_its_placeholder() {
    // Agent request 229: the argument call answered `playerid` with `<call_1>.rankings[0].playerId`;
    // it reached the API as text (simulator request 245).
    let ids = [7, 8];
    let (v, deps) = call_references(&json!("<call_1>.rankings[0].playerId"), &ids, 1);
    assert_eq!(v, json!("<resource-7>.rankings[0].playerId"));
    assert_eq!(deps, vec![7]);
    // A call that is not an earlier one of this solution stays, and execution refuses it.
    let (v, deps) = call_references(&json!("<call_2>.id"), &ids, 1);
    assert_eq!(v, json!("<call_2>.id"));
    assert!(deps.is_empty());
    let call = ExecTask {
        id: 8,
        tool: "movie_cast_for_cinebase".into(),
        args: json!({"movie_id": v})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        deps: vec![],
    };
    let t = task("G1_category", 203);
    let graph = ToolGraph::build(&t.functions);
    let memory = Memory::new(&graph, &t.query);
    let got = memory.prepare(&call, &Default::default(), &mut Vec::new());
    assert!(got.is_err_and(|e| e.contains("<call_2>")));
}

#[test]
fn a_described_argument_is_asked_for_again_with_the_results_not_sent() {
    // Strong-model runs filled arguments with sentences (`<id of Rome from call_1 result>`). The
    // call is withheld, the argument call is asked again with the earlier results, and the call
    // runs with its dependants under new ids; no API sees the sentence.
    let t = task("G1_category", 203);
    let subtasks = json!({"subtasks": [{"task": "Find the cast of The Matrix", "inputs": [], "outputs": ["cast"]}]});
    let llm = Arc::new(ScriptedLlm::new(move |req: &CompletionRequest, _| {
        let v = match req.purpose.as_str() {
            "decompose" => subtasks.clone(),
            "score" => scores(req),
            "arguments" if prompt_text(req).contains("Earlier results:") => {
                json!({"call_1": {"title": "The Matrix"}})
            }
            "arguments" => json!({"call_1": {"title": "<title of the movie from the request>"}}),
            "respond" => return Ok(finish_saying("", "done")),
            other => return Err(LlmError::InvalidResponse(format!("unexpected {other}"))),
        };
        Ok(reply(&v.to_string()))
    }));
    let source = Arc::new(SampleSource::new(0, &[]));
    let ctx = context(
        llm.clone(),
        &t,
        source.clone(),
        options(Strategy::Greedy, 4),
    );
    let ep = run(GraphSearch::new(&ctx.options).solve(&t, &ctx)).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        source.calls().iter().all(|c| !c.contains("<title")),
        "{:?}",
        source.calls()
    );
    assert_eq!(ep.details["execution"]["runs"][0]["status"], "not_sent");
    assert_eq!(ep.details["execution"]["runs"][1]["status"], "skipped");
    assert_eq!(
        tools_called(&ep),
        vec![
            "search_movies_for_cinebase",
            "search_movies_for_cinebase",
            "movie_cast_for_cinebase",
            "Finish"
        ]
    );
    assert!(ep.steps[0].observation.error.starts_with("not called:"));
    assert_eq!(ep.steps[2].arguments, r#"{"movie_id":"cb0133093"}"#);
    assert_eq!(ep.details["repair"]["runs"][1]["id"], 4);
    assert!(ep.details.get("fallback").is_none(), "{}", ep.details);
    assert_eq!(ep.counters.unresolved_placeholders, 1);
    assert_eq!(ep.finish, FinishKind::GiveAnswer);
}
