//! Judge-free tool metrics from the papers, for every method: ControlLLM's irrelevant tool inclusion
//! (IR), necessary tool inclusion (NR), argument hallucination (HR) and argument type consistency
//! (CR), from each query's `relevant APIs` and the trajectory; and HuggingGPT's planning
//! precision/recall/F1 of the planned tools (method `plan`), from the plan in our record.
//!
//! Definitions (per query, then averaged over the queries where they are defined):
//! - IR: share of the distinct tools called that are not relevant (queries with no call: undefined);
//! - NR: share of the relevant tools that were called (no call: 0);
//! - HR: share of argument values found neither in the request, nor in an earlier observation,
//!   nor among the parameter's enum values (case-insensitive text containment);
//! - CR: share of arguments whose JSON type matches the function schema (integer fits number;
//!   an argument the schema does not declare is inconsistent).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{Answer, AnswerSet, QueryKey};
use sum2act_core::toolbench::naming::function_name;
use sum2act_core::toolbench::{Catalog, FINISH, Query};

/// Relevant function names per query.
pub type Relevant = BTreeMap<QueryKey, BTreeSet<String>>;

/// The relevant APIs of `queries` as function names, through the catalogue's tool names.
pub fn relevant_functions(subset: &str, queries: &[Query], catalog: &Catalog, out: &mut Relevant) {
    for q in queries {
        let names: BTreeSet<String> = q
            .relevant()
            .iter()
            .filter_map(|[tool, api]| {
                let doc = q
                    .apis()
                    .iter()
                    .find(|d| &d.tool_name == tool && &d.api_name == api)?;
                let standard = catalog.standard_tool_name(&doc.category_name, tool);
                Some(function_name(api, &standard))
            })
            .collect();
        if !names.is_empty() {
            out.insert(QueryKey::new(subset, q.query_id), names);
        }
    }
}

/// The metrics of one subset (or `all`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ToolMetrics {
    pub subset: String,
    pub queries: usize,
    /// Queries whose relevant APIs are known.
    pub with_relevant: usize,
    pub ir: Option<f64>,
    pub nr: Option<f64>,
    pub hr: Option<f64>,
    pub cr: Option<f64>,
    /// Argument values checked for HR/CR.
    pub arguments: usize,
    /// HuggingGPT's planning scores, for runs that record plans.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanScores>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct PlanScores {
    pub plans: usize,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

/// Per-query values before averaging.
#[derive(Debug, Default)]
struct QueryScores {
    ir: Option<f64>,
    nr: Option<f64>,
    hallucinated: usize,
    consistent: usize,
    arguments: usize,
    plan: Option<(f64, f64, f64)>,
}

/// Per subset and overall (`all`).
pub fn tool_metrics(set: &AnswerSet, relevant: &Relevant) -> Vec<ToolMetrics> {
    let mut by_subset: BTreeMap<String, Vec<QueryScores>> = BTreeMap::new();
    for key in &set.expected {
        let scores = match set.answers.get(key) {
            Some(a) => score(a, relevant.get(key)),
            // A query without an answer called nothing.
            None => QueryScores {
                nr: relevant.get(key).map(|_| 0.0),
                ..QueryScores::default()
            },
        };
        by_subset
            .entry(key.subset.clone())
            .or_default()
            .push(scores);
    }
    let mut out: Vec<ToolMetrics> = by_subset
        .iter()
        .map(|(s, q)| aggregate(s, q.iter()))
        .collect();
    if by_subset.len() > 1 {
        out.push(aggregate("all", by_subset.values().flatten()));
    }
    out
}

fn score(a: &Answer, relevant: Option<&BTreeSet<String>>) -> QueryScores {
    let steps: Vec<_> = a
        .tool_steps()
        .into_iter()
        .filter(|s| s.name != FINISH)
        .collect();
    let used: BTreeSet<String> = steps.iter().map(|s| s.name.clone()).collect();
    let mut q = QueryScores::default();
    if let Some(rel) = relevant {
        if !used.is_empty() {
            q.ir = Some(used.difference(rel).count() as f64 / used.len() as f64);
        }
        q.nr = Some(used.intersection(rel).count() as f64 / rel.len().max(1) as f64);
        q.plan = planned_tools(a).map(|planned| prf(&planned, rel));
    }
    let schemas = schemas(a);
    let request = a.converted.query.to_lowercase();
    let mut seen = String::new();
    for s in &steps {
        let Ok(Value::Object(args)) = serde_json::from_str::<Value>(&s.arguments) else {
            seen.push_str(&s.response.to_lowercase());
            continue;
        };
        let props = schemas.get(&s.name);
        for (param, value) in &args {
            let spec = props.and_then(|p| p.get(param));
            q.arguments += 1;
            if type_fits(spec, value) {
                q.consistent += 1;
            }
            if !grounded(value, spec, &request, &seen) {
                q.hallucinated += 1;
            }
        }
        seen.push_str(&s.response.to_lowercase());
    }
    q
}

/// Parameter schemas by function name, from the answer's `available_tools`.
fn schemas(a: &Answer) -> BTreeMap<String, Map<String, Value>> {
    a.converted
        .available_tools
        .iter()
        .filter_map(|t| {
            let f = t.get("function").unwrap_or(t);
            let name = f["name"].as_str()?.to_string();
            let props = f["parameters"]["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            Some((name, props))
        })
        .collect()
}

fn type_fits(spec: Option<&Value>, v: &Value) -> bool {
    let Some(ty) = spec.and_then(|s| s["type"].as_str()) else {
        return false;
    };
    match ty.to_lowercase().as_str() {
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" | "float" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => true,
    }
}

/// Whether a value could have come from the request, an earlier observation or the schema's enum.
fn grounded(v: &Value, spec: Option<&Value>, request: &str, seen: &str) -> bool {
    let text = match v {
        Value::String(s) => s.trim().to_lowercase(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        Value::Bool(_) | Value::Null => return true,
        other => other.to_string().to_lowercase(),
    };
    if text.is_empty() {
        return true;
    }
    let in_enum = spec.and_then(|s| s["enum"].as_array()).is_some_and(|e| {
        e.iter()
            .any(|x| x.as_str().is_some_and(|x| x.to_lowercase() == text))
    });
    in_enum || request.contains(&text) || seen.contains(&text)
}

/// The tools of the first plan in a `plan` record.
fn planned_tools(a: &Answer) -> Option<BTreeSet<String>> {
    let r = a.record.as_ref()?;
    let tasks = r.details.get("plan")?.get("tasks")?.as_array()?;
    Some(
        tasks
            .iter()
            .filter_map(|t| t["tool"].as_str().map(str::to_string))
            .collect(),
    )
}

fn prf(planned: &BTreeSet<String>, relevant: &BTreeSet<String>) -> (f64, f64, f64) {
    let hit = planned.intersection(relevant).count() as f64;
    let p = if planned.is_empty() {
        0.0
    } else {
        hit / planned.len() as f64
    };
    let r = hit / relevant.len().max(1) as f64;
    let f = if p + r > 0.0 {
        2.0 * p * r / (p + r)
    } else {
        0.0
    };
    (p, r, f)
}

fn aggregate<'a>(subset: &str, qs: impl Iterator<Item = &'a QueryScores>) -> ToolMetrics {
    let qs: Vec<&QueryScores> = qs.collect();
    let mean = |xs: Vec<f64>| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
    let arguments: usize = qs.iter().map(|q| q.arguments).sum();
    let ratio = |n: usize| (arguments > 0).then(|| n as f64 / arguments as f64);
    let plans: Vec<(f64, f64, f64)> = qs.iter().filter_map(|q| q.plan).collect();
    ToolMetrics {
        subset: subset.to_string(),
        queries: qs.len(),
        with_relevant: qs.iter().filter(|q| q.nr.is_some()).count(),
        ir: mean(qs.iter().filter_map(|q| q.ir).collect()),
        nr: mean(qs.iter().filter_map(|q| q.nr).collect()),
        hr: ratio(qs.iter().map(|q| q.hallucinated).sum()),
        cr: ratio(qs.iter().map(|q| q.consistent).sum()),
        arguments,
        plan: (!plans.is_empty()).then(|| PlanScores {
            plans: plans.len(),
            precision: plans.iter().map(|p| p.0).sum::<f64>() / plans.len() as f64,
            recall: plans.iter().map(|p| p.1).sum::<f64>() / plans.len() as f64,
            f1: plans.iter().map(|p| p.2).sum::<f64>() / plans.len() as f64,
        }),
    }
}

/// The table `eval` prints.
pub fn table(ms: &[ToolMetrics]) -> String {
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{:.1}", 100.0 * x));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "tool metrics (ControlLLM: IR lower is better, NR/CR higher, HR lower)"
    );
    let _ = writeln!(
        s,
        "{:<16} {:>9} {:>6} {:>6} {:>6} {:>6} {:>6}   plan P/R/F1",
        "subset", "relevant", "IR%", "NR%", "HR%", "CR%", "args"
    );
    for m in ms {
        let plan = m.plan.as_ref().map_or("-".to_string(), |p| {
            format!(
                "{:.1}/{:.1}/{:.1} ({} plans)",
                100.0 * p.precision,
                100.0 * p.recall,
                100.0 * p.f1,
                p.plans
            )
        });
        let _ = writeln!(
            s,
            "{:<16} {:>9} {:>6} {:>6} {:>6} {:>6} {:>6}   {plan}",
            m.subset,
            format!("{}/{}", m.with_relevant, m.queries),
            pct(m.ir),
            pct(m.nr),
            pct(m.hr),
            pct(m.cr),
            m.arguments
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Converted, ConvertedAnswer, Record};
    use serde_json::json;

    fn answer(steps: Value, details: Value) -> Answer {
        Answer {
            key: QueryKey::new("G1", 1),
            converted: Converted {
                query: "Convert 250 EUR to JPY and find The Matrix".into(),
                available_tools: vec![
                    json!({"name": "convert_for_fx", "parameters": {"properties": {
                        "amount": {"type": "integer"}, "from": {"type": "string"}, "to": {"type": "string", "enum": ["JPY", "USD"]}}}}),
                    json!({"name": "search_for_movies", "parameters": {"properties": {"title": {"type": "string"}}}}),
                    json!({"name": "cast_for_movies", "parameters": {"properties": {"movie_id": {"type": "string"}}}}),
                ],
                answer: ConvertedAnswer {
                    method: "plan".into(),
                    total_steps: 0,
                    final_answer: String::new(),
                    answer_details: steps,
                },
            },
            record: Some(Record {
                details,
                ..Record::default()
            }),
        }
    }

    /// A converted trajectory (a chain of `tool` nodes) from (name, arguments, response).
    fn chain(calls: &[(&str, Value, &str)]) -> Value {
        let mut next = json!([]);
        for (name, args, response) in calls.iter().rev() {
            next = json!([{"role": "tool", "message": {"name": name, "arguments": args.to_string(), "response": response}, "next": next}]);
        }
        next
    }

    #[test]
    fn scores_tools_and_arguments() {
        let steps = chain(&[
            (
                "convert_for_fx",
                json!({"amount": 250, "from": "EUR", "to": "JPY"}),
                "{\"result\": 42230}",
            ),
            (
                "search_for_movies",
                json!({"title": "The Matrix"}),
                "{\"movie_id\": \"cb01\"}",
            ),
            // cb01 comes from the search; tt99 is made up; `amount` as a string breaks the schema.
            ("cast_for_movies", json!({"movie_id": "cb01"}), "{}"),
            (
                "cast_for_movies",
                json!({"movie_id": "tt99", "extra": "zz"}),
                "{}",
            ),
            ("Finish", json!({"return_type": "give_answer"}), ""),
        ]);
        let a = answer(
            steps,
            json!({"plan": {"tasks": [{"tool": "convert_for_fx"}, {"tool": "search_for_movies"}, {"tool": "weather_for_sky"}]}}),
        );
        let relevant =
            BTreeSet::from(["convert_for_fx".to_string(), "cast_for_movies".to_string()]);
        let q = score(&a, Some(&relevant));
        // Used: convert, search, cast; search is irrelevant.
        assert_eq!(q.ir, Some(1.0 / 3.0));
        assert_eq!(q.nr, Some(1.0));
        // 7 arguments: tt99 and zz are made up.
        assert_eq!(q.arguments, 7);
        assert_eq!(q.hallucinated, 2);
        // `extra` is not in the schema.
        assert_eq!(q.consistent, 6);
        // Planned convert, search, weather: one of three relevant, one of two found.
        let (p, r, f) = q.plan.unwrap_or_default();
        assert!((p - 1.0 / 3.0).abs() < 1e-9 && (r - 0.5).abs() < 1e-9 && (f - 0.4).abs() < 1e-9);
    }

    #[test]
    fn no_calls_means_no_ir_and_zero_nr() {
        let a = answer(chain(&[("Finish", json!({}), "")]), Value::Null);
        let q = score(&a, Some(&BTreeSet::from(["x".to_string()])));
        assert_eq!(q.ir, None);
        assert_eq!(q.nr, Some(0.0));
        assert!(q.plan.is_none());
    }
}
