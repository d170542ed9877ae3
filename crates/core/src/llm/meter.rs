//! Accounting: tokens, calls, retries and USD cost per run and per purpose (router, state, judge, …).
//! A `Meter` is shared; wrap a client in `Metered` to feed it. An episode can wrap the run's client in
//! its own `Metered` to get per-episode totals while the run's meter keeps counting underneath.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::settings::Price;
use super::{Completion, CompletionRequest, LlmClient, LlmError};

/// Totals for one purpose.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PurposeTotals {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost_usd: f64,
}

/// A snapshot of a meter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageTotals {
    pub calls: u64,
    pub failures: u64,
    pub retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cost_usd: f64,
    /// Summed wall time of successful calls.
    pub elapsed_ms: u64,
    pub by_purpose: BTreeMap<String, PurposeTotals>,
}

impl UsageTotals {}

/// Shared, thread-safe accounting.
#[derive(Debug, Default)]
pub struct Meter {
    totals: Mutex<UsageTotals>,
    /// The models the replies name (their `model` field): what the endpoint actually served, which
    /// may differ from the name asked for (an alias, a dated version, the endpoint's default).
    served: Mutex<BTreeSet<String>>,
}

impl Meter {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Meter::default())
    }

    pub fn snapshot(&self) -> UsageTotals {
        self.totals.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// The models that served the calls so far, sorted (several when endpoints differ); empty before
    /// the first reply.
    pub fn served_models(&self) -> Vec<String> {
        self.served
            .lock()
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub(crate) fn record(&self, purpose: &str, c: &Completion) {
        if !c.model.is_empty()
            && let Ok(mut served) = self.served.lock()
            && !served.contains(&c.model)
        {
            served.insert(c.model.clone());
        }
        if let Ok(mut t) = self.totals.lock() {
            t.calls += 1;
            t.prompt_tokens += c.usage.prompt_tokens;
            t.completion_tokens += c.usage.completion_tokens;
            t.cost_usd += c.cost_usd;
            t.elapsed_ms += c.elapsed_ms;
            let p = t.by_purpose.entry(purpose.to_string()).or_default();
            p.calls += 1;
            p.prompt_tokens += c.usage.prompt_tokens;
            p.completion_tokens += c.usage.completion_tokens;
            p.cost_usd += c.cost_usd;
        }
    }

    pub(crate) fn record_failure(&self) {
        if let Ok(mut t) = self.totals.lock() {
            t.failures += 1;
        }
    }

    pub(crate) fn record_retry(&self) {
        if let Ok(mut t) = self.totals.lock() {
            t.retries += 1;
        }
    }
}

/// Feeds a meter and fills in `cost_usd` (from the price table) and `elapsed_ms`.
pub(crate) struct Metered<C> {
    inner: C,
    meter: Arc<Meter>,
    prices: BTreeMap<String, Price>,
}

impl<C: LlmClient> Metered<C> {
    pub(crate) fn new(inner: C, meter: Arc<Meter>, prices: BTreeMap<String, Price>) -> Self {
        Metered {
            inner,
            meter,
            prices,
        }
    }

    fn price(&self, model: &str) -> Option<&Price> {
        self.prices
            .get(model)
            .or_else(|| self.prices.get(&self.inner.model_id()))
    }
}

#[async_trait]
impl<C: LlmClient> LlmClient for Metered<C> {
    async fn complete(&self, request: &CompletionRequest) -> Result<Completion, LlmError> {
        let started = Instant::now();
        match self.inner.complete(request).await {
            Ok(mut c) => {
                if c.elapsed_ms == 0 {
                    c.elapsed_ms = started.elapsed().as_millis() as u64;
                }
                if c.cost_usd == 0.0
                    && let Some(p) = self.price(&c.model)
                {
                    c.cost_usd = (c.usage.prompt_tokens as f64 * p.prompt
                        + c.usage.completion_tokens as f64 * p.completion)
                        / 1e6;
                }
                self.meter.record(request.purpose.as_str(), &c);
                Ok(c)
            }
            Err(e) => {
                self.meter.record_failure();
                Err(e)
            }
        }
    }

    fn model_id(&self) -> String {
        self.inner.model_id()
    }

    fn meter(&self) -> Option<Arc<Meter>> {
        Some(self.meter.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;
    use crate::llm::scripted::ScriptedLlm;

    #[tokio::test]
    async fn counts_tokens_and_cost_per_purpose() {
        let llm = ScriptedLlm::from_replies(vec!["a".into(), "bb".into()]);
        let prices = BTreeMap::from([(
            "scripted".to_string(),
            Price {
                prompt: 1.0,
                completion: 2.0,
            },
        )]);
        let meter = Meter::new();
        let m = Metered::new(llm, meter.clone(), prices);
        let req = CompletionRequest::new("router", vec![Message::user("q")]);
        let c = m.complete(&req).await.unwrap();
        assert!((c.cost_usd - (10.0 + 2.0) / 1e6).abs() < 1e-12);
        m.complete(&CompletionRequest::new("judge", vec![]))
            .await
            .unwrap();
        assert!(m.complete(&req).await.is_err());
        let t = meter.snapshot();
        assert_eq!(
            (t.calls, t.failures, t.prompt_tokens, t.completion_tokens),
            (2, 1, 20, 2)
        );
        assert_eq!(t.by_purpose["router"].calls, 1);
        assert_eq!(t.by_purpose["judge"].calls, 1);
        assert_eq!(meter.served_models(), ["scripted"]);
    }
}
