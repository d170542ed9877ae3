//! A check HuggingGPT does not have, borrowed from ControlLLM's state memory: an identifier
//! argument (`movie_id`, `hotel_id`) written as a literal the request does not contain is made up
//! (small models copy a parameter's example value) when another task of the plan produces that
//! kind of identifier. The repair round is shown which placeholder to use instead.

use serde_json::Value;

use super::dag::{Plan, Problem, find_function};
use crate::toolbench::Function;
use crate::tools::graph::{is_id_kind, kind_of, template_outputs};

/// Made-up identifiers of a plan whose real value another task would produce.
pub(crate) fn made_up_ids(plan: &Plan, functions: &[Function], query: &str) -> Vec<Problem> {
    let query = query.to_lowercase();
    let mut problems = Vec::new();
    for t in &plan.tasks {
        for (param, value) in &t.args {
            let kind = kind_of(param);
            let Some(text) = literal(value) else {
                continue;
            };
            if !is_id_kind(&kind) || query.contains(&text.to_lowercase()) {
                continue;
            }
            let producer = plan.tasks.iter().filter(|o| o.id != t.id).find_map(|o| {
                let f = find_function(functions, &o.tool)?;
                // An API taking this id only echoes it back; it does not find one.
                if f.params.iter().any(|p| kind_of(p) == kind) {
                    return None;
                }
                let outputs = template_outputs(&f.doc.template()?);
                let port = outputs.iter().find(|p| p.kind == kind)?;
                Some(format!("<resource-{}>.{}", o.id, port.name))
            });
            if let Some(use_instead) = producer {
                problems.push(Problem::MadeUpId {
                    id: t.id,
                    param: param.clone(),
                    value: text,
                    use_instead,
                });
            }
        }
    }
    problems
}

/// A value written out (no placeholder).
fn literal(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.contains("<resource-") && !s.trim().is_empty() => {
            Some(s.trim().to_string())
        }
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
