//! Client-side rate limits (requests and tokens per minute, with `governor`) and round-robin over
//! several endpoints with failover when one is down.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

use super::tokens::count_prompt_tokens;
use super::{Completion, CompletionRequest, LlmClient, LlmError};

/// Waits for the request and token budgets before each call to `inner`.
pub(crate) struct RateLimited<C> {
    inner: C,
    rpm: Option<DefaultDirectRateLimiter>,
    tpm: Option<(DefaultDirectRateLimiter, NonZeroU32)>,
}

impl<C: LlmClient> RateLimited<C> {
    pub(crate) fn new(
        inner: C,
        requests_per_minute: Option<u32>,
        tokens_per_minute: Option<u32>,
    ) -> Self {
        let rpm = requests_per_minute
            .and_then(NonZeroU32::new)
            .map(|n| RateLimiter::direct(Quota::per_minute(n)));
        let tpm = tokens_per_minute
            .and_then(NonZeroU32::new)
            .map(|n| (RateLimiter::direct(Quota::per_minute(n)), n));
        RateLimited { inner, rpm, tpm }
    }
}

#[async_trait]
impl<C: LlmClient> LlmClient for RateLimited<C> {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        if let Some(l) = &self.rpm {
            l.until_ready().await;
        }
        if let Some((l, cap)) = &self.tpm {
            // Prompt plus the reply's cap is what the server will count against the budget; a
            // single request larger than the whole budget waits for a full minute's worth.
            let want = count_prompt_tokens(request).saturating_add(u64::from(request.max_tokens));
            let n =
                NonZeroU32::new(want.min(u64::from(cap.get())) as u32).unwrap_or(NonZeroU32::MIN);
            // `n` never exceeds the burst size, so the limiter cannot report insufficient capacity.
            let _ = l.until_n_ready(n).await;
        }
        self.inner.complete(request).await
    }

    fn model_id(&self) -> String {
        self.inner.model_id()
    }
}

/// Spreads calls over several endpoints in turn; an endpoint that fails with a retriable error is
/// skipped for this call and the next one is tried, so one dead server does not stop a run.
pub(crate) struct RoundRobin {
    clients: Vec<Arc<dyn LlmClient>>,
    next: AtomicUsize,
}

impl RoundRobin {
    pub(crate) fn new(clients: Vec<Arc<dyn LlmClient>>) -> Result<Self, LlmError> {
        if clients.is_empty() {
            return Err(LlmError::Config("no LLM endpoints configured".into()));
        }
        Ok(RoundRobin {
            clients,
            next: AtomicUsize::new(0),
        })
    }
}

#[async_trait]
impl LlmClient for RoundRobin {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        let n = self.clients.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let mut last = None;
        for k in 0..n {
            let client = &self.clients[(start + k) % n];
            match client.complete(request).await {
                Err(e) if e.is_retriable() && k + 1 < n => {
                    tracing::warn!(model = %client.model_id(), "endpoint failed, trying the next one: {e}");
                    last = Some(e);
                }
                other => return other,
            }
        }
        Err(last.unwrap_or_else(|| LlmError::Config("no LLM endpoints configured".into())))
    }

    fn model_id(&self) -> String {
        self.clients
            .first()
            .map(|c| c.model_id())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;
    use crate::llm::scripted::{ScriptedLlm, reply};

    #[tokio::test]
    async fn fails_over_to_the_next_endpoint() {
        let down: Arc<dyn LlmClient> = Arc::new(ScriptedLlm::new(|_, _| {
            Err(LlmError::Unreachable {
                endpoint: "a".into(),
                message: "refused".into(),
            })
        }));
        let up: Arc<dyn LlmClient> = Arc::new(ScriptedLlm::new(|_, _| Ok(reply("ok"))));
        let rr = RoundRobin::new(vec![down, up]).unwrap();
        let req = CompletionRequest::new("t", vec![Message::user("q")]);
        for _ in 0..3 {
            assert_eq!(rr.complete(&req).await.unwrap().content, "ok");
        }
    }

    #[tokio::test]
    async fn request_limit_spaces_calls() {
        let llm = ScriptedLlm::new(|_, _| Ok(reply("ok")));
        // One request a minute: the second call has to wait.
        let limited = RateLimited::new(llm, Some(1), None);
        let req = CompletionRequest::new("t", vec![Message::user("q")]);
        assert!(limited.complete(&req).await.is_ok());
        let second = tokio::time::timeout(
            std::time::Duration::from_millis(200),
            limited.complete(&req),
        )
        .await;
        assert!(second.is_err(), "second call within the minute must wait");
    }
}
