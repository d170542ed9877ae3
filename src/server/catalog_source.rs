//! An in-process tool source: the embedded server's logic without the socket, answering from a
//! catalogue (and optionally a response cache). For tests of other modules and offline use. It lives
//! here, not in `tools`, so the dependency points one way: the server uses the tool types, never back.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;

use super::{Answer, FaultConfig, VirtualApi};
use crate::toolbench::Catalog;
use crate::tools::{ToolError, ToolReply, ToolRequest, ToolSource};

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

#[async_trait]
impl ToolSource for CatalogSource {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        match self.api.answer(request).await {
            Answer::Reply(r) => Ok(r),
            Answer::HttpError(status) => Err(ToolError::Status(status)),
        }
    }

    fn describe(&self) -> String {
        format!("in-process {}", self.api.describe())
    }
}
