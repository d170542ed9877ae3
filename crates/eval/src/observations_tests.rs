//! Issue 41: the judge reads what the tools returned, not only what the agent read, and everything
//! the model was shown: how much of a reply the agent read, DFSDT's earlier attempts, a refused
//! `Finish` with its reason, and older records without any of these.

use serde_json::json;

use super::evidence::check_answer;
use super::input::{Record, RecordObservation, RecordStep};
use super::observations::fixture::recorded;
use super::observations::{Seen, judge_view, observations};

/// A reply of about 5,000 characters whose last film the agent never read (cut at 1,024).
fn long_reply() -> serde_json::Value {
    let mut films: Vec<serde_json::Value> = (0..120)
        .map(|i| json!({"title": format!("Film {i}"), "year": 2000}))
        .collect();
    films.push(json!({"title": "The Last Reel", "year": 2008}));
    json!({ "films": films })
}

#[test]
fn the_judge_is_told_how_much_of_a_reply_the_agent_read() {
    let a = recorded(
        "films",
        "films_for_x",
        long_reply(),
        "It was cut off.",
        1024,
    );
    let o = &observations(&a, 100_000)[0];
    let whole = o.read.map(|(_, w)| w).unwrap_or_default();
    assert_eq!(o.read.map(|(r, _)| r), Some(1024));
    assert!(whole > 4_000, "{whole}");
    let view = judge_view(&a, 100_000, 100_000);
    assert!(view.contains("The Last Reel"), "the whole reply is shown");
    let marker = format!("[the agent read the first 1,024 of {} characters]", {
        let w = whole.to_string();
        format!("{},{}", &w[..w.len() - 3], &w[w.len() - 3..])
    });
    assert!(view.contains(&marker), "{}", &view[..200]);
}

#[test]
fn a_reply_longer_than_the_record_keeps_shows_its_recorded_head() {
    let mut a = recorded("films", "films_for_x", long_reply(), "", 1024);
    let record = a.record.as_mut().map(|r| &mut r.steps[0].observation);
    if let Some(obs) = record {
        obs.response = json!("{\"error\": \"\", \"response\": {\"films\": [{\"title\": \"Film 0\"");
        obs.reply_chars = Some(70_000);
    }
    let o = &observations(&a, 100_000)[0];
    assert!(
        o.text
            .starts_with("{\"error\": \"\", \"response\": {\"films\""),
        "{}",
        o.text
    );
    assert_eq!(o.read, Some((1024, 70_000)));
}

/// A DFSDT answer whose path is one call, and whose earlier attempt (an abandoned branch) returned
/// the price the answer gives.
fn with_attempt() -> super::input::Answer {
    let mut a = recorded(
        "price of BTC and ETH",
        "eth_price_for_x",
        json!({"eth": 3120.5}),
        "BTC is 66412.37 and ETH 3120.5.",
        1024,
    );
    if let Some(r) = a.record.as_mut() {
        r.attempts.push(RecordStep {
            action: "btc_price_for_x".into(),
            arguments: "{}".into(),
            observation: RecordObservation {
                text: "{\"error\": \"\", \"response\": {\"btc\": 66412.37}}".into(),
                error: String::new(),
                response: json!({"btc": 66412.37}),
                reply_chars: None,
            },
        });
    }
    a
}

#[test]
fn earlier_attempts_are_shown_and_back_the_answer() {
    let a = with_attempt();
    let seen: Vec<Seen> = observations(&a, 16_000).iter().map(|o| o.seen).collect();
    assert_eq!(seen, vec![Seen::EarlierAttempt, Seen::Path]);
    let view = judge_view(&a, 16_000, 100_000);
    assert!(
        view.starts_with(
            "earlier attempt 1 (an abandoned branch, shown to the agent): btc_price_for_x({})"
        ),
        "{view}"
    );
    let report = check_answer(&a);
    assert_eq!(report.unsupported_values, 0, "{:?}", report.claims);
}

#[test]
fn a_refused_finish_is_shown_with_its_reason_but_backs_nothing() {
    let mut a = recorded(
        "weather",
        "weather_for_x",
        json!({"temp": 21}),
        "It is 21 C.",
        1024,
    );
    let early = json!({"return_type": "give_answer", "final_answer": "It is 30 C."}).to_string();
    let reason = "Finish not run: parts still open: 2. the humidity";
    if let Some(r) = a.record.as_mut() {
        r.steps.push(RecordStep {
            action: "Finish".into(),
            arguments: early.clone(),
            observation: RecordObservation {
                text: String::new(),
                error: reason.into(),
                response: json!(""),
                reply_chars: None,
            },
        });
    }
    // The refused Finish sits between the call and the accepted Finish, its response empty as
    // StableToolBench's converter leaves it.
    let details = &mut a.converted.answer.answer_details[0]["next"];
    let last = details[0].clone();
    *details = json!([{"role": "tool", "message": {"name": "Finish", "arguments": early, "response": ""}, "next": [last]}]);
    let observed = observations(&a, 16_000);
    let refused: Vec<_> = observed
        .iter()
        .filter(|o| o.seen == Seen::RefusedAnswer)
        .collect();
    assert_eq!(refused.len(), 1, "{observed:?}");
    assert_eq!(refused[0].text, reason);
    let view = judge_view(&a, 16_000, 100_000);
    assert!(
        view.contains("[answer refused by the harness; the agent was told:]\nFinish not run"),
        "{view}"
    );
    assert!(!check_answer(&a).claims.iter().any(|c| {
        c.support
            .as_ref()
            .is_some_and(|s| s.label.contains("Finish"))
    }));
}

#[test]
fn a_record_without_attempts_or_reply_lengths_still_loads() {
    let old = json!({"finish": "give_answer", "answer": "x", "steps": [
        {"action": "f", "arguments": "{}", "observation": {"text": "t", "error": "", "response": {"a": 1}}}]});
    let r: Record = serde_json::from_value(old).unwrap_or_default();
    assert_eq!(r.steps.len(), 1);
    assert!(r.attempts.is_empty());
    assert_eq!(r.steps[0].observation.reply_chars, None);
}
