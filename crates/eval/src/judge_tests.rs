//! The judge against a scripted model: schema-constrained replies, the cache, retries of unusable
//! replies, preference letters and model errors.

use std::sync::Arc;

use super::cache::JudgeCache;
use super::judge::*;
use super::{EvalError, Label};
use sum2act_core::llm::scripted::{ScriptedLlm, reply};
use sum2act_core::prompts::Prompts;

fn judge(llm: Arc<ScriptedLlm>) -> Judge {
    Judge::new(
        llm,
        Prompts::embedded(),
        JudgeCache::memory(),
        JudgeOptions::default(),
    )
}

#[tokio::test]
async fn status_is_schema_constrained_and_cached() {
    let llm = Arc::new(ScriptedLlm::new(|_, _| {
        Ok(reply(
            r#"{"reason": "has the price", "answer_status": "Solved"}"#,
        ))
    }));
    let j = judge(llm.clone());
    let v = j
        .answer_status("price of BTC?", "66,412 USD", 0, "G1/1")
        .await
        .unwrap();
    assert_eq!(v.label, Label::Solved);
    assert_eq!(v.reason, "has the price");
    // Same input and vote: from the cache. Another vote: a new call.
    j.answer_status("price of BTC?", "66,412 USD", 0, "G1/1")
        .await
        .unwrap();
    j.answer_status("price of BTC?", "66,412 USD", 1, "G1/1")
        .await
        .unwrap();
    let seen = llm.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].purpose, "judge");
    assert_ne!(seen[0].seed, seen[1].seed);
    assert!(seen[0].messages[0].content.contains("66,412 USD"));
    assert!(matches!(
        seen[0].response_format,
        sum2act_core::llm::ResponseFormat::JsonSchema { .. }
    ));
    assert_eq!(j.cache_stats(), (2, 1));
}

#[tokio::test]
async fn unusable_replies_are_retried_then_errors_with_the_raw_reply() {
    let llm = Arc::new(ScriptedLlm::new(|_, i| {
        Ok(reply(if i == 0 {
            "Solved!"
        } else {
            r#"{"reason": "r", "answer_status": "maybe"}"#
        }))
    }));
    let j = judge(llm.clone());
    let v = j.answer_status("q", "a", 0, "G1/1").await.unwrap();
    assert_eq!(
        v.unusable.as_deref(),
        Some(r#"{"reason": "r", "answer_status": "maybe"}"#)
    );
    assert_eq!(llm.requests().len(), 3);
    // Logged as unusable with its raw reply: the rerun reports the same error without a call.
    let again = j.answer_status("q", "a", 0, "G1/1").await.unwrap();
    assert_eq!(again, v);
    assert_eq!(llm.requests().len(), 3);
}

#[tokio::test]
async fn preference_maps_letters() {
    let llm = Arc::new(ScriptedLlm::new(|_, _| {
        Ok(reply(r#"{"reason": "B is complete", "better": "b"}"#))
    }));
    let j = judge(llm);
    let (first, reason) = j
        .prefers_first("q", ("a1", "t1"), ("a2", "t2"), 0, "G1/1")
        .await
        .unwrap();
    assert_eq!(first, Some(false));
    assert_eq!(reason, "B is complete");
}

#[tokio::test]
async fn llm_errors_propagate() {
    let llm = Arc::new(ScriptedLlm::new(|_, _| {
        Err(sum2act_core::llm::LlmError::Timeout(
            std::time::Duration::from_secs(1),
        ))
    }));
    let j = judge(llm);
    assert!(matches!(
        j.answer_status("q", "a", 0, "x").await,
        Err(EvalError::Llm(_))
    ));
}
