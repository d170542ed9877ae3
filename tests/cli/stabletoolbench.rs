//! The StableToolBench round trip with small fixtures in its formats (never its code): `export` writes
//! what its converter (`toolbench/tooleval/convert_to_answer_format.py`) reads; the caller sends the
//! model's argument order, so a call hits a cache keyed as its server (`server/main.py`) keys it; reply
//! key order survives our server and a peer's; `--stb-compat`; `eval` reads its message formats and
//! prints both pass-rate denominators (`eval_pass_rate.py` drops missing answers).
//!
//! This file holds the fixtures (its answer formats, written with the library's builders); each
//! feature is a file in `stabletoolbench/`.

mod caller;
mod eval;
mod export;
mod names;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use sum2act_core::batch::Manifest;
use sum2act_core::toolbench::answer::FinishKind;
use sum2act_core::toolbench::answer::{
    ChainStep, Generation, Node, NodeType, cot_answer_file, dfs_answer_file,
};

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
    sum2act_core::toolbench::answer::chain_nodes(std::slice::from_ref(s), depth)
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
        FinishKind::GiveAnswer,
        args.clone(),
    );
    write_answer(&run, "dfsdt", 1, file, "give_answer");
    let give_up = step("Finish", GIVE_UP, "gave up");
    let file = dfs_answer_file(
        &generation(&fns, GIVE_UP),
        &tree(Some(&give_up)),
        None,
        FinishKind::GiveUp,
        args.clone(),
    );
    write_answer(&run, "dfsdt", 2, file, "give_up");
    let file = dfs_answer_file(
        &generation(&fns, ""),
        &tree(None),
        None,
        FinishKind::GiveAnswer,
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
