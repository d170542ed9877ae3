//! An in-process tool source: the embedded server's logic without the socket, answering from a
//! catalogue (and optionally a response cache). For tests of other modules and offline use. It lives
//! here, not in `tools`, so the dependency points one way: the server uses the tool types, never back.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;

use super::{Answer, FaultConfig, Prepared, VirtualApi};
use sum2act_core::toolbench::Catalog;
use sum2act_core::tools::{Started, ToolError, ToolReply, ToolRequest, ToolSource};

/// Answers exactly as `sum2act serve` would, minus HTTP.
#[derive(Clone)]
pub struct CatalogSource {
    api: Arc<VirtualApi>,
}

impl CatalogSource {
    pub fn new(catalog: Arc<Catalog>, cache_dir: Option<PathBuf>) -> Self {
        CatalogSource {
            api: Arc::new(VirtualApi::new(catalog, cache_dir)),
        }
    }

    /// With fault injection (see `server::FaultConfig`).
    pub fn with_faults(
        catalog: Arc<Catalog>,
        cache_dir: Option<PathBuf>,
        faults: FaultConfig,
    ) -> Self {
        CatalogSource {
            api: Arc::new(VirtualApi::new(catalog, cache_dir).with_faults(faults)),
        }
    }

    /// Wraps an already configured virtual API.
    pub fn from_api(api: Arc<VirtualApi>) -> Self {
        CatalogSource { api }
    }
}

fn reply(answer: Answer) -> Result<ToolReply, ToolError> {
    match answer {
        Answer::Reply(r) => Ok(r),
        Answer::HttpError(status) => Err(ToolError::Status(status)),
    }
}

#[async_trait]
impl ToolSource for CatalogSource {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        reply(self.api.answer(request).await)
    }

    /// As the HTTP server answers a client that accepts early answers: a simulation that goes to a
    /// model is made after the start, on its own task (a caller that gives up does not cancel it).
    async fn start(&self, request: &ToolRequest) -> Result<Started, ToolError> {
        match self.api.prepare(request).await {
            Prepared::Done(answer) => reply(answer).map(Started::Ready),
            Prepared::Simulate(pending) if self.api.slow(&pending) => {
                let api = self.api.clone();
                let task = tokio::spawn(async move { api.finish(*pending).await.0 });
                Ok(Started::Simulating(Box::pin(async move {
                    match task.await {
                        Ok(answer) => reply(answer),
                        Err(e) => Err(ToolError::Other(format!("the simulation failed: {e}"))),
                    }
                })))
            }
            Prepared::Simulate(pending) => {
                reply(self.api.finish(*pending).await.0).map(Started::Ready)
            }
        }
    }

    fn describe(&self) -> String {
        format!("in-process {}", self.api.describe())
    }
}
