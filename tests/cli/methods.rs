//! `--method plan` and `--method graph` through the real binary: batch runs over the sample with a
//! scripted endpoint, whose answer files `eval` (tool metrics included), `compare` and `report` read.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

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
    let cache = tempfile::tempdir().unwrap();
    let out = Test::new()
        .env("SUM2ACT_INDEX_DIR", cache.path())
        .args(["index", "graph", "--json", "--sample", "3"])
        .run()
        .success();
    let v: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(v["size"]["apis"], 55);
    assert_eq!(v["source"], "built");
    assert!(v["size"]["edges"].as_u64().unwrap() > 0);
    assert_eq!(v["sample"].as_array().unwrap().len(), 3);
    Test::new()
        .env("SUM2ACT_INDEX_DIR", cache.path())
        .args(["index", "graph"])
        .run()
        .success()
        .stdout_has("tool graph: 55 APIs")
        .stdout_has("loaded from cache")
        .stdout_has(
            "list_documents_for_docuvault.documents[0].document_id -> get_document_for_docuvault(document_id)",
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

/// The files of the graph cache under an index folder, with their modification times.
fn cached_graphs(index: &Path) -> Vec<(PathBuf, SystemTime)> {
    let mut files: Vec<_> = std::fs::read_dir(index.join("graph"))
        .map(|d| {
            d.flatten()
                .map(|e| (e.path(), e.metadata().unwrap().modified().unwrap()))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// `run --method graph` over catalogue tools with the graph cache in `index`: its log (`-v`) and
/// where the episode's graph came from.
fn graph_run(model: &Model, data: &Path, index: &Path, tools: &str, out: &Path) -> (String, Value) {
    let done = Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .env("SUM2ACT_INDEX_DIR", index)
        .arg("-v")
        .arg("--data")
        .arg(data)
        .args([
            "run",
            "--model",
            "mock",
            "--method",
            "graph",
            "--subset",
            "G1_category",
            "--query-id",
            "201",
            "--tools",
            tools,
            "--out",
        ])
        .arg(out)
        .run()
        .success();
    let file = read(&out.join("G1_category/201_graph.json"));
    (
        done.stderr(),
        file["sum2act"]["details"]["graph_from"].clone(),
    )
}

#[test]
fn graph_runs_load_the_catalogue_graph_from_the_cache_once_built() {
    let model = Model::start(0);
    let data = common::sample_copy(&["queries", "tools", "response_cache"]);
    let index = tempfile::tempdir().unwrap();
    let runs = tempfile::tempdir().unwrap();

    let (log, from) = graph_run(
        &model,
        data.path(),
        index.path(),
        "all",
        &runs.path().join("a"),
    );
    assert!(log.contains("catalogue tool graph: 55 APIs"), "{log}");
    assert!(log.contains("(built in"), "{log}");
    assert_eq!(from, "catalogue");
    let first = cached_graphs(index.path());
    assert_eq!(first.len(), 1, "{first:?}");

    // Later runs read the file (left as it was) instead of building the graph again.
    for (tools, expected) in [("retrieved:4", "catalogue_subgraph"), ("all", "catalogue")] {
        let (log, from) = graph_run(
            &model,
            data.path(),
            index.path(),
            tools,
            &runs.path().join(tools),
        );
        assert!(log.contains("(loaded from cache in"), "{tools}: {log}");
        assert_eq!(from, expected, "{tools}");
        assert_eq!(cached_graphs(index.path()), first, "{tools}");
    }
    // A batch loads it once for all its episodes.
    let batch = runs.path().join("batch");
    let done = Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .env("SUM2ACT_INDEX_DIR", index.path())
        .arg("-v")
        .arg("--data")
        .arg(data.path())
        .args([
            "batch",
            "--model",
            "mock",
            "--progress",
            "plain",
            "--method",
            "graph",
        ])
        .args([
            "--tools",
            "all",
            "--subsets",
            "G1_category",
            "--limit",
            "2",
            "--out",
        ])
        .arg(&batch)
        .run()
        .success();
    assert_eq!(done.stderr().matches("catalogue tool graph").count(), 1);
    assert!(done.stderr().contains("(loaded from cache in"));
    for id in [201, 202] {
        let file = read(&batch.join(format!("G1_category/{id}_graph.json")));
        assert_eq!(
            file["sum2act"]["details"]["graph_from"], "catalogue",
            "{id}"
        );
    }
    // The oracle tool set is not the catalogue: no catalogue graph is loaded.
    let (log, _) = graph_run(
        &model,
        data.path(),
        index.path(),
        "oracle",
        &runs.path().join("oracle"),
    );
    assert!(!log.contains("catalogue tool graph"));

    // A changed catalogue has another fingerprint: its graph is built and cached beside the old.
    let tool = data.path().join("tools/Movies/cinebase.json");
    let mut doc: Value = read(&tool);
    doc["tool_description"] = Value::String("Movie search, details, cast and ratings.".into());
    std::fs::write(&tool, doc.to_string()).unwrap();
    let (log, _) = graph_run(
        &model,
        data.path(),
        index.path(),
        "all",
        &runs.path().join("b"),
    );
    assert!(log.contains("(built in"), "{log}");
    let now = cached_graphs(index.path());
    assert_eq!(now.len(), 2, "{now:?}");
    assert!(
        now.contains(&first[0]),
        "the old catalogue's file was touched"
    );
}
