//! Tool-graph search (ControlLLM's Thoughts-on-Graph on API tasks): the request is split into
//! subtasks with inputs and outputs, a solution path per subtask is searched on the tool graph with
//! the model scoring relevance (`--strategy`), the solutions are ranked by the model, and the best
//! ones run (independent subtasks in parallel) with a state memory that corrects arguments; the next
//! solution of a subtask is its fallback. One last call writes the answer, as in `plan`.

pub(crate) mod decompose;
pub(crate) mod judge;
pub(crate) mod memory;
mod repair;
pub(crate) mod search;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{Map, Value, json};

use self::decompose::Subtask;
use self::memory::Memory;
use self::search::{SearchOptions, Solution};
use super::Method;
use super::episode::Episode;
use super::parse::first_json_object;
use super::plan::execute::{self, ExecTask, Execution, TaskStatus};
use super::plan::placeholder::Outputs;
use super::plan::{Progress, conclude, model_failure, respond};
use super::{AgentError, AgentOptions, SolveContext, Solver};
use crate::llm::Purpose;
use crate::llm::{CompletionRequest, Message};
use crate::prompts::PromptName;
use crate::toolbench::{Function, Task};
use crate::tools::graph::{ToolGraph, is_id_kind, kind_of};

/// Relevance that makes an API the end of a solution (4 of 5).
const GOAL: f32 = 0.8;
/// Solutions kept per subtask (the best runs, the others are fallbacks).
const MAX_SOLUTIONS: usize = 3;
/// Tool graphs kept in memory (one per distinct tool set).
const CACHED_GRAPHS: usize = 64;

pub(crate) struct GraphSearch {
    options: AgentOptions,
    /// Graphs by tool set, other than the whole catalogue's (shared through the options).
    graphs: Mutex<HashMap<Vec<String>, Graphed>>,
}

/// A tool set's graph and where it came from.
type Graphed = (Arc<ToolGraph>, GraphFrom);

/// Where an episode's tool graph came from (`details.graph_from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum GraphFrom {
    /// The shared catalogue graph, as loaded once for the run.
    Catalogue,
    /// Cut out of the shared catalogue graph.
    CatalogueSubgraph,
    /// Built from the tool set's docs.
    Built,
}

impl GraphSearch {
    pub(crate) fn new(options: &AgentOptions) -> Self {
        GraphSearch {
            options: options.clone(),
            graphs: Mutex::new(HashMap::new()),
        }
    }

    /// The graph of a tool set and where it came from: the shared catalogue graph itself
    /// (`--tools all`), cut out of it (`--tools retrieved:K`), or built from the functions' docs
    /// (any other set); cut and built graphs are kept by tool set.
    fn graph_for(&self, functions: &[Function]) -> Graphed {
        let catalogue = self.options.catalogue_graph.as_ref();
        if let Some(c) = catalogue.filter(|c| c.is_whole(functions)) {
            return (c.graph().clone(), GraphFrom::Catalogue);
        }
        let make = || match catalogue.and_then(|c| c.restrict_to(functions)) {
            Some(g) => (Arc::new(g), GraphFrom::CatalogueSubgraph),
            None => (Arc::new(ToolGraph::build(functions)), GraphFrom::Built),
        };
        let mut key: Vec<String> = functions.iter().map(|f| f.name.clone()).collect();
        key.sort();
        let Ok(mut cache) = self.graphs.lock() else {
            return make();
        };
        if cache.len() >= CACHED_GRAPHS && !cache.contains_key(&key) {
            cache.clear();
        }
        cache.entry(key).or_insert_with(make).clone()
    }

    fn search_options(&self) -> SearchOptions {
        SearchOptions {
            strategy: self.options.strategy,
            beam_width: self.options.beam_width,
            threshold: self.options.threshold,
            max_path: self.options.max_path,
            goal: GOAL,
            max_solutions: MAX_SOLUTIONS,
        }
    }
}

#[async_trait]
impl Solver for GraphSearch {
    fn method(&self) -> Method {
        Method::Graph
    }

    async fn solve(&self, task: &Task, ctx: &SolveContext) -> Result<Episode, AgentError> {
        let started = Instant::now();
        let mut progress = Progress {
            details: json!({"strategy": self.options.strategy.as_str()}),
            ..Progress::default()
        };
        let error = model_failure(self.stages(task, ctx, started, &mut progress).await)?;
        Ok(conclude(
            Method::Graph,
            PromptName::GraphDecompose,
            task,
            ctx,
            progress,
            error,
        )
        .await)
    }
}

/// One subtask's solutions, best first.
struct Searched {
    subtask: Subtask,
    solutions: Vec<Solution>,
}

impl GraphSearch {
    async fn stages(
        &self,
        task: &Task,
        ctx: &SolveContext,
        started: Instant,
        progress: &mut Progress,
    ) -> Result<(), AgentError> {
        let mut notes = Vec::new();
        let tools = tool_names(ctx.tools.functions());
        let subtasks = decompose::decompose(ctx, &task.query, &tools, &mut notes).await?;
        let (graph, from) = self.graph_for(ctx.tools.functions());
        progress.details["graph"] = json!(graph.size());
        progress.details["graph_from"] = json!(from);
        progress.details["subtasks"] = json!(subtasks);
        let mut searched = Vec::new();
        let mut records = Vec::new();
        for sub in subtasks {
            let (s, record) = self.search_subtask(ctx, &graph, sub, &mut notes).await?;
            records.push(record);
            searched.push(s);
        }
        progress.details["searches"] = json!(records);

        let memory = Memory::new(&graph, &task.query);
        let mut wiring = Wiring::default();
        for (i, s) in searched.iter().enumerate() {
            if let Some(best) = s.solutions.first() {
                wiring
                    .add(ctx, &graph, i, &s.subtask, best, &task.query, &mut notes)
                    .await?;
            }
        }
        let parallel = self.options.parallel;
        let exec = execute::execute(
            ctx,
            &wiring.tasks,
            parallel,
            &memory,
            started,
            &Outputs::new(),
        )
        .await;
        progress.details["execution"] = execution_record(&exec);
        progress.runs.extend(exec.runs.iter().cloned());
        progress.unresolved += exec.unresolved;

        // Calls withheld for a placeholder left in their arguments: filled again, then run.
        let rewired =
            repair::rewire(ctx, &task.query, &searched, &mut wiring, &exec, &mut notes).await?;
        let mut outputs = exec.outputs.clone();
        let mut fixed = BTreeSet::new();
        if !rewired.is_empty() {
            let tasks: Vec<ExecTask> = rewired.iter().flat_map(|r| r.tasks.clone()).collect();
            let again = execute::execute(ctx, &tasks, parallel, &memory, started, &outputs).await;
            progress.details["repair"] = execution_record(&again);
            progress.runs.extend(execute::second_round(&again.runs));
            progress.unresolved += again.unresolved;
            fixed = repair::fixed(&rewired, &again);
            outputs = again.outputs;
        }

        // Fallbacks: the next solution of each subtask whose best one failed.
        let mut failed = wiring.failed_subtasks(&exec);
        failed.retain(|i| !fixed.contains(i));
        if !failed.is_empty() {
            let mut again = Wiring {
                next_id: wiring.next_id,
                built: wiring.succeeded(&exec),
                ..Wiring::default()
            };
            for i in failed {
                if let Some(next) = searched[i].solutions.get(1) {
                    again
                        .add(
                            ctx,
                            &graph,
                            i,
                            &searched[i].subtask,
                            next,
                            &task.query,
                            &mut notes,
                        )
                        .await?;
                }
            }
            if !again.tasks.is_empty() {
                let exec2 =
                    execute::execute(ctx, &again.tasks, parallel, &memory, started, &outputs).await;
                progress.details["fallback"] = execution_record(&exec2);
                progress.runs.extend(execute::second_round(&exec2.runs));
                progress.unresolved += exec2.unresolved;
            }
        }
        progress.details["memory"] = json!(memory::summary(&memory.items()));
        progress.details["notes"] = json!(notes);
        let (action, tokens, note) = respond::respond(ctx, &task.query, &progress.runs).await?;
        progress.finish = Some((action, tokens, note.into_iter().collect()));
        Ok(())
    }

    async fn search_subtask(
        &self,
        ctx: &SolveContext,
        graph: &ToolGraph,
        sub: Subtask,
        notes: &mut Vec<String>,
    ) -> Result<(Searched, Value), AgentError> {
        let given: BTreeSet<String> = sub.inputs.iter().map(|i| kind_of(&i.name)).collect();
        let scorer = judge::LlmScorer::new(ctx, graph, &sub);
        let result = search::search(graph, &given, &scorer, &self.search_options()).await;
        let mut solutions = result.solutions.clone();
        let partial = solutions.is_empty();
        if partial {
            solutions.extend(result.best_partial.clone());
        }
        let order = judge::rank(ctx, graph, &sub, &solutions, notes).await?;
        let ordered: Vec<Solution> = order
            .iter()
            .filter_map(|i| solutions.get(*i).cloned())
            .collect();
        ctx.observer.note(&format!(
            "subtask `{}`: {} solutions{}",
            sub.task,
            ordered.len(),
            ordered
                .first()
                .map(|s| format!(", best {}", judge::describe(graph, s)))
                .unwrap_or_default()
        ));
        let record = json!({
            "subtask": sub.task,
            "expansions": result.expansions,
            "solutions": ordered.iter().map(|s| json!({
                "tools": s.path.iter().map(|a| graph.apis[*a].function.clone()).collect::<Vec<_>>(),
                "scores": s.scores,
            })).collect::<Vec<_>>(),
            "best_partial_used": partial && !ordered.is_empty(),
            "notes": scorer.notes(),
        });
        Ok((
            Searched {
                subtask: sub,
                solutions: ordered,
            },
            record,
        ))
    }
}

/// One line per function (name and description): the decomposition needs to know what exists, not
/// how to call it, and a small model copies a full listing into its subtasks.
fn tool_names(functions: &[Function]) -> String {
    functions
        .iter()
        .map(|f| {
            let d = crate::text::clip(&f.doc.description().replace('\n', " "), 100);
            format!("- {}: {d}\n", f.doc.api_name)
        })
        .collect()
}

fn execution_record(exec: &Execution) -> Value {
    json!({"runs": exec.runs, "overlaps": exec.overlaps()})
}

/// Solutions turned into calls: graph edges become placeholders, the subtask's inputs fill the
/// values the request gives, and the model fills what is still missing in one call per solution.
#[derive(Default)]
struct Wiring {
    tasks: Vec<ExecTask>,
    /// (task id, API) of every call wired so far, earlier subtasks included.
    built: Vec<(u32, usize)>,
    /// Task ids by subtask.
    owners: Vec<(usize, Vec<u32>)>,
    next_id: u32,
}

impl Wiring {
    #[allow(clippy::too_many_arguments)]
    async fn add(
        &mut self,
        ctx: &SolveContext,
        graph: &ToolGraph,
        index: usize,
        sub: &Subtask,
        sol: &Solution,
        query: &str,
        notes: &mut Vec<String>,
    ) -> Result<(), AgentError> {
        let first = self.next_id.max(1);
        let mut tasks = Vec::new();
        let mut missing: Vec<(usize, String)> = Vec::new();
        for (k, &api) in sol.path.iter().enumerate() {
            let (t, m) = self.wire_call(graph, query, sub, sol, first, k, api);
            missing.extend(m.into_iter().map(|p| (k, p)));
            tasks.push(t);
        }
        if !missing.is_empty() {
            fill_missing(ctx, query, sub, &mut tasks, &missing, notes).await?;
        }
        let reused = self.reuse_identical(&mut tasks, notes);
        self.built.extend(
            tasks
                .iter()
                .filter_map(|t| graph.index(&t.tool).map(|a| (t.id, a))),
        );
        let ids = tasks.iter().map(|t| t.id).chain(reused).collect();
        self.owners.push((index, ids));
        self.next_id = first + sol.path.len() as u32;
        self.tasks.extend(tasks);
        Ok(())
    }

    /// A call identical to one already wired (another subtask's) is not made twice: the later
    /// calls of this solution take the earlier call's output instead.
    /// Returns the ids of the earlier calls reused.
    fn reuse_identical(&self, tasks: &mut Vec<ExecTask>, notes: &mut Vec<String>) -> Vec<u32> {
        let mut alias = std::collections::BTreeMap::new();
        tasks.retain(|t| {
            match self
                .tasks
                .iter()
                .find(|e| e.tool == t.tool && e.args == t.args)
            {
                Some(e) => {
                    alias.insert(t.id, e.id);
                    notes.push(format!("{} is already called as task {}", t.tool, e.id));
                    false
                }
                None => true,
            }
        });
        for t in tasks.iter_mut() {
            for d in &mut t.deps {
                if let Some(k) = alias.get(d) {
                    *d = *k;
                }
            }
            for v in t.args.values_mut() {
                crate::agent::plan::dag::rename_references(v, &alias);
            }
        }
        alias.into_values().collect()
    }

    /// One call of a solution; returns it and its required parameters left without a value.
    #[allow(clippy::too_many_arguments)]
    fn wire_call(
        &self,
        graph: &ToolGraph,
        query: &str,
        sub: &Subtask,
        sol: &Solution,
        first: u32,
        k: usize,
        api: usize,
    ) -> (ExecTask, Vec<String>) {
        let node = &graph.apis[api];
        let mut args = Map::new();
        let mut deps = Vec::new();
        let mut missing = Vec::new();
        // Producers on this path first, then calls wired for earlier subtasks; those only lend
        // identifiers (a title or a city of another subtask's result is not this one's).
        let own: Vec<(u32, usize)> = sol.path[..k]
            .iter()
            .enumerate()
            .map(|(j, a)| (first + j as u32, *a))
            .collect();
        for port in &node.inputs {
            let required = node.required.contains(&port.name);
            let given = sub.input(&port.kind);
            let earlier = self.built.iter().rev().filter(|_| is_id_kind(&port.kind));
            let fed = own.iter().chain(earlier).find_map(|(id, from)| {
                graph
                    .edges_between(*from, api)
                    .find(|e| e.param == port.name)
                    .map(|e| (*id, e.output.clone()))
            });
            match (fed, given) {
                (Some((id, output)), g) if is_id_kind(&port.kind) || g.is_none() => {
                    args.insert(
                        port.name.clone(),
                        json!(format!("<resource-{id}>.{output}")),
                    );
                    deps.push(id);
                }
                (_, Some(v)) if required || grounded(v, query) => {
                    args.insert(port.name.clone(), json!(v));
                }
                _ if required => missing.push(port.name.clone()),
                _ => {}
            }
        }
        deps.sort_unstable();
        deps.dedup();
        let task = ExecTask {
            id: first + k as u32,
            tool: node.function.clone(),
            args,
            deps,
        };
        (task, missing)
    }

    /// Subtasks any of whose calls did not succeed.
    fn failed_subtasks(&self, exec: &Execution) -> Vec<usize> {
        let bad: BTreeSet<u32> = exec
            .runs
            .iter()
            .filter(|r| r.status != TaskStatus::Done)
            .map(|r| r.id)
            .collect();
        self.owners
            .iter()
            .filter(|(_, ids)| ids.iter().any(|i| bad.contains(i)))
            .map(|(i, _)| *i)
            .collect()
    }

    /// The calls that succeeded, for later subtasks to take outputs from.
    fn succeeded(&self, exec: &Execution) -> Vec<(u32, usize)> {
        self.built
            .iter()
            .filter(|(id, _)| exec.outputs.contains_key(id))
            .copied()
            .collect()
    }
}

/// Asks the model for the required values no input or output provides, for one solution.
async fn fill_missing(
    ctx: &SolveContext,
    query: &str,
    sub: &Subtask,
    tasks: &mut [ExecTask],
    missing: &[(usize, String)],
    notes: &mut Vec<String>,
) -> Result<(), AgentError> {
    let mut props = Map::new();
    let mut lines = Vec::new();
    for (k, t) in tasks.iter().enumerate() {
        let params: Vec<&str> = missing
            .iter()
            .filter(|(i, _)| *i == k)
            .map(|(_, p)| p.as_str())
            .collect();
        if params.is_empty() {
            continue;
        }
        let key = format!("call_{}", k + 1);
        let mut fields = Map::new();
        for p in &params {
            fields.insert(
                (*p).to_string(),
                json!({"type": "string", "maxLength": 200}),
            );
        }
        props.insert(
            key.clone(),
            json!({"type": "object", "properties": fields, "required": params}),
        );
        let doc = ctx
            .tools
            .functions()
            .iter()
            .find(|f| f.name == t.tool)
            .map(|f| describe_params(f, &params))
            .unwrap_or_default();
        lines.push(format!("{key}: {} needs {doc}", t.tool));
    }
    let keys: Vec<&String> = props.keys().collect();
    let schema = json!({"type": "object", "properties": props, "required": keys});
    let prompt = ctx.prompts.render(
        PromptName::GraphArgs,
        &[
            ("query", query),
            ("subtask", &sub.task),
            ("calls", &lines.join("\n")),
            (
                "assume_missing",
                &ctx.assume_missing(PromptName::AssumeMissing)?,
            ),
        ],
    )?;
    let request = CompletionRequest::new(Purpose::Arguments, vec![Message::user(prompt)])
        .with_json_schema("arguments", schema)
        .with_max_tokens(ctx.options.max_tokens);
    let reply = ctx.complete(&request).await?;
    let Some(v) = first_json_object(&reply.content) else {
        notes.push(format!("argument reply unreadable for `{}`", sub.task));
        return Ok(());
    };
    let ids: Vec<u32> = tasks.iter().map(|t| t.id).collect();
    for (k, param) in missing {
        let value = &v[format!("call_{}", k + 1)][param.as_str()];
        if let Some(t) = tasks.get_mut(*k)
            && !value.is_null()
        {
            let (value, deps) = call_references(value, &ids, *k);
            t.args.insert(param.clone(), value);
            t.deps.extend(deps);
            t.deps.sort_unstable();
            t.deps.dedup();
        }
    }
    Ok(())
}

/// A value the model wrote for call `k` of a solution, its references to an earlier call of the same
/// solution in the prompt's numbering (`<call_1>.rankings[0].playerId`) turned into the placeholder
/// execution resolves; returns the tasks it now waits for. Any other reference is left as it is, and
/// execution refuses it: an unresolved reference never reaches an API as text.
fn call_references(value: &Value, ids: &[u32], k: usize) -> (Value, Vec<u32>) {
    let Value::String(text) = value else {
        return (value.clone(), Vec::new());
    };
    let mut text = text.clone();
    let mut deps = Vec::new();
    for stray in crate::agent::plan::placeholder::stray_references(&text.clone()) {
        let lower = stray.to_lowercase();
        let number: String = lower.chars().filter(char::is_ascii_digit).collect();
        let earlier = number.parse::<usize>().ok().filter(|j| (1..=k).contains(j));
        if let (true, Some(j)) = (lower.starts_with("<call"), earlier) {
            text = text.replace(&stray, &format!("<resource-{}>", ids[j - 1]));
            deps.push(ids[j - 1]);
        }
    }
    (Value::String(text), deps)
}

/// Whether the request contains the value (case-insensitive).
fn grounded(value: &str, query: &str) -> bool {
    let v = value.trim().to_lowercase();
    !v.is_empty() && query.to_lowercase().contains(&v)
}

fn describe_params(f: &Function, params: &[&str]) -> String {
    let props = &f.schema["parameters"]["properties"];
    params
        .iter()
        .map(|p| {
            let d = props[*p]["description"].as_str().unwrap_or("");
            format!("{p} ({})", crate::text::clip(d, 80))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
