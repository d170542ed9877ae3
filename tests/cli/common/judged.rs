//! Run directories of answer files to judge (ToolBench CoT files with our `sum2act` record) and a mock
//! judge endpoint that answers every judge prompt (split, part question, holistic status, preference)
//! by whether an answer gives the converted amount ("JPY"), counting its calls and able to fail.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sum2act_core::toolbench::answer::{ChainStep, Generation, cot_answer_file};

/// How the mock judge behaves.
#[derive(Default)]
pub struct Behaviour {
    pub calls: AtomicUsize,
    /// Replies JSON without a verdict.
    pub unusable: AtomicBool,
    /// Answers 503 to prompts containing this text.
    pub down_for: Mutex<Option<String>>,
}

/// The judge's reply to one prompt: an answer mentioning "JPY" delivers the request.
fn reply_for(prompt: &str) -> Value {
    if prompt.contains("List the separate things") {
        return json!({"parts": ["convert 250 EUR to JPY"]});
    }
    if prompt.contains("Part to check:") {
        let answer = prompt
            .split("Assistant's final answer:")
            .nth(1)
            .and_then(|rest| rest.split("Values of the answer found").next())
            .unwrap_or("");
        let covered = if answer.contains("JPY") { "yes" } else { "no" };
        return json!({"covered": covered, "reason": "looked at the part"});
    }
    let answer_of = |side: &str| {
        let start = prompt.find(&format!("Answer {side}:"))?;
        let end = prompt.find(&format!("API calls of {side}:"))?;
        prompt.get(start..end)
    };
    if let (Some(a), Some(b)) = (answer_of("A"), answer_of("B")) {
        let better = if a.contains("JPY") || !b.contains("JPY") {
            "A"
        } else {
            "B"
        };
        return json!({"reason": "gives the amount", "better": better});
    }
    let answer = prompt.split("Final answer:").nth(1).unwrap_or("");
    let label = if answer.contains("JPY") {
        "Solved"
    } else {
        "Unsolved"
    };
    json!({"reason": "holistic", "answer_status": label})
}

/// A mock judge endpoint on loopback: its base URL and its behaviour switches.
pub fn mock_judge() -> (String, Arc<Behaviour>) {
    mock_judge_replying(reply_for)
}

/// A mock judge endpoint that answers each prompt with `reply(prompt)`.
pub fn mock_judge_replying(reply: fn(&str) -> Value) -> (String, Arc<Behaviour>) {
    let behaviour = Arc::new(Behaviour::default());
    let shared = behaviour.clone();
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let b = shared.clone();
            async move {
                let prompt = body["messages"][0]["content"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                let down = b.down_for.lock().unwrap().clone();
                if down.is_some_and(|d| prompt.contains(&d)) {
                    return Err(axum::http::StatusCode::SERVICE_UNAVAILABLE);
                }
                b.calls.fetch_add(1, Ordering::SeqCst);
                let content = if b.unusable.load(Ordering::SeqCst) {
                    json!({"reason": "I think it is fine"}).to_string()
                } else {
                    reply(&prompt).to_string()
                };
                Ok(axum::Json(super::http::judge_reply(&content, (100, 20))))
            }
        }),
    );
    let addr = super::http::serve_on_thread(app);
    (format!("http://{addr}/v1"), behaviour)
}

/// Writes `{id}_{method}.json` of a currency conversion in G1_instruction: one call, then `answer`
/// (`None`: no answer, the step limit ended the episode).
pub fn answer_file(dir: &Path, method: &str, id: u64, answer: Option<&str>) {
    let functions = vec![
        json!({"name": "convert_currency_for_fx_rates_hub", "description": "Converts an amount between currencies at the latest rate."}),
        json!({"name": "Finish"}),
    ];
    let mut steps = vec![ChainStep {
        thought: "convert".into(),
        name: "convert_currency_for_fx_rates_hub".into(),
        arguments: "{\"amount\": 250, \"from_currency\": \"EUR\", \"to_currency\": \"JPY\"}".into(),
        observation:
            "{\"error\": \"\", \"response\": {\"result\": 42230.0, \"date\": \"2024-06-14\"}}"
                .into(),
        code: 0,
    }];
    let finish_args = answer
        .map(|a| json!({"return_type": "give_answer", "final_answer": a}).to_string())
        .unwrap_or_default();
    if answer.is_some() {
        steps.push(ChainStep {
            thought: String::new(),
            name: "Finish".into(),
            arguments: finish_args.clone(),
            observation: "{\"response\":\"successfully giving the final answer.\"}".into(),
            code: 3,
        });
    }
    let query = format!("Please convert 250 EUR to JPY ({id}).");
    let generation = Generation {
        query: &query,
        functions: &functions,
        final_answer: &finish_args,
        query_count: 2,
        total_tokens: 1000,
        system: "system",
    };
    let mut file = cot_answer_file(&generation, &[steps], answer.map(|_| 0), 12);
    file["sum2act"] = json!({
        "method": method, "model": "agent-model", "subset": "G1_instruction", "query_id": id, "query": query,
        "finish": if answer.is_some() { "give_answer" } else { "limit" },
        "answer": answer.unwrap_or(""), "steps": [],
        "counters": {"llm_calls": 2, "prompt_tokens": 900, "completion_tokens": 100, "tool_calls": 1,
                     "failed_tool_calls": 0, "hallucinated_calls": 0, "steps": 2, "wall_ms": 10, "cost_usd": 0.001}
    });
    let path = dir
        .join("G1_instruction")
        .join(format!("{id}_{method}.json"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
}

/// A run directory `root/method` with one answer file per `(id, answer)`.
pub fn run_dir(root: &Path, method: &str, answers: &[(u64, Option<&str>)]) -> PathBuf {
    let dir = root.join(method);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("run.json"),
        json!({"method": method, "model": "agent-model"}).to_string(),
    )
    .unwrap();
    for (id, answer) in answers {
        answer_file(&dir, method, *id, *answer);
    }
    dir
}
