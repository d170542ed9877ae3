//! One simulated world (issue 29) through the binary, with a model endpoint that also simulates the
//! tools (`--tool-simulation llm`): a simulator slower than `--tool-timeout` is no timeout; two methods
//! run at once on one `--world` meet the same replies, one simulation per call; an entity an earlier
//! reply fixed is in the simulator's prompt of a later call naming it (and not with
//! `--no-entity-memory`), and a call naming an entity whose simulation is in flight waits for it; a
//! run replayed with its world gets the same observations; `serve fidelity
//! --world` scores the world's contradictions.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{self, Test};
use crate::hardening::{endpoint, slow_endpoint};

/// A request of the tool simulator (its system prompt), not of the agent.
fn is_simulator(req: &Value) -> bool {
    req["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.starts_with("You stand in for a RapidAPI"))
}

fn user_prompt(req: &Value) -> String {
    req["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A chat completion saying `content`.
fn says(content: &str) -> Value {
    common::http::judge_reply(content, (10, 10))
}

/// The agent is the scripted mock; the simulator answers in the shape asked, saying `text` in a `note`.
fn simulator_saying(req: &Value, text: &str) -> (u16, Value) {
    if !is_simulator(req) {
        return (200, common::mock_openai::reply(req));
    }
    let mut response = req
        .pointer("/response_format/json_schema/schema/properties/response")
        .map_or(json!({}), common::mock_openai::instance);
    if let Some(m) = response.as_object_mut() {
        m.insert("note".into(), json!(text));
    }
    (
        200,
        says(&json!({"error": "", "response": response}).to_string()),
    )
}

/// Every tool observation of a run directory's answer files.
fn observations(out: &Path) -> Vec<Value> {
    let mut found = Vec::new();
    for subset in std::fs::read_dir(out).unwrap().flatten() {
        let Ok(files) = std::fs::read_dir(subset.path()) else {
            continue;
        };
        for f in files.flatten() {
            let name = f.file_name().to_string_lossy().to_string();
            if !name.ends_with(".json") || !name.starts_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            let file: Value =
                serde_json::from_str(&std::fs::read_to_string(f.path()).unwrap()).unwrap();
            for step in file["sum2act"]["steps"].as_array().into_iter().flatten() {
                let obs = &step["observation"];
                if obs.is_object() && obs["function"] != "Finish" {
                    found.push(obs.clone());
                }
            }
        }
    }
    found
}

/// The reply files of a world folder.
fn world_files(world: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![world.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn a_simulator_slower_than_the_tool_timeout_is_no_timeout() {
    let model = slow_endpoint(
        |req| simulator_saying(req, "slow but fine"),
        |req| Duration::from_millis(if is_simulator(req) { 2500 } else { 0 }),
    );
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &str, extra: &[&str]| {
        Test::new()
            .env("OPENAI_BASE_URL", &model.url)
            .run_query("101", "G1_instruction")
            .args(["--tool-simulation", "llm", "--tool-timeout", "1"])
            .args(extra)
            .arg("--out")
            .arg(dir.path().join(out))
            .run()
            .success()
            .no_panic();
        let obs = observations(&dir.path().join(out));
        assert!(!obs.is_empty(), "no tool call in {out}");
        obs[0].clone()
    };
    let obs = run("patient", &[]);
    assert_eq!(obs["code"], 0, "{obs}");
    assert_eq!(obs["source"], "llm", "{obs}");
    assert_ne!(obs["failed"], true, "{obs}");
    assert!(
        obs["text"].as_str().unwrap_or("").contains("slow but fine"),
        "{obs}"
    );
    assert!(obs["elapsed_ms"].as_u64().unwrap_or(0) >= 2500, "{obs}");
    assert!(obs.get("retries").is_none(), "{obs}");
    // The simulator's own limit is separate, and applies when it is set.
    let obs = run("impatient", &["--simulator-timeout", "1"]);
    assert_eq!(obs["code"], 5, "{obs}");
}

#[test]
fn two_methods_at_once_meet_one_world_with_one_simulation_per_call() {
    let simulations = Arc::new(AtomicUsize::new(0));
    let counted = simulations.clone();
    let model = slow_endpoint(
        move |req| {
            if !is_simulator(req) {
                return (200, common::mock_openai::reply(req));
            }
            let n = counted.fetch_add(1, Ordering::SeqCst);
            simulator_saying(req, &format!("simulation {n}"))
        },
        |req| Duration::from_millis(if is_simulator(req) { 800 } else { 0 }),
    );
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world");
    let runs: Vec<_> = ["sum2act", "react"]
        .into_iter()
        .map(|method| {
            let (url, world, out) = (model.url.clone(), world.clone(), dir.path().join(method));
            std::thread::spawn(move || {
                Test::new()
                    .env("OPENAI_BASE_URL", &url)
                    .batch_mock()
                    .args([
                        "--method",
                        method,
                        "--subsets",
                        "G1_instruction",
                        "--limit",
                        "3",
                    ])
                    .args(["--concurrency", "2", "--tool-simulation", "llm", "--world"])
                    .arg(&world)
                    .arg("--out")
                    .arg(&out)
                    .run()
                    .success()
                    .no_panic();
            })
        })
        .collect();
    for r in runs {
        r.join().unwrap();
    }
    let reply_of = |method: &str| -> Vec<(String, Value)> {
        observations(&dir.path().join(method))
            .into_iter()
            .filter(|o| o["source"] == "llm")
            .map(|o| {
                let args: Value = serde_json::from_str(o["arguments"].as_str().unwrap_or("{}"))
                    .unwrap_or_default();
                (format!("{} {args}", o["function"]), o["response"].clone())
            })
            .collect()
    };
    let (a, b) = (reply_of("sum2act"), reply_of("react"));
    let mut shared = 0;
    for (call, reply) in &a {
        for (other, theirs) in &b {
            if call == other {
                shared += 1;
                assert_eq!(reply, theirs, "{call}");
            }
        }
    }
    assert!(shared > 0, "no call made by both methods: {a:?} / {b:?}");
    let files = world_files(&world);
    assert_eq!(
        simulations.load(Ordering::SeqCst),
        files.len(),
        "one simulation per distinct call: {files:?}"
    );
}

/// The scripted agent of the entity test (ReAct): search, then look up the id found, then finish.
fn search_then_lookup(req: &Value, lookup_prompts: &Mutex<Vec<String>>) -> (u16, Value) {
    if is_simulator(req) {
        let prompt = user_prompt(req);
        let response = if prompt.contains("\"api_name\": \"Search records\"") {
            json!({"results": [{"record_id": "tt0999", "title": "Salt Road", "year": 2011,
                "cast": [{"name": "Ana Ruiz", "role": "lead"}]}]})
        } else {
            lookup_prompts.lock().unwrap().push(prompt);
            // A simulator that contradicts the world anyway, for the consistency check to find.
            json!({"record_id": "tt0999", "title": "The Longest Winter", "year": 2011})
        };
        return (
            200,
            says(&json!({"error": "", "response": response}).to_string()),
        );
    }
    let empty = Vec::new();
    let tools = req["tools"].as_array().unwrap_or(&empty);
    if tools.is_empty() {
        return (200, common::mock_openai::reply(req));
    }
    let name = |part: &str| {
        tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .find(|n| n.contains(part))
            .unwrap_or("Finish")
            .to_string()
    };
    let done = req["messages"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    let (function, args) = match done {
        0 => (name("search_records"), json!({"query": "salt road"})),
        1 => (name("lookup_record"), json!({"record_id": "tt0999"})),
        _ => (
            "Finish".to_string(),
            json!({"return_type": "give_answer", "final_answer": "Salt Road (2011)."}),
        ),
    };
    let call = json!({"id": format!("call_{done}"), "type": "function",
        "function": {"name": function, "arguments": args.to_string()}});
    let mut reply = says("");
    reply["choices"][0]["message"]["tool_calls"] = json!([call]);
    reply["choices"][0]["finish_reason"] = json!("tool_calls");
    (200, reply)
}

/// `run` of the record desk query with ReAct and LLM tool simulation, into `out`.
fn record_desk_run(data: &Path, out: &Path) -> Test {
    Test::new()
        .arg("--data")
        .arg(data)
        .args([
            "run",
            "--query-id",
            "1",
            "--method",
            "react",
            "--model",
            "mock",
        ])
        .args(["--tool-simulation", "llm", "--out"])
        .arg(out)
}

/// [`record_desk_run`] with the scripted agent and simulator; the lookup's simulator prompt.
fn entity_run(data: &Path, out: &Path, extra: &[&str]) -> String {
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let seen = prompts.clone();
    let model = endpoint(move |req| search_then_lookup(req, &seen));
    record_desk_run(data, out)
        .env("OPENAI_BASE_URL", &model.url)
        .args(extra)
        .run()
        .success()
        .no_panic();
    let prompts = prompts.lock().unwrap();
    assert_eq!(prompts.len(), 1, "one lookup simulated");
    prompts[0].clone()
}

/// The facts part of a simulator prompt.
fn facts(prompt: &str) -> &str {
    let start = prompt.find("Facts earlier replies").unwrap_or(0);
    let end = prompt.find("The call to answer").unwrap_or(prompt.len());
    &prompt[start..end]
}

#[test]
fn an_entity_an_earlier_reply_fixed_is_given_to_a_later_simulation_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    common::tools::write_record_desk_query(&data);
    let out = dir.path().join("with");
    let prompt = entity_run(
        &data,
        &out,
        &["--record", &dir.path().join("rec").to_string_lossy()],
    );
    let given = facts(&prompt);
    assert!(
        given.contains("tt0999") && given.contains("Salt Road") && given.contains("2011"),
        "{prompt}"
    );
    // Short nested values are facts too (an order's items and ship-to differed between the order
    // list and the order detail of the strong-model run: they had been left out).
    assert!(given.contains("Ana Ruiz"), "{prompt}");
    // Switched off, the same call is simulated without them.
    let prompt = entity_run(&data, &dir.path().join("without"), &["--no-entity-memory"]);
    assert!(!facts(&prompt).contains("Salt Road"), "{prompt}");

    // The world the first run kept: the simulator contradicted the fixed title anyway, and the
    // consistency check finds it.
    let world = out.join("world");
    Test::new()
        .args(["serve", "fidelity", "--world"])
        .arg(&world)
        .run()
        .success()
        .stdout_has("(d) world consistency")
        .stdout_has("contradicting: 1 (100.0%)");

    // Replayed offline with its world: no model, no simulator, the same observations.
    let replayed = dir.path().join("replayed");
    record_desk_run(&data, &replayed)
        .arg("--replay")
        .arg(dir.path().join("rec"))
        .arg("--world")
        .arg(&world)
        .run()
        .success()
        .no_panic();
    let strip = |mut o: Value| {
        o["elapsed_ms"] = json!(0);
        o
    };
    let first: Vec<Value> = observations(&out).into_iter().map(strip).collect();
    let again: Vec<Value> = observations(&replayed).into_iter().map(strip).collect();
    assert_eq!(first.len(), 2, "{first:?}");
    assert_eq!(first, again);
}

#[test]
fn a_call_naming_an_entity_being_simulated_waits_for_its_reply() {
    // Two different calls naming `tt0999` at once on one `serve`: the lookup's simulation is slow; the
    // search, sent while it is in flight, waits for it and its prompt holds the lookup's reply.
    let prompts = Arc::new(Mutex::new(Vec::new()));
    let seen = prompts.clone();
    let is_lookup = |req: &Value| user_prompt(req).contains("\"api_name\": \"Lookup record\"");
    let model = slow_endpoint(
        move |req| {
            if !is_simulator(req) {
                return (200, common::mock_openai::reply(req));
            }
            let response = if is_lookup(req) {
                json!({"id": "tt0999", "title": "Salt Road", "year": 2011})
            } else {
                seen.lock().unwrap().push(user_prompt(req));
                json!({"results": [{"id": "tt0999", "title": "Salt Road"}]})
            };
            (
                200,
                says(&json!({"error": "", "response": response}).to_string()),
            )
        },
        move |req| Duration::from_millis(if is_lookup(req) { 1500 } else { 0 }),
    );
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    common::tools::write_record_desk_query(&data);
    let served = Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .arg("--data")
        .arg(&data)
        .args(["serve", "--port", "0", "--simulation", "llm", "--world"])
        .arg(dir.path().join("world"))
        .serve();
    let url = served.url.clone();
    let lookup = std::thread::spawn(move || {
        common::tools::call(
            &url,
            ["Data", "record_desk", "lookup_record"],
            json!({"record_id": "tt0999"}),
        )
    });
    std::thread::sleep(Duration::from_millis(400));
    let search = common::tools::call(
        &served.url,
        ["Data", "record_desk", "search_records"],
        json!({"query": "tt0999"}),
    );
    let lookup = lookup.join().unwrap();
    assert!(search.is_ok() && lookup.is_ok(), "{search:?} {lookup:?}");
    let prompts = prompts.lock().unwrap();
    assert_eq!(prompts.len(), 1, "one search simulated");
    let given = facts(&prompts[0]);
    assert!(
        given.contains("tt0999") && given.contains("Salt Road") && given.contains("2011"),
        "{}",
        prompts[0]
    );
}
