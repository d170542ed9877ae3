//! `serve-llm --by-hand DIR` and the reader's commands (`by-hand next|reply|status|release`), driven
//! as users would: a real `batch` and `eval` against the endpoint, answered by scripted readers that
//! use only the CLI (plus the raw request the folder keeps beside each rendered one); claims under
//! racing readers, roles kept apart, replies checked against their requests, and the recorded traffic
//! replayed offline with no server.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{Served, Test, mock_openai};
use serde_json::{Value, json};
use sum2act_core::llm::openai::OpenAiClient;
use sum2act_core::llm::{CompletionRequest, LlmClient, Message, ToolChoice};

/// `serve-llm --by-hand DIR --port 0` with extra flags.
fn serve(dir: &Path, extra: &[&str]) -> Served {
    Test::new()
        .args(["serve-llm", "--port", "0", "--by-hand"])
        .arg(dir)
        .args(extra)
        .serve()
}

/// `by-hand VERB DIR ...`.
fn by_hand(verb: &str, dir: &Path) -> Test {
    Test::new().args(["by-hand", verb]).arg(dir)
}

/// What one scripted reader did.
#[derive(Default)]
struct Seen {
    /// Requests it claimed, by id.
    claimed: Vec<u64>,
    /// The rendered texts it was shown.
    texts: Vec<String>,
    /// Refusal messages its deliberately wrong first replies got.
    refusals: Vec<String>,
}

/// A reader of `role` on its own thread: claims with `next --wait 1`, answers each request as the
/// scripted model would (from the raw body kept beside the rendered file), after first sending a wrong
/// reply when `wrong_first` (it must be refused and the request stay claimed). Stops when `done`.
fn reader(
    dir: PathBuf,
    role: &'static str,
    wrong_first: bool,
    done: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Seen> {
    std::thread::spawn(move || {
        let mut seen = Seen::default();
        while !done.load(Ordering::SeqCst) {
            let next = by_hand("next", &dir)
                .args(["--role", role, "--wait", "1"])
                .run();
            if next.code() == Some(3) {
                continue;
            }
            let text = next.success().stdout();
            let id = request_id(&text, role);
            let body = raw_request(&dir, role, id);
            if wrong_first {
                let refused = by_hand("reply", &dir)
                    .arg(id.to_string())
                    .stdin(wrong_reply(&body))
                    .run()
                    .failure(2)
                    .stderr_has("stays claimed by you");
                seen.refusals.push(refused.stderr());
            }
            by_hand("reply", &dir)
                .arg(id.to_string())
                .stdin(right_reply(&body).to_string())
                .run()
                .success();
            seen.claimed.push(id);
            seen.texts.push(text);
        }
        seen
    })
}

/// The id from the rendered request's first line `# Request 12 · role: agent`.
fn request_id(text: &str, role: &str) -> u64 {
    let first = text.lines().next().unwrap_or_default();
    assert!(first.ends_with(&format!("role: {role}")), "{first}");
    first
        .trim_start_matches("# Request ")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no id in {first:?}"))
}

fn raw_request(dir: &Path, role: &str, id: u64) -> Value {
    let path = dir.join(role).join(format!("{id:06}.request.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The scripted model's answer, in the reader's reply format.
fn right_reply(body: &Value) -> Value {
    let message = &mock_openai::reply(body)["choices"][0]["message"];
    let calls: Vec<Value> = message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let args: Value =
                serde_json::from_str(c["function"]["arguments"].as_str().unwrap_or("{}")).unwrap();
            json!({"name": c["function"]["name"], "arguments": args})
        })
        .collect();
    json!({"content": message["content"], "tool_calls": calls})
}

/// A reply each kind of request must refuse: no call where one is required, else an empty object
/// where the schema requires keys, else nothing at all.
fn wrong_reply(body: &Value) -> String {
    if body["tools"].is_array() {
        r#"{"content": "I would call a tool."}"#.into()
    } else if body.pointer("/response_format/json_schema").is_some() {
        r#"{"content": {}}"#.into()
    } else {
        r#"{"content": ""}"#.into()
    }
}

/// Answer files of a run directory, with the wall-clock fields (which no replay can repeat) blanked.
fn answers(dir: &Path) -> Vec<(String, String)> {
    fn blank_times(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if k == "wall_ms" || k == "elapsed_ms" {
                        *x = Value::Null;
                    } else {
                        blank_times(x);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(blank_times),
            _ => {}
        }
    }
    let sub = dir.join("G1_instruction");
    let mut names: Vec<_> = std::fs::read_dir(&sub)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let mut v: Value =
                serde_json::from_str(&std::fs::read_to_string(sub.join(&n)).unwrap()).unwrap();
            blank_times(&mut v);
            (n, serde_json::to_string_pretty(&v).unwrap())
        })
        .collect()
}

fn batch(out: &Path, extra: &[&str]) -> Test {
    Test::new()
        .args([
            "batch",
            "--subsets",
            "G1_instruction",
            "--limit",
            "2",
            "--concurrency",
            "2",
            "--progress",
            "plain",
            "--tool-simulation",
            "llm",
            // Sum2Act's step loop: its router offers functions, so a reply without the one call
            // required is refused too (the default loop in rounds asks for JSON only).
            "--steps",
        ])
        .arg("--out")
        .arg(out)
        .args(extra)
}

#[test]
fn a_batch_and_its_eval_answered_by_hand_replay_offline() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, rec) = (tmp.path().join("by-hand"), tmp.path().join("rec"));
    let server = serve(&dir, &["--record", rec.to_str().unwrap()]);
    assert!(
        server
            .line
            .starts_with("serving by-hand at http://127.0.0.1:"),
        "{}",
        server.line
    );
    let done = Arc::new(AtomicBool::new(false));
    let agents = [
        reader(dir.clone(), "agent", true, done.clone()),
        reader(dir.clone(), "agent", false, done.clone()),
    ];
    let simulator = reader(dir.clone(), "simulator", true, done.clone());
    let judge = reader(dir.clone(), "judge", true, done.clone());

    let live = tmp.path().join("live");
    // Long enough for any reader here; a dead reader fails the test instead of hanging it.
    let timeouts = [
        "--llm-timeout",
        "120",
        "--llm-retries",
        "0",
        "--tool-timeout",
        "120",
    ];
    batch(&live, &timeouts)
        .args(["--base-url", &server.url])
        .run()
        .success();
    // The ToolEval-style judge is asked about every answer: the evidence judge decides an answer that
    // only states its parts as not obtained (what the scripted model gets here) by rule, asking nothing.
    let eval = |run: &Path, model: &[&str]| {
        Test::new()
            .arg("eval")
            .arg(run)
            .args(["--votes", "1", "--json", "--judge-mode", "tooleval"])
            .args(model)
            .run()
            .success()
            .stdout()
    };
    let judged = eval(&live, &["--base-url", &server.url]);
    done.store(true, Ordering::SeqCst);
    let agents: Vec<Seen> = agents.into_iter().map(|t| t.join().unwrap()).collect();
    let (simulator, judge) = (simulator.join().unwrap(), judge.join().unwrap());

    // Exclusive claims: no request answered by both agent readers, and every request answered once.
    let a: BTreeSet<u64> = agents[0].claimed.iter().copied().collect();
    let b: BTreeSet<u64> = agents[1].claimed.iter().copied().collect();
    assert!(a.is_disjoint(&b), "{a:?} {b:?}");
    let status = by_hand("status", &dir).run().success().stdout();
    let row = |role: &str| {
        status
            .lines()
            .find(|l| l.starts_with(role))
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .take(4)
            .map(|n| n.parse::<usize>().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(row("agent"), vec![0, 0, a.len() + b.len(), 0], "{status}");
    assert_eq!(
        row("simulator"),
        vec![0, 0, simulator.claimed.len(), 0],
        "{status}"
    );
    assert_eq!(row("judge"), vec![0, 0, judge.claimed.len(), 0], "{status}");

    // Roles kept apart: tool simulation went to the simulator's reader and never shows the user's
    // request; the judge's reader never sees the agent's prompts.
    assert!(!simulator.claimed.is_empty() && !judge.claimed.is_empty());
    for text in &simulator.texts {
        assert!(!text.contains("Lisbon right now"), "{text}");
    }
    for text in &judge.texts {
        assert!(!text.contains("You are the router"), "{text}");
    }
    // Wrong replies were refused with what to fix.
    let refusals = [&agents[0].refusals, &simulator.refusals, &judge.refusals];
    let all: Vec<&String> = refusals.iter().flat_map(|r| r.iter()).collect();
    assert!(
        all.iter()
            .any(|r| r.contains("exactly one function call is required")),
        "{all:#?}"
    );
    assert!(
        all.iter()
            .any(|r| r.contains("content does not match the schema: $: missing required key")),
        "{all:#?}"
    );

    // The server's recording replays the batch offline: same answers, same eval.
    drop(server);
    let replayed = tmp.path().join("replayed");
    batch(&replayed, &["--replay", rec.to_str().unwrap()])
        .run()
        .success();
    assert_eq!(answers(&live), answers(&replayed));
    assert_eq!(answers(&live).len(), 2);
    let rejudged = eval(&replayed, &["--replay", rec.to_str().unwrap()]);
    let figures = |s: &str| {
        let v: Value = serde_json::from_str(s).unwrap();
        v["pass_rate"].clone()
    };
    assert_eq!(figures(&judged), figures(&rejudged), "{judged}\n{rejudged}");
}

#[tokio::test(flavor = "multi_thread")]
async fn racing_readers_claim_each_request_once_and_a_gone_client_withdraws() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("q");
    let server = serve(&dir, &[]);
    let client =
        Arc::new(OpenAiClient::new(&server.url, None, None, Duration::from_secs(600)).unwrap());
    assert_eq!(
        client.list_models().await.unwrap(),
        vec!["by-hand".to_string()]
    );

    // Eight requests at once, answered by two racing readers.
    let tools =
        vec![json!({"name": "lookup", "parameters": {"type": "object", "required": ["q"]}})];
    let calls: Vec<_> = (0..8)
        .map(|i| {
            let c = client.clone();
            let req =
                CompletionRequest::new("router", vec![Message::user(format!("question {i}"))])
                    .with_tools(tools.clone(), ToolChoice::Required);
            tokio::spawn(async move { c.complete(&req).await })
        })
        .collect();
    let done = Arc::new(AtomicBool::new(false));
    let readers = [
        reader(dir.clone(), "agent", false, done.clone()),
        reader(dir.clone(), "agent", false, done.clone()),
    ];
    for call in calls {
        let answered = tokio::time::timeout(Duration::from_secs(120), call).await;
        let c = answered.expect("answered in time").unwrap().unwrap();
        assert_eq!(c.tool_calls.len(), 1);
        assert_eq!(c.tool_calls[0].name, "lookup");
        assert!(c.usage.prompt_tokens > 0 && c.usage.completion_tokens > 0);
        assert_eq!(c.finish_reason.as_deref(), Some("tool_calls"));
    }
    done.store(true, Ordering::SeqCst);
    let seen: Vec<Seen> = readers.into_iter().map(|t| t.join().unwrap()).collect();
    let mut ids: Vec<u64> = seen.iter().flat_map(|s| s.claimed.clone()).collect();
    ids.sort();
    assert_eq!(
        ids,
        (1..=8).collect::<Vec<_>>(),
        "each request claimed exactly once"
    );

    // A third-party client picks its role by URL; when it gives up, its request is withdrawn and a
    // late reply is refused.
    let judge_url = server.url.replace("/v1", "/role/judge/v1");
    let impatient = OpenAiClient::new(&judge_url, None, None, Duration::from_secs(1)).unwrap();
    let req = CompletionRequest::new("anything", vec![Message::user("Is it solved?")]);
    assert!(impatient.complete(&req).await.is_err());
    let status = by_hand("status", &dir).run().success().stdout();
    let judge_row = status
        .lines()
        .find(|l| l.starts_with("judge"))
        .unwrap_or_default();
    assert_eq!(
        judge_row.split_whitespace().take(5).collect::<Vec<_>>(),
        ["judge", "0", "0", "0", "1"],
        "{status}"
    );
    by_hand("reply", &dir)
        .args(["9", "--text"])
        .stdin("yes")
        .run()
        .failure(2)
        .stderr_has("request 9 is withdrawn")
        .stderr_has("its client went away");
    let bad_role = reqwest::get(server.url.replace("/v1", "/role/boss/v1/models"))
        .await
        .unwrap();
    assert_eq!(bad_role.status().as_u16(), 404);
}

#[test]
fn next_says_nothing_or_stop_and_release_hands_a_claim_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("q");
    by_hand("next", &dir)
        .args(["--role", "agent"])
        .run()
        .failure(2)
        .stderr_has("not a by-hand folder");
    let server = serve(&dir, &[]);
    by_hand("next", &dir)
        .args(["--role", "judge", "--wait", "0"])
        .run()
        .failure(3)
        .stdout_has("nothing pending for role judge");
    // One request in flight (a thread waits for it), claimed then released by hand.
    let url = server.url.clone();
    let asker = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let c = OpenAiClient::new(&url, None, None, Duration::from_secs(120)).unwrap();
            let req = CompletionRequest::new("router", vec![Message::user("Say hi.")]);
            c.complete(&req).await.map(|c| c.content)
        })
    });
    let first = by_hand("next", &dir)
        .args(["--role", "agent", "--wait", "30"])
        .run()
        .success();
    assert!(
        first.stdout().starts_with("# Request 1 · role: agent"),
        "{}",
        first.stdout()
    );
    by_hand("release", &dir)
        .arg("1")
        .run()
        .success()
        .stdout_has("request 1 (agent) is pending again");
    by_hand("next", &dir)
        .args(["--role", "agent", "--wait", "30"])
        .run()
        .success();
    by_hand("reply", &dir)
        .args(["1", "--text"])
        .stdin("Hi!\n")
        .run()
        .success();
    assert_eq!(asker.join().unwrap().unwrap(), "Hi!");
    std::fs::write(dir.join("STOP"), "").unwrap();
    by_hand("next", &dir)
        .args(["--role", "agent", "--wait", "30"])
        .run()
        .failure(4)
        .stdout_has("STOP");
}

/// The slip a measurement suffered: a reader reused its one reply file, so request B would have been
/// sent request A's reply. The file, older than B's claim, is refused (B stays claimed); the same long
/// reply written again is refused as a copy of A's; `--repeat` sends it on purpose.
#[test]
fn a_reply_file_left_from_an_earlier_request_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("q");
    let server = serve(&dir, &[]);
    let askers: Vec<_> = (0..2)
        .map(|i| {
            let url = server.url.clone();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Runtime::new().unwrap();
                rt.block_on(async {
                    let c = OpenAiClient::new(&url, None, None, Duration::from_secs(120)).unwrap();
                    let q = format!("Describe API number {i}.");
                    let req = CompletionRequest::new("router", vec![Message::user(q)]);
                    c.complete(&req).await.map(|c| c.content)
                })
            })
        })
        .collect();
    let claim = || {
        let text = by_hand("next", &dir)
            .args(["--role", "agent", "--wait", "30"])
            .run()
            .success()
            .stdout();
        request_id(&text, "agent")
    };
    let file = tmp.path().join("my-reply.json");
    let long = "The first API returns the hotel's rooms, their prices and the cancellation rules. ";
    let reply = json!({"content": long.repeat(3)}).to_string();
    let reply_with = |id: u64, extra: &[&str]| {
        by_hand("reply", &dir)
            .arg(id.to_string())
            .arg(&file)
            .args(extra)
            .run()
    };

    let a = claim();
    std::fs::write(&file, &reply).unwrap();
    reply_with(a, &[]).success();
    // Dated back an hour, so the test does not depend on the filesystem clock's resolution.
    let f = std::fs::File::options().write(true).open(&file).unwrap();
    f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    let b = claim();
    reply_with(b, &[])
        .failure(2)
        .stderr_has(&file.display().to_string())
        .stderr_has(&format!("before request {b} was claimed"))
        .stderr_has(&format!("Write the reply for request {b}"))
        .stderr_has("stays claimed by you");
    let status = by_hand("status", &dir).run().success().stdout();
    let agent = status.lines().find(|l| l.starts_with("agent")).unwrap();
    assert_eq!(
        agent.split_whitespace().take(4).collect::<Vec<_>>(),
        ["agent", "0", "1", "1"],
        "{status}"
    );
    std::fs::write(&file, &reply).unwrap();
    reply_with(b, &[])
        .failure(2)
        .stderr_has(&format!("word for word the one accepted for request {a}"))
        .stderr_has("--repeat");
    reply_with(b, &["--repeat"]).success();
    for asker in askers {
        assert_eq!(asker.join().unwrap().unwrap(), long.repeat(3));
    }
}
