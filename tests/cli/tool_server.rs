//! The embedded virtual API server end to end on real loopback HTTP, driven by the HTTP client and
//! the tool caller as the agents use them: cached and simulated replies, ToolBench's errors, fault
//! injection, truncation and caps, and saving answers to the cache.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Map, Value, json};

use crate::common::tools::{catalog, config, data_dir, default_args, functions, request, server};
use sum2act_core::toolbench::Catalog;
use sum2act_core::toolbench::naming::pure_api_name;
use sum2act_core::tools::observation::reply_text;
use sum2act_core::tools::{ReplySource, ToolConfig, ToolEnv, ToolError, ToolRequest, ToolSource};
use sum2act_server::simulate::gives_shape;
use sum2act_server::{FaultConfig, FaultKind, FaultMix, VirtualApi, World, WorldOptions};

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
        let request = request(f, Value::Object(default_args(f)));
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
        if let Some(Value::Object(t)) = template.as_ref().filter(|t| gives_shape(t)) {
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
    assert_eq!((obs.code.number(), obs.failed), (1, true));
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
                (o.code.number(), o.source)
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
    // The default cut is the equal budget's (a run's budget sets it for each episode).
    let cut = sum2act_core::tools::settings::DEFAULT_OBSERVATION_CHARS;
    assert_eq!(obs.text.chars().count(), cut + 3, "{}", obs.text);
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
    let req = request(&f, json!({}));
    assert!(matches!(
        capped.call(&req).await,
        Err(ToolError::TooLarge(10_000))
    ));
    let env = ToolEnv::new(Arc::new(capped), config());
    let obs = env.caller(vec![f.clone()]).call(&f.name, "{}").await;
    assert_eq!(obs.code.number(), 12);
    handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saved_answers_are_served_from_the_world_on_rerun() {
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
    let world = || {
        World::open(&WorldOptions {
            dir: Some(cache.clone()),
            entity_memory: true,
        })
        .unwrap()
    };
    let (h, s) =
        server(VirtualApi::new(cat.clone(), Some(cache.clone())).with_world(world())).await;
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
    // One file per call, with its arguments and where the reply came from.
    let dir = cache.join("Data/weatherly/current_weather");
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(files[0].path()).unwrap()).unwrap();
    assert_eq!(saved["arguments"], json!({"city": "Oslo"}));
    assert_eq!(saved["response"], first.response);
    assert_eq!(saved["source"], "simulated");
    // A rerun gets the same reply from the world; keys in another order are the same call.
    let (h, s) = server(VirtualApi::new(cat, Some(cache.clone())).with_world(world())).await;
    let again = s.call(&req).await.unwrap();
    assert_eq!(again, first);
    h.shutdown().await;
}
