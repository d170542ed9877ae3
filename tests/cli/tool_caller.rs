//! The tool caller's limits against tiny mock `/virtual` servers and the catalogue source: retries
//! with back-off, redirects, the per-tool rate limit, the run's call cache and `Finish`'s codes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;

use crate::common::tools::{catalog, config, data_dir, functions, loopback};
use sum2act_core::toolbench::Function;
use sum2act_core::tools::observation::reply_text;
use sum2act_core::tools::{Finish, HttpSource, ToolConfig, ToolEnv};
use sum2act_server::CatalogSource;

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
    assert_eq!((obs.code.number(), obs.failed), (0, false));
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
    assert_eq!(obs.code.number(), 12);
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
    assert_eq!(obs.code.number(), 12);
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
    assert_eq!((obs.code.number(), obs.failed), (3, false));
    assert_eq!(obs.finish, Some(Finish::Answer("42".into())));
    let obs = caller
        .call("Finish", r#"{"return_type": "give_up_and_restart"}"#)
        .await;
    assert_eq!((obs.code.number(), obs.finish), (4, Some(Finish::GiveUp)));
    let obs = caller
        .call("Finish", r#"{"return_type": "give_answer"}"#)
        .await;
    assert_eq!((obs.code.number(), obs.failed, obs.finish), (2, true, None));
    let obs = caller.call("Finish", "").await;
    assert_eq!(obs.code.number(), 2);
}
