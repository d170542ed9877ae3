//! Test support for the agent tests: tasks from the shipped sample, its catalogue answering
//! in-process (slowed down or failing on demand), a small weather fixture, scripted model turns and
//! the contexts they run in. Test-only.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{AgentOptions, Episode, QuietObserver, SolveContext};
use crate::llm::scripted::{ScriptedLlm, reply};
use crate::llm::{Completion, CompletionRequest, LlmError, ResponseFormat, ToolCall};
use crate::prompts::Prompts;
use crate::toolbench::fixture::{api_doc, string_param};
use crate::toolbench::{Catalog, DataDir, Function, Task, sample_dir};
use crate::tools::{ToolConfig, ToolEnv, ToolError, ToolReply, ToolRequest, ToolSource};
use sum2act_server::CatalogSource;
use sum2act_server::built_on::tools::ToolSource as _;

pub(crate) fn catalog() -> Arc<Catalog> {
    let data = DataDir::open(&sample_dir()).unwrap_or_else(|e| panic!("sample: {e}"));
    Arc::new(
        data.catalog()
            .unwrap_or_else(|e| panic!("catalogue: {e}"))
            .catalog,
    )
}

/// The sample query `id` of `subset` with its own api_list.
pub(crate) fn task(subset: &str, id: u64) -> Task {
    let data = DataDir::open(&sample_dir()).unwrap_or_else(|e| panic!("sample: {e}"));
    let q = data
        .queries(subset)
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|q| q.query_id == id)
        .unwrap_or_else(|| panic!("no query {subset}/{id}"));
    Task::from_query(subset, &q, &catalog()).unwrap_or_else(|e| panic!("{e}"))
}

/// The sample's catalogue as the tool server's crate sees it (see [`SampleSource::call`]).
fn server_catalog() -> Arc<sum2act_server::built_on::toolbench::Catalog> {
    let data = sum2act_server::built_on::toolbench::DataDir::open(&sample_dir())
        .unwrap_or_else(|e| panic!("sample: {e}"));
    Arc::new(
        data.catalog()
            .unwrap_or_else(|e| panic!("catalogue: {e}"))
            .catalog,
    )
}

/// A value of one build's type as the other build's same type.
fn bridge<A: serde::Serialize, B: serde::de::DeserializeOwned>(a: &A) -> Result<B, ToolError> {
    serde_json::to_value(a)
        .and_then(serde_json::from_value)
        .map_err(|e| ToolError::Other(format!("bridge: {e}")))
}

/// The sample's catalogue and response cache, each call delayed, some APIs failing.
pub(crate) struct SampleSource {
    inner: CatalogSource,
    delay: Duration,
    failing: Vec<String>,
    pub calls: Mutex<Vec<String>>,
}

impl SampleSource {
    pub(crate) fn new(delay_ms: u64, failing: &[&str]) -> Self {
        let cache = sample_dir().join("response_cache");
        SampleSource {
            inner: CatalogSource::new(server_catalog(), Some(cache)),
            delay: Duration::from_millis(delay_ms),
            failing: failing.iter().map(|s| s.to_string()).collect(),
            calls: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn calls(&self) -> Vec<String> {
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
            return Ok(failed_reply());
        }
        // The server crate is built against the core library, these tests against the core under
        // test: the same types twice, so the request and reply cross as their JSON.
        let request = bridge(request)?;
        let reply = self
            .inner
            .call(&request)
            .await
            .map_err(|e| ToolError::Other(e.to_string()))?;
        bridge(&reply)
    }

    fn describe(&self) -> String {
        "sample".into()
    }
}

/// A context over `task`'s functions.
pub(crate) fn context(
    llm: Arc<ScriptedLlm>,
    task: &Task,
    source: Arc<SampleSource>,
    options: AgentOptions,
) -> SolveContext {
    context_with(
        llm,
        task.functions.clone(),
        source,
        ToolConfig::default(),
        options,
    )
}

/// A context over `functions` answered by `source` under `config`.
pub(crate) fn context_with(
    llm: Arc<ScriptedLlm>,
    functions: Vec<Function>,
    source: Arc<dyn ToolSource>,
    config: ToolConfig,
    options: AgentOptions,
) -> SolveContext {
    let env = ToolEnv::new(source, config);
    SolveContext::new(
        llm,
        env.caller(functions),
        Arc::new(Prompts::embedded()),
        options,
        Arc::new(QuietObserver),
    )
}

/// The reply of an API that answered `response`.
pub(crate) fn ok_reply(response: Value) -> ToolReply {
    ToolReply::new(String::new(), response, None)
}

/// The reply of an API that does not work, as ToolBench's server words it.
pub(crate) fn failed_reply() -> ToolReply {
    ToolReply::new(
        "API not working error...".into(),
        Value::String(String::new()),
        None,
    )
}

/// `api` of the Weather tool, with one required `city` parameter.
pub(crate) fn weather_function(api: &str) -> Function {
    let city = string_param("city", "City name", json!("London"));
    let doc = crate::toolbench::ApiDoc {
        api_description: Some(format!("{api} description")),
        ..api_doc("Weather", "Weather", api, vec![city])
    };
    Function::from_doc(&doc, "weather")
}

/// Paris' temperature, over a working `get_weather` and a failing `broken_api`.
pub(crate) fn weather_task() -> Task {
    Task {
        subset: "G1_instruction".into(),
        query_id: 7,
        query: "What is the temperature in Paris?".into(),
        functions: vec![
            weather_function("get_weather"),
            weather_function("broken_api"),
        ],
        relevant: vec![],
    }
}

/// The state manager's reply: a success reporting `facts`.
pub(crate) fn state_reply(facts: &[&str]) -> Completion {
    reply(
        &json!({"success": true, "new_facts": facts, "failure_reason": "", "wrong_facts": []})
            .to_string(),
    )
}

/// Scripted turns handed out in order; a turn past the end is an error.
pub(crate) struct Turns {
    list: Vec<Completion>,
    next: AtomicUsize,
}

impl Turns {
    pub(crate) fn new(list: Vec<Completion>) -> Self {
        Turns {
            list,
            next: AtomicUsize::new(0),
        }
    }

    pub(crate) fn next(&self) -> Result<Completion, LlmError> {
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        self.list
            .get(i)
            .cloned()
            .ok_or_else(|| LlmError::InvalidResponse(format!("no scripted turn #{i}")))
    }
}

pub(crate) fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map(|rt| rt.block_on(f))
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

/// A native tool call with raw (possibly malformed) `arguments`, the turn saying `thought` first.
pub(crate) fn raw_call(thought: &str, name: &str, arguments: &str) -> Completion {
    Completion {
        content: thought.into(),
        tool_calls: vec![ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: arguments.into(),
        }],
        model: "scripted".into(),
        ..Completion::default()
    }
}

/// A `Finish` call giving `answer`, the turn saying `thought` first.
pub(crate) fn finish_saying(thought: &str, answer: &str) -> Completion {
    let args = json!({"return_type": "give_answer", "final_answer": answer});
    raw_call(thought, "Finish", &args.to_string())
}

/// The prompts of the model's calls for `purpose`, each as the text it was shown.
pub(crate) fn prompts_for(llm: &ScriptedLlm, purpose: &str) -> Vec<String> {
    llm.requests()
        .iter()
        .filter(|r| r.purpose == purpose)
        .map(prompt_text)
        .collect()
}

/// The text of the model's first call for `purpose` (empty when there was none).
pub(crate) fn first_prompt(llm: &ScriptedLlm, purpose: &str) -> String {
    prompts_for(llm, purpose)
        .into_iter()
        .next()
        .unwrap_or_default()
}

/// The actions of an episode's steps, in order.
pub(crate) fn tools_called(ep: &Episode) -> Vec<String> {
    ep.steps.iter().map(|s| s.action.clone()).collect()
}

/// The whole text a request shows the model.
pub(crate) fn prompt_text(r: &CompletionRequest) -> String {
    r.messages
        .iter()
        .map(|m| m.content.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The schema the request constrains the reply with.
pub(crate) fn schema(r: &CompletionRequest) -> Value {
    match &r.response_format {
        ResponseFormat::JsonSchema { schema, .. } => schema.clone(),
        _ => Value::Null,
    }
}

/// Each request asks for one reply format: one that offers functions never also asks, in its system
/// or user messages, for a JSON text object (on the grammar path the LLM layer states that format
/// itself), nor for a JSON response format.
pub(crate) fn assert_one_reply_format(requests: &[CompletionRequest]) {
    use crate::llm::Role;
    for r in requests.iter().filter(|r| !r.tools.is_empty()) {
        assert_eq!(r.response_format, ResponseFormat::Text, "{}", r.purpose);
        for m in r.messages.iter().filter(|m| m.role != Role::Assistant) {
            for marker in ["JSON object", "{\"name\"", "Answer with JSON", "JSON only"] {
                assert!(
                    !m.content.contains(marker),
                    "{} asks for functions and for {marker:?}: {}",
                    r.purpose,
                    m.content
                );
            }
        }
    }
}

/// The checklist an episode recorded (its parts' texts).
pub(crate) fn recorded_checklist(ep: &Episode) -> Vec<String> {
    let parts = ep.details["subtasks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    parts
        .iter()
        .filter_map(|p| p.as_str().map(str::to_string))
        .collect()
}
