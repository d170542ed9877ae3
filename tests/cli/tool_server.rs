//! The tool environment end to end: the embedded virtual API server on real loopback HTTP, driven by the
//! HTTP client and the tool caller as the agents use them; plus the caller's limits, retries, redirects
//! and truncation against tiny mock servers, and `sum2act serve` as a process.

use crate::common;

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures::StreamExt;
use serde_json::{Map, Value, json};

use sum2act::server::simulate::carries_data;
use sum2act::server::{
    CatalogSource, FaultConfig, FaultKind, FaultMix, ServerHandle, SimulationMode, VirtualApi,
    spawn,
};
use sum2act::toolbench::naming::pure_api_name;
use sum2act::toolbench::{Catalog, Function};
use sum2act::tools::observation::reply_text;
use sum2act::tools::{
    Finish, HttpSource, ReplySource, ToolConfig, ToolEnv, ToolError, ToolRequest, ToolSource,
};

/// The shared ToolBench data when present, else the shipped sample.
fn data_dir() -> PathBuf {
    common::shared_toolbench().unwrap_or_else(common::sample)
}

fn catalog(dir: &Path) -> Arc<Catalog> {
    Arc::new(Catalog::load(&dir.join("tools")).unwrap().catalog)
}

/// A catalogue of one tool with an API whose reply shape must be inferred (no template, one required
/// parameter) and one with a data template, written to a temporary folder: the LLM-simulation tests
/// need both, whether or not `../shared/toolbench` is present.
fn inferred_and_templated_catalog() -> (tempfile::TempDir, Arc<Catalog>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tools/Data");
    std::fs::create_dir_all(&dir).unwrap();
    let tool = json!({
        "tool_name": "Record Desk", "standardized_name": "record_desk", "category_name": "Data",
        "tool_description": "Looks up records and their statistics.", "title": "Record Desk",
        "api_list": [
            {"name": "Lookup record", "description": "Details of one record by its id.", "method": "GET",
             "required_parameters": [{"name": "record_id", "type": "STRING", "description": "The record id", "default": ""}],
             "optional_parameters": []},
            {"name": "Record stats", "description": "Counts of records by status.", "method": "GET",
             "required_parameters": [], "optional_parameters": [],
             "template_response": {"total": "int", "open": "int", "closed": "int"}}
        ]
    });
    std::fs::write(dir.join("record_desk.json"), tool.to_string()).unwrap();
    let catalog = catalog(tmp.path());
    (tmp, catalog)
}

fn loopback() -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
}

async fn server(api: VirtualApi) -> (ServerHandle, HttpSource) {
    let handle = spawn(Arc::new(api), loopback()).await.unwrap();
    let source = HttpSource::new(&handle.url(), Some("secret-key".into())).unwrap();
    (handle, source)
}

fn functions(catalog: &Catalog) -> Vec<Function> {
    catalog
        .tools()
        .iter()
        .flat_map(|t| {
            t.file
                .api_list
                .iter()
                .map(move |a| Function::from_doc(&t.api_doc(a), &t.standard_name))
        })
        .collect()
}

fn config() -> ToolConfig {
    ToolConfig {
        timeout: Duration::from_secs(5),
        backoff: Duration::from_millis(10),
        ..ToolConfig::default()
    }
}

/// Arguments that satisfy an API: every parameter at its documented default (or a placeholder).
fn default_args(f: &Function) -> Map<String, Value> {
    let mut args = Map::new();
    for p in f.doc.required() {
        let v = if p.default.is_null() || p.default == json!("") {
            json!("1")
        } else {
            p.default.clone()
        };
        args.insert(sum2act::toolbench::naming::param_name(&p.name), v);
    }
    args
}

/// The first recorded call of the data's response cache whose API is in the catalogue.
fn first_cached(dir: &Path, catalog: &Catalog) -> Option<(String, String, String, String, Value)> {
    let root = dir.join("response_cache");
    let mut files = Vec::new();
    for cat in std::fs::read_dir(&root).ok()?.flatten() {
        for tool in std::fs::read_dir(cat.path()).ok()?.flatten() {
            for api in std::fs::read_dir(tool.path()).ok()?.flatten() {
                files.push(api.path());
            }
        }
    }
    files.sort();
    for file in files {
        let rel = file.strip_prefix(&root).ok()?;
        let parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().to_string())
            .collect();
        let (cat, tool, api) = (&parts[0], &parts[1], parts[2].trim_end_matches(".json"));
        let Some(t) = catalog.tool(cat, tool) else {
            continue;
        };
        if !t
            .file
            .api_list
            .iter()
            .any(|a| pure_api_name(&a.name) == api)
        {
            continue;
        }
        let entries: Map<String, Value> =
            serde_json::from_str(&std::fs::read_to_string(&file).ok()?).ok()?;
        if let Some((key, value)) = entries.into_iter().next() {
            return Some((cat.clone(), tool.clone(), api.to_string(), key, value));
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_call_returns_exactly_the_cached_response() {
    let dir = data_dir();
    let catalog = catalog(&dir);
    let Some((cat, tool, api, key, cached)) = first_cached(&dir, &catalog) else {
        eprintln!("skipped: no usable response cache in {}", dir.display());
        return;
    };
    let (handle, source) = server(VirtualApi::new(
        catalog.clone(),
        Some(dir.join("response_cache")),
    ))
    .await;
    let request = ToolRequest {
        category: cat,
        tool_name: tool.clone(),
        api_name: api.clone(),
        tool_input: Value::String(key.clone()),
        strip: "truncate".into(),
    };
    let reply = source.call(&request).await.unwrap();
    assert_eq!(reply.source, Some(ReplySource::Cache));
    assert_eq!(
        json!({"error": reply.error, "response": reply.response}),
        cached
    );

    // The same call through the caller, as an agent makes it.
    let env = ToolEnv::new(Arc::new(source), config());
    let caller = env.caller(functions(&catalog));
    let name = caller
        .functions()
        .iter()
        .find(|f| f.tool == tool && f.api == api)
        .map(|f| f.name.clone())
        .unwrap();
    let obs = caller.call(&name, &key).await;
    assert_eq!(obs.source, ReplySource::Cache, "{}", obs.text);
    assert_eq!(obs.response, cached["response"]);
    let full = reply_text(cached["error"].as_str().unwrap_or(""), &cached["response"]);
    let expected = if full.chars().count() > 1024 {
        format!("{}...", full.chars().take(1024).collect::<String>())
    } else {
        full
    };
    assert_eq!(obs.text, expected);
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulated_responses_are_well_formed_and_identical_on_repeat() {
    let dir = data_dir();
    let catalog = catalog(&dir);
    let (handle, source) = server(VirtualApi::new(catalog.clone(), None)).await;
    let fns = functions(&catalog);
    // A spread of APIs across the catalogue (every one would take longer than a test should).
    let step = (fns.len() / 120).max(1);
    let mut seen = 0;
    for f in fns.iter().step_by(step) {
        let request = ToolRequest {
            category: f.category.clone(),
            tool_name: f.tool.clone(),
            api_name: f.api.clone(),
            tool_input: Value::Object(default_args(f)),
            strip: String::new(),
        };
        let a = source.call(&request).await.unwrap();
        let b = source.call(&request).await.unwrap();
        assert_eq!(a, b, "{}", f.name);
        assert_eq!(a.error, "", "{}: {:?}", f.name, a.response);
        assert_eq!(a.source, Some(ReplySource::Simulated), "{}", f.name);
        assert!(
            a.response.is_object() || a.response.is_array() || a.response.is_string(),
            "{}",
            f.name
        );
        let template = f.doc.template();
        if let Some(Value::Object(t)) = template.as_ref().filter(|t| carries_data(t)) {
            // Shaped like the template: the same top-level fields.
            let got = a.response.as_object().unwrap();
            for k in t.keys().filter(|k| *k != "_list_length") {
                assert!(
                    got.contains_key(k),
                    "{}: field {k} missing in {}",
                    f.name,
                    a.response
                );
            }
        } else if let Some(m) = a.response.as_object() {
            // No template, or only a status message: an inferred shape, never a bare status.
            assert!(
                m.keys().any(|k| !matches!(
                    k.as_str(),
                    "status" | "message" | "msg" | "error" | "meta"
                )),
                "{}: {}",
                f.name,
                a.response
            );
        }
        seen += 1;
    }
    assert!(seen >= 10, "only {seen} APIs checked");
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tools_apis_and_missing_parameters_are_toolbench_errors() {
    let dir = data_dir();
    let catalog = catalog(&dir);
    let (handle, source) = server(VirtualApi::new(catalog.clone(), None)).await;
    let f = functions(&catalog)
        .into_iter()
        .find(|f| !f.required.is_empty())
        .unwrap();
    let call = |tool: &str, api: &str, input: &str| ToolRequest {
        category: f.category.clone(),
        tool_name: tool.to_string(),
        api_name: api.to_string(),
        tool_input: Value::String(input.to_string()),
        strip: String::new(),
    };
    let r = source
        .call(&call("../../etc/passwd", "x", "{}"))
        .await
        .unwrap();
    assert_eq!(r.error, "Message error...");
    assert!(
        r.response.as_str().unwrap().contains("No such tool"),
        "{:?}",
        r.response
    );
    let r = source
        .call(&call(&f.tool, "no_such_api", "{}"))
        .await
        .unwrap();
    assert_eq!(r.error, "Message error...");
    assert!(
        r.response.as_str().unwrap().contains(&f.api),
        "lists the tool's APIs: {:?}",
        r.response
    );
    let r = source.call(&call(&f.tool, &f.api, "{}")).await.unwrap();
    assert!(
        r.error.contains(&format!("'{}'", f.required[0])),
        "{}",
        r.error
    );
    let r = source
        .call(&call(&f.tool, &f.api, "{not json"))
        .await
        .unwrap();
    assert!(r.error.starts_with("Tool input parse error"), "{}", r.error);

    // Through the caller: the same problems become failed observations, never errors.
    let env = ToolEnv::new(Arc::new(source), config());
    let caller = env.caller(vec![f.clone()]);
    let obs = caller.call("hallucinated_function", "{}").await;
    assert_eq!((obs.code, obs.failed), (1, true));
    assert_eq!(obs.error, "No such function name: hallucinated_function");
    let obs = caller.call(&f.name, "{}").await;
    assert!(
        obs.failed && obs.text.contains(&f.required[0]),
        "{}",
        obs.text
    );
    assert_eq!(obs.source, ReplySource::Caller);
    let obs = caller.call(&f.name, "{\"a\": ").await;
    assert!(
        obs.failed && obs.text.contains("Tool input parse error"),
        "{}",
        obs.text
    );
    // An undeclared parameter goes to the API, as ToolBench sends it; --strict-params rejects it.
    let mut args = default_args(&f);
    args.insert("definitely_not_a_param".into(), json!(1));
    let args = Value::Object(args).to_string();
    let obs = caller.call(&f.name, &args).await;
    assert!(!obs.failed, "{}", obs.text);
    assert_eq!(obs.source, ReplySource::Simulated);
    let strict = ToolEnv::new(
        env.source().clone(),
        ToolConfig {
            strict_params: true,
            ..config()
        },
    );
    let obs = strict.caller(vec![f.clone()]).call(&f.name, &args).await;
    assert!(
        obs.failed && obs.text.contains("definitely_not_a_param"),
        "{}",
        obs.text
    );
    assert_eq!(obs.source, ReplySource::Caller);
    // Suffix matching, as ToolBench dispatches: the API part alone finds the function.
    let obs = caller
        .call(
            &f.name[f.name.len() - 8..],
            &Value::Object(default_args(&f)).to_string(),
        )
        .await;
    assert!(!obs.failed, "{}", obs.text);
    assert_eq!(obs.source, ReplySource::Simulated);
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_injection_yields_the_configured_mix() {
    let dir = data_dir();
    let catalog = catalog(&dir);
    let faults = FaultConfig {
        rate: 0.3,
        seed: 42,
        timeout_delay: Duration::from_millis(400),
        ..FaultConfig::default()
    };
    let (handle, source) = server(VirtualApi::new(catalog.clone(), None).with_faults(faults)).await;
    let f = functions(&catalog)
        .into_iter()
        .find(|f| f.required.len() == 1)
        .unwrap();
    let env = ToolEnv::new(
        Arc::new(source),
        ToolConfig {
            timeout: Duration::from_millis(150),
            retries: 0,
            ..config()
        },
    );
    let caller = env.caller(vec![f.clone()]);
    let n = 300;
    let codes: Vec<(u8, ReplySource)> = futures::stream::iter(0..n)
        .map(|i| {
            let caller = caller.clone();
            let args = json!({ f.required[0].clone(): format!("value {i}") }).to_string();
            let name = f.name.clone();
            async move {
                let o = caller.call(&name, &args).await;
                (o.code, o.source)
            }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let count = |c: u8| codes.iter().filter(|(code, _)| *code == c).count();
    let faults = n - codes
        .iter()
        .filter(|(c, s)| *c == 0 && *s != ReplySource::Fault)
        .count();
    assert!(
        (60..=120).contains(&faults),
        "{faults} faults of {n}: {codes:?}"
    );
    // rate limit 10, unauthorized 7, not working 6, timeout 5: each about a quarter of the faults.
    for code in [10, 7, 6, 5] {
        let k = count(code);
        assert!(
            k * 100 >= faults * 12 && k * 100 <= faults * 40,
            "code {code}: {k} of {faults}"
        );
    }
    assert_eq!(count(10) + count(7) + count(6) + count(5), faults);
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_answers_are_truncated_and_capped() {
    let dir = data_dir();
    let catalog = catalog(&dir);
    let faults = FaultConfig {
        rate: 1.0,
        mix: FaultMix(vec![(FaultKind::Huge, 1)]),
        huge_bytes: 300_000,
        ..FaultConfig::default()
    };
    let (handle, source) = server(VirtualApi::new(catalog.clone(), None).with_faults(faults)).await;
    let f = functions(&catalog)
        .into_iter()
        .find(|f| f.required.is_empty())
        .unwrap();
    let env = ToolEnv::new(Arc::new(source.clone()), config());
    let obs = env.caller(vec![f.clone()]).call(&f.name, "{}").await;
    assert_eq!(obs.text.chars().count(), 1027, "{}", obs.text);
    assert!(obs.text.ends_with("..."));
    let short = ToolEnv::new(
        Arc::new(source.clone()),
        ToolConfig {
            max_observation_length: 40,
            ..config()
        },
    );
    assert_eq!(
        short
            .caller(vec![f.clone()])
            .call(&f.name, "{}")
            .await
            .text
            .chars()
            .count(),
        43
    );
    // A client cap below the body size: refused, not buffered.
    let capped = source.with_max_reply_bytes(10_000);
    let req = ToolRequest {
        category: f.category.clone(),
        tool_name: f.tool.clone(),
        api_name: f.api.clone(),
        tool_input: json!({}),
        strip: String::new(),
    };
    assert!(matches!(
        capped.call(&req).await,
        Err(ToolError::BadReply(_))
    ));
    let env = ToolEnv::new(Arc::new(capped), config());
    let obs = env.caller(vec![f.clone()]).call(&f.name, "{}").await;
    assert_eq!(obs.code, 12);
    handle.shutdown().await;
}

/// (status, body) of the mock's reply to request number `i`.
type Script = fn(usize) -> (u16, String);

/// A mock `/virtual` server answering from a script of (status, body) by request number.
async fn mock(script: Script) -> (ServerHandleLite, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let state = (hits.clone(), script);
    async fn handler(State((hits, script)): State<(Arc<AtomicUsize>, Script)>) -> Response {
        let i = hits.fetch_add(1, Ordering::SeqCst);
        let (status, body) = script(i);
        let mut resp = (StatusCode::from_u16(status).unwrap(), body.clone()).into_response();
        if status == 307 {
            resp.headers_mut().insert("location", body.parse().unwrap());
        }
        resp
    }
    let app = Router::new()
        .route("/virtual", post(handler))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (ServerHandleLite { addr, task }, hits)
}

struct ServerHandleLite {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ServerHandleLite {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn one_function() -> Function {
    let catalog = catalog(&data_dir());
    functions(&catalog)
        .into_iter()
        .find(|f| f.required.is_empty())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_429_and_5xx_with_backoff_then_gives_up() {
    let (m, hits) = mock(|i| match i {
        0 => (429, "slow down".into()),
        1 => (503, "busy".into()),
        _ => (200, r#"{"error": "", "response": "fine"}"#.into()),
    })
    .await;
    let f = one_function();
    let url = format!("http://{}/virtual", m.addr);
    let env = ToolEnv::new(
        Arc::new(HttpSource::new(&url, None).unwrap()),
        ToolConfig {
            retries: 2,
            backoff: Duration::from_millis(50),
            ..config()
        },
    );
    let start = Instant::now();
    let obs = env.caller(vec![f.clone()]).call(&f.name, "{}").await;
    assert_eq!(obs.text, reply_text("", &json!("fine")));
    assert_eq!((obs.code, obs.failed), (0, false));
    assert_eq!(hits.load(Ordering::SeqCst), 3);
    assert!(
        start.elapsed() >= Duration::from_millis(150),
        "backoff 50 + 100 ms"
    );

    let (m, hits) = mock(|_| (503, "down".into())).await;
    let url = format!("http://{}/virtual", m.addr);
    let env = ToolEnv::new(
        Arc::new(HttpSource::new(&url, None).unwrap()),
        ToolConfig {
            retries: 1,
            ..config()
        },
    );
    let obs = env.caller(vec![f.clone()]).call(&f.name, "{}").await;
    assert_eq!(obs.code, 12);
    assert_eq!(obs.error, "request invalid, data error. status_code=503");
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_to_other_hosts_are_not_followed() {
    let (m, hits) = mock(|_| (307, "http://127.0.0.2:9/virtual".into())).await;
    let f = one_function();
    let url = format!("http://{}/virtual", m.addr);
    let env = ToolEnv::new(
        Arc::new(HttpSource::new(&url, None).unwrap()),
        ToolConfig {
            retries: 0,
            ..config()
        },
    );
    let obs = env.caller(vec![f.clone()]).call(&f.name, "{}").await;
    assert_eq!(obs.code, 12);
    assert!(obs.error.contains("status_code=307"), "{}", obs.error);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_tool_rate_limit_spaces_calls_and_identical_calls_are_cached() {
    let dir = data_dir();
    let catalog = catalog(&dir);
    let f = functions(&catalog)
        .into_iter()
        .find(|f| f.required.len() == 1)
        .unwrap();
    let env = ToolEnv::new(
        Arc::new(CatalogSource::new(catalog.clone(), None)),
        ToolConfig {
            per_tool_per_minute: Some(600),
            ..config()
        },
    );
    let caller = env.caller(vec![f.clone()]);
    let start = Instant::now();
    for i in 0..4 {
        let obs = caller
            .call(&f.name, &json!({ f.required[0].clone(): i }).to_string())
            .await;
        assert!(!obs.failed, "{}", obs.text);
    }
    // 600/min = one call per 100 ms after the first.
    assert!(
        start.elapsed() >= Duration::from_millis(290),
        "{:?}",
        start.elapsed()
    );
    // An identical call is answered from the run's cache: no wait for the limiter.
    let again = Instant::now();
    let obs = caller
        .call(&f.name, &json!({ f.required[0].clone(): 3 }).to_string())
        .await;
    assert!(!obs.failed);
    assert!(
        again.elapsed() < Duration::from_millis(50),
        "{:?}",
        again.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finish_codes() {
    let env = ToolEnv::new(
        Arc::new(CatalogSource::new(catalog(&data_dir()), None)),
        config(),
    );
    let caller = env.caller(vec![]);
    let obs = caller
        .call(
            "Finish",
            r#"{"return_type": "give_answer", "final_answer": "42"}"#,
        )
        .await;
    assert_eq!((obs.code, obs.failed), (3, false));
    assert_eq!(obs.finish, Some(Finish::Answer("42".into())));
    let obs = caller
        .call("Finish", r#"{"return_type": "give_up_and_restart"}"#)
        .await;
    assert_eq!((obs.code, obs.finish), (4, Some(Finish::GiveUp)));
    let obs = caller
        .call("Finish", r#"{"return_type": "give_answer"}"#)
        .await;
    assert_eq!((obs.code, obs.failed, obs.finish), (2, true, None));
    let obs = caller.call("Finish", "").await;
    assert_eq!(obs.code, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_answers_are_served_from_the_cache_on_rerun() {
    let tmp = tempfile::tempdir().unwrap();
    let tools = tmp.path().join("tools/Data");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(
        tools.join("weatherly.json"),
        json!({"tool_name": "Weatherly", "api_list": [{"name": "Current weather", "description": "Weather now",
            "required_parameters": [{"name": "city", "type": "STRING", "description": "", "default": "Paris"}],
            "optional_parameters": [], "template_response": {"city": "str", "temperature": "float", "updated_at": "str"}}]})
        .to_string(),
    )
    .unwrap();
    let cat = catalog(tmp.path());
    let cache = tmp.path().join("response_cache");
    let (h, s) = server(VirtualApi::new(cat.clone(), Some(cache.clone())).with_save(true)).await;
    let req = ToolRequest {
        category: "Data".into(),
        tool_name: "weatherly".into(),
        api_name: "current_weather".into(),
        tool_input: json!("{\"city\": \"Oslo\"}"),
        strip: String::new(),
    };
    let first = s.call(&req).await.unwrap();
    assert_eq!(first.source, Some(ReplySource::Simulated));
    assert_eq!(first.response["city"], "Oslo");
    h.shutdown().await;
    let file = cache.join("Data/weatherly/current_weather.json");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["{\"city\":\"Oslo\"}"]["response"], first.response);
    let (h, s) = server(VirtualApi::new(cat, Some(cache))).await;
    let again = s.call(&req).await.unwrap();
    assert_eq!(again.source, Some(ReplySource::Cache));
    assert_eq!(again.response, first.response);
    h.shutdown().await;
}

#[test]
fn serve_command_answers_on_loopback_until_stopped() {
    let dir = data_dir();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sum2act"))
        .args(["--data"])
        .arg(&dir)
        .args(["serve", "--port", "0", "--fault-rate", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .last()
        .unwrap_or_default()
        .to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/virtual"),
        "{line}"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let reply = rt.block_on(async {
        let source = HttpSource::new(&url, None).unwrap();
        source
            .call(&ToolRequest {
                category: "Nowhere".into(),
                tool_name: "no_such_tool".into(),
                api_name: "x".into(),
                tool_input: json!({}),
                strip: String::new(),
            })
            .await
    });
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(reply.unwrap().error, "Message error...");
}

#[test]
fn import_cache_converts_python_repr_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("stb/Data/theclique_for_Data");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("transfermarkt_search.json"),
        r#"{"{'name': 'Lionel Messi'}": {"error": "", "response": "Messi"}, "{'name': ": {"error": "", "response": ""}}"#,
    )
    .unwrap();
    let dest = tmp.path().join("ours");
    common::Test::new()
        .arg("serve")
        .arg("import-cache")
        .arg(tmp.path().join("stb"))
        .arg(&dest)
        .run()
        .success()
        .stdout_has("imported 1 entries from 1 files");
    let out: Value = serde_json::from_str(
        &std::fs::read_to_string(dest.join("Data/theclique/transfermarkt_search.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        out,
        json!({"{\"name\":\"Lionel Messi\"}": {"error": "", "response": "Messi"}})
    );
    common::Test::new()
        .args(["serve", "import-cache", "/definitely/not/here", "x"])
        .run()
        .failure(2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_simulation_answers_and_falls_back_to_the_schema() {
    use sum2act::llm::scripted::ScriptedLlm;
    use sum2act::server::simulate::parse_template;
    let (_tmp, catalog) = inferred_and_templated_catalog();
    // An API without a template that carries data: the model's reply is taken as it is.
    let f = functions(&catalog)
        .into_iter()
        .find(|f| f.required.len() == 1 && parse_template(&f.doc).is_none_or(|t| !carries_data(&t)))
        .unwrap();
    let args = json!({ f.required[0].clone(): "needle-argument" }).to_string();
    let model = Arc::new(ScriptedLlm::from_replies(vec![
        "```json\n{\"error\": \"\", \"response\": {\"answer\": \"from the model\"}}\n```".into(),
    ]));
    let api = VirtualApi::new(catalog.clone(), None).with_llm(model.clone(), SimulationMode::Llm);
    let (h, s) = server(api).await;
    let env = ToolEnv::new(Arc::new(s), config());
    let obs = env.caller(vec![f.clone()]).call(&f.name, &args).await;
    assert_eq!(obs.source, ReplySource::Llm, "{}", obs.text);
    assert_eq!(obs.response, json!({"answer": "from the model"}));
    let seen = model.requests();
    let prompt: String = seen[0].messages.iter().map(|m| m.content.clone()).collect();
    assert!(
        prompt.contains("needle-argument") && prompt.contains(&f.doc.api_name),
        "{prompt}"
    );
    h.shutdown().await;

    // A model that never answers usable JSON: three attempts, then the schema simulator.
    let broken = Arc::new(ScriptedLlm::from_replies(vec![
        "no".into(),
        "still no".into(),
        "{}".into(),
    ]));
    let (h, s) =
        server(VirtualApi::new(catalog, None).with_llm(broken.clone(), SimulationMode::Llm)).await;
    let env = ToolEnv::new(Arc::new(s), config());
    let obs = env.caller(vec![f.clone()]).call(&f.name, &args).await;
    assert_eq!(obs.source, ReplySource::Simulated, "{}", obs.text);
    assert!(!obs.failed);
    assert_eq!(broken.requests().len(), 3);
    h.shutdown().await;

    // An API with a template: the model is asked for the template's shape, and a reply without the
    // template's fields is refused and asked again.
    let g = functions(&self::catalog(&data_dir()))
        .into_iter()
        .find(|g| {
            parse_template(&g.doc).is_some_and(|t| {
                t.is_object() && carries_data(&t) && t.as_object().is_some_and(|m| m.len() <= 8)
            })
        })
        .unwrap();
    let template = parse_template(&g.doc).unwrap_or_default();
    let shaped: serde_json::Map<String, Value> = template
        .as_object()
        .map(|m| m.keys().map(|k| (k.clone(), json!("x"))).collect())
        .unwrap_or_default();
    let shaped_reply = json!({"error": "", "response": shaped}).to_string();
    let model = Arc::new(ScriptedLlm::from_replies(vec![
        "{\"error\": \"\", \"response\": {\"answer\": \"ignores the template\"}}".into(),
        shaped_reply,
    ]));
    let (h, s) = server(
        VirtualApi::new(self::catalog(&data_dir()), None)
            .with_llm(model.clone(), SimulationMode::Llm),
    )
    .await;
    let env = ToolEnv::new(Arc::new(s), config());
    let obs = env
        .caller(vec![g.clone()])
        .call(&g.name, &Value::Object(default_args(&g)).to_string())
        .await;
    assert_eq!(obs.source, ReplySource::Llm, "{}", obs.text);
    assert_eq!(obs.response, Value::Object(shaped));
    let seen = model.requests();
    assert_eq!(seen.len(), 2);
    assert!(
        matches!(
            seen[0].response_format,
            sum2act::llm::ResponseFormat::JsonSchema { .. }
        ),
        "{:?}",
        seen[0].response_format
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hybrid_simulation_asks_the_model_only_where_the_shape_is_inferred() {
    use sum2act::llm::scripted::ScriptedLlm;
    use sum2act::server::simulate::parse_template;
    let (_tmp, catalog) = inferred_and_templated_catalog();
    let inferred = functions(&catalog)
        .into_iter()
        .find(|f| f.required.len() == 1 && parse_template(&f.doc).is_none_or(|t| !carries_data(&t)))
        .unwrap();
    let templated = functions(&catalog)
        .into_iter()
        .find(|g| parse_template(&g.doc).is_some_and(|t| carries_data(&t)))
        .unwrap();
    let model = Arc::new(ScriptedLlm::from_replies(vec![
        "{\"error\": \"\", \"response\": {\"answer\": \"from the model\"}}".into(),
    ]));
    let api = VirtualApi::new(catalog, None).with_llm(model.clone(), SimulationMode::Hybrid);
    let (h, s) = server(api).await;
    let env = ToolEnv::new(Arc::new(s), config());
    let caller = env.caller(vec![inferred.clone(), templated.clone()]);
    let args = json!({ inferred.required[0].clone(): "x" }).to_string();
    let obs = caller.call(&inferred.name, &args).await;
    assert_eq!(obs.source, ReplySource::Llm, "{}", obs.text);
    assert_eq!(obs.response, json!({"answer": "from the model"}));
    let obs = caller
        .call(
            &templated.name,
            &Value::Object(default_args(&templated)).to_string(),
        )
        .await;
    assert_eq!(obs.source, ReplySource::Simulated, "{}", obs.text);
    assert_eq!(
        model.requests().len(),
        1,
        "the templated API must not reach the model"
    );
    h.shutdown().await;
}
