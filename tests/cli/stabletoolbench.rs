//! The StableToolBench round trip with small fixtures in its formats (never its code): `export` writes
//! what its converter (`toolbench/tooleval/convert_to_answer_format.py`) reads; the caller sends the
//! model's argument order, so a call hits a cache keyed as its server (`server/main.py`) keys it; reply
//! key order survives our server and a peer's; `--stb-compat`; `eval` reads its message formats and
//! prints both pass-rate denominators (`eval_pass_rate.py` drops missing answers).

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};

use sum2act::batch::Manifest;
use sum2act::server::pyrepr::to_repr;
use sum2act::server::{VirtualApi, spawn};
use sum2act::toolbench::answer::{
    ChainStep, Generation, Node, NodeType, cot_answer_file, dfs_answer_file,
};
use sum2act::toolbench::{Catalog, Function};
use sum2act::tools::{HttpSource, ReplySource, ToolConfig, ToolEnv, ToolRequest, ToolSource};

const SUBSET: &str = "G1_instruction";
/// Model order: neither the declared order (from, to, amount) nor sorted (amount, from, to).
const MODEL_ARGS: &str = r#"{"to_currency": "JPY", "amount": 250, "from_currency": "EUR"}"#;
const CONVERT: &str = "convert_currency_for_fx_rates_hub";
const FINISH_ARGS: &str =
    "{\"return_type\": \"give_answer\", \"final_answer\": \"250 EUR is 42,230 JPY.\"}";
const GIVE_UP: &str = "{\"return_type\": \"give_up_and_restart\"}";

fn step(name: &str, arguments: &str, observation: &str) -> ChainStep {
    ChainStep {
        thought: format!("call {name}"),
        name: name.into(),
        arguments: arguments.into(),
        observation: observation.into(),
        code: if name == "Finish" { 3 } else { 0 },
    }
}

fn convert_step() -> ChainStep {
    step(
        CONVERT,
        MODEL_ARGS,
        "{\"error\": \"\", \"response\": {\"result\": 42230.0}}",
    )
}

fn functions() -> Vec<Value> {
    vec![json!({"name": CONVERT}), json!({"name": "Finish"})]
}

fn generation<'a>(functions: &'a [Value], final_answer: &'a str) -> Generation<'a> {
    Generation {
        query: "Convert 250 EUR to JPY.",
        functions,
        final_answer,
        query_count: 2,
        total_tokens: 100,
        system: "system prompt",
    }
}

/// Writes an answer file with our record, as `batch` does.
fn write_answer(run: &Path, method: &str, id: u64, mut file: Value, finish: &str) {
    file["sum2act"] =
        json!({"method": method, "model": "m", "subset": SUBSET, "query_id": id, "finish": finish});
    let path = run.join(SUBSET).join(format!("{id}_{method}.json"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
}

fn new_run(root: &Path, method: &str) -> PathBuf {
    let run = root.join(method);
    std::fs::create_dir_all(&run).unwrap();
    Manifest::new(method, "m").write(&run).unwrap();
    run
}

/// A CoT-family run: a solved query, one that never finished, one that crashed before any step.
fn cot_run(root: &Path, method: &str) -> PathBuf {
    let run = new_run(root, method);
    let fns = functions();
    let solved = vec![convert_step(), step("Finish", FINISH_ARGS, "ok")];
    let g = generation(&fns, FINISH_ARGS);
    write_answer(
        &run,
        method,
        1,
        cot_answer_file(&g, &[solved], Some(0), 12),
        "give_answer",
    );
    let g = generation(&fns, "");
    let unfinished = cot_answer_file(&g, &[vec![convert_step()]], None, 12);
    write_answer(&run, method, 2, unfinished, "limit");
    write_answer(&run, method, 3, cot_answer_file(&g, &[], None, 12), "error");
    run
}

fn chain(nodes: Vec<Node>) -> Node {
    let mut iter = nodes.into_iter().rev();
    let mut last = iter.next().unwrap();
    for mut n in iter {
        n.children.push(last);
        last = n;
    }
    last
}

fn call_nodes(s: &ChainStep, depth: u32) -> Vec<Node> {
    sum2act::toolbench::answer::chain_nodes(std::slice::from_ref(s), depth)
}

/// A dfsdt run: an answer, a give-up (valid, but no `train_messages`), and a search that ran dry.
fn dfs_run(root: &Path) -> PathBuf {
    let run = new_run(root, "dfsdt");
    let fns = functions();
    let args = json!({"single_chain_max_step": 12, "tree_beam_size": 2, "max_query_count": 200, "answer": 1, "with_filter": false});
    let tree = |finish: Option<&ChainStep>| {
        let mut nodes = vec![Node::new(NodeType::ActionInput, "", 0)];
        nodes.extend(call_nodes(&convert_step(), 1));
        if let Some(f) = finish {
            nodes.extend(call_nodes(f, 4));
        }
        let mut root = chain(nodes);
        // A dead-end sibling branch.
        root.children.push(chain(call_nodes(&convert_step(), 1)));
        root
    };
    let answer = step("Finish", FINISH_ARGS, "ok");
    let file = dfs_answer_file(
        &generation(&fns, FINISH_ARGS),
        &tree(Some(&answer)),
        Some(&[convert_step(), answer.clone()]),
        "give_answer",
        args.clone(),
    );
    write_answer(&run, "dfsdt", 1, file, "give_answer");
    let give_up = step("Finish", GIVE_UP, "gave up");
    let file = dfs_answer_file(
        &generation(&fns, GIVE_UP),
        &tree(Some(&give_up)),
        None,
        "give_up",
        args.clone(),
    );
    write_answer(&run, "dfsdt", 2, file, "give_up");
    let file = dfs_answer_file(
        &generation(&fns, ""),
        &tree(None),
        None,
        "give_answer",
        args,
    );
    write_answer(&run, "dfsdt", 3, file, "limit");
    run
}

/// The fields its converter indexes without a guard, walked in its order; `Err` where it would raise.
fn its_converter_accepts(file: &Value, method: &str) -> Result<(), String> {
    let ag = &file["answer_generation"];
    for k in ["function", "query", "final_answer", "valid_data"] {
        ag.get(k).ok_or(format!("answer_generation.{k}"))?;
    }
    if ag["valid_data"] == true {
        let conv = ag["train_messages"]
            .as_array()
            .and_then(|t| t.last())
            .and_then(Value::as_array);
        let conv = conv.ok_or("train_messages[-1]")?;
        for (i, m) in conv.iter().enumerate().skip(2) {
            match m["role"].as_str() {
                Some("system" | "user" | "function" | "tool") => {}
                Some("assistant") if m.get("function_call").is_some() => {
                    m["function_call"]["name"]
                        .as_str()
                        .ok_or("function_call.name")?;
                }
                Some("assistant") if m["tool_calls"].is_array() => {
                    for tc in m["tool_calls"].as_array().into_iter().flatten() {
                        let name = tc["function"]["name"]
                            .as_str()
                            .ok_or("tool_calls.function.name")?;
                        if name == "Finish" {
                            break;
                        }
                        conv[i + 1..]
                            .iter()
                            .find(|r| r["role"] == "tool" && r["tool_call_id"] == tc["id"])
                            .ok_or(format!("message {i}: call without its tool message"))?;
                    }
                }
                Some("assistant") => {
                    m.get("content").ok_or("assistant content")?;
                }
                other => return Err(format!("Unkown role {other:?}")),
            }
        }
        return Ok(());
    }
    if method.contains("CoT") {
        let trys = file["trys"].as_array().ok_or("trys")?;
        let chain = trys.first().ok_or("random.choice of empty trys")?["chain"]
            .as_array()
            .ok_or("chain")?;
        let mut i = 0;
        while i < chain.len() {
            match chain[i]["node_type"].as_str() {
                Some("Action") => {
                    let next = chain.get(i + 1).ok_or("chain[index+1]")?;
                    next.get("observation").ok_or("observation")?;
                    i += 1;
                }
                Some("Thought") => {}
                other => return Err(format!("Unknown node_type: {other:?}")),
            }
            i += 1;
        }
        Ok(())
    } else if method.contains("DFS") {
        fn walk(n: &Value) -> Result<(), String> {
            let kids = n["children"].as_array().ok_or("children")?;
            match n["node_type"].as_str() {
                Some("Action") => {
                    if let Some(input) = kids.iter().find(|k| k["node_type"] == "Action Input") {
                        input.get("observation").ok_or("Action Input observation")?;
                    }
                }
                Some("Thought" | "Action Input") => {}
                other => return Err(format!("Unknown role {other:?}")),
            }
            kids.iter().try_for_each(walk)
        }
        file["tree"]["tree"]["children"]
            .as_array()
            .ok_or("tree.tree.children")?
            .iter()
            .try_for_each(walk)
    } else {
        Err(format!("Unknown method {method}"))
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn export_writes_what_its_converter_reads_for_all_three_methods() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = [
        (cot_run(tmp.path(), "sum2act"), "CoT@1"),
        (cot_run(tmp.path(), "react"), "CoT@1"),
        (dfs_run(tmp.path()), "DFS_woFilter_w2"),
    ];
    for (run, method) in &runs {
        let out = tmp.path().join("export").join(run.file_name().unwrap());
        common::Test::new()
            .args(["export", "--format", "stabletoolbench", "--out"])
            .arg(&out)
            .arg(run)
            .run()
            .success()
            .stdout_has("exported 3 answer files")
            .stdout_has(&format!("--method {method}"));
        let dir = out.join(SUBSET);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        names.sort();
        assert_eq!(names, [1, 2, 3].map(|i| format!("{i}_{method}.json")));
        for (i, name) in names.iter().enumerate() {
            // Its converter: files containing --method, query id = the part before the first `_`.
            assert!(
                name.contains(method) && name.split('_').next().unwrap().parse::<u64>().is_ok()
            );
            let file = read(&dir.join(name));
            its_converter_accepts(&file, method).unwrap_or_else(|e| panic!("{name}: {e}"));
            // The model's argument order is what the answer file records (query 3 made no call).
            assert!(
                i == 2
                    || serde_json::to_string(&file)
                        .unwrap()
                        .contains(&serde_json::to_string(MODEL_ARGS).unwrap())
            );
        }
        // Our own evaluator reads the export too, with the same verdicts by rule.
        let metrics = common::Test::new()
            .arg("eval")
            .arg(&out)
            .arg("--no-judge")
            .arg("--json")
            .run()
            .success();
        let v: Value = serde_json::from_str(&metrics.stdout()).unwrap();
        let m = &v["metrics"][0];
        assert_eq!(m["answered"], 3, "{}", metrics.stdout());
        assert!(
            (m["finish_rate"].as_f64().unwrap() - 100.0 / 3.0).abs() < 1e-6,
            "{m}"
        );
    }
    // The give-up of the DFS run is valid data: it now carries the messages of its path.
    let give_up = read(
        &tmp.path()
            .join("export/dfsdt")
            .join(SUBSET)
            .join("2_DFS_woFilter_w2.json"),
    );
    let msgs = &give_up["answer_generation"]["train_messages"][0];
    assert_eq!(
        msgs[2]["tool_calls"][0]["function"]["arguments"],
        MODEL_ARGS
    );
    assert_eq!(msgs[4]["tool_calls"][0]["function"]["arguments"], GIVE_UP);
    // A run without a manifest, or an output onto itself, is bad input.
    let (run, _) = &runs[0];
    common::Test::new()
        .args(["export", "--out"])
        .arg(run)
        .arg(run)
        .run()
        .failure(2)
        .no_panic();
    common::Test::new()
        .args(["export", "--out"])
        .arg(tmp.path().join("x"))
        .arg(tmp.path())
        .run()
        .failure(2)
        .stderr_has("run.json");
}

/// A `/virtual` peer that logs request bodies and answers like StableToolBench's server: a cache hit
/// by `str(json.loads(tool_input))`, else a reply whose keys are deliberately not sorted.
async fn stb_like_server(cache: Value) -> (String, Arc<Mutex<Vec<Value>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    async fn handler(
        State((log, cache)): State<(Arc<Mutex<Vec<Value>>>, Value)>,
        body: String,
    ) -> String {
        let req: Value = serde_json::from_str(&body).unwrap();
        log.lock().unwrap().push(req.clone());
        let input = match &req["tool_input"] {
            Value::String(s) => serde_json::from_str(s).unwrap(),
            other => other.clone(),
        };
        match cache.get(to_repr(&input)) {
            Some(hit) => hit.to_string(),
            None => {
                r#"{"error": "", "response": {"zeta": 1, "alpha": {"y": 2, "x": 3}}}"#.to_string()
            }
        }
    }
    let app = Router::new()
        .route("/virtual", post(handler))
        .with_state((log.clone(), cache));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/virtual"), log)
}

fn sample_functions() -> (Arc<Catalog>, Vec<Function>) {
    let catalog = Arc::new(
        Catalog::load(&common::sample().join("tools"))
            .unwrap()
            .catalog,
    );
    let fns = catalog
        .tools()
        .iter()
        .flat_map(|t| {
            t.file
                .api_list
                .iter()
                .map(move |a| Function::from_doc(&t.api_doc(a), &t.standard_name))
        })
        .collect();
    (catalog, fns)
}

fn config() -> ToolConfig {
    ToolConfig {
        timeout: Duration::from_secs(5),
        cache_calls: false,
        ..ToolConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_argument_order_reaches_the_server_and_hits_its_cache() {
    // Its cache file for this API, keyed as its server keys it (the model's order, Python repr).
    let key = "{'to_currency': 'JPY', 'amount': 250, 'from_currency': 'EUR'}";
    let cached =
        json!({"error": "", "response": {"rate": 168.92, "amount": 250, "result": 42230.0}});
    let (url, log) = stb_like_server(json!({ key: cached })).await;
    let (_, fns) = sample_functions();
    let env = ToolEnv::new(Arc::new(HttpSource::new(&url, None).unwrap()), config());
    let caller = env.caller(fns);

    let obs = caller.call(CONVERT, MODEL_ARGS).await;
    assert_eq!(obs.response, cached["response"], "{}", obs.text);
    assert_eq!(
        obs.text,
        r#"{"error": "", "response": {"rate": 168.92, "amount": 250, "result": 42230.0}}"#
    );
    let sent = log.lock().unwrap()[0].clone();
    // Exactly the model's text, as its own client sends it.
    assert_eq!(sent["tool_input"], MODEL_ARGS);
    let keys: Vec<&String> = sent.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "category",
            "tool_name",
            "api_name",
            "tool_input",
            "strip",
            "toolbench_key"
        ]
    );

    // Arguments we had to repair (double-encoded, a common slip) go as an object, still in the model's order.
    let double = serde_json::to_string(MODEL_ARGS).unwrap();
    let obs = caller.call(CONVERT, &double).await;
    assert_eq!(obs.response, cached["response"], "{}", obs.text);
    let sent = log.lock().unwrap()[1].clone();
    assert_eq!(to_repr(&sent["tool_input"]), key);

    // A reply that is not in its cache keeps the peer's key order in the observation.
    let obs = caller
        .call(
            CONVERT,
            r#"{"amount": 1, "from_currency": "EUR", "to_currency": "USD"}"#,
        )
        .await;
    assert_eq!(
        obs.text,
        r#"{"error": "", "response": {"zeta": 1, "alpha": {"y": 2, "x": 3}}}"#
    );
}

fn sample_data_with_cache(tmp: &Path, entries: &[(&str, &str, Value)]) -> PathBuf {
    let cache = tmp.join("response_cache");
    for (rel, key, value) in entries {
        let file = cache.join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let mut m = serde_json::Map::new();
        m.insert(key.to_string(), value.clone());
        std::fs::write(file, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    }
    cache
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_replies_keep_their_key_order_through_our_server() {
    let tmp = tempfile::tempdir().unwrap();
    let reply = json!({"error": "", "response": {"zeta": [{"b": 1, "a": 2}], "alpha": "x", "mid": {"z": null, "k": true}}});
    let cache = sample_data_with_cache(
        tmp.path(),
        &[(
            "Finance/fx_rates_hub/convert_currency.json",
            r#"{"amount":250,"from_currency":"EUR","to_currency":"JPY"}"#,
            reply.clone(),
        )],
    );
    let (catalog, fns) = sample_functions();
    let handle = spawn(
        Arc::new(VirtualApi::new(catalog, Some(cache))),
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    // The raw bytes on the wire.
    let body = reqwest::Client::new()
        .post(handle.url())
        .json(&json!({"category": "Finance", "tool_name": "fx_rates_hub", "api_name": "convert_currency",
            "tool_input": MODEL_ARGS, "strip": "truncate", "toolbench_key": ""}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(body, serde_json::to_string(&reply).unwrap());
    assert!(
        body.find("zeta") < body.find("alpha") && body.find("\"b\"") < body.find("\"a\""),
        "{body}"
    );
    // And through our client and caller, as an agent sees it.
    let env = ToolEnv::new(
        Arc::new(HttpSource::new(&handle.url(), None).unwrap()),
        config(),
    );
    let obs = env.caller(fns).call(CONVERT, MODEL_ARGS).await;
    assert_eq!(obs.source, ReplySource::Cache);
    assert_eq!(
        obs.text,
        r#"{"error": "", "response": {"zeta": [{"b": 1, "a": 2}], "alpha": "x", "mid": {"z": null, "k": true}}}"#
    );
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stb_compat_simulates_missing_parameters_and_serves_uncatalogued_cache_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let hit = json!({"error": "", "response": "from its cache"});
    let cache = sample_data_with_cache(
        tmp.path(),
        &[(
            "Finance/old_tool/get_thing.json",
            r#"{"q":"x"}"#,
            hit.clone(),
        )],
    );
    let (catalog, _) = sample_functions();
    let request = |tool: &str, api: &str, input: &str| ToolRequest {
        category: "Finance".into(),
        tool_name: tool.into(),
        api_name: api.into(),
        tool_input: Value::String(input.into()),
        strip: "truncate".into(),
    };
    let missing = request("fx_rates_hub", "convert_currency", r#"{"amount": 5}"#);
    let outside = request("Old Tool", "Get Thing", r#"{"q": "x"}"#);
    let traversal = ToolRequest {
        category: "..".into(),
        ..request("Old Tool", "Get Thing", r#"{"q": "x"}"#)
    };
    for compat in [false, true] {
        let api = VirtualApi::new(catalog.clone(), Some(cache.clone())).with_stb_compat(compat);
        let source = sum2act::server::CatalogSource::from_api(Arc::new(api));
        let r = source.call(&missing).await.unwrap();
        assert_eq!(r.error.starts_with("Parameter error"), !compat, "{r:?}");
        let r = source.call(&outside).await.unwrap();
        if compat {
            assert_eq!((r.error.as_str(), &r.response), ("", &hit["response"]));
            assert_eq!(r.source, Some(ReplySource::Cache));
        } else {
            assert!(
                r.response.as_str().unwrap_or("").contains("No such tool"),
                "{r:?}"
            );
        }
        let r = source.call(&traversal).await.unwrap();
        assert_ne!(r.response, hit["response"]);
    }
}

/// Its raw answer (current format: `tool_calls` and `tool` roles, no record of ours) and its converted
/// form are both read by `eval`; `--ids` takes its `test_query_ids` folder.
#[test]
fn eval_reads_its_formats_and_prints_both_denominators() {
    let tmp = tempfile::tempdir().unwrap();
    let raw_dir = tmp.path().join("answers").join(SUBSET);
    std::fs::create_dir_all(&raw_dir).unwrap();
    let messages = json!([
        {"role": "system", "content": "s"}, {"role": "user", "content": "q"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": CONVERT, "arguments": MODEL_ARGS}}]},
        {"role": "tool", "name": CONVERT, "content": "{\"error\": \"\", \"response\": 42230}", "tool_call_id": "c1"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "Finish", "arguments": FINISH_ARGS}}]},
        {"role": "tool", "name": "Finish", "content": "ok", "tool_call_id": "c2"}
    ]);
    let file = json!({"win": true, "trys": [], "answer_generation": {"valid_data": true, "final_answer": FINISH_ARGS,
        "function": functions(), "query": "Convert 250 EUR to JPY.", "train_messages": [messages], "chain": [], "query_count": 2, "total_tokens": 9}});
    std::fs::write(raw_dir.join("588_CoT@1.json"), file.to_string()).unwrap();
    let out = common::Test::new()
        .arg("eval")
        .arg(tmp.path().join("answers"))
        .args(["--no-judge", "--json"])
        .run()
        .success();
    let v: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(v["metrics"][0]["answered"], 1, "{}", out.stdout());
    assert_eq!(v["metrics"][0]["finish_rate"], 100.0, "{}", out.stdout());
    // Its answer folder for one subset, given directly: the subset is the folder's name.
    let out = common::Test::new()
        .arg("eval")
        .arg(&raw_dir)
        .args(["--no-judge", "--json"])
        .run()
        .success();
    let v: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(v["metrics"][0]["subset"], SUBSET, "{}", out.stdout());
    assert_eq!(v["metrics"][0]["answered"], 1);

    // Its converted format: tool and assistant nodes; one id of its id file has no answer.
    let converted = tmp.path().join(format!("{SUBSET}.json"));
    let tool = |name: &str, args: &str, resp: &str, next: Value| json!({"role": "tool", "message": {"name": name, "arguments": args, "response": resp}, "next": next});
    let details = json!([{"role": "system", "message": "", "next": [{"role": "user", "message": "", "next": [
        {"role": "assistant", "message": "convert first", "next": [tool(CONVERT, MODEL_ARGS, "42230", json!([tool("Finish", FINISH_ARGS, "", json!([]))]))]}]}]}]);
    let unfinished = json!([{"role": "system", "message": "", "next": [{"role": "user", "message": "", "next": [tool(CONVERT, MODEL_ARGS, "42230", json!([]))]}]}]);
    let answer = |details: &Value, fa: &str| {
        json!({"query": "Convert 250 EUR to JPY.", "available_tools": functions(),
        "answer": {"method": "CoT@1", "total_steps": 4, "final_answer": fa, "answer_details": details}})
    };
    std::fs::write(
        &converted,
        json!({"588": answer(&details, FINISH_ARGS), "608": answer(&unfinished, "")}).to_string(),
    )
    .unwrap();
    let ids = tmp.path().join("test_query_ids");
    std::fs::create_dir_all(&ids).unwrap();
    std::fs::write(
        ids.join(format!("{SUBSET}.json")),
        r#"{"588": 0, "608": 0, "1073": 0}"#,
    )
    .unwrap();
    let judge = always_solved_judge();
    let out = common::Test::new()
        .arg("eval")
        .arg("--converted")
        .arg(&converted)
        .arg("--ids")
        .arg(&ids)
        .args([
            "--base-url",
            &judge,
            "--judge",
            "mock-judge",
            "--judge-mode",
            "tooleval",
            "--votes",
            "1",
        ])
        .run()
        .success();
    // 588 solved by the judge, 608 unsolved by rule (no Finish), 1073 missing.
    out.stdout_has("pass rate: ours 33.3% (missing = failure, 2 of 3 queries answered) · StableToolBench 50.0% (missing dropped)");
    common::Test::new()
        .arg("eval")
        .arg("--converted")
        .arg(&converted)
        .arg("--ids")
        .arg(tmp.path().join("nowhere"))
        .arg("--no-judge")
        .run()
        .failure(2)
        .no_panic();
}

/// A judge endpoint that finds every answer solved (whatever the prompt asks).
fn always_solved_judge() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let app = Router::new().route(
                "/v1/chat/completions",
                post(|| async {
                    let content = json!({"reason": "the answer gives the converted amount", "answer_status": "Solved"}).to_string();
                    axum::Json(json!({"model": "mock-judge",
                        "choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5}}))
                }),
            );
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let _ = axum::serve(listener, app).await;
        });
    });
    format!("http://{addr}/v1")
}
