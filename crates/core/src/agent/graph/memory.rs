//! ControlLLM's state memory: every intermediate result is kept with its resource kind, and at run
//! time it corrects arguments that cannot be right: a required value left empty, or an identifier
//! that appears neither in the request nor in any result (a made-up id). Placeholders are resolved
//! first, so an argument wired by the graph is already a real output.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::{Map, Value};

use crate::agent::plan::execute::{ExecTask, Prepare};
use crate::agent::plan::placeholder::{self, Outputs};
use crate::tools::graph::{ApiNode, ToolGraph, entity_id, is_id_kind, kind_of};

/// One remembered value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    pub kind: String,
    pub value: Value,
    pub task: u32,
    pub path: String,
}

/// Leaves remembered from one output at most.
const MAX_ITEMS: usize = 200;

/// The memory of one episode.
pub(crate) struct Memory<'a> {
    graph: &'a ToolGraph,
    request: String,
    items: Mutex<Vec<Item>>,
}

impl<'a> Memory<'a> {
    pub(crate) fn new(graph: &'a ToolGraph, request: &str) -> Self {
        Memory {
            graph,
            request: request.to_lowercase(),
            items: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn items(&self) -> Vec<Item> {
        self.items.lock().map(|i| i.clone()).unwrap_or_default()
    }

    /// The most recent value of a kind.
    fn latest(&self, kind: &str) -> Option<Item> {
        self.items
            .lock()
            .ok()?
            .iter()
            .rev()
            .find(|i| i.kind == kind)
            .cloned()
    }

    /// Whether a value was given by the request or seen in a result.
    fn known(&self, v: &Value) -> bool {
        let text = match v {
            Value::String(s) => s.trim().to_lowercase(),
            other => other.to_string(),
        };
        if text.is_empty() {
            return false;
        }
        self.request.contains(&text)
            || self.items.lock().is_ok_and(|items| {
                items.iter().any(|i| {
                    let seen = match &i.value {
                        Value::String(s) => s.to_lowercase(),
                        other => other.to_string(),
                    };
                    seen == text
                })
            })
    }

    fn node(&self, function: &str) -> Option<&ApiNode> {
        self.graph.index(function).map(|i| &self.graph.apis[i])
    }
}

impl Prepare for Memory<'_> {
    fn prepare(
        &self,
        task: &ExecTask,
        outputs: &Outputs,
        notes: &mut Vec<String>,
    ) -> Result<Map<String, Value>, String> {
        let mut args = placeholder::resolve(&task.args, outputs, notes)?;
        let Some(node) = self.node(&task.tool) else {
            return Ok(args);
        };
        for port in &node.inputs {
            let value = args.get(&port.name);
            let empty = value
                .is_none_or(|v| v.is_null() || v.as_str().is_some_and(|s| s.trim().is_empty()));
            let required = node.required.contains(&port.name);
            let made_up = is_id_kind(&port.kind) && value.is_some_and(|v| !empty && !self.known(v));
            if !(made_up || (required && empty)) {
                continue;
            }
            if let Some(item) = self.latest(&port.kind) {
                notes.push(format!(
                    "`{}` corrected from memory: task {}'s {}",
                    port.name, item.task, item.path
                ));
                args.insert(port.name.clone(), item.value);
            }
        }
        Ok(args)
    }

    fn remember(&self, task: &ExecTask, output: &Value) {
        let mut found = Vec::new();
        leaves(output, String::new(), "", &mut found);
        if let Ok(mut items) = self.items.lock() {
            items.extend(found.into_iter().map(|(path, kind, value)| Item {
                kind,
                value,
                task: task.id,
                path,
            }));
        }
    }
}

/// Leaves of a real output, first element of each list only (the top hit), with kinds.
fn leaves(v: &Value, path: String, parent: &str, out: &mut Vec<(String, String, Value)>) {
    if out.len() >= MAX_ITEMS {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves(child, p, k, out);
            }
        }
        Value::Array(a) => {
            if let Some(first) = a.first() {
                leaves(first, format!("{path}[0]"), parent, out);
            }
        }
        leaf => {
            let key = path.rsplit(['.', ']']).next().unwrap_or(&path);
            let mut kind = kind_of(key);
            if kind == "id" {
                kind = entity_id(parent).unwrap_or(kind);
            }
            if !kind.is_empty() {
                out.push((path.clone(), kind, leaf.clone()));
            }
        }
    }
}

/// Kinds remembered so far, with how many values each (for the episode record).
pub(crate) fn summary(items: &[Item]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for i in items {
        *m.entry(i.kind.clone()).or_insert(0) += 1;
    }
    m
}
