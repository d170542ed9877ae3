//! `--method plan` and `--method graph` through the real binary: batch runs over the sample with a
//! scripted endpoint, whose answer files `eval` (tool metrics included), `compare` and `report` read.

use crate::common;

use std::path::Path;

use common::{Model, Test};
use serde_json::Value;

fn batch(model: &Model, out: &Path, method: &str) {
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .batch_mock()
        .args([
            "--subsets",
            "G1_category",
            "--limit",
            "2",
            "--method",
            method,
            "--out",
        ])
        .arg(out)
        .run()
        .success();
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn plan_and_graph_answer_files_are_read_by_eval_compare_and_report() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan");
    let graph = dir.path().join("graph");
    batch(&model, &plan, "plan");
    batch(&model, &graph, "graph");
    for (run, method) in [(&plan, "plan"), (&graph, "graph")] {
        let file = read(&run.join(format!("G1_category/201_{method}.json")));
        assert_eq!(file["sum2act"]["method"], method);
        assert!(file["answer_generation"].is_object());
        Test::new()
            .arg("eval")
            .arg(run)
            .arg("--no-judge")
            .run()
            .success()
            .stdout_has("tool metrics (ControlLLM")
            .stdout_has("G1_category");
        let tm = read(&run.join("eval/tool_metrics.json"));
        assert_eq!(tm[0]["queries"], 2, "{tm}");
        // The relevant APIs came from the sample's queries.
        assert_eq!(tm[0]["with_relevant"], 2, "{tm}");
        assert!(run.join("eval/converted/G1_category.json").is_file());
    }
    // The plan record carries its plan, so the planning scores exist for `plan` only.
    let tm = read(&plan.join("eval/tool_metrics.json"));
    assert!(tm[0]["plan"].is_object(), "{tm}");
    assert!(
        read(&graph.join("eval/tool_metrics.json"))[0]
            .get("plan")
            .is_none()
    );
    Test::new()
        .arg("report")
        .arg(&plan)
        .arg(&graph)
        .run()
        .success()
        .stdout_has("2 run(s), 4 episodes");
    // The report shows the tool metrics `eval` wrote.
    let html = std::fs::read_to_string(plan.join("report.html")).unwrap();
    assert!(
        html.contains("\"tool_metrics\":{\"subset\":\"G1_category\""),
        "no tool metrics in the report"
    );
    Test::new()
        .arg("compare")
        .arg(&graph)
        .arg(&plan)
        .args(["--base-url", &model.url, "--judge", "mock", "--rounds", "1"])
        .run()
        .no_panic()
        .success();
}

#[test]
fn index_graph_shows_the_catalogue_tool_graph() {
    let out = Test::new()
        .args(["index", "graph", "--json", "--sample", "3"])
        .run()
        .success();
    let v: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(v["size"]["apis"], 40);
    assert!(v["size"]["edges"].as_u64().unwrap() > 0);
    assert_eq!(v["sample"].as_array().unwrap().len(), 3);
    Test::new()
        .args(["index", "graph"])
        .run()
        .success()
        .stdout_has("tool graph: 40 APIs")
        .stdout_has(
            "top_rated_for_cinebase.movies[0].movie_id -> movie_details_for_cinebase(movie_id)",
        );
}

#[test]
fn bad_method_options_are_clear_errors() {
    Test::new()
        .args([
            "run",
            "--query-id",
            "101",
            "--method",
            "graph",
            "--strategy",
            "random",
        ])
        .run()
        .failure(2)
        .stderr_has("random");
    Test::new()
        .args([
            "run",
            "--query-id",
            "101",
            "--method",
            "graph",
            "--threshold",
            "1.5",
        ])
        .run()
        .failure(2)
        .stderr_has("is not a number from 0 to 1");
}
