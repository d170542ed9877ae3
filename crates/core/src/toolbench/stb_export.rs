//! Our answer files in the exact shape StableToolBench's converter (`toolbench/tooleval/
//! convert_to_answer_format.py`) reads: its method names in the file name (`{id}_CoT@1.json`,
//! `{id}_DFS_woFilter_w2.json`), and every field its two code paths index without a guard.
//!
//! What its converter needs, and what we make sure of here:
//! * the file name contains `--method` and starts with `{query_id}_`; the method contains `CoT` (chains,
//!   `trys`) or `DFS` (trees), otherwise it raises `Unknown method`;
//! * `valid_data: true` → `train_messages[-1]` exists; every `tool_calls` entry has a later `tool`
//!   message with its `tool_call_id`; no `function_call: null` key (it tests `in`, then indexes);
//! * `valid_data: false`, CoT → `trys` is not empty (it takes `random.choice`); every `Action` node is
//!   followed by an `Action Input` node with an `observation`; only `Action`/`Thought` start a step;
//! * `valid_data: false`, DFS → every node has `children`; every `Action Input` has an `observation`.

use serde_json::{Value, json};

use super::answer::{ChainStep, chain_messages};
use super::method::Method;
use super::schema::FINISH;

/// The solver families of StableToolBench, as its converter tells them apart (by substring).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StbFamily {
    /// Single chains (`trys`): its `CoT@n`; our sum2act and react.
    Cot,
    /// A search tree (`tree`): its `DFS_woFilter_w{width}`; our dfsdt.
    Dfs,
}

/// Our method name (as answer files record it: the canonical name, not an alias) → its family, or
/// `None` for a name that is not one of our methods. `plan` and `graph` write one chain per query
/// (plan-and-execute and the graph search's chosen path), which its converter reads as a CoT chain.
pub(crate) fn family_of(method: &str) -> Option<StbFamily> {
    let known = method
        .parse::<Method>()
        .ok()
        .filter(|m| m.name() == method)?;
    match known {
        Method::Sum2act | Method::React | Method::Plan | Method::Graph => Some(StbFamily::Cot),
        Method::Dfsdt => Some(StbFamily::Dfs),
    }
}

/// Why an answer file cannot be exported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ExportProblem(pub String);

/// The StableToolBench method name for an answer file of `family`: `CoT@{pass_at}` (as its
/// `single_chain` names it) or `DFS_woFilter_w{tree_beam_size}`.
pub(crate) fn stb_method(family: StbFamily, file: &Value) -> String {
    let args = &file["forward_args"];
    match family {
        StbFamily::Cot => format!("CoT@{}", args["pass_at"].as_u64().unwrap_or(1).max(1)),
        StbFamily::Dfs => format!(
            "DFS_woFilter_w{}",
            args["tree_beam_size"].as_u64().unwrap_or(2).max(1)
        ),
    }
}

/// The method name of a whole run, from the agent options its manifest records (`tries` for ReAct,
/// `width` for DFSDT): one name for every file, as its converter's `--method` needs, whatever each
/// episode used. `None` when the manifest does not say.
pub(crate) fn stb_method_of_run(family: StbFamily, method: &str, agent: &Value) -> Option<String> {
    let forward_args = match family {
        StbFamily::Cot if method == Method::React.name() => {
            json!({"pass_at": agent["tries"].as_u64()?})
        }
        StbFamily::Cot => json!({"pass_at": 1}),
        StbFamily::Dfs => json!({"tree_beam_size": agent["width"].as_u64()?}),
    };
    Some(stb_method(family, &json!({ "forward_args": forward_args })))
}

/// The answer file as StableToolBench writes it for `family`; our `sum2act` record stays (its tools
/// ignore unknown keys).
pub(crate) fn export_answer(file: &Value, family: StbFamily) -> Result<Value, ExportProblem> {
    let mut out = file.clone();
    let Some(ag) = out
        .get_mut("answer_generation")
        .and_then(Value::as_object_mut)
    else {
        return Err(ExportProblem("no `answer_generation` object".into()));
    };
    for key in ["query", "final_answer"] {
        if !ag.get(key).is_some_and(Value::is_string) {
            return Err(ExportProblem(format!(
                "`answer_generation.{key}` is not a string"
            )));
        }
    }
    if !ag.get("function").is_some_and(Value::is_array) {
        return Err(ExportProblem(
            "`answer_generation.function` is not a list".into(),
        ));
    }
    match family {
        StbFamily::Cot => fix_cot(&mut out)?,
        StbFamily::Dfs => fix_dfs(&mut out)?,
    }
    let valid = out["answer_generation"]["valid_data"]
        .as_bool()
        .unwrap_or(false);
    out["answer_generation"]["valid_data"] = json!(valid);
    if valid {
        let needs_messages = out["answer_generation"]["train_messages"]
            .as_array()
            .and_then(|t| t.last())
            .and_then(Value::as_array)
            .is_none_or(|m| m.len() < 2);
        if needs_messages {
            let steps = winning_steps(&out, family).ok_or_else(|| {
                ExportProblem(
                    "`valid_data` is true but neither `train_messages` nor the chain/tree holds the path to the answer".into(),
                )
            })?;
            let query = out["answer_generation"]["query"]
                .as_str()
                .unwrap_or("")
                .to_string();
            out["answer_generation"]["train_messages"] =
                json!([chain_messages("", &query, &steps)]);
        }
        if let Some(msgs) = out["answer_generation"]["train_messages"]
            .as_array_mut()
            .and_then(|t| t.last_mut())
            .and_then(Value::as_array_mut)
        {
            check_messages(msgs)?;
        }
    }
    Ok(out)
}

fn fix_cot(out: &mut Value) -> Result<(), ExportProblem> {
    let trys = out
        .as_object_mut()
        .map(|m| m.entry("trys").or_insert_with(|| json!([])))
        .ok_or_else(|| ExportProblem("the file is not a JSON object".into()))?;
    let Some(list) = trys.as_array_mut() else {
        return Err(ExportProblem("`trys` is not a list".into()));
    };
    if list.is_empty() {
        // Its converter picks a random try of an invalid answer: an empty list would raise.
        list.push(json!({"chain": [], "win": false}));
    }
    for (t, tr) in list.iter_mut().enumerate() {
        let Some(chain) = tr.get_mut("chain").and_then(Value::as_array_mut) else {
            return Err(ExportProblem(format!("`trys[{t}].chain` is not a list")));
        };
        let mut i = 0;
        while i < chain.len() {
            match chain[i]["node_type"].as_str() {
                Some("Thought") => i += 1,
                Some("Action") => {
                    let Some(input) = chain
                        .get_mut(i + 1)
                        .filter(|n| n["node_type"] == "Action Input")
                    else {
                        return Err(ExportProblem(format!(
                            "`trys[{t}].chain[{i}]`: an Action node not followed by its Action Input"
                        )));
                    };
                    ensure_observation(input);
                    i += 2;
                }
                other => {
                    return Err(ExportProblem(format!(
                        "`trys[{t}].chain[{i}]`: node type {other:?} cannot start a step"
                    )));
                }
            }
        }
    }
    Ok(())
}

fn fix_dfs(out: &mut Value) -> Result<(), ExportProblem> {
    let Some(root) = out.get_mut("tree").and_then(|t| t.get_mut("tree")) else {
        return Err(ExportProblem("no `tree.tree` (the search tree)".into()));
    };
    fix_tree_node(root, 0)
}

fn fix_tree_node(node: &mut Value, depth: usize) -> Result<(), ExportProblem> {
    if depth > 10_000 {
        return Err(ExportProblem("the tree is nested too deeply".into()));
    }
    let Some(m) = node.as_object_mut() else {
        return Err(ExportProblem("a tree node is not a JSON object".into()));
    };
    match m.get("node_type").and_then(Value::as_str) {
        Some("Thought" | "Action" | "Action Input") => {}
        other => {
            return Err(ExportProblem(format!(
                "tree node type {other:?} is not Thought, Action or Action Input"
            )));
        }
    }
    if m.get("node_type").and_then(Value::as_str) == Some("Action Input") {
        ensure_observation(node);
    }
    let Some(m) = node.as_object_mut() else {
        return Ok(());
    };
    let children = m.entry("children").or_insert_with(|| json!([]));
    if !children.is_array() {
        *children = json!([]);
    }
    if let Some(kids) = children.as_array_mut() {
        for k in kids {
            fix_tree_node(k, depth + 1)?;
        }
    }
    Ok(())
}

fn ensure_observation(node: &mut Value) {
    if let Some(m) = node.as_object_mut()
        && !m.get("observation").is_some_and(Value::is_string)
    {
        m.insert("observation".into(), json!(""));
    }
}

/// Every call in the messages has its `tool` reply (matched by id) and no `function_call: null`.
fn check_messages(msgs: &mut [Value]) -> Result<(), ExportProblem> {
    for m in msgs.iter_mut() {
        if let Some(o) = m.as_object_mut()
            && o.get("function_call").is_some_and(Value::is_null)
        {
            o.remove("function_call");
        }
    }
    for (i, m) in msgs.iter().enumerate() {
        if m["role"] != "assistant" {
            continue;
        }
        let Some(calls) = m["tool_calls"].as_array() else {
            continue;
        };
        for c in calls {
            if c["function"]["name"] == FINISH {
                break;
            }
            let id = &c["id"];
            let answered = msgs[i + 1..]
                .iter()
                .any(|r| r["role"] == "tool" && &r["tool_call_id"] == id);
            if !answered {
                return Err(ExportProblem(format!(
                    "`train_messages`: tool call {id} of message {i} has no `tool` reply"
                )));
            }
        }
    }
    Ok(())
}

/// The steps of the path that ended the episode: the winning try's chain, or the tree path to the
/// first Finish (give-up files carry no `train_messages`).
fn winning_steps(file: &Value, family: StbFamily) -> Option<Vec<ChainStep>> {
    let nodes: Vec<&Value> = match family {
        StbFamily::Cot => {
            let trys = file["trys"].as_array()?;
            let t = trys.iter().find(|t| t["win"] == true).or(trys.last())?;
            t["chain"].as_array()?.iter().collect()
        }
        StbFamily::Dfs => {
            let root = &file["tree"]["tree"];
            let target = file["answer_generation"]["final_answer"].as_str();
            let mut path = Vec::new();
            if !path_to_finish(root, target, &mut path) && !path_to_finish(root, None, &mut path) {
                return None;
            }
            path
        }
    };
    let steps = steps_of(&nodes);
    (!steps.is_empty() && steps.last().is_some_and(|s| s.name == FINISH)).then_some(steps)
}

/// Depth-first search for the first `Action Input` of a `Finish` Action (with exactly `arguments`, when
/// given); fills `path` (root excluded).
fn path_to_finish<'a>(node: &'a Value, arguments: Option<&str>, path: &mut Vec<&'a Value>) -> bool {
    for child in node["children"].as_array().into_iter().flatten() {
        path.push(child);
        let is_finish_input = child["node_type"] == "Action Input"
            && path.len() >= 2
            && path[path.len() - 2]["description"] == FINISH
            && arguments.is_none_or(|a| child["description"] == a);
        if is_finish_input || path_to_finish(child, arguments, path) {
            return true;
        }
        path.pop();
    }
    false
}

fn steps_of(nodes: &[&Value]) -> Vec<ChainStep> {
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    let mut steps = Vec::new();
    let mut thought = String::new();
    let mut name: Option<String> = None;
    for n in nodes {
        match n["node_type"].as_str() {
            Some("Thought") => thought = text(&n["description"]),
            Some("Action") => name = Some(text(&n["description"])),
            Some("Action Input") => {
                if let Some(name) = name.take() {
                    steps.push(ChainStep {
                        thought: std::mem::take(&mut thought),
                        name,
                        arguments: text(&n["description"]),
                        observation: text(&n["observation"]),
                        code: n["observation_code"]
                            .as_u64()
                            .and_then(|c| u8::try_from(c).ok())
                            .unwrap_or(0),
                    });
                }
            }
            _ => {}
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolbench::answer::FinishKind;
    use crate::toolbench::answer::{Generation, Node, NodeType, cot_answer_file, dfs_answer_file};

    fn step(name: &str, args: &str) -> ChainStep {
        ChainStep {
            thought: "t".into(),
            name: name.into(),
            arguments: args.into(),
            observation: "{\"error\": \"\", \"response\": \"ok\"}".into(),
            code: 0,
        }
    }

    fn generation<'a>(functions: &'a [Value], final_answer: &'a str) -> Generation<'a> {
        Generation {
            query: "q?",
            functions,
            final_answer,
            query_count: 1,
            total_tokens: 1,
            system: "sys",
        }
    }

    #[test]
    fn method_names_follow_its_scripts() {
        let cot = json!({"forward_args": {"pass_at": 1}});
        assert_eq!(stb_method(StbFamily::Cot, &cot), "CoT@1");
        let dfs = json!({"forward_args": {"tree_beam_size": 2}});
        assert_eq!(stb_method(StbFamily::Dfs, &dfs), "DFS_woFilter_w2");
        assert_eq!(family_of("react"), Some(StbFamily::Cot));
        assert_eq!(family_of("plan"), Some(StbFamily::Cot));
        assert_eq!(family_of("other"), None);
        let react = json!({"tries": 3, "width": 2});
        assert_eq!(
            stb_method_of_run(StbFamily::Cot, "react", &react).as_deref(),
            Some("CoT@3")
        );
        assert_eq!(
            stb_method_of_run(StbFamily::Cot, "sum2act", &react).as_deref(),
            Some("CoT@1")
        );
        assert_eq!(stb_method_of_run(StbFamily::Dfs, "dfsdt", &json!({})), None);
    }

    #[test]
    fn a_cot_file_without_tries_gets_an_empty_one() {
        let fns = vec![json!({"name": "f"})];
        let file = cot_answer_file(&generation(&fns, ""), &[], None, 12);
        assert_eq!(file["trys"], json!([]));
        let out = export_answer(&file, StbFamily::Cot).unwrap();
        assert_eq!(out["trys"], json!([{"chain": [], "win": false}]));
    }

    #[test]
    fn a_dfs_give_up_gets_the_messages_of_its_path() {
        let give_up = "{\"return_type\": \"give_up_and_restart\"}";
        let mut root = Node::new(NodeType::ActionInput, "", 0);
        let mut a = Node::new(NodeType::Action, "f", 1);
        let mut ai = Node::new(NodeType::ActionInput, "{\"b\": 1, \"a\": 2}", 2);
        ai.observation = Some("obs".into());
        let mut fin = Node::new(NodeType::Action, FINISH, 3);
        let mut fin_in = Node::new(NodeType::ActionInput, give_up, 4);
        fin_in.observation = Some("gave up".into());
        fin.children.push(fin_in);
        ai.children.push(fin);
        a.children.push(ai);
        root.children.push(a);
        let fns = vec![json!({"name": "f"})];
        let file = dfs_answer_file(
            &generation(&fns, give_up),
            &root,
            None,
            FinishKind::GiveUp,
            json!({"tree_beam_size": 2}),
        );
        assert_eq!(file["answer_generation"]["valid_data"], true);
        assert!(file["answer_generation"].get("train_messages").is_none());
        let out = export_answer(&file, StbFamily::Dfs).unwrap();
        let msgs = &out["answer_generation"]["train_messages"][0];
        assert_eq!(msgs.as_array().map(Vec::len), Some(6));
        assert_eq!(
            msgs[2]["tool_calls"][0]["function"]["arguments"],
            "{\"b\": 1, \"a\": 2}"
        );
        assert_eq!(msgs[4]["tool_calls"][0]["function"]["name"], FINISH);
    }

    /// Issue 41: what the model was shown besides its path (an abandoned branch it saw as an earlier
    /// attempt, our record of it with the whole reply) stays in the export: the tree holds the
    /// branch, our `sum2act` key the record.
    #[test]
    fn an_export_keeps_the_abandoned_branches_and_our_record() {
        let answer = "{\"return_type\": \"give_answer\", \"final_answer\": \"21\"}";
        let mut root = Node::new(NodeType::ActionInput, "", 0);
        let mut tried = Node::new(NodeType::Action, "f", 1);
        let mut tried_in = Node::new(NodeType::ActionInput, "{}", 2);
        tried_in.observation = Some("{\"error\": \"\", \"response\": 21...".into());
        tried.children.push(tried_in);
        let mut fin = Node::new(NodeType::Action, FINISH, 1);
        fin.children
            .push(Node::new(NodeType::ActionInput, answer, 2));
        root.children.extend([tried, fin]);
        let fns = vec![json!({"name": "f"})];
        let path = [step(FINISH, answer)];
        let mut file = dfs_answer_file(
            &generation(&fns, answer),
            &root,
            Some(&path),
            FinishKind::GiveAnswer,
            json!({"tree_beam_size": 2}),
        );
        file["sum2act"] =
            json!({"attempts": [{"action": "f", "observation": {"response": {"t": 21}}}]});
        let out = export_answer(&file, StbFamily::Dfs).unwrap();
        assert_eq!(out["tree"]["tree"]["children"][0]["description"], "f");
        assert_eq!(
            out["sum2act"]["attempts"][0]["observation"]["response"]["t"],
            21
        );
    }

    #[test]
    fn broken_chains_are_named() {
        let file = json!({"answer_generation": {"query": "q", "final_answer": "", "function": [], "valid_data": false},
            "trys": [{"chain": [{"node_type": "Action", "description": "f"}]}]});
        let e = export_answer(&file, StbFamily::Cot).unwrap_err();
        assert!(e.0.contains("trys[0].chain[0]"), "{e}");
        let ok = cot_answer_file(&generation(&[], ""), &[vec![step("f", "{}")]], None, 12);
        let out = export_answer(&ok, StbFamily::Cot).unwrap();
        assert_eq!(
            out["trys"][0]["chain"][2]["observation"],
            "{\"error\": \"\", \"response\": \"ok\"}"
        );
    }
}
