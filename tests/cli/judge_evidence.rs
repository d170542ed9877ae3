//! `sum2act eval --judge-mode evidence` (the default) end to end: rules, the claim check, the split into
//! parts and one question per part, against a mock judge endpoint; unusable judges fail loudly; a judge
//! that goes down keeps the votes already made and a rerun resumes.

use crate::common;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sum2act::toolbench::answer::{ChainStep, Generation, cot_answer_file};

/// How the mock judge behaves.
#[derive(Default)]
struct Behaviour {
    calls: AtomicUsize,
    /// Replies JSON without a verdict.
    unusable: AtomicBool,
    /// Answers 503 to prompts containing this text.
    down_for: Mutex<Option<String>>,
}

fn reply_for(prompt: &str) -> Value {
    if prompt.contains("List the separate things") {
        return json!({"parts": ["convert 250 EUR to JPY"]});
    }
    if prompt.contains("Part to check:") {
        let answer = prompt
            .split("Assistant's final answer:")
            .nth(1)
            .unwrap_or("");
        let covered = if answer.contains("JPY") { "yes" } else { "no" };
        return json!({"covered": covered, "reason": "looked at the part"});
    }
    let answer = prompt.split("Final answer:").nth(1).unwrap_or("");
    let label = if answer.contains("JPY") {
        "Solved"
    } else {
        "Unsolved"
    };
    json!({"reason": "holistic", "answer_status": label})
}

fn mock_judge() -> (String, Arc<Behaviour>) {
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
                    reply_for(&prompt).to_string()
                };
                Ok(axum::Json(common::http::judge_reply(&content, (100, 20))))
            }
        }),
    );
    let addr = common::http::serve_on_thread(app);
    (format!("http://{addr}/v1"), behaviour)
}

fn answer_file(dir: &Path, id: u64, answer: Option<&str>) {
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
        "method": "react", "model": "agent-model", "subset": "G1_instruction", "query_id": id, "query": query,
        "finish": if answer.is_some() { "give_answer" } else { "limit" },
        "answer": answer.unwrap_or(""), "steps": [], "counters": {}
    });
    let path = dir.join("G1_instruction").join(format!("{id}_react.json"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
}

fn run_dir(root: &Path, answers: &[(u64, Option<&str>)]) -> std::path::PathBuf {
    let dir = root.join("react");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("run.json"),
        json!({"method": "react", "model": "agent-model"}).to_string(),
    )
    .unwrap();
    for (id, answer) in answers {
        answer_file(&dir, *id, *answer);
    }
    dir
}

fn eval(run: &Path, url: &str) -> common::Test {
    common::Test::new().arg("eval").arg(run).args([
        "--base-url",
        url,
        "--judge",
        "mock-judge",
        "--llm-retries",
        "0",
    ])
}

fn query(report: &Value, id: u64) -> &Value {
    report["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["query_id"] == id)
        .unwrap()
}

#[test]
fn evidence_judge_checks_claims_parts_and_rules() {
    let (url, judge) = mock_judge();
    let tmp = tempfile::tempdir().unwrap();
    let run = run_dir(
        tmp.path(),
        &[
            (101, Some("250 EUR is 42,230 JPY as of June 14, 2024.")),
            (102, Some("250 EUR is 39,999 JPY.")),
            (103, None),
            (104, Some("I will convert 250 EUR to JPY (104).")),
        ],
    );
    let out = eval(&run, &url).run().success();
    let stdout = out.stdout();
    assert!(
        stdout.starts_with("the judge's pass rate is not the headline"),
        "{stdout}"
    );
    assert!(stdout.contains("pass rate by mock-judge (evidence judge) — agreement not measured"));
    assert!(stdout.contains("25.0 ± 0.0"), "{stdout}");
    // Two answers reach the judge: one split each, then one part question per vote.
    assert_eq!(judge.calls.load(Ordering::SeqCst), 2 + 2 * 3);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("eval/pass_rate.json")).unwrap())
            .unwrap();
    assert_eq!(report["judge"]["mode"], "evidence");
    assert!(report["judge"]["prompts"]["judge_part"].is_string());
    let good = query(&report, 101);
    assert_eq!(good["labels"], json!(["Solved", "Solved", "Solved"]));
    let claims = good["evidence"]["claims"].as_array().unwrap();
    let value = claims
        .iter()
        .find(|c| c["claim"]["text"] == "42,230 JPY")
        .unwrap();
    assert_eq!(value["support"]["kind"], "observation");
    assert!(
        value["support"]["excerpt"]
            .as_str()
            .unwrap()
            .contains("42230.0")
    );
    assert_eq!(good["parts"][0]["part"], "convert 250 EUR to JPY");
    let invented = query(&report, 102);
    assert_eq!(invented["labels"][0], "Unsolved");
    assert!(
        invented["reasons"][0]
            .as_str()
            .unwrap()
            .contains("39,999 JPY")
    );
    assert_eq!(query(&report, 103)["rule"], "limit");
    assert_eq!(query(&report, 104)["rule"], "restates_request");
    let overall = &report["pass_rate"]["overall"];
    assert_eq!(overall["answers_with_invented_values"], 1);
    assert_eq!(overall["evidence_backed"], 25.0);
    assert!(overall["ci"]["low"].as_f64().unwrap() <= 25.0);
    let log = std::fs::read_to_string(run.join("eval/judge_log.jsonl")).unwrap();
    assert!(log.contains("\"mode\":\"evidence\"") && log.contains("\"kind\":\"split\""));
}

#[test]
fn unusable_votes_fail_loudly_with_the_raw_reply() {
    let (url, judge) = mock_judge();
    judge.unusable.store(true, Ordering::SeqCst);
    let tmp = tempfile::tempdir().unwrap();
    let run = run_dir(tmp.path(), &[(101, Some("250 EUR is 42,230 JPY."))]);
    for mode in ["evidence", "tooleval"] {
        let out = eval(&run, &url)
            .args(["--judge-mode", mode])
            .run()
            .failure(1)
            .no_panic()
            .stderr_has("3 of 3 judge votes (100.0%) got no usable verdict")
            .stderr_has("I think it is fine");
        assert!(out.stdout().contains("3/3"), "{}", out.stdout());
    }
}

#[test]
fn an_invalid_evaluation_is_marked_invalid_and_not_charted_as_zero() {
    let (url, judge) = mock_judge();
    judge.unusable.store(true, Ordering::SeqCst);
    let tmp = tempfile::tempdir().unwrap();
    let run = run_dir(
        tmp.path(),
        &[
            (101, Some("250 EUR is 42,230 JPY.")),
            (102, Some("250 EUR makes 42,230 JPY.")),
        ],
    );
    eval(&run, &url).run().failure(1);
    let csv = std::fs::read_to_string(run.join("eval/pass_rate.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let valid = header
        .iter()
        .position(|h| *h == "valid")
        .expect("a valid column");
    let unusable = header.iter().position(|h| *h == "unusable_votes").unwrap();
    for row in lines {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells[valid], "no", "{csv}");
        assert_eq!(cells[unusable], "6/6", "{csv}");
    }
    let page = tmp.path().join("report.html");
    let report = || {
        common::Test::new()
            .arg("report")
            .arg(&run)
            .arg("--out")
            .arg(&page)
            .run()
            .success()
    };
    let out = report()
        .stderr_has("its evaluation is not valid")
        .stderr_has("6 of 6 judge votes");
    assert!(
        out.stdout().contains("0 with judge results"),
        "{}",
        out.stdout()
    );
    let data = common::report_data(&std::fs::read_to_string(&page).unwrap());
    let shown = &data["runs"][0];
    assert_eq!(shown["judged"], false, "charted as judged");
    assert!(shown["judge_invalid"].as_str().unwrap().contains("6 of 6"));
    // Valid again once the judge answers: the same report charts the judge's pass rate.
    judge.unusable.store(false, Ordering::SeqCst);
    std::fs::remove_file(run.join("eval/judge_log.jsonl")).unwrap();
    eval(&run, &url).run().success();
    let csv = std::fs::read_to_string(run.join("eval/pass_rate.csv")).unwrap();
    assert!(csv.lines().skip(1).all(|l| l.ends_with(",yes")), "{csv}");
    report().stdout_has("1 with judge results");
}

#[test]
fn a_judge_that_goes_down_keeps_its_votes_and_a_rerun_resumes() {
    let (url, judge) = mock_judge();
    let tmp = tempfile::tempdir().unwrap();
    let run = run_dir(
        tmp.path(),
        &[
            (101, Some("250 EUR is 42,230 JPY.")),
            (102, Some("250 EUR makes 42,230 JPY.")),
        ],
    );
    *judge.down_for.lock().unwrap() = Some("makes".into());
    eval(&run, &url)
        .args(["--judge-concurrency", "1"])
        .run()
        .failure(1)
        .no_panic();
    let first = judge.calls.load(Ordering::SeqCst);
    assert_eq!(first, 2 + 3, "both splits and the three votes of 101");
    *judge.down_for.lock().unwrap() = None;
    eval(&run, &url)
        .run()
        .success()
        .stdout_has("answered from the log");
    assert_eq!(
        judge.calls.load(Ordering::SeqCst),
        first + 3,
        "only 102's votes are asked again"
    );
}
