//! ToolBench answer files (ToolBench `toolbench/inference/Downstream_tasks/rapidapi.py`) and StableToolBench's converted format (StableToolBench `toolbench/tooleval/convert_to_answer_format.py`). Our files are
//! accepted by their converter and evaluator, and theirs by ours.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::FINISH;
pub(crate) use super::finish::ErrorCause;
pub use super::finish::{FinishKind, RecordedFinish};

/// The key under which our record sits inside an answer file (beside ToolBench's own fields).
pub const OUR_KEY: &str = "sum2act";

/// The counters every method reports, stored in our record of an answer file (`sum2act.counters`).
/// Missing fields read as zero, so older files and other harnesses' records still load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counters {
    pub llm_calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub tool_calls: u64,
    pub failed_tool_calls: u64,
    /// Calls to a function name that does not exist.
    pub hallucinated_calls: u64,
    /// Successful calls whose result added nothing new (Sum2Act: kept apart from failures).
    pub redundant_calls: u64,
    /// Model replies cut at the token cap or at the reply size cap.
    pub cut_replies: u64,
    /// Tool calls that got no reply because the tool server could not be reached (an environment
    /// failure: such an episode is kept as an `error`, not as a result).
    #[serde(skip_serializing_if = "is_zero")]
    pub unreachable_tool_calls: u64,
    /// Tool calls the model asked for past the budget's `max_tool_calls` (not made).
    #[serde(skip_serializing_if = "is_zero")]
    pub over_budget_calls: u64,
    /// Calls of the planning methods whose arguments still held a placeholder just before sending
    /// (`<resource-2>.missing`, `<id of Rome from call_1 result>`): filled from an earlier output,
    /// or withheld.
    #[serde(skip_serializing_if = "is_zero")]
    pub unresolved_placeholders: u64,
    pub steps: u64,
    pub wall_ms: u64,
    pub cost_usd: f64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Node kinds of ToolBench's trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeType {
    Thought,
    Action,
    ActionInput,
}

impl NodeType {
    fn as_str(self) -> &'static str {
        match self {
            NodeType::Thought => "Thought",
            NodeType::Action => "Action",
            NodeType::ActionInput => "Action Input",
        }
    }
}

/// A node of a ToolBench chain or tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub node_type: NodeType,
    pub description: String,
    pub observation: Option<String>,
    pub observation_code: Option<u8>,
    pub pruned: bool,
    pub finished: bool,
    pub depth: u32,
    pub expand_num: u32,
    pub children: Vec<Node>,
}

impl Node {
    pub fn new(node_type: NodeType, description: impl Into<String>, depth: u32) -> Self {
        Node {
            node_type,
            description: description.into(),
            observation: None,
            observation_code: None,
            pruned: false,
            finished: false,
            depth,
            expand_num: 0,
            children: Vec::new(),
        }
    }

    /// The node as ToolBench writes it; `is_terminal` is always false there (a quirk we keep).
    pub(crate) fn to_json(&self, with_children: bool) -> Value {
        let mut m = Map::new();
        m.insert("is_terminal".into(), json!(false));
        m.insert("pruned".into(), json!(self.pruned));
        m.insert("finished".into(), json!(self.finished));
        m.insert("depth".into(), json!(self.depth));
        m.insert("node_type".into(), json!(self.node_type.as_str()));
        m.insert("description".into(), json!(self.description));
        m.insert("Elo".into(), json!(1000.0));
        if let Some(o) = &self.observation {
            m.insert("observation".into(), json!(o));
        }
        if let Some(c) = self.observation_code {
            m.insert("observation_code".into(), json!(c));
        }
        m.insert("child_count".into(), json!(self.children.len()));
        m.insert("expand_num".into(), json!(self.expand_num));
        if self.node_type == NodeType::ActionInput {
            m.insert("io_state".into(), json!({}));
        }
        if with_children {
            let kids: Vec<Value> = self.children.iter().map(|c| c.to_json(true)).collect();
            m.insert("children".into(), Value::Array(kids));
        }
        Value::Object(m)
    }

    /// Number of nodes in this subtree.
    pub(crate) fn size(&self) -> usize {
        1 + self.children.iter().map(Node::size).sum::<usize>()
    }

    /// Levels of this subtree (a leaf has 1).
    pub(crate) fn max_length(&self) -> usize {
        1 + self
            .children
            .iter()
            .map(Node::max_length)
            .max()
            .unwrap_or(0)
    }
}

/// One action in the shape answer files need: thought, call, observation.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainStep {
    pub thought: String,
    pub name: String,
    pub arguments: String,
    pub observation: String,
    pub code: u8,
}

/// The chain nodes (Thought?, Action, Action Input per step), depths from `start_depth`.
pub fn chain_nodes(steps: &[ChainStep], start_depth: u32) -> Vec<Node> {
    let mut nodes = Vec::new();
    let mut depth = start_depth;
    for s in steps {
        if !s.thought.trim().is_empty() {
            nodes.push(Node::new(NodeType::Thought, s.thought.clone(), depth));
            depth += 1;
        }
        nodes.push(Node::new(NodeType::Action, s.name.clone(), depth));
        depth += 1;
        let mut input = Node::new(NodeType::ActionInput, s.arguments.clone(), depth);
        input.observation = Some(s.observation.clone());
        input.observation_code = Some(s.code);
        nodes.push(input);
        depth += 1;
    }
    nodes
}

/// The message history of a chain, in the current StableToolBench form (`tool_calls`, `role: tool`).
pub(crate) fn chain_messages(system: &str, query: &str, steps: &[ChainStep]) -> Vec<Value> {
    let mut msgs = vec![
        json!({"role": "system", "content": system}),
        json!({"role": "user", "content": query}),
    ];
    for (i, s) in steps.iter().enumerate() {
        let id = format!("call_{i}");
        msgs.push(json!({
            "role": "assistant",
            "content": s.thought,
            "tool_calls": [{"id": id, "type": "function", "function": {"name": s.name, "arguments": s.arguments}}]
        }));
        msgs.push(
            json!({"role": "tool", "name": s.name, "content": s.observation, "tool_call_id": id}),
        );
    }
    msgs
}

/// What every answer file's `answer_generation` carries.
#[derive(Debug, Clone)]
pub struct Generation<'a> {
    pub query: &'a str,
    pub functions: &'a [Value],
    /// The raw arguments string of the accepted `Finish` call, or "" (ToolBench's `final_answer`).
    pub final_answer: &'a str,
    pub query_count: u64,
    pub total_tokens: u64,
    pub system: &'a str,
}

/// A CoT-style answer file (`trys`): one chain per try; `winner` is the index of the successful try.
pub fn cot_answer_file(
    generation: &Generation,
    tries: &[Vec<ChainStep>],
    winner: Option<usize>,
    max_steps: u32,
) -> Value {
    let trys: Vec<Value> = tries
        .iter()
        .enumerate()
        .map(|(i, steps)| {
            let chain: Vec<Value> = chain_nodes(steps, 1)
                .iter()
                .map(|n| n.to_json(false))
                .collect();
            json!({"chain": chain, "win": Some(i) == winner})
        })
        .collect();
    let winning = winner.and_then(|w| tries.get(w));
    let candidates: Vec<Value> = winning
        .map(|steps| {
            vec![Value::Array(
                chain_nodes(steps, 1)
                    .iter()
                    .map(|n| n.to_json(false))
                    .collect(),
            )]
        })
        .unwrap_or_default();
    let train: Vec<Value> = winning
        .map(|steps| {
            vec![Value::Array(chain_messages(
                generation.system,
                generation.query,
                steps,
            ))]
        })
        .unwrap_or_default();
    json!({
        "win": winner.is_some(),
        "try_count": tries.len(),
        "trys": trys,
        "compare_candidates": candidates,
        "forward_args": {"single_chain_max_step": max_steps, "pass_at": tries.len(), "answer": 1},
        "answer_generation": {
            "valid_data": winner.is_some(),
            "final_answer": generation.final_answer,
            "function": generation.functions,
            "query_count": generation.query_count,
            "total_tokens": generation.total_tokens,
            "train_messages": train,
            "chain": [],
            "query": generation.query,
        }
    })
}

/// A DFS-style answer file (`tree`). `answer_path` is the winning path's steps, if any.
pub fn dfs_answer_file(
    generation: &Generation,
    root: &Node,
    answer_path: Option<&[ChainStep]>,
    finish_type: FinishKind,
    forward_args: Value,
) -> Value {
    let mut ag = json!({
        "valid_data": answer_path.is_some() || finish_type == FinishKind::GiveUp,
        "final_answer": generation.final_answer,
        "finish_type": finish_type.as_str(),
        "function": generation.functions,
        "query_count": generation.query_count,
        "total_tokens": generation.total_tokens,
        "chain": [],
        "query": generation.query,
    });
    if let Some(steps) = answer_path {
        ag["train_messages"] = json!([chain_messages(generation.system, generation.query, steps)]);
    }
    let candidates: Vec<Value> = answer_path
        .map(|s| {
            vec![Value::Array(
                chain_nodes(s, 1).iter().map(|n| n.to_json(false)).collect(),
            )]
        })
        .unwrap_or_default();
    json!({
        "win": answer_path.is_some(),
        "tree": {"size": root.size(), "max_length": root.max_length(), "tree": root.to_json(true)},
        "forward_args": forward_args,
        "compare_candidates": candidates,
        "answer_generation": ag,
    })
}

/// One answer in StableToolBench's converted format (StableToolBench `toolbench/tooleval/convert_to_answer_format.py`): `{query, available_tools, answer}`.
pub fn convert(file: &Value, method: &str) -> Value {
    let ag = &file["answer_generation"];
    let valid = ag["valid_data"].as_bool().unwrap_or(false);
    let mut steps: Vec<Value> = Vec::new();
    let last_messages = ag["train_messages"]
        .as_array()
        .and_then(|t| t.last())
        .and_then(Value::as_array);
    match last_messages {
        Some(msgs) if valid => steps = steps_from_messages(msgs),
        _ => {
            if let Some(chain) = file["trys"]
                .as_array()
                .and_then(|t| t.first())
                .and_then(|t| t["chain"].as_array())
            {
                steps = steps_from_nodes(chain.iter());
            } else if let Some(root) = file["tree"].get("tree") {
                let mut path = Vec::new();
                let mut node = root;
                while let Some(child) = node["children"].as_array().and_then(|c| c.first()) {
                    path.push(child);
                    node = child;
                }
                steps = steps_from_nodes(path.into_iter());
            }
        }
    }
    let total_steps = steps.len() + 2;
    let mut details = Value::Null;
    for step in steps.into_iter().rev() {
        let mut s = step;
        s["next"] = if details.is_null() {
            json!([])
        } else {
            json!([details])
        };
        details = s;
    }
    let user_next = if details.is_null() {
        json!([])
    } else {
        json!([details])
    };
    let tree = json!([{"role": "system", "message": "", "next": [{"role": "user", "message": "", "next": user_next}]}]);
    json!({
        "query": ag["query"],
        "available_tools": ag["function"],
        "answer": {
            "method": method,
            "total_steps": total_steps,
            "final_answer": ag["final_answer"].as_str().unwrap_or(""),
            "answer_details": tree,
        }
    })
}

/// The steps of a message history as StableToolBench's converter reads it (`process_valid_data`): from
/// the third message on, an assistant `function_call` (old format; the reply is the next message) or
/// each of its `tool_calls` (current format; the reply is the later `tool` message with its
/// `tool_call_id`) becomes a tool step, `Finish` with an empty response and ending that message's
/// calls; an assistant message without calls becomes an assistant step (the text of a message *with*
/// calls is dropped, as there). Calls without a reply are left out, as there.
fn steps_from_messages(msgs: &[Value]) -> Vec<Value> {
    let mut steps = Vec::new();
    let mut i = 2;
    while i < msgs.len() {
        let m = &msgs[i];
        i += 1;
        if m["role"] != "assistant" {
            continue;
        }
        if let Some(f) = m.get("function_call").filter(|f| !f.is_null()) {
            let name = f["name"].as_str().unwrap_or("");
            let response = if name == FINISH {
                ""
            } else {
                msgs.get(i)
                    .and_then(|n| n["content"].as_str())
                    .unwrap_or("")
            };
            steps.push(tool_node(name, &f["arguments"], response));
            i += 1;
        } else if let Some(calls) = m["tool_calls"].as_array() {
            for c in calls {
                let name = c["function"]["name"].as_str().unwrap_or("");
                if name == FINISH {
                    steps.push(tool_node(name, &c["function"]["arguments"], ""));
                    break;
                }
                let reply = msgs[i..]
                    .iter()
                    .find(|r| r["role"] == "tool" && r["tool_call_id"] == c["id"]);
                if let Some(r) = reply {
                    let response = r["content"].as_str().unwrap_or("");
                    steps.push(tool_node(name, &c["function"]["arguments"], response));
                }
            }
        } else {
            steps.push(json!({"role": "assistant", "message": m["content"]}));
        }
    }
    steps
}

fn tool_node(name: &str, arguments: &Value, response: &str) -> Value {
    json!({"role": "tool", "message": {"name": name, "arguments": arguments, "response": response}})
}

fn steps_from_nodes<'a>(nodes: impl Iterator<Item = &'a Value>) -> Vec<Value> {
    let mut steps = Vec::new();
    let mut pending_action: Option<String> = None;
    for n in nodes {
        match n["node_type"].as_str() {
            Some("Thought") => {
                steps.push(json!({"role": "assistant", "message": n["description"]}))
            }
            Some("Action") => pending_action = n["description"].as_str().map(str::to_string),
            Some("Action Input") => {
                let name = pending_action.take().unwrap_or_default();
                steps.push(json!({"role": "tool", "message": {
                    "name": name,
                    "arguments": n["description"],
                    "response": n["observation"].as_str().unwrap_or(""),
                }}));
            }
            _ => {}
        }
    }
    steps
}

/// The final step of the first path of converted `answer_details` (what SoPR's rule looks at).
#[cfg(test)]
pub(crate) fn converted_final_step(answer: &Value) -> Option<Value> {
    let mut node = answer["answer_details"].as_array()?.first()?;
    let mut last_tool = None;
    loop {
        if node["role"] == "tool" {
            last_tool = Some(node["message"].clone());
        }
        match node["next"].as_array().and_then(|n| n.first()) {
            Some(next) => node = next,
            None => break,
        }
    }
    last_tool
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps() -> Vec<ChainStep> {
        vec![
            ChainStep {
                thought: "look up the city".into(),
                name: "get_weather_for_weather".into(),
                arguments: "{\"city\": \"Paris\"}".into(),
                observation: "{\"error\": \"\", \"response\": {\"temp\": 21}}".into(),
                code: 0,
            },
            ChainStep {
                thought: String::new(),
                name: "Finish".into(),
                arguments: "{\"return_type\": \"give_answer\", \"final_answer\": \"21C\"}".into(),
                observation: "{\"response\":\"successfully giving the final answer.\"}".into(),
                code: 3,
            },
        ]
    }

    fn generation<'a>(functions: &'a [Value], final_answer: &'a str) -> Generation<'a> {
        Generation {
            query: "weather in Paris?",
            functions,
            final_answer,
            query_count: 2,
            total_tokens: 100,
            system: "sys",
        }
    }

    #[test]
    fn cot_file_converts_to_tool_steps_ending_in_finish() {
        let fns = vec![json!({"name": "get_weather_for_weather"})];
        let s = steps();
        let file = cot_answer_file(
            &generation(&fns, &s[1].arguments),
            std::slice::from_ref(&s),
            Some(0),
            30,
        );
        assert_eq!(file["win"], true);
        assert_eq!(file["trys"][0]["chain"].as_array().map(Vec::len), Some(5));
        assert_eq!(file["trys"][0]["chain"][0]["node_type"], "Thought");
        let conv = convert(&file, "sum2act");
        assert_eq!(conv["answer"]["total_steps"], 4);
        let last = converted_final_step(&conv["answer"]).unwrap_or(Value::Null);
        assert_eq!(last["name"], "Finish");
        let first = &conv["answer"]["answer_details"][0]["next"][0]["next"][0];
        assert_eq!(first["message"]["response"], s[0].observation.as_str());
    }

    #[test]
    fn failed_cot_file_converts_from_chain() {
        let fns = vec![];
        let s = &steps()[..1];
        let file = cot_answer_file(&generation(&fns, ""), &[s.to_vec()], None, 30);
        assert_eq!(file["answer_generation"]["train_messages"], json!([]));
        let conv = convert(&file, "react");
        let last = converted_final_step(&conv["answer"]).unwrap_or(Value::Null);
        assert_eq!(last["name"], "get_weather_for_weather");
        assert_eq!(conv["answer"]["final_answer"], "");
    }

    #[test]
    fn both_message_formats_convert_as_its_converter_does() {
        let sys = json!({"role": "system", "content": "s"});
        let user = json!({"role": "user", "content": "q"});
        let finish = "{\"return_type\": \"give_answer\", \"final_answer\": \"x\"}";
        // Current format: two parallel calls answered out of order, then Finish.
        let current = vec![
            sys.clone(),
            user.clone(),
            json!({"role": "assistant", "content": "dropped", "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"b\": 1, \"a\": 2}"}},
                {"id": "b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}),
            json!({"role": "tool", "name": "g", "content": "G", "tool_call_id": "b"}),
            json!({"role": "tool", "name": "f", "content": "F", "tool_call_id": "a"}),
            json!({"role": "assistant", "content": "thinking"}),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "Finish", "arguments": finish}}]}),
        ];
        let steps = steps_from_messages(&current);
        assert_eq!(steps.len(), 4);
        assert_eq!(steps[0]["message"]["response"], "F");
        assert_eq!(steps[0]["message"]["arguments"], "{\"b\": 1, \"a\": 2}");
        assert_eq!(steps[1]["message"]["response"], "G");
        assert_eq!(
            steps[2],
            json!({"role": "assistant", "message": "thinking"})
        );
        assert_eq!(steps[3]["message"]["name"], "Finish");
        assert_eq!(steps[3]["message"]["response"], "");
        // Old format: function_call and role function.
        let old = vec![
            sys,
            user,
            json!({"role": "assistant", "content": "t", "function_call": {"name": "f", "arguments": "{}"}}),
            json!({"role": "function", "name": "f", "content": "F"}),
            json!({"role": "assistant", "content": "", "function_call": {"name": "Finish", "arguments": finish}}),
        ];
        let steps = steps_from_messages(&old);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0]["message"]["response"], "F");
        assert_eq!(steps[1]["message"]["name"], "Finish");
    }

    #[test]
    fn tree_size_and_length() {
        let mut root = Node::new(NodeType::ActionInput, "", 0);
        let mut a = Node::new(NodeType::Action, "f", 1);
        a.children.push(Node::new(NodeType::ActionInput, "{}", 2));
        root.children.push(a);
        root.children.push(Node::new(NodeType::Thought, "t", 1));
        assert_eq!(root.size(), 4);
        assert_eq!(root.max_length(), 3);
        let j = root.to_json(true);
        assert_eq!(j["children"][0]["children"][0]["io_state"], json!({}));
        assert_eq!(j["is_terminal"], false);
    }
}
