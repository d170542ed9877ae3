//! Test support for the planning methods: tasks from the shipped sample, its catalogue answering
//! in-process (slowed down or failing on demand), and a scripted model. Test-only.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::{AgentOptions, QuietObserver, SolveContext};
use crate::llm::scripted::ScriptedLlm;
use crate::llm::{Completion, CompletionRequest, ResponseFormat, ToolCall};
use crate::prompts::Prompts;
use crate::server::CatalogSource;
use crate::toolbench::{Catalog, DataDir, Task, sample_dir};
use crate::tools::{ToolConfig, ToolEnv, ToolError, ToolReply, ToolRequest, ToolSource};

pub fn catalog() -> Arc<Catalog> {
    let data = DataDir::open(&sample_dir()).unwrap_or_else(|e| panic!("sample: {e}"));
    Arc::new(
        data.catalog()
            .unwrap_or_else(|e| panic!("catalogue: {e}"))
            .catalog,
    )
}

/// The sample query `id` of `subset` with its own api_list.
pub fn task(subset: &str, id: u64) -> Task {
    let data = DataDir::open(&sample_dir()).unwrap_or_else(|e| panic!("sample: {e}"));
    let q = data
        .queries(subset)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|q| q.query_id == id)
        .unwrap_or_else(|| panic!("no query {subset}/{id}"));
    Task::from_query(subset, &q, &catalog()).unwrap_or_else(|e| panic!("{e}"))
}

/// The sample's catalogue and response cache, each call delayed, some APIs failing.
pub struct SampleSource {
    inner: CatalogSource,
    delay: Duration,
    failing: Vec<String>,
    pub calls: Mutex<Vec<String>>,
}

impl SampleSource {
    pub fn new(delay_ms: u64, failing: &[&str]) -> Self {
        let cache = sample_dir().join("response_cache");
        SampleSource {
            inner: CatalogSource::new(catalog(), Some(cache)),
            delay: Duration::from_millis(delay_ms),
            failing: failing.iter().map(|s| s.to_string()).collect(),
            calls: Mutex::new(Vec::new()),
        }
    }

    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl ToolSource for SampleSource {
    async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
        if let Ok(mut c) = self.calls.lock() {
            c.push(format!("{} {}", request.api_name, request.tool_input));
        }
        tokio::time::sleep(self.delay).await;
        if self.failing.contains(&request.api_name) {
            return Ok(ToolReply {
                error: "API not working error...".into(),
                response: Value::String(String::new()),
                source: None,
            });
        }
        self.inner.call(request).await
    }

    fn describe(&self) -> String {
        "sample".into()
    }
}

/// A context over `task`'s functions.
pub fn context(
    llm: Arc<ScriptedLlm>,
    task: &Task,
    source: Arc<SampleSource>,
    options: AgentOptions,
) -> SolveContext {
    let env = ToolEnv::new(source, ToolConfig::default());
    SolveContext::new(
        llm,
        env.caller(task.functions.clone()),
        Arc::new(Prompts::embedded()),
        options,
        Arc::new(QuietObserver),
    )
}

pub fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| rt.block_on(f))
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

/// A native tool call.
pub fn call(name: &str, args: Value) -> Completion {
    Completion {
        content: String::new(),
        tool_calls: vec![ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.to_string(),
        }],
        model: "scripted".into(),
        ..Completion::default()
    }
}

/// The whole text a request shows the model.
pub fn prompt_text(r: &CompletionRequest) -> String {
    r.messages
        .iter()
        .map(|m| m.content.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The schema the request constrains the reply with.
pub fn schema(r: &CompletionRequest) -> Value {
    match &r.response_format {
        ResponseFormat::JsonSchema { schema, .. } => schema.clone(),
        _ => Value::Null,
    }
}
