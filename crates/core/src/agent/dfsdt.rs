//! DFSDT (ToolLLM's `DFS_woFilter_w2`): a depth-first search over decision trees. Each node may be
//! expanded `width` times; on a re-expansion the model is shown its earlier attempts and asked to do
//! something different. A dead end returns to the parent, a give-up backs off one extra level, and a
//! final answer or the LLM-call budget ends the search.
//!
//! A node's conversation is exactly its ancestors' messages. As in ToolBench (`DFS.py` marks the
//! diversity message `valid: False` after the one generation it was for), the earlier attempts are
//! shown only to the generation that re-expands a node, so the thought it writes may speak of calls
//! that its descendants' history does not show.

use async_trait::async_trait;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use crate::llm::Message;
use crate::llm::Purpose;
use crate::toolbench::Task;
use crate::toolbench::answer::{Node, NodeType};
use crate::tools::Finish;

use super::Method;
use super::common::{self, TurnError};
use super::epilogue::{self, Ending, Layout, tool_call_messages};
use super::episode::{Episode, FinishKind, Step};
use super::{AgentError, AgentOptions, SolveContext, Solver};

/// What a finished subtree tells its parent: ToolBench's back-off numbers (`1`, `n > 1`, `10 000`,
/// `100 000` in `DFS_woFilter_w2`) by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backoff {
    /// Expand the next sibling (ToolBench's 1).
    NextSibling,
    /// Unwind this many more levels before expanding a sibling (ToolBench's `n + 1`): a finished
    /// node sends 1, so its parent stops expanding and the grandparent goes on.
    Unwind(u32),
    /// An answer was found: unwind the whole search (ToolBench's 10 000).
    Answered,
    /// The LLM-call budget is spent, the model is down or the harness gave up: unwind the whole
    /// search (ToolBench's 100 000).
    Stop,
}

impl Backoff {
    /// What the parent of a subtree that returned `self` returns, when it does not go on.
    fn up(self) -> Option<Backoff> {
        match self {
            Backoff::NextSibling => None,
            Backoff::Unwind(1) => Some(Backoff::NextSibling),
            Backoff::Unwind(n) => Some(Backoff::Unwind(n - 1)),
            Backoff::Answered | Backoff::Stop => Some(self),
        }
    }
}

pub(crate) struct Dfsdt {
    width: u32,
}

impl Dfsdt {
    pub(crate) fn new(options: &AgentOptions) -> Self {
        Dfsdt {
            width: options.width.max(1),
        }
    }
}

/// One node of the search tree (an arena entry).
struct TreeNode {
    node: Node,
    children: Vec<usize>,
    parent: Option<usize>,
    /// The conversation up to and including this node.
    messages: Vec<Message>,
    /// The action step this node's chain ends with.
    step: Option<Step>,
    terminal: bool,
    give_up: bool,
}

struct Search<'a> {
    ctx: &'a SolveContext,
    nodes: Vec<TreeNode>,
    answer: Option<usize>,
    give_up: Option<usize>,
    explored: Vec<Step>,
    expansions: u32,
    out_of_budget: bool,
    llm_error: Option<String>,
    /// The model ignored a forced Finish and the harness gave up: the search ends there, since
    /// every other branch would meet the same model.
    harness_ended: bool,
}

#[async_trait]
impl Solver for Dfsdt {
    fn method(&self) -> Method {
        Method::Dfsdt
    }

    async fn solve(&self, task: &Task, ctx: &SolveContext) -> Result<Episode, AgentError> {
        let system = common::react_system(ctx)?;
        let root = TreeNode {
            node: Node::new(NodeType::ActionInput, "", 0),
            children: Vec::new(),
            parent: None,
            messages: vec![
                Message::system(system.clone()),
                Message::user(task.query.clone()),
            ],
            step: None,
            terminal: false,
            give_up: false,
        };
        let mut search = Search {
            ctx,
            nodes: vec![root],
            answer: None,
            give_up: None,
            explored: Vec::new(),
            expansions: 0,
            out_of_budget: false,
            llm_error: None,
            harness_ended: false,
        };
        self.dfs(&mut search, 0).await?;
        Ok(self.conclude(task, ctx, &system, search))
    }
}

impl Dfsdt {
    /// The episode: the path to the answer (or give-up) when there is one, else every explored step.
    fn conclude(
        &self,
        task: &Task,
        ctx: &SolveContext,
        system: &str,
        search: Search<'_>,
    ) -> Episode {
        let (finish, path_end) = match (search.answer, search.give_up) {
            (Some(a), _) => (FinishKind::GiveAnswer, Some(a)),
            (None, Some(g)) => (FinishKind::GiveUp, Some(g)),
            (None, None) if search.llm_error.is_some() => (FinishKind::Error, None),
            (None, None) => (FinishKind::Limit, None),
        };
        let path = path_end
            .map(|end| path_steps(&search.nodes, end))
            .unwrap_or_default();
        let attempts = path_end
            .map(|end| shown_attempts(&search.nodes, end))
            .unwrap_or_default();
        let root = build_tree(&search.nodes, 0);
        let forward_args = json!({
            "single_chain_max_step": ctx.options.budget.max_depth.unwrap_or(ctx.options.budget.max_steps),
            "tree_beam_size": self.width, "max_query_count": ctx.options.budget.max_llm_calls,
            "answer": 1, "with_filter": false
        });
        let details = json!({
            "tree_size": root.size(), "tree_max_length": root.max_length(), "expansions": search.expansions,
            "explored_steps": search.explored.len(), "out_of_budget": search.out_of_budget,
            "harness_gave_up": search.harness_ended,
        });
        let steps = if path.is_empty() {
            search.explored
        } else {
            path.clone()
        };
        let ending = Ending {
            finish,
            steps,
            details,
            error: search.llm_error,
        };
        let layout = Layout::Tree {
            root: &root,
            path: &path,
            forward_args,
        };
        let mut episode = epilogue::conclude(Method::Dfsdt, task, ctx, system, layout, ending);
        episode.attempts = attempts;
        episode
    }
}

impl Dfsdt {
    /// Expands node `n` up to `width` times, depth first; returns how far to back off.
    fn dfs<'s, 'a: 's>(
        &'s self,
        s: &'s mut Search<'a>,
        n: usize,
    ) -> BoxFuture<'s, Result<Backoff, AgentError>> {
        Box::pin(async move {
            s.expansions += 1;
            s.nodes[n].node.expand_num = s.expansions;
            if s.nodes[n].terminal {
                s.answer = Some(n);
                return Ok(Backoff::Unwind(1));
            }
            if s.nodes[n].give_up {
                s.give_up.get_or_insert(n);
                return Ok(Backoff::Unwind(1));
            }
            let on_path = path_steps(&s.nodes, n).len();
            let open = s
                .ctx
                .options
                .budget
                .chain_open(on_path, s.nodes[n].node.depth);
            if !open || s.nodes[n].node.pruned {
                s.nodes[n].node.pruned = true;
                return Ok(Backoff::NextSibling);
            }
            for _ in 0..self.width {
                let mut messages = s.nodes[n].messages.clone();
                if !s.nodes[n].children.is_empty() {
                    messages.push(Message::user(diversity_prompt(s, n)?));
                    s.ctx.observer.note(&format!(
                        "re-expanding a node at depth {}",
                        s.nodes[n].node.depth
                    ));
                }
                let turn = match common::turn(s.ctx, Purpose::Dfsdt, messages.clone(), 0.0).await {
                    Ok((action, prompt_tokens)) => {
                        let earlier = path_steps(&s.nodes, n);
                        match common::guard_repeat(
                            s.ctx,
                            Purpose::Dfsdt,
                            messages,
                            action,
                            &earlier,
                        )
                        .await
                        {
                            Ok((action, note)) => Ok((action, prompt_tokens, note)),
                            Err(e) => Err(TurnError::Llm(e)),
                        }
                    }
                    Err(e) => Err(e),
                };
                if s.ctx.llm_calls_spent() {
                    s.out_of_budget = true;
                    return Ok(Backoff::Stop);
                }
                let child = match turn {
                    Ok((action, prompt_tokens, note)) => {
                        expand(s, n, action, prompt_tokens, note).await
                    }
                    Err(TurnError::Malformed(e)) => {
                        let depth = s.nodes[n].node.depth + 1;
                        let mut thought =
                            Node::new(NodeType::Thought, format!("(unreadable reply: {e})"), depth);
                        thought.pruned = true;
                        add(s, n, thought, None)
                    }
                    Err(TurnError::Llm(e)) => {
                        s.llm_error = Some(e.to_string());
                        return Ok(Backoff::Stop);
                    }
                };
                let r = self.dfs(s, child).await?;
                if s.answer.is_some() {
                    return Ok(Backoff::Answered);
                }
                if s.harness_ended {
                    return Ok(Backoff::Stop);
                }
                if let Some(back) = r.up() {
                    return Ok(back);
                }
            }
            Ok(Backoff::NextSibling)
        })
    }
}

/// Runs the action and hangs its chain (Thought?, Action, Action Input) under `parent`; returns the last node.
async fn expand(
    s: &mut Search<'_>,
    parent: usize,
    action: super::parse::Action,
    prompt_tokens: u64,
    note: Option<String>,
) -> usize {
    let obs = s.ctx.act(&action.name, &action.arguments).await;
    let index = s.explored.len() as u32 + 1;
    let mut at = parent;
    let mut depth = s.nodes[parent].node.depth;
    if !action.thought.trim().is_empty() {
        depth += 1;
        at = add(
            s,
            at,
            Node::new(NodeType::Thought, action.thought.clone(), depth),
            None,
        );
    }
    depth += 1;
    at = add(
        s,
        at,
        Node::new(NodeType::Action, action.name.clone(), depth),
        None,
    );
    depth += 1;
    let mut input = Node::new(NodeType::ActionInput, action.arguments.clone(), depth);
    input.observation = Some(obs.text.clone());
    input.observation_code = Some(obs.code.number());
    let finish = obs.finish.clone();
    let mut st = Step::new(index, &action, obs, prompt_tokens);
    st.notes.extend(note);
    s.harness_ended |= common::harness_gave_up(&st);
    epilogue::record(s.ctx, &mut s.explored, st.clone());
    let last = add(s, at, input, Some(st));
    let observation = s.nodes[last].node.observation.clone().unwrap_or_default();
    // The call's id counts the calls on this path, not the search's: the conversation is one path
    // from the root, and ids that skip the other branches' calls would show them.
    let on_path = path_steps(&s.nodes, parent).len() as u32 + 1;
    let mut messages = s.nodes[parent].messages.clone();
    messages.extend(tool_call_messages(on_path, &action, &observation));
    s.nodes[last].messages = messages;
    match finish {
        Some(Finish::Answer(_)) => {
            s.nodes[last].terminal = true;
            let mut up = Some(last);
            while let Some(i) = up {
                s.nodes[i].node.finished = true;
                up = s.nodes[i].parent;
            }
        }
        Some(Finish::GiveUp) => {
            s.nodes[last].give_up = true;
            s.nodes[last].node.pruned = true;
        }
        None => {}
    }
    last
}

fn add(s: &mut Search<'_>, parent: usize, node: Node, step: Option<Step>) -> usize {
    let messages = s.nodes[parent].messages.clone();
    s.nodes.push(TreeNode {
        node,
        children: Vec::new(),
        parent: Some(parent),
        messages,
        step,
        terminal: false,
        give_up: false,
    });
    let i = s.nodes.len() - 1;
    s.nodes[parent].children.push(i);
    i
}

/// The earlier children of `n` as the model is shown them when `n` is expanded again.
fn diversity_prompt(s: &Search<'_>, n: usize) -> Result<String, AgentError> {
    let mut previous = Vec::new();
    for &c in &s.nodes[n].children {
        // Follow first children to the child chain's action.
        let mut at = c;
        while s.nodes[at].step.is_none() {
            match s.nodes[at].children.first() {
                Some(&next) => at = next,
                None => break,
            }
        }
        match &s.nodes[at].step {
            Some(st) => previous.push(json!({
                "name": st.action, "arguments": st.arguments, "function_output": st.observation.text,
            })),
            None => previous.push(json!({"name": "(none)", "arguments": "", "function_output": s.nodes[at].node.description})),
        }
    }
    let previous = serde_json::to_string_pretty(&Value::Array(previous)).unwrap_or_default();
    let former = s.nodes[n]
        .node
        .observation
        .as_deref()
        .filter(|o| !o.is_empty())
        .map(|o| format!("Your last observation before these attempts was: {o}"))
        .unwrap_or_default();
    Ok(s.ctx.prompts.render(
        s.ctx.options.budget.retry_prompt.prompt(),
        &[("previous", &previous), ("former_observation", &former)],
    )?)
}

fn path_steps(nodes: &[TreeNode], end: usize) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut at = Some(end);
    while let Some(i) = at {
        if let Some(st) = &nodes[i].step {
            steps.push(st.clone());
        }
        at = nodes[i].parent;
    }
    steps.reverse();
    steps
}

/// The earlier attempts the model was shown on the way to `end`: at each re-expansion of a node on
/// the path, the first call of every sibling branch before the path's (as `diversity_prompt` lists
/// them), root side first.
fn shown_attempts(nodes: &[TreeNode], end: usize) -> Vec<Step> {
    let mut out = Vec::new();
    let mut at = end;
    while let Some(parent) = nodes[at].parent {
        let siblings = &nodes[parent].children;
        let before = siblings.iter().take_while(|&&c| c != at);
        let shown: Vec<Step> = before.filter_map(|&c| first_step(nodes, c)).collect();
        out.splice(0..0, shown);
        at = parent;
    }
    out
}

/// The first action step of the chain starting at `n` (following first children).
fn first_step(nodes: &[TreeNode], mut n: usize) -> Option<Step> {
    loop {
        if let Some(st) = &nodes[n].step {
            return Some(st.clone());
        }
        n = *nodes[n].children.first()?;
    }
}

fn build_tree(nodes: &[TreeNode], i: usize) -> Node {
    let mut node = nodes[i].node.clone();
    node.children = nodes[i]
        .children
        .iter()
        .map(|&c| build_tree(nodes, c))
        .collect();
    node
}
