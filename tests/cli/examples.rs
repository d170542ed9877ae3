//! `sum2act index expand` (LLM-written example requests per API) and `--examples FILE`, driven as a
//! user would: a scripted OpenAI-compatible model on loopback writes the requests.

use crate::common;

use common::{Model, Test};

fn expand(model: &Model, out: &std::path::Path, extra: &[&str]) -> Test {
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .args(["index", "expand", "--model", "mock", "--data"])
        .arg(common::sample())
        .arg("--out")
        .arg(out)
        .args(extra)
}

/// `sum2act retrieve ARGS` over the shipped sample with `--examples FILE`.
fn retrieve(examples: &std::path::Path, args: &[&str]) -> Test {
    Test::new()
        .arg("retrieve")
        .args(args)
        .arg("--data")
        .arg(common::sample())
        .arg("--examples")
        .arg(examples)
}

fn lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn expand_writes_every_api_once_resumes_and_feeds_retrieval() {
    let model = Model::start(0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("examples.jsonl");
    expand(&model, &out, &["--limit", "2"])
        .run()
        .success()
        .no_panic()
        .stdout_has("2 APIs written");
    assert_eq!(lines(&out).len(), 2);
    let done = expand(&model, &out, &[]).run().success().no_panic();
    let written = lines(&out);
    let apis = written.len();
    assert!(apis > 2, "{}", done.stdout());
    done.stdout_has(&format!("{apis} of {apis} APIs covered"));
    for l in &written {
        assert_eq!(l["requests"], serde_json::json!(["All done."]), "{l}");
        assert_eq!(l["key"].as_str().map(str::len), Some(24), "{l}");
    }
    // Nothing left to do: no line is written twice.
    expand(&model, &out, &[])
        .run()
        .success()
        .stdout_has("0 APIs written")
        .stdout_has(&format!("{apis} already there"));
    assert_eq!(lines(&out).len(), apis);
    // The requests are indexed: "all done" now matches every API.
    let hits = retrieve(&out, &["--json", "-k", "3", "all done"])
        .run()
        .success()
        .no_panic();
    let hits: serde_json::Value = serde_json::from_str(&hits.stdout()).unwrap();
    assert_eq!(hits.as_array().map(Vec::len), Some(3), "{hits}");
}

#[test]
fn bad_examples_files_are_bad_input_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.jsonl");
    retrieve(&missing, &["weather"])
        .run()
        .failure(2)
        .stderr_has("nope.jsonl")
        .stderr_has("index expand")
        .no_panic();
    let broken = dir.path().join("broken.jsonl");
    std::fs::write(&broken, "{\"tool\": \"x\"}\n").unwrap();
    retrieve(&broken, &["weather"])
        .run()
        .failure(2)
        .stderr_has("broken.jsonl:1")
        .no_panic();
    let model = Model::start(0);
    expand(&model, &broken, &[])
        .run()
        .failure(2)
        .stderr_has("broken.jsonl:1")
        .no_panic();
}
