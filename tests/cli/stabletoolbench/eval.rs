//! `eval` reads its message formats and prints both pass-rate denominators (`eval_pass_rate.py`
//! drops missing answers).

use axum::Router;
use axum::routing::post;
use serde_json::{Value, json};

use super::*;
use crate::common;

/// Its raw answer (current format: `tool_calls` and `tool` roles, no record of ours) and its converted
/// form are both read by `eval`; `--ids` takes its `test_query_ids` folder.
#[test]
fn eval_reads_its_formats_and_prints_both_denominators() {
    let tmp = tempfile::tempdir().unwrap();
    let raw_dir = tmp.path().join("answers").join(SUBSET);
    std::fs::create_dir_all(&raw_dir).unwrap();
    let messages = json!([
        {"role": "system", "content": "s"}, {"role": "user", "content": "q"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": CONVERT, "arguments": MODEL_ARGS}}]},
        {"role": "tool", "name": CONVERT, "content": "{\"error\": \"\", \"response\": 42230}", "tool_call_id": "c1"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "Finish", "arguments": FINISH_ARGS}}]},
        {"role": "tool", "name": "Finish", "content": "ok", "tool_call_id": "c2"}
    ]);
    let file = json!({"win": true, "trys": [], "answer_generation": {"valid_data": true, "final_answer": FINISH_ARGS,
        "function": functions(), "query": "Convert 250 EUR to JPY.", "train_messages": [messages], "chain": [], "query_count": 2, "total_tokens": 9}});
    std::fs::write(raw_dir.join("588_CoT@1.json"), file.to_string()).unwrap();
    let out = common::Test::new()
        .arg("eval")
        .arg(tmp.path().join("answers"))
        .args(["--no-judge", "--json"])
        .run()
        .success();
    let v: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(v["metrics"][0]["answered"], 1, "{}", out.stdout());
    assert_eq!(v["metrics"][0]["finish_rate"], 100.0, "{}", out.stdout());
    // Its answer folder for one subset, given directly: the subset is the folder's name.
    let out = common::Test::new()
        .arg("eval")
        .arg(&raw_dir)
        .args(["--no-judge", "--json"])
        .run()
        .success();
    let v: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(v["metrics"][0]["subset"], SUBSET, "{}", out.stdout());
    assert_eq!(v["metrics"][0]["answered"], 1);

    // Its converted format: tool and assistant nodes; one id of its id file has no answer.
    let converted = tmp.path().join(format!("{SUBSET}.json"));
    let tool = |name: &str, args: &str, resp: &str, next: Value| json!({"role": "tool", "message": {"name": name, "arguments": args, "response": resp}, "next": next});
    let details = json!([{"role": "system", "message": "", "next": [{"role": "user", "message": "", "next": [
        {"role": "assistant", "message": "convert first", "next": [tool(CONVERT, MODEL_ARGS, "42230", json!([tool("Finish", FINISH_ARGS, "", json!([]))]))]}]}]}]);
    let unfinished = json!([{"role": "system", "message": "", "next": [{"role": "user", "message": "", "next": [tool(CONVERT, MODEL_ARGS, "42230", json!([]))]}]}]);
    let answer = |details: &Value, fa: &str| {
        json!({"query": "Convert 250 EUR to JPY.", "available_tools": functions(),
        "answer": {"method": "CoT@1", "total_steps": 4, "final_answer": fa, "answer_details": details}})
    };
    std::fs::write(
        &converted,
        json!({"588": answer(&details, FINISH_ARGS), "608": answer(&unfinished, "")}).to_string(),
    )
    .unwrap();
    let ids = tmp.path().join("test_query_ids");
    std::fs::create_dir_all(&ids).unwrap();
    std::fs::write(
        ids.join(format!("{SUBSET}.json")),
        r#"{"588": 0, "608": 0, "1073": 0}"#,
    )
    .unwrap();
    let judge = always_solved_judge();
    let out = common::Test::new()
        .arg("eval")
        .arg("--converted")
        .arg(&converted)
        .arg("--ids")
        .arg(&ids)
        .tooleval_judge(&judge)
        .args(["--votes", "1"])
        .run()
        .success();
    // 588 solved by the judge, 608 unsolved by rule (no Finish), 1073 missing.
    // Both denominators of our judge's verdicts, named for what they are: the second is our judge
    // counted as its evaluator counts (missing answers dropped), not its evaluator's result.
    let out = out.stdout_has("pass rate: ours 33.3% (missing = failure, 2 of 3 queries answered) · 50.0% with missing answers dropped (StableToolBench's denominator; our judge, not its evaluator)");
    assert!(
        !out.stdout().contains("StableToolBench %"),
        "{}",
        out.stdout()
    );
    out.stdout_has("missing dropped %");
    common::Test::new()
        .arg("eval")
        .arg("--converted")
        .arg(&converted)
        .arg("--ids")
        .arg(tmp.path().join("nowhere"))
        .arg("--no-judge")
        .run()
        .failure(2)
        .no_panic();
}

/// A judge endpoint that finds every answer solved (whatever the prompt asks).
fn always_solved_judge() -> String {
    let app = Router::new().route(
        "/v1/chat/completions",
        post(|| async {
            let content = json!({"reason": "the answer gives the converted amount", "answer_status": "Solved"}).to_string();
            axum::Json(common::http::judge_reply(&content, (10, 5)))
        }),
    );
    format!("http://{}/v1", common::http::serve_on_thread(app))
}
