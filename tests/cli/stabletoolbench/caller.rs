//! The caller sends the model's argument order, so a call hits a cache keyed as its server keys it;
//! reply key order survives our server and a peer's; `--stb-compat`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};

use super::{CONVERT, MODEL_ARGS};
use crate::common;
use sum2act_core::toolbench::{Catalog, Function};
use sum2act_core::tools::{HttpSource, ReplySource, ToolConfig, ToolEnv, ToolRequest, ToolSource};
use sum2act_server::pyrepr::to_repr;
use sum2act_server::{VirtualApi, spawn};

/// A `/virtual` peer that logs request bodies and answers like StableToolBench's server: a cache hit
/// by `str(json.loads(tool_input))`, else a reply whose keys are deliberately not sorted.
async fn stb_like_server(cache: Value) -> (String, Arc<Mutex<Vec<Value>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    async fn handler(
        State((log, cache)): State<(Arc<Mutex<Vec<Value>>>, Value)>,
        body: String,
    ) -> String {
        let req: Value = serde_json::from_str(&body).unwrap();
        log.lock().unwrap().push(req.clone());
        let input = match &req["tool_input"] {
            Value::String(s) => serde_json::from_str(s).unwrap(),
            other => other.clone(),
        };
        match cache.get(to_repr(&input)) {
            Some(hit) => hit.to_string(),
            None => {
                r#"{"error": "", "response": {"zeta": 1, "alpha": {"y": 2, "x": 3}}}"#.to_string()
            }
        }
    }
    let app = Router::new()
        .route("/virtual", post(handler))
        .with_state((log.clone(), cache));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/virtual"), log)
}

fn sample_functions() -> (Arc<Catalog>, Vec<Function>) {
    let catalog = common::tools::catalog(&common::sample());
    let fns = common::tools::functions(&catalog);
    (catalog, fns)
}

fn config() -> ToolConfig {
    ToolConfig {
        timeout: Duration::from_secs(5),
        cache_calls: false,
        ..ToolConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_argument_order_reaches_the_server_and_hits_its_cache() {
    // Its cache file for this API, keyed as its server keys it (the model's order, Python repr).
    let key = "{'to_currency': 'JPY', 'amount': 250, 'from_currency': 'EUR'}";
    let cached =
        json!({"error": "", "response": {"rate": 168.92, "amount": 250, "result": 42230.0}});
    let (url, log) = stb_like_server(json!({ key: cached })).await;
    let (_, fns) = sample_functions();
    let env = ToolEnv::new(Arc::new(HttpSource::new(&url, None).unwrap()), config());
    let caller = env.caller(fns);

    let obs = caller.call(CONVERT, MODEL_ARGS).await;
    assert_eq!(obs.response, cached["response"], "{}", obs.text);
    assert_eq!(
        obs.text,
        r#"{"error": "", "response": {"rate": 168.92, "amount": 250, "result": 42230.0}}"#
    );
    let sent = log.lock().unwrap()[0].clone();
    // Exactly the model's text, as its own client sends it.
    assert_eq!(sent["tool_input"], MODEL_ARGS);
    let keys: Vec<&String> = sent.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "category",
            "tool_name",
            "api_name",
            "tool_input",
            "strip",
            "toolbench_key"
        ]
    );

    // Arguments we had to repair (double-encoded, a common slip) go as an object, still in the model's order.
    let double = serde_json::to_string(MODEL_ARGS).unwrap();
    let obs = caller.call(CONVERT, &double).await;
    assert_eq!(obs.response, cached["response"], "{}", obs.text);
    let sent = log.lock().unwrap()[1].clone();
    assert_eq!(to_repr(&sent["tool_input"]), key);

    // A reply that is not in its cache keeps the peer's key order in the observation.
    let obs = caller
        .call(
            CONVERT,
            r#"{"amount": 1, "from_currency": "EUR", "to_currency": "USD"}"#,
        )
        .await;
    assert_eq!(
        obs.text,
        r#"{"error": "", "response": {"zeta": 1, "alpha": {"y": 2, "x": 3}}}"#
    );
}

fn sample_data_with_cache(tmp: &Path, entries: &[(&str, &str, Value)]) -> PathBuf {
    let cache = tmp.join("response_cache");
    for (rel, key, value) in entries {
        let file = cache.join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let mut m = serde_json::Map::new();
        m.insert(key.to_string(), value.clone());
        std::fs::write(file, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    }
    cache
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_replies_keep_their_key_order_through_our_server() {
    let tmp = tempfile::tempdir().unwrap();
    let reply = json!({"error": "", "response": {"zeta": [{"b": 1, "a": 2}], "alpha": "x", "mid": {"z": null, "k": true}}});
    let cache = sample_data_with_cache(
        tmp.path(),
        &[(
            "Finance/fx_rates_hub/convert_currency.json",
            r#"{"amount":250,"from_currency":"EUR","to_currency":"JPY"}"#,
            reply.clone(),
        )],
    );
    let (catalog, fns) = sample_functions();
    let handle = spawn(
        Arc::new(VirtualApi::new(catalog, Some(cache))),
        "127.0.0.1:0".parse().unwrap(),
    )
    .await
    .unwrap();
    // The raw bytes on the wire.
    let body = reqwest::Client::new()
        .post(handle.url())
        .json(&json!({"category": "Finance", "tool_name": "fx_rates_hub", "api_name": "convert_currency",
            "tool_input": MODEL_ARGS, "strip": "truncate", "toolbench_key": ""}))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(body, serde_json::to_string(&reply).unwrap());
    assert!(
        body.find("zeta") < body.find("alpha") && body.find("\"b\"") < body.find("\"a\""),
        "{body}"
    );
    // And through our client and caller, as an agent sees it.
    let env = ToolEnv::new(
        Arc::new(HttpSource::new(&handle.url(), None).unwrap()),
        config(),
    );
    let obs = env.caller(fns).call(CONVERT, MODEL_ARGS).await;
    assert_eq!(obs.source, ReplySource::Cache);
    assert_eq!(
        obs.text,
        r#"{"error": "", "response": {"zeta": [{"b": 1, "a": 2}], "alpha": "x", "mid": {"z": null, "k": true}}}"#
    );
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stb_compat_simulates_missing_parameters_and_serves_uncatalogued_cache_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let hit = json!({"error": "", "response": "from its cache"});
    let cache = sample_data_with_cache(
        tmp.path(),
        &[(
            "Finance/old_tool/get_thing.json",
            r#"{"q":"x"}"#,
            hit.clone(),
        )],
    );
    let (catalog, _) = sample_functions();
    let request = |tool: &str, api: &str, input: &str| ToolRequest {
        category: "Finance".into(),
        tool_name: tool.into(),
        api_name: api.into(),
        tool_input: Value::String(input.into()),
        strip: "truncate".into(),
    };
    let missing = request("fx_rates_hub", "convert_currency", r#"{"amount": 5}"#);
    let outside = request("Old Tool", "Get Thing", r#"{"q": "x"}"#);
    let traversal = ToolRequest {
        category: "..".into(),
        ..request("Old Tool", "Get Thing", r#"{"q": "x"}"#)
    };
    for compat in [false, true] {
        let api = VirtualApi::new(catalog.clone(), Some(cache.clone())).with_stb_compat(compat);
        let source = sum2act_server::CatalogSource::from_api(Arc::new(api));
        let r = source.call(&missing).await.unwrap();
        assert_eq!(r.error.starts_with("Parameter error"), !compat, "{r:?}");
        let r = source.call(&outside).await.unwrap();
        if compat {
            assert_eq!((r.error.as_str(), &r.response), ("", &hit["response"]));
            assert_eq!(r.source, Some(ReplySource::Cache));
        } else {
            assert!(
                r.response.as_str().unwrap_or("").contains("No such tool"),
                "{r:?}"
            );
        }
        let r = source.call(&traversal).await.unwrap();
        assert_ne!(r.response, hit["response"]);
    }
}

/// Issue 33 item 16: its cache folder (`{Category}/{tool}_for_{Category}/{api}.json`, Python `str(dict)`
/// keys in the order its client sent them) is read as it is when it is the data's `response_cache`: no
/// `import-cache` step.
#[test]
fn its_cache_layout_is_read_directly_by_serve() {
    let tmp = common::sample_copy(&["queries", "tools"]);
    let recorded = json!({"error": "", "response": {"city": "Oslo", "temperature": -3.5, "summary": "from its cache"}});
    sample_data_with_cache(
        tmp.path(),
        &[(
            "Weather/skycast_weather_for_Weather/current_weather.json",
            "{'units': 'metric', 'city': 'Oslo'}",
            recorded.clone(),
        )],
    );
    let served = common::Test::new()
        .arg("--data")
        .arg(tmp.path())
        .args(["serve", "--port", "0"])
        .serve();
    // Any argument order is the same call.
    let reply = common::tools::call(
        &served.url,
        ["Weather", "SkyCast Weather", "Current weather"],
        json!(r#"{"city": "Oslo", "units": "metric"}"#),
    )
    .unwrap();
    assert_eq!(reply.source, Some(ReplySource::Cache), "{reply:?}");
    assert_eq!(reply.response, recorded["response"]);
}

/// Issue 42 items 3 and 4: its `tool_response_cache/` folder, beside its tools with no queries, is read
/// as it is (beside our `response_cache/`, ours first), and `serve` names it on its first line.
#[test]
fn its_tool_response_cache_folder_is_read_beside_ours() {
    let tmp = common::sample_copy(&["tools", "response_cache"]);
    let theirs = tmp.path().join("tool_response_cache");
    let recorded = json!({"error": "", "response": {"city": "Oslo", "summary": "from its tool_response_cache"}});
    let file = theirs.join("Weather/skycast_weather_for_Weather/current_weather.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let entries = json!({"{'units': 'metric', 'city': 'Oslo'}": recorded.clone()});
    std::fs::write(&file, entries.to_string()).unwrap();
    let served = common::Test::new()
        .arg("--data")
        .arg(tmp.path())
        .args(["serve", "--port", "0"])
        .serve();
    assert!(
        served.line.contains("tool_response_cache"),
        "{}",
        served.line
    );
    let reply = common::tools::call(
        &served.url,
        ["Weather", "SkyCast Weather", "Current weather"],
        json!(r#"{"city": "Oslo", "units": "metric"}"#),
    )
    .unwrap();
    assert_eq!(reply.source, Some(ReplySource::Cache), "{reply:?}");
    assert_eq!(reply.response, recorded["response"]);
    // Ours still answers what it recorded for the same API.
    let reply = common::tools::call(
        &served.url,
        ["Weather", "SkyCast Weather", "Current weather"],
        json!(r#"{"city": "Lisbon", "units": "metric"}"#),
    )
    .unwrap();
    assert_eq!(reply.source, Some(ReplySource::Cache), "{reply:?}");
    assert_eq!(reply.response["summary"], "Sunny with a light north wind");
}
