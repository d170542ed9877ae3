//! A plan as HuggingGPT writes it: tasks `{id, tool, args, dep}` forming a dependency graph. Parsing
//! is forgiving about form (ids as strings, `dep` as a number, `-1` for none); validation is strict
//! about substance (unknown tools, missing tasks, cycles, missing arguments or fields) and names
//! every problem so the model can repair the plan.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::leftover::descriptions;
use super::placeholder::{self, Reference};
use crate::toolbench::Function;

/// Tasks one plan may hold.
pub(crate) const MAX_TASKS: usize = 8;

/// One planned call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct PlanTask {
    pub id: u32,
    /// A function name, or a capability the selection stage maps to one.
    pub tool: String,
    pub args: Map<String, Value>,
    /// The tasks it waits for (declared plus those its placeholders name).
    pub dep: Vec<u32>,
}

impl PlanTask {
    /// The placeholders in its arguments.
    pub(crate) fn references(&self) -> Vec<Reference> {
        placeholder::in_arguments(&self.args)
    }
}

/// What is wrong with a plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Problem {
    Malformed {
        reason: String,
    },
    Empty,
    TooMany {
        tasks: usize,
    },
    DuplicateId {
        id: u32,
    },
    UnknownTool {
        id: u32,
        tool: String,
    },
    UnknownDependency {
        id: u32,
        dep: u32,
    },
    Cycle {
        tasks: Vec<u32>,
    },
    MissingArgument {
        id: u32,
        param: String,
    },
    UnknownField {
        id: u32,
        reference: u32,
        path: String,
    },
    MadeUpId {
        id: u32,
        param: String,
        value: String,
        use_instead: String,
    },
    /// An earlier result named in a form no resolver reads (`<call_1>.id`): it would be sent as text.
    StrayReference {
        id: u32,
        param: String,
        reference: String,
    },
    /// A value described instead of given (`<id of Rome from call_1 result>`): it would be sent as
    /// text. Tolerable: at run time it may still be filled from an output, or the call is withheld.
    Description {
        id: u32,
        param: String,
        text: String,
    },
}

impl Problem {
    /// The task at fault, when one is.
    pub(crate) fn task(&self) -> Option<u32> {
        match self {
            Problem::DuplicateId { id }
            | Problem::UnknownTool { id, .. }
            | Problem::UnknownDependency { id, .. }
            | Problem::MissingArgument { id, .. }
            | Problem::UnknownField { id, .. }
            | Problem::MadeUpId { id, .. }
            | Problem::StrayReference { id, .. }
            | Problem::Description { id, .. } => Some(*id),
            _ => None,
        }
    }

    /// Problems that execution can live with: a field path the template does not show may still be
    /// in the real output (the resolver falls back to a field of the same name), and a made-up id
    /// may still be answered.
    pub(crate) fn tolerable(&self) -> bool {
        matches!(
            self,
            Problem::UnknownField { .. } | Problem::MadeUpId { .. } | Problem::Description { .. }
        )
    }

    /// Worth a repair round: every problem but an unknown field.
    pub(crate) fn needs_repair(&self) -> bool {
        !matches!(self, Problem::UnknownField { .. })
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Malformed { reason } => write!(f, "the plan is not valid JSON: {reason}"),
            Problem::Empty => write!(f, "the plan has no tasks"),
            Problem::TooMany { tasks } => {
                write!(f, "the plan has {tasks} tasks; use at most {MAX_TASKS}")
            }
            Problem::DuplicateId { id } => write!(f, "task id {id} is used twice"),
            Problem::UnknownTool { id, tool } => {
                write!(f, "task {id}: `{tool}` is not one of the offered tools")
            }
            Problem::UnknownDependency { id, dep } => {
                write!(f, "task {id} depends on task {dep}, which does not exist")
            }
            Problem::Cycle { tasks } => {
                write!(f, "tasks {tasks:?} depend on each other in a cycle")
            }
            Problem::MissingArgument { id, param } => {
                write!(f, "task {id} lacks the required argument `{param}`")
            }
            Problem::MadeUpId {
                id,
                param,
                value,
                use_instead,
            } => write!(
                f,
                "task {id}: `{param}` = `{value}` is not in the request; use {use_instead}"
            ),
            Problem::StrayReference {
                id,
                param,
                reference,
            } => write!(
                f,
                "task {id}: `{param}` names an earlier result as {reference}; write <resource-N> (task N's output) or <resource-N>.field"
            ),
            Problem::Description { id, param, text } => write!(
                f,
                "task {id}: `{param}` = `{text}` describes a value instead of giving it; write the value, or <resource-N>.field for task N's output"
            ),
            Problem::UnknownField {
                id,
                reference,
                path,
            } => write!(
                f,
                "task {id}: task {reference}'s output has no field `{path}`"
            ),
        }
    }
}

/// A parsed plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Plan {
    pub tasks: Vec<PlanTask>,
}

impl Plan {
    /// Reads `{"tasks": [...]}` (or a bare list).
    pub(crate) fn parse(v: &Value) -> Result<Plan, Problem> {
        let list = v
            .get("tasks")
            .or_else(|| v.get("plan"))
            .unwrap_or(v)
            .as_array()
            .ok_or_else(|| Problem::Malformed {
                reason: "expected {\"tasks\": [...]}".into(),
            })?;
        if list.is_empty() {
            return Err(Problem::Empty);
        }
        if list.len() > MAX_TASKS {
            return Err(Problem::TooMany { tasks: list.len() });
        }
        let tasks = list
            .iter()
            .enumerate()
            .map(|(i, t)| parse_task(i, t))
            .collect::<Result<Vec<_>, _>>()?;
        let mut plan = Plan { tasks };
        plan.add_implied_deps();
        Ok(plan)
    }

    /// A task waits for every task its placeholders name, declared or not (as HuggingGPT's resources).
    fn add_implied_deps(&mut self) {
        for t in &mut self.tasks {
            for r in t.references() {
                if !t.dep.contains(&r.task) {
                    t.dep.push(r.task);
                }
            }
        }
    }

    /// The plan as JSON for the episode record.
    pub(crate) fn to_value(&self) -> Value {
        json!(self.tasks)
    }

    /// The plan as the prompt asks the model to write it (`{"tasks": [...]}`, `"dep": [-1]` for a
    /// task that waits for none), for a conversation that shows it back to the model.
    pub(crate) fn prompt_text(&self) -> String {
        let tasks: Vec<Value> = self
            .tasks
            .iter()
            .map(|t| {
                let dep = if t.dep.is_empty() {
                    json!([-1])
                } else {
                    json!(t.dep)
                };
                json!({"id": t.id, "tool": t.tool, "args": t.args, "dep": dep})
            })
            .collect();
        json!({ "tasks": tasks }).to_string()
    }

    /// Removes the given tasks and every task that (transitively) depends on one of them.
    pub(crate) fn prune(&mut self, bad: &BTreeSet<u32>) -> BTreeSet<u32> {
        let mut removed = bad.clone();
        loop {
            let before = removed.len();
            for t in &self.tasks {
                if t.dep.iter().any(|d| removed.contains(d)) {
                    removed.insert(t.id);
                }
            }
            if removed.len() == before {
                break;
            }
        }
        self.tasks.retain(|t| !removed.contains(&t.id));
        removed
    }

    /// Drops tasks that repeat an earlier task's call exactly (small models repeat their plans);
    /// whatever waited for a dropped task waits for the kept one. Returns the dropped ids.
    pub(crate) fn dedupe(&mut self) -> Vec<u32> {
        let mut kept: Vec<(String, Map<String, Value>, u32)> = Vec::new();
        let mut alias: BTreeMap<u32, u32> = BTreeMap::new();
        for t in &self.tasks {
            match kept
                .iter()
                .find(|(tool, args, _)| *tool == t.tool && *args == t.args)
            {
                Some((_, _, id)) => {
                    alias.insert(t.id, *id);
                }
                None => kept.push((t.tool.clone(), t.args.clone(), t.id)),
            }
        }
        if alias.is_empty() {
            return Vec::new();
        }
        self.tasks.retain(|t| !alias.contains_key(&t.id));
        for t in &mut self.tasks {
            for d in &mut t.dep {
                if let Some(k) = alias.get(d) {
                    *d = *k;
                }
            }
            t.dep.sort_unstable();
            t.dep.dedup();
            for v in t.args.values_mut() {
                rename_references(v, &alias);
            }
        }
        alias.into_keys().collect()
    }

    /// Dependency edges `(from, to)`: `to` waits for `from`.
    pub(crate) fn edges(&self) -> Vec<(u32, u32)> {
        self.tasks
            .iter()
            .flat_map(|t| t.dep.iter().map(move |d| (*d, t.id)))
            .collect()
    }

    /// Topological layers (tasks of one layer are independent), or the tasks left in a cycle.
    pub(crate) fn levels(&self) -> Result<Vec<Vec<u32>>, Vec<u32>> {
        let ids: BTreeSet<u32> = self.tasks.iter().map(|t| t.id).collect();
        let mut done: BTreeSet<u32> = BTreeSet::new();
        let mut levels = Vec::new();
        while done.len() < ids.len() {
            let layer: Vec<u32> = self
                .tasks
                .iter()
                .filter(|t| !done.contains(&t.id))
                .filter(|t| t.dep.iter().all(|d| done.contains(d) || !ids.contains(d)))
                .map(|t| t.id)
                .collect();
            if layer.is_empty() {
                return Err(ids.difference(&done).copied().collect());
            }
            done.extend(layer.iter().copied());
            levels.push(layer);
        }
        Ok(levels)
    }

    /// Every problem of the plan against the offered functions. `external` are ids of tasks that
    /// already ran (a re-plan may wait for them and use their outputs; it may not reuse their ids).
    pub(crate) fn validate(
        &self,
        functions: &[Function],
        external: &BTreeSet<u32>,
    ) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut seen = external.clone();
        for t in &self.tasks {
            if !seen.insert(t.id) {
                problems.push(Problem::DuplicateId { id: t.id });
            }
        }
        let by_id: BTreeMap<u32, &PlanTask> = self.tasks.iter().map(|t| (t.id, t)).collect();
        for t in &self.tasks {
            let f = find_function(functions, &t.tool);
            match f {
                None => problems.push(Problem::UnknownTool {
                    id: t.id,
                    tool: t.tool.clone(),
                }),
                Some(f) => problems.extend(missing_arguments(t, f)),
            }
            problems.extend(stray_references(t));
            for d in &t.dep {
                if !by_id.contains_key(d) && !external.contains(d) {
                    problems.push(Problem::UnknownDependency { id: t.id, dep: *d });
                }
            }
            for r in t.references() {
                let template = by_id
                    .get(&r.task)
                    .and_then(|dep| find_function(functions, &dep.tool))
                    .and_then(|f| f.doc.template());
                let known = template.as_ref().is_none_or(|tpl| {
                    !tpl.is_object() || placeholder::follow(tpl, &r.path, true).is_some()
                });
                if by_id.contains_key(&r.task) && !known {
                    problems.push(Problem::UnknownField {
                        id: t.id,
                        reference: r.task,
                        path: r.path_text(),
                    });
                }
            }
        }
        if let Err(cycle) = self.levels() {
            problems.push(Problem::Cycle { tasks: cycle });
        }
        problems
    }
}

/// Renames `<resource-N>` placeholders by `alias` (old id → new id).
pub(crate) fn rename_references(v: &mut Value, alias: &BTreeMap<u32, u32>) {
    match v {
        Value::String(s) => {
            for (from, to) in alias {
                *s = s.replace(&format!("<resource-{from}>"), &format!("<resource-{to}>"));
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rename_references(x, alias)),
        Value::Object(m) => m.values_mut().for_each(|x| rename_references(x, alias)),
        _ => {}
    }
}

/// The offered function a task names: exactly, or by the suffix rule of the tool caller.
pub(crate) fn find_function<'a>(functions: &'a [Function], tool: &str) -> Option<&'a Function> {
    let tool = tool.trim();
    functions.iter().find(|f| f.name == tool).or_else(|| {
        (!tool.is_empty())
            .then(|| functions.iter().find(|f| f.name.ends_with(tool)))
            .flatten()
    })
}

fn stray_references(t: &PlanTask) -> Vec<Problem> {
    let mut out = Vec::new();
    for (param, v) in &t.args {
        let mut stack = vec![v];
        while let Some(v) = stack.pop() {
            match v {
                Value::String(s) => {
                    out.extend(
                        placeholder::stray_references(s)
                            .into_iter()
                            .map(|reference| Problem::StrayReference {
                                id: t.id,
                                param: param.clone(),
                                reference,
                            }),
                    );
                    out.extend(
                        descriptions(s)
                            .into_iter()
                            .map(|text| Problem::Description {
                                id: t.id,
                                param: param.clone(),
                                text,
                            }),
                    );
                }
                Value::Array(a) => stack.extend(a),
                Value::Object(m) => stack.extend(m.values()),
                _ => {}
            }
        }
    }
    out
}

fn missing_arguments(t: &PlanTask, f: &Function) -> Vec<Problem> {
    f.required
        .iter()
        .filter(|p| {
            t.args
                .get(p.as_str())
                .is_none_or(|v| v.is_null() || v.as_str().is_some_and(|s| s.trim().is_empty()))
        })
        .map(|p| Problem::MissingArgument {
            id: t.id,
            param: p.clone(),
        })
        .collect()
}

fn parse_task(i: usize, t: &Value) -> Result<PlanTask, Problem> {
    let bad = |reason: String| Problem::Malformed { reason };
    let id = match t.get("id") {
        Some(v) => {
            number(v).ok_or_else(|| bad(format!("task #{}: `id` is not a number", i + 1)))?
        }
        None => (i + 1) as u32,
    };
    let tool = ["tool", "task", "name", "function"]
        .iter()
        .find_map(|k| t.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| bad(format!("task {id} has no `tool`")))?
        .to_string();
    let args = match t.get("args").or_else(|| t.get("arguments")) {
        Some(Value::Object(m)) => m.clone(),
        Some(Value::String(s)) => serde_json::from_str::<Map<String, Value>>(s)
            .map_err(|e| bad(format!("task {id}: `args` is not an object ({e})")))?,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(bad(format!("task {id}: `args` is not an object"))),
    };
    let dep = match t.get("dep") {
        Some(Value::Array(a)) => a.iter().filter_map(number_or_none).collect(),
        Some(v) => number_or_none(v).into_iter().collect(),
        None => Vec::new(),
    };
    Ok(PlanTask {
        id,
        tool,
        args,
        dep,
    })
}

fn number(v: &Value) -> Option<u32> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A dependency id; `-1` (or anything not a task id) means none.
fn number_or_none(v: &Value) -> Option<u32> {
    number(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(v: Value) -> Plan {
        Plan::parse(&v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn parses_lenient_forms_and_implied_dependencies() {
        let p = plan(json!({"tasks": [
            {"id": "1", "tool": "a", "args": {"x": "1"}, "dep": -1},
            {"id": 2, "tool": "b", "args": "{\"y\": \"<resource-1>.z\"}", "dep": [-1]},
        ]}));
        assert_eq!(p.tasks[0].dep, Vec::<u32>::new());
        assert_eq!(p.tasks[1].dep, vec![1]);
        assert_eq!(p.edges(), vec![(1, 2)]);
        assert_eq!(p.levels(), Ok(vec![vec![1], vec![2]]));
    }

    #[test]
    fn malformed_plans_are_named() {
        assert_eq!(Plan::parse(&json!({"tasks": []})), Err(Problem::Empty));
        assert!(matches!(
            Plan::parse(&json!({"tasks": [{"id": 1}]})),
            Err(Problem::Malformed { .. })
        ));
        let many: Vec<Value> = (0..9).map(|i| json!({"id": i, "tool": "a"})).collect();
        assert_eq!(
            Plan::parse(&json!({"tasks": many})),
            Err(Problem::TooMany { tasks: 9 })
        );
    }

    #[test]
    fn cycles_are_found_and_pruning_takes_dependants() {
        let mut p = plan(json!([
            {"id": 1, "tool": "a", "dep": [3]},
            {"id": 2, "tool": "a", "dep": [1]},
            {"id": 3, "tool": "a", "dep": [2]},
            {"id": 4, "tool": "a", "dep": []},
            {"id": 5, "tool": "a", "dep": [4]},
        ]));
        assert_eq!(p.levels(), Err(vec![1, 2, 3]));
        let removed = p.prune(&BTreeSet::from([4]));
        assert_eq!(removed, BTreeSet::from([4, 5]));
        assert_eq!(p.tasks.len(), 3);
    }

    #[test]
    fn repeated_calls_are_dropped_and_their_dependants_rewired() {
        let mut p = plan(json!([
            {"id": 1, "tool": "search", "args": {"q": "x"}},
            {"id": 2, "tool": "search", "args": {"q": "x"}},
            {"id": 3, "tool": "cast", "args": {"id": "<resource-2>.id"}, "dep": [2]},
            {"id": 4, "tool": "search", "args": {"q": "y"}},
        ]));
        assert_eq!(p.dedupe(), vec![2]);
        assert_eq!(p.tasks.len(), 3);
        assert_eq!(p.tasks[1].dep, vec![1]);
        assert_eq!(p.tasks[1].args["id"], "<resource-1>.id");
    }
}
