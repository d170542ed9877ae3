//! The mixed task set (`toolbench/sample/queries/M1_media.json`) and its reference solutions
//! (`toolbench/sample/references/M1_media.json`): every reference is consistent with its query, and
//! solving it step by step — the sample APIs through the embedded `/virtual` server, the media tools
//! through `sum2act media-server` over MCP — gives every fact the answer must state, from recorded data
//! only (cache hits and url_cache files, no network).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Value, json};
use sum2act_core::toolbench::{DataDir, Function, Query};
use sum2act_core::tools::{ReplySource, ToolSource};
use sum2act_server::VirtualApi;
use sum2act_server::media::MediaTool;

use crate::common::mcp::{McpChild, binary, installed, text};
use crate::common::{Test, sample, tools};
use crate::hardening::endpoint;
use crate::mcp_files::{calls_so_far, handle_in};

#[derive(Debug, Deserialize)]
struct ReferenceFile {
    subset: String,
    references: Vec<Reference>,
}

#[derive(Debug, Deserialize)]
struct Reference {
    query_id: u64,
    parts: Vec<String>,
    steps: Vec<Step>,
    facts: Vec<String>,
    files: Vec<String>,
    answer: String,
}

#[derive(Debug, Deserialize)]
struct Step {
    /// A sample API: [tool name, API name].
    api: Option<[String; 2]>,
    /// A media tool of `sum2act media-server`.
    media: Option<String>,
    arguments: serde_json::Map<String, Value>,
}

fn load() -> (Vec<Query>, ReferenceFile) {
    let data = DataDir::open(&sample()).unwrap();
    let queries = data.queries("M1_media").unwrap();
    let path = sample().join("references/M1_media.json");
    let refs: ReferenceFile =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (queries, refs)
}

/// `<step-N>` names the file made by step N (1-based).
fn step_ref(value: &Value) -> Option<usize> {
    value
        .as_str()?
        .strip_prefix("<step-")?
        .strip_suffix('>')?
        .parse()
        .ok()
}

#[test]
fn every_query_has_a_consistent_reference() {
    let (queries, refs) = load();
    assert_eq!(refs.subset, "M1_media");
    assert!(queries.len() >= 24, "{} queries", queries.len());
    let by_id: BTreeMap<u64, &Reference> =
        refs.references.iter().map(|r| (r.query_id, r)).collect();
    assert_eq!(by_id.len(), queries.len(), "one reference per query");
    let catalog = DataDir::open(&sample()).unwrap().catalog().unwrap().catalog;
    for q in &queries {
        crate::sample_data::assert_api_list_is_the_catalogue_s("M1_media", q, &catalog);
        let r = by_id
            .get(&q.query_id)
            .unwrap_or_else(|| panic!("no reference for {}", q.query_id));
        assert!(
            !r.parts.is_empty() && !r.facts.is_empty() && !r.answer.is_empty(),
            "{}",
            q.query_id
        );
        let listed: Vec<[String; 2]> = q
            .apis()
            .iter()
            .map(|a| [a.tool_name.clone(), a.api_name.clone()])
            .collect();
        let mut api_steps = Vec::new();
        let mut media_steps = 0;
        for (i, step) in r.steps.iter().enumerate() {
            match (&step.api, &step.media) {
                (Some(api), None) => {
                    assert!(
                        listed.contains(api),
                        "{}: {api:?} is not in its api_list",
                        q.query_id
                    );
                    if !api_steps.contains(api) {
                        api_steps.push(api.clone());
                    }
                }
                (None, Some(tool)) => {
                    media_steps += 1;
                    assert!(
                        MediaTool::parse(tool).is_some(),
                        "{}: no media tool {tool}",
                        q.query_id
                    );
                    for v in step.arguments.values() {
                        if let Some(n) = step_ref(v) {
                            assert!(
                                n >= 1 && n <= i && r.steps[n - 1].media.is_some(),
                                "{}: <step-{n}>",
                                q.query_id
                            );
                        }
                    }
                }
                _ => panic!(
                    "{}: step {} must name an api or a media tool",
                    q.query_id,
                    i + 1
                ),
            }
        }
        assert_eq!(
            q.relevant(),
            api_steps.as_slice(),
            "{}: relevant APIs are the reference's API steps",
            q.query_id
        );
        assert!(
            !api_steps.is_empty() && media_steps > 0,
            "{}: a mixed task needs both kinds of tool",
            q.query_id
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_reference_solves_its_query_from_recorded_data() {
    let programs = ["tesseract", "espeak-ng", "pocketsphinx_continuous"];
    if !programs.into_iter().all(installed) {
        return;
    }
    let (queries, refs) = load();
    let catalog = tools::catalog(&sample());
    let functions = tools::functions(&catalog);
    let api = VirtualApi::new(catalog, Some(sample().join("response_cache")));
    let (_server, source) = tools::server(api).await;
    // Tesseract's OpenMP threads only contend with the other tests for the cores.
    let media = McpChild::spawn(&["media-server", "--offline"], &[("OMP_THREAD_LIMIT", "1")]).await;
    let scratch = tempfile::tempdir().unwrap();
    for r in &refs.references {
        assert!(queries.iter().any(|q| q.query_id == r.query_id));
        let mut seen = String::new();
        let mut files: BTreeMap<usize, PathBuf> = BTreeMap::new();
        let mut mimes = Vec::new();
        for (i, step) in r.steps.iter().enumerate() {
            if let Some([tool, api_name]) = &step.api {
                let f = find(&functions, tool, api_name);
                let reply = source
                    .call(&tools::request(f, Value::Object(step.arguments.clone())))
                    .await
                    .unwrap();
                assert_eq!(
                    reply.source,
                    Some(ReplySource::Cache),
                    "{} step {}: not a recorded reply",
                    r.query_id,
                    i + 1
                );
                seen.push_str(&reply.response.to_string());
                continue;
            }
            let mut args = step.arguments.clone();
            for v in args.values_mut() {
                if let Some(n) = step_ref(v) {
                    *v = json!(files[&n].to_string_lossy());
                }
            }
            let tool = step.media.as_deref().unwrap_or_default();
            let result = media.ok(tool, Value::Object(args)).await;
            seen.push_str(&text(&result));
            if result.content.len() > 1 {
                let (mime, bytes) = binary(&result);
                let path = scratch.path().join(format!("{}-{}", r.query_id, i + 1));
                std::fs::write(&path, bytes).unwrap();
                files.insert(i + 1, path);
                mimes.push(mime);
            }
        }
        let seen = seen.to_lowercase();
        for fact in &r.facts {
            assert!(
                seen.contains(&fact.to_lowercase()),
                "{}: fact `{fact}` not found in what the steps returned: {seen}",
                r.query_id
            );
        }
        for mime in &r.files {
            assert!(
                mimes.contains(mime),
                "{}: no {mime} made (made: {mimes:?})",
                r.query_id
            );
        }
    }
    media.close().await;
}

fn find<'a>(functions: &'a [Function], tool: &str, api: &str) -> &'a Function {
    functions
        .iter()
        .find(|f| f.doc.tool_name == tool && f.doc.api_name == api)
        .unwrap_or_else(|| panic!("no API {tool} / {api} in the sample"))
}

#[test]
fn every_file_url_the_sample_apis_give_is_recorded() {
    let root = sample();
    let mut urls = Vec::new();
    collect_file_urls(&root.join("response_cache"), &mut urls);
    assert!(urls.len() >= 20, "{urls:?}");
    for url in urls {
        let path = url.trim_start_matches("https://");
        assert!(
            root.join("url_cache").join(path).is_file(),
            "{url} is not in url_cache"
        );
    }
}

/// The values of `*_url` and `page_images` fields in every recorded reply under `dir`.
fn collect_file_urls(dir: &std::path::Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_file_urls(&path, out);
        } else {
            let value: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            walk(&value, false, out);
        }
    }
}

fn walk(value: &Value, is_file: bool, out: &mut Vec<String>) {
    match value {
        Value::String(s) if is_file && s.starts_with("https://") => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| walk(v, is_file, out)),
        Value::Object(map) => {
            for (k, v) in map {
                walk(v, k.ends_with("_url") || k == "page_images", out);
            }
        }
        _ => {}
    }
}

/// The text of every tool result so far.
fn tool_results(req: &Value) -> String {
    let results: Vec<&Value> = req["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool" || m["role"] == "function")
        .collect();
    serde_json::to_string(&results).unwrap_or_default()
}

/// A model solving query 715 as its reference does: the receipt's record from DocuVault, its scan
/// (a URL the media server finds in url_cache) turned upright, the turned image (a file handle) read by
/// OCR, and an answer quoting what OCR read.
fn receipt_solver(req: &Value) -> (u16, Value) {
    let seen = tool_results(req);
    let (name, args) = match calls_so_far(req) {
        0 => (
            "get_document_for_docuvault".to_string(),
            json!({"document_id": "RCP-7731"}),
        ),
        1 => {
            let start = seen.find("https://scans.docuvault.example/").unwrap_or(0);
            let end = seen[start..].find(".png").map_or(start, |e| start + e + 4);
            let url = seen[start..end].to_string();
            (
                "mcp__media__image_rotate".to_string(),
                json!({"image": url, "degrees": -90}),
            )
        }
        2 => (
            "mcp__media__ocr".to_string(),
            json!({"image": handle_in(req).unwrap_or_default()}),
        ),
        _ => {
            let total = seen
                .split("TOTAL")
                .nth(1)
                .map(|t| t.chars().take(9).collect::<String>())
                .unwrap_or_default();
            (
                "Finish".to_string(),
                json!({"return_type": "give_answer", "final_answer": format!("You paid TOTAL{total} in all.")}),
            )
        }
    };
    (200, crate::common::mock_openai::call_reply(&name, &args))
}

#[test]
fn a_mixed_query_runs_end_to_end_with_the_media_server() {
    if !installed("tesseract") {
        return;
    }
    let model = endpoint(receipt_solver);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let media = format!("{} media-server --offline", env!("CARGO_BIN_EXE_sum2act"));
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .run_query("715", "M1_media")
        .args(["--method", "react", "--mcp", &media, "--out"])
        .arg(&out)
        .run()
        .success()
        .no_panic()
        .stdout_has("mcp__media__ocr");
    let path = out.join("M1_media/715_react.json");
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let steps = file["sum2act"]["steps"].as_array().unwrap();
    let obs: Vec<&Value> = steps.iter().map(|s| &s["observation"]).collect();
    assert_eq!(obs[0]["source"], "cache", "{}", obs[0]);
    assert_eq!(
        (obs[1]["source"].as_str(), obs[1]["failed"].as_bool()),
        (Some("mcp"), Some(false)),
        "{}",
        obs[1]
    );
    assert_eq!(
        steps[2]["arguments"],
        json!({"image": "<file-1>"}).to_string()
    );
    assert!(
        obs[2]["text"]
            .as_str()
            .unwrap_or("")
            .contains("TOTAL 2.80 EUR"),
        "{}",
        obs[2]
    );
    assert!(
        out.join("M1_media/715_react.resources/file-1.png")
            .is_file()
    );
    let answer = file["answer_generation"]["final_answer"].to_string();
    assert!(answer.contains("2.80"), "{answer}");
}
