//! Issue 33 item 9: `serve --save` keeps each new answer without rewriting the recorded per-API cache
//! file (the cost of a new call no longer grows with the file), and the answer survives a `kill -9`;
//! clients that are slow to send their headers do not hold up a normal request.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::Test;
use common::tools::call;
use serde_json::json;
use sum2act_core::tools::ReplySource;

const WEATHER: [&str; 3] = ["Weather", "SkyCast Weather", "Current weather"];

#[test]
fn serve_save_keeps_new_answers_without_rewriting_the_recorded_file() {
    let data = common::sample_copy(&["queries", "tools", "response_cache"]);
    let recorded = data
        .path()
        .join("response_cache/Weather/skycast_weather/current_weather.json");
    let before = std::fs::read(&recorded).unwrap();
    let serve = |save: bool| {
        let mut t = Test::new()
            .arg("--data")
            .arg(data.path())
            .args(["serve", "--port", "0"]);
        if save {
            t = t.arg("--save");
        }
        t.serve()
    };
    let cities = ["Oslo", "Quito", "Hanoi"];
    let mut first = Vec::new();
    {
        let served = serve(true);
        for city in cities {
            let reply = call(&served.url, WEATHER, json!({ "city": city })).unwrap();
            assert_eq!(reply.source, Some(ReplySource::Simulated), "{reply:?}");
            first.push(reply.response);
        }
        // Killed without a chance to flush anything (`Served` sends SIGKILL on drop).
    }
    assert!(
        std::fs::read(&recorded).unwrap() == before,
        "the recorded file was rewritten"
    );
    // Each new answer is its own file beside it, already on disk when the server was killed.
    let saved: Vec<serde_json::Value> = std::fs::read_dir(recorded.with_extension(""))
        .unwrap()
        .flatten()
        .map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap())
        .collect();
    assert_eq!(saved.len(), cities.len(), "{saved:?}");
    for answer in &first {
        assert!(
            saved.iter().any(|s| &s["response"] == answer),
            "{answer} not saved"
        );
    }
    // A new server on the same data answers them from there, the recorded entries as before.
    let served = serve(true);
    for (city, answer) in cities.iter().zip(&first) {
        let reply = call(&served.url, WEATHER, json!({ "city": city })).unwrap();
        assert_eq!(&reply.response, answer, "{city}");
    }
    let lisbon = call(&served.url, WEATHER, json!({"city": "Lisbon"})).unwrap();
    assert_eq!(lisbon.source, Some(ReplySource::Cache));
    assert!(std::fs::read(&recorded).unwrap() == before);
}

#[test]
fn slow_header_clients_do_not_delay_a_normal_request() {
    let served = Test::new().args(["serve", "--port", "0"]).serve();
    let addr = served
        .url
        .strip_prefix("http://")
        .and_then(|u| u.strip_suffix("/virtual"))
        .unwrap()
        .to_string();
    // More slow clients than the server serves connections at once (256 by default).
    let slow: Vec<TcpStream> = (0..300)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).unwrap();
            s.write_all(b"POST /virtual HTTP/1.1\r\nHost: x\r\n")
                .unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let mut normal = TcpStream::connect(&addr).unwrap();
    normal
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    normal
        .write_all(b"GET /virtual HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut reply = String::new();
    let _ = normal.read_to_string(&mut reply);
    let waited = started.elapsed();
    drop(slow);
    assert!(reply.starts_with("HTTP/1.1 405"), "{reply}");
    assert!(
        waited < Duration::from_secs(1),
        "a normal request waited {waited:?}"
    );
}
