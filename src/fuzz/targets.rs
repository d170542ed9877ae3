//! The fuzz targets: every parser that reads model or network input. Each checks "no panic" plus a
//! property that would catch a wrong answer, not only a crash.

use std::sync::Arc;

use serde_json::{Value, json};

use super::fuzz;
use sum2act_core::agent::parse;
use sum2act_core::llm::{Completion, ToolCall};

/// Valid examples the mutations start from.
const ACTIONS: &[&str] = &[
    r#"{"name": "get_weather_for_weather", "arguments": {"city": "Paris"}, "thought": "need it"}"#,
    r#"Sure! ```json
{"thought": "x {y}", "name": "w", "arguments": "{\"q\": 1}"}
```"#,
    "Thought: need data\nAction: search_for_x\nAction Input: {\"q\": \"cats\"}",
    r#"{"name": "Finish", "arguments": {"return_type": "give_answer", "final_answer": "It is 21 \u00e9 \ud83d\ude00"}}"#,
    r#"{"return_type": "give_answer", "final_answer": "line1
line2 \"quoted\" \ud800"}"#,
    r#"{"action": "w", "action_input": {"a": [1, 2, {"b": null}]}}"#,
];

#[test]
fn fuzz_model_output_actions() {
    fuzz("actions", 3000, |g| {
        let text = if g.chance(0.7) {
            let base = g.pick(ACTIONS).to_string();
            g.mutate(&base)
        } else {
            g.text(40)
        };
        g.record(&text);
        let _ = parse::action_from_text(&text);
        let _ = sum2act_core::tools::observation::parse_finish(&text);
        let _ = sum2act_core::tools::observation::parse_lenient_object(&text);
        let completion = Completion {
            content: text.clone(),
            tool_calls: vec![ToolCall {
                id: "c".into(),
                name: g.text(3),
                arguments: text.clone(),
            }],
            finish_reason: Some("length".into()),
            ..Completion::default()
        };
        let _ = parse::action(&completion);
        if let Some(v) = parse::first_json_object(&text)
            && !v.is_object()
        {
            return Err(format!("first_json_object returned a non-object: {v}"));
        }
        if let Some(a) = parse::salvage_finish(&text) {
            let args: Value = serde_json::from_str(&a.arguments)
                .map_err(|e| format!("salvaged arguments are not JSON ({e}): {}", a.arguments))?;
            if a.name != "Finish" || !args["final_answer"].is_string() {
                return Err(format!("salvaged a non-answer: {a:?}"));
            }
        }
        let parsed = serde_json::from_str::<Value>(&text).ok();
        let normal = parse::normalise_arguments(&text);
        if let Some(v @ Value::Object(_)) = &parsed {
            let back: Value = serde_json::from_str(&normal)
                .map_err(|e| format!("normalised object does not parse ({e}): {normal}"))?;
            // Integers beyond 2^64 are floats to serde_json, and its parse of their digits can differ
            // from its parse of the printed float by one unit in the last place (a known limit:
            // Python keeps such integers exact); anything else must come back equal.
            if !same_json(&back, v) {
                return Err(format!("normalising changed the object: {normal}"));
            }
            let trimmed = text.trim();
            if trimmed.starts_with('{') && parse::close_json(trimmed).as_deref() != Some(trimmed) {
                return Err("close_json changed a complete object".into());
            }
        }
        let fixed = parse::replace_lone_surrogates(&text);
        if parsed.is_some() && fixed != text {
            return Err(format!("surrogate repair changed valid JSON: {fixed}"));
        }
        Ok(())
    });
}

/// Equal JSON values, with floats equal to within a relative 1e-15.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            (x - y).abs() <= 1e-15 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// Cut at the token cap: any prefix of a valid `Finish` action that reaches into the answer must
/// be salvaged with the answer text up to the cut.
#[test]
fn fuzz_cut_finish_salvage() {
    fuzz("cut_finish", 2000, |g| {
        let answer: String = g.text(20).chars().filter(|c| !c.is_control()).collect();
        let full = json!({"name": "Finish", "arguments": {"return_type": "give_answer", "final_answer": answer}})
            .to_string();
        let marker = "\"final_answer\":\"";
        let start = full.find(marker).map_or(0, |i| i + marker.len());
        let mut cut = start + g.below(full.len() - start);
        while !full.is_char_boundary(cut) {
            cut -= 1;
        }
        let text = &full[..cut];
        g.record(text);
        let a = parse::salvage_finish(text).ok_or("a cut Finish was not salvaged")?;
        let args: Value = serde_json::from_str(&a.arguments).map_err(|e| e.to_string())?;
        let kept = args["final_answer"].as_str().unwrap_or_default();
        if !answer.starts_with(kept) {
            return Err(format!(
                "salvaged answer {kept:?} is not a prefix of {answer:?}"
            ));
        }
        Ok(())
    });
}

/// Python's `repr` of a JSON value (what StableToolBench's cache keys are).
fn python_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => if *b { "True" } else { "False" }.into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let mut out = String::from("'");
            for c in s.chars() {
                match c {
                    '\'' => out.push_str("\\'"),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                        out.push_str(&format!("\\x{:02x}", c as u32))
                    }
                    c => out.push(c),
                }
            }
            out.push('\'');
            out
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(python_repr).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{}: {}",
                        python_repr(&Value::String(k.clone())),
                        python_repr(v)
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

#[test]
fn fuzz_python_repr_cache_keys() {
    fuzz("pyrepr", 3000, |g| {
        let value = g.json(4);
        // Floats print differently in Python; the round trip is checked on the rest.
        let exact = !value.to_string().contains('.') && !value.to_string().contains('e');
        let repr = python_repr(&value);
        let text = if g.chance(0.3) {
            g.mutate(&repr)
        } else {
            repr.clone()
        };
        g.record(&text);
        let parsed = sum2act_server::pyrepr::parse(&text);
        if text == repr && exact {
            match parsed {
                Ok(v) if v == value => {}
                Ok(v) => return Err(format!("round trip changed the value: {v}")),
                Err(e) => return Err(format!("a valid repr did not parse: {e}")),
            }
        }
        Ok(())
    });
}

/// Sample files the loader target mutates.
fn loader_corpus() -> Vec<(&'static str, String)> {
    let sample = sum2act_core::toolbench::sample_dir();
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).unwrap_or_default();
    let queries: Value = serde_json::from_str(&read(sample.join("queries/G1_instruction.json")))
        .unwrap_or(Value::Null);
    let two = Value::Array(
        queries
            .as_array()
            .map(|q| q.iter().take(2).cloned().collect())
            .unwrap_or_default(),
    );
    let answer = json!({
        "answer_generation": {"valid_data": true, "query": "q", "final_answer": "{\"return_type\": \"give_answer\", \"final_answer\": \"42\"}",
            "function": [], "train_messages": [[{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "function_call": {"name": "Finish", "arguments": "{\"return_type\": \"give_answer\", \"final_answer\": \"42\"}"}}]], "finish_type": "give_answer"},
        "sum2act": {"method": "sum2act", "model": "m", "subset": "G1_instruction", "query_id": 1, "query": "q",
            "finish": "give_answer", "answer": "42", "steps": [], "counters": {"llm_calls": 1}}
    });
    vec![
        ("queries", two.to_string()),
        (
            "tool",
            read(sample.join("tools/Weather/skycast_weather.json")),
        ),
        ("answer", answer.to_string()),
    ]
}

#[test]
fn fuzz_query_tool_and_answer_loaders() {
    use sum2act_core::toolbench::io::parse_json;
    use sum2act_core::toolbench::{Query, ToolFile};
    let corpus = loader_corpus();
    let catalog = sum2act_core::toolbench::DataDir::open_or_default(None)
        .and_then(|d| d.catalog())
        .map(|l| l.catalog)
        .ok();
    let dir = tempfile::tempdir().ok();
    let mut case_no = 0u64;
    fuzz("loaders", 1500, |g| {
        case_no += 1;
        let (kind, base) = g.pick(&corpus).clone();
        let text = g.mutate(&base);
        g.record(&text);
        let path = std::path::Path::new("fuzzed.json");
        match parse_json::<Vec<Query>>(path, &text) {
            Ok(queries) => {
                if let Some(c) = &catalog {
                    let _ = sum2act_core::toolbench::missing_tools(&queries, c);
                    for q in &queries {
                        let _ = sum2act_core::toolbench::Task::from_query("G1", q, c);
                    }
                }
            }
            Err(e) if !e.to_string().contains("fuzzed.json") => {
                return Err(format!("a load error does not name the file: {e}"));
            }
            Err(_) => {}
        }
        let _ = parse_json::<ToolFile>(path, &text);
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            let _ = sum2act_core::batch::EpisodeView::from_answer(&v);
            let _ = sum2act_core::agent::Episode::from_json(&v);
            let _ = sum2act_core::toolbench::answer::convert(&v, "sum2act");
        }
        let _ = sum2act_eval::input::finish_answer_text(&text);
        // Now and then through the evaluator's run-directory reader, from a file.
        if kind == "answer"
            && case_no.is_multiple_of(10)
            && let Some(d) = &dir
        {
            let sub = d.path().join("G1_instruction");
            let _ = std::fs::create_dir_all(&sub);
            let _ = std::fs::write(sub.join("1_sum2act.json"), &text);
            let _ = sum2act_eval::input::load_answers(d.path());
        }
        Ok(())
    });
}

#[test]
fn fuzz_virtual_requests() {
    use axum::body::Bytes;
    use axum::extract::State;
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        panic!("no runtime");
    };
    let api = sum2act_server::sample_api().unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<(String, String, String)> = api
        .catalog()
        .tools()
        .iter()
        .flat_map(|t| {
            t.file
                .api_list
                .iter()
                .map(|a| (t.category.clone(), t.file.tool_name.clone(), a.name.clone()))
        })
        .collect();
    let api = Arc::new(api);
    fuzz("virtual", 2000, |g| {
        let (c, t, a) = g.pick(&names).clone();
        let mut body = json!({"category": c, "tool_name": t, "api_name": a,
            "tool_input": if g.chance(0.5) { g.json(3) } else { Value::String(g.json(3).to_string()) },
            "strip": "truncate", "toolbench_key": ""});
        for key in ["category", "tool_name", "api_name"] {
            if g.chance(0.2) {
                let s = body[key].as_str().unwrap_or_default().to_string();
                body[key] = Value::String(g.mutate(&s));
            }
        }
        let mut text = body.to_string();
        if g.chance(0.3) {
            text = g.mutate(&text);
        }
        g.record(&text);
        let response = rt.block_on(sum2act_server::routes::virtual_api(
            State(api.clone()),
            axum::http::HeaderMap::new(),
            Ok(Bytes::from(text)),
        ));
        let status = response.status().as_u16();
        let bytes = rt
            .block_on(axum::body::to_bytes(response.into_body(), 16 * 1024 * 1024))
            .map_err(|e| format!("unreadable reply body: {e}"))?;
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| format!("reply {status} is not JSON ({e})"))?;
        if !v["error"].is_string() || v.get("response").is_none() {
            return Err(format!("reply {status} is not {{error, response}}: {v}"));
        }
        if !(status == 200 || (400..600).contains(&status)) {
            return Err(format!("odd status {status}"));
        }
        Ok(())
    });
}

/// Rule names a GBNF body refers to (outside literals and character classes).
fn references(body: &str) -> Result<Vec<String>, String> {
    let mut refs = Vec::new();
    let mut chars = body.chars().peekable();
    let mut depth = 0i32;
    while let Some(c) = chars.next() {
        match c {
            '"' | '[' => {
                let close = if c == '"' { '"' } else { ']' };
                loop {
                    match chars.next() {
                        Some('\\') => {
                            chars.next();
                        }
                        Some(x) if x == close => break,
                        Some(_) => {}
                        None => return Err(format!("unclosed {c} in `{body}`")),
                    }
                }
            }
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("unbalanced ) in `{body}`"));
                }
            }
            '{' => {
                // A repetition bound `{m,n}`.
                for x in chars.by_ref() {
                    if x == '}' {
                        break;
                    }
                    if !(x.is_ascii_digit() || x == ',') {
                        return Err(format!("bad repetition in `{body}`"));
                    }
                }
            }
            c if c.is_ascii_alphanumeric() || c == '-' => {
                let mut name = c.to_string();
                while let Some(&n) = chars.peek() {
                    if n.is_ascii_alphanumeric() || n == '-' {
                        name.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                refs.push(name);
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced ( in `{body}`"));
    }
    Ok(refs)
}

/// Structural check of a grammar: a root rule, no empty bodies, every reference defined.
fn check_grammar(g: &str) -> Result<(), String> {
    let mut defined = std::collections::HashSet::new();
    let mut bodies = Vec::new();
    for line in g.lines() {
        let (name, body) = line
            .split_once(" ::= ")
            .ok_or_else(|| format!("not a rule: {line}"))?;
        if body.trim().is_empty() {
            return Err(format!("empty rule {name}"));
        }
        defined.insert(name.to_string());
        bodies.push(body);
    }
    if !defined.contains("root") {
        return Err("no root rule".into());
    }
    for body in bodies {
        for r in references(body)? {
            if !defined.contains(&r) {
                return Err(format!("rule `{r}` is used but not defined"));
            }
        }
    }
    Ok(())
}

#[test]
fn fuzz_json_schema_to_gbnf() {
    let (mut grammars, mut cases) = (0u64, 0u64);
    fuzz("gbnf", 2000, |g| {
        cases += 1;
        let schema = if g.chance(0.85) {
            g.schema(4)
        } else {
            g.json(3)
        };
        g.record(&schema.to_string());
        #[cfg(feature = "local-model")]
        let _ = sum2act_local::model::bounded_schema(&schema);
        match sum2act_local::gbnf::grammar(&schema) {
            Ok(grammar) => {
                grammars += 1;
                check_grammar(&grammar).map_err(|e| format!("{e}\ngrammar:\n{grammar}"))
            }
            Err(e) if e.path.is_empty() => Err(format!("error without a path: {e}")),
            Err(_) => Ok(()),
        }
    });
    // Most generated schemas are usable: the property is checked on real grammars.
    assert!(grammars * 3 > cases, "{grammars} grammars in {cases} cases");
}

#[test]
fn the_grammar_checker_catches_broken_grammars() {
    assert!(check_grammar("root ::= a\na ::= \"x\"").is_ok());
    assert!(check_grammar("root ::= b").is_err());
    assert!(check_grammar("root ::= (\"x\"").is_err());
    assert!(check_grammar("a ::= \"x\"").is_err());
}
