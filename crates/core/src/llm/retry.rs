//! Retries with exponential backoff and full jitter; a server's `Retry-After` wins over the schedule.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rand::Rng;

use super::{Completion, CompletionRequest, LlmClient, LlmError, Meter};

/// Retries retriable errors of `inner` up to `max_retries` times.
pub(crate) struct Retrying<C> {
    inner: C,
    max_retries: u32,
    base: Duration,
    cap: Duration,
    meter: Option<Arc<Meter>>,
}

impl<C: LlmClient> Retrying<C> {
    pub(crate) fn new(inner: C, max_retries: u32) -> Self {
        Retrying {
            inner,
            max_retries,
            base: Duration::from_millis(500),
            cap: Duration::from_secs(60),
            meter: None,
        }
    }

    /// Changes the backoff schedule (first delay, longest delay).
    #[cfg(test)]
    pub(crate) fn with_backoff(mut self, base: Duration, cap: Duration) -> Self {
        self.base = base;
        self.cap = cap;
        self
    }

    /// Counts retries in `meter` (the accounting layer sits outside, so it cannot see them).
    pub(crate) fn with_meter(mut self, meter: Arc<Meter>) -> Self {
        self.meter = Some(meter);
        self
    }

    fn delay(&self, attempt: u32, err: &LlmError) -> Duration {
        if let Some(after) = err.retry_after() {
            // Never hammer a server that asked us to wait, but do not sleep for hours either.
            return after.min(Duration::from_secs(300));
        }
        let exp = self
            .base
            .saturating_mul(1u32 << attempt.min(16))
            .min(self.cap);
        let jitter = rand::thread_rng().gen_range(0.0..=1.0);
        exp.mul_f64(0.5 + 0.5 * jitter)
    }
}

#[async_trait]
impl<C: LlmClient> LlmClient for Retrying<C> {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        let mut attempt = 0;
        loop {
            match self.inner.complete(request).await {
                Err(e) if e.is_retriable() && attempt < self.max_retries => {
                    let wait = self.delay(attempt, &e);
                    tracing::warn!(
                        purpose = %request.purpose,
                        attempt = attempt + 1,
                        wait_ms = wait.as_millis() as u64,
                        "LLM call failed, retrying: {e}"
                    );
                    if let Some(meter) = &self.meter {
                        meter.record_retry();
                    }
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    fn model_id(&self) -> String {
        self.inner.model_id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;
    use crate::llm::scripted::{ScriptedLlm, reply};

    #[tokio::test]
    async fn retries_retriable_then_succeeds() {
        let llm = ScriptedLlm::new(|_, i| {
            if i < 2 {
                Err(LlmError::Server {
                    endpoint: "x".into(),
                    status: 503,
                    message: "busy".into(),
                })
            } else {
                Ok(reply("ok"))
            }
        });
        let r =
            Retrying::new(llm, 3).with_backoff(Duration::from_millis(1), Duration::from_millis(2));
        let c = r
            .complete(&CompletionRequest::new("t", vec![Message::user("q")]))
            .await;
        assert_eq!(c.map(|c| c.content).ok().as_deref(), Some("ok"));
    }

    #[tokio::test]
    async fn does_not_retry_bad_input() {
        let llm = ScriptedLlm::new(|_, i| {
            if i == 0 {
                Err(LlmError::Unauthorized {
                    endpoint: "x".into(),
                    status: 401,
                })
            } else {
                Ok(reply("ok"))
            }
        });
        let r =
            Retrying::new(llm, 3).with_backoff(Duration::from_millis(1), Duration::from_millis(2));
        let c = r
            .complete(&CompletionRequest::new("t", vec![Message::user("q")]))
            .await;
        assert!(matches!(c, Err(LlmError::Unauthorized { .. })));
    }
}
