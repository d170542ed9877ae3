//! The tool caller: one model action in, one observation out. Everything that can go wrong (an unknown
//! function, broken arguments, a slow or failing server) becomes an observation the agent can learn
//! from, never an error or a panic.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde_json::Value;

use super::args::{canonical_json, check_declared, check_params, parse_arguments};
use super::mcp::McpHub;
use super::observation::{self, ObservationCode, parse_finish, reply_text};
use super::resources::ResourceStore;
use super::settings::ToolConfig;
use super::types::Resource;
use super::types::{Observation, ReplySource, Retry, ToolReply, ToolRequest};
use super::{Started, ToolError, ToolSource};
use crate::text::truncate;
use crate::toolbench::{Backend, FINISH, Function};

/// Error prefix of a call whose parameters do not fit the API (a real API's complaint, shortened).
pub const PARAMETER_ERROR: &str = "Parameter error...\n";

/// Spacing calls evenly (burst 1) mirrors ToolBench's sleep-before-each-call rather than allowing a
/// whole minute's calls at once.
fn quota(per_minute: u32) -> Option<Quota> {
    let n = NonZeroU32::new(per_minute)?;
    Quota::with_period(Duration::from_secs(60) / n.get())
        .map(|q| q.allow_burst(NonZeroU32::MIN))
        .or(Some(Quota::per_minute(n)))
}

/// Shared by all episodes of a run: the source, the rate limiters, the per-run call cache. Cheap to clone.
#[derive(Clone)]
pub struct ToolEnv {
    source: Arc<dyn ToolSource>,
    /// The MCP servers, when the run has any: the source of `Backend::Mcp` functions.
    mcp: Option<Arc<McpHub>>,
    config: Arc<ToolConfig>,
    global: Option<Arc<DefaultDirectRateLimiter>>,
    per_tool: Option<Arc<DefaultKeyedRateLimiter<String>>>,
    cache: Arc<Mutex<HashMap<String, ToolReply>>>,
}

impl ToolEnv {
    pub fn new(source: Arc<dyn ToolSource>, config: ToolConfig) -> Self {
        let global = config
            .global_per_minute
            .and_then(quota)
            .map(|q| Arc::new(RateLimiter::direct(q)));
        let per_tool = config
            .per_tool_per_minute
            .and_then(quota)
            .map(|q| Arc::new(RateLimiter::keyed(q)));
        ToolEnv {
            source,
            mcp: None,
            config: Arc::new(config),
            global,
            per_tool,
            cache: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// With MCP servers, whose functions (`McpHub::functions`) tasks can then include.
    pub fn with_mcp(mut self, hub: Arc<McpHub>) -> Self {
        self.mcp = Some(hub);
        self
    }

    pub fn mcp(&self) -> Option<&Arc<McpHub>> {
        self.mcp.as_ref()
    }

    /// A caller for one task's functions (the catalogue's, built with `toolbench::Function::from_doc`,
    /// and MCP servers'). Its files go to a fresh temp folder unless `with_resource_dir` says where.
    pub fn caller(&self, functions: Vec<Function>) -> ToolCaller {
        ToolCaller {
            env: self.clone(),
            functions,
            resources: Arc::new(Mutex::new(ResourceStore::new(None))),
        }
    }

    pub fn source(&self) -> &Arc<dyn ToolSource> {
        &self.source
    }

    /// For run manifests, field by field so two runs can be compared: the source and the limits
    /// (never a key).
    pub fn settings(&self) -> Value {
        let c = &self.config;
        serde_json::json!({
            "source": crate::redact::text(&self.source.identity()),
            "mcp": self.mcp.as_ref().map(|h| h.describe()),
            "timeout_s": c.timeout.as_secs_f64(),
            "simulator_timeout_s": c.simulator_timeout.map(|d| d.as_secs_f64()),
            "retries": c.retries,
            "global_per_minute": c.global_per_minute,
            "per_tool_per_minute": c.per_tool_per_minute,
            "cache_calls": c.cache_calls,
            "strict_params": c.strict_params,
        })
    }

    /// For logs: the source and the limits (never a key).
    pub fn describe(&self) -> String {
        let c = &self.config;
        let limit = |v: Option<u32>| v.map_or("none".to_string(), |n| format!("{n}/min"));
        let mcp = self
            .mcp
            .as_ref()
            .map(|h| format!("; {}", h.describe()))
            .unwrap_or_default();
        let simulator = c
            .simulator_timeout
            .map_or("none".to_string(), |d| format!("{d:?}"));
        format!(
            "{}{mcp}; timeout {:?} (simulator {simulator}), retries {}, rate limit global {} per tool {}, max observation {} chars",
            self.source.describe(),
            c.timeout,
            c.retries,
            limit(c.global_per_minute),
            limit(c.per_tool_per_minute),
            c.max_observation_length
        )
    }

    fn cached(&self, key: &str) -> Option<ToolReply> {
        self.cache.lock().ok().and_then(|m| m.get(key).cloned())
    }

    fn remember(&self, key: String, reply: &ToolReply) {
        if let Ok(mut m) = self.cache.lock() {
            m.insert(key, reply.clone());
        }
    }
}

/// Calls the functions of one task. Clones share the episode's files.
#[derive(Clone)]
pub struct ToolCaller {
    env: ToolEnv,
    functions: Vec<Function>,
    resources: Arc<Mutex<ResourceStore>>,
}

impl ToolCaller {
    /// Cuts observation texts at `chars` (the run's budget: what every method's model reads).
    pub(crate) fn with_observation_chars(mut self, chars: usize) -> Self {
        if self.env.config.max_observation_length != chars {
            let mut config = (*self.env.config).clone();
            config.max_observation_length = chars;
            self.env.config = Arc::new(config);
        }
        self
    }

    /// Stores the episode's files in `dir` (beside its answer file: `{stem}.resources`).
    pub(crate) fn with_resource_dir(mut self, dir: PathBuf) -> Self {
        self.resources = Arc::new(Mutex::new(ResourceStore::new(Some(dir))));
        self
    }

    /// The files tool calls produced so far.
    pub(crate) fn resources(&self) -> Vec<Resource> {
        self.resources
            .lock()
            .map(|r| r.resources().to_vec())
            .unwrap_or_default()
    }

    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    /// Dispatches one model action (ToolBench `rapidapi.py`): `Finish` (codes 2/3/4), suffix match of the function
    /// name (unknown → code 1), argument checks, then the source under limits, timeouts and retries.
    /// Never panics, never fails: every outcome is an observation.
    pub async fn call(&self, name: &str, arguments: &str) -> Observation {
        let start = Instant::now();
        let mut obs = self.dispatch(name, arguments).await;
        obs.elapsed_ms = start.elapsed().as_millis() as u64;
        tracing::debug!(
            function = name,
            code = obs.code.number(),
            source = obs.source.as_str(),
            failed = obs.failed,
            elapsed_ms = obs.elapsed_ms,
            "tool call"
        );
        obs
    }

    async fn dispatch(&self, name: &str, arguments: &str) -> Observation {
        if name == FINISH {
            return self.finish(name, arguments);
        }
        match self.prepare(name, arguments) {
            Ok((function, args)) => self.call_api(name, arguments, function, args).await,
            Err(obs) => obs,
        }
    }

    /// The `Finish` pseudo-function: answered here, never sent.
    fn finish(&self, name: &str, arguments: &str) -> Observation {
        let max = self.env.config.max_observation_length;
        let f = parse_finish(arguments);
        let failed = f.code == ObservationCode::BadFinish;
        Observation {
            function: name.to_string(),
            arguments: arguments.to_string(),
            text: truncate(f.text.clone(), max),
            code: f.code,
            error: if failed {
                f.text.clone()
            } else {
                String::new()
            },
            response: if failed {
                Value::String(String::new())
            } else {
                Value::String(f.text)
            },
            source: ReplySource::Caller,
            failed,
            finish: f.finish,
            elapsed_ms: 0,
            resources: Vec::new(),
            retries: Vec::new(),
        }
    }

    /// The called function and its parsed, checked arguments; else the observation saying why not.
    #[allow(clippy::result_large_err)]
    fn prepare(
        &self,
        name: &str,
        arguments: &str,
    ) -> Result<(&Function, serde_json::Map<String, Value>), Observation> {
        // ToolBench takes the first function whose name ends with the called name (an exact name wins
        // here, so a name that ends another one still reaches its own function); an empty name would
        // match everything there, which we treat as unknown instead.
        let function = (!name.is_empty())
            .then(|| {
                let mut by_suffix = self.functions.iter().filter(|f| f.name.ends_with(name));
                self.functions
                    .iter()
                    .find(|f| f.name == name)
                    .or_else(|| by_suffix.next())
            })
            .flatten();
        let Some(function) = function else {
            let reply = caller_reply(format!("No such function name: {name}"));
            return Err(self.observe(
                name,
                arguments,
                reply,
                ObservationCode::NoSuchFunction,
                true,
            ));
        };
        let args = match parse_arguments(arguments) {
            Ok(a) => a,
            Err(msg) => {
                let reply = caller_reply(format!("{}{msg}", observation::PARSE_ERROR));
                return Err(self.observe(name, arguments, reply, ObservationCode::Ok, true));
            }
        };
        let mut problems = match function.backend {
            Backend::Virtual => check_params(&function.doc, &args),
            // MCP parameters are the server's own names, never standardised.
            Backend::Mcp => check_declared(&function.required, &function.params, &args),
        };
        if !self.env.config.strict_params {
            // Passed through as ToolBench does; only a missing required parameter stops the call.
            problems.unknown.clear();
        }
        if !problems.is_empty() {
            let reply = caller_reply(format!("{PARAMETER_ERROR}{}", problems.message()));
            return Err(self.observe(name, arguments, reply, ObservationCode::Ok, true));
        }
        Ok((function, args))
    }

    /// A checked call, to the function's backend.
    async fn call_api(
        &self,
        name: &str,
        arguments: &str,
        function: &Function,
        args: serde_json::Map<String, Value>,
    ) -> Observation {
        match function.backend {
            Backend::Virtual => self.call_virtual(name, arguments, function, args).await,
            Backend::Mcp => self.call_mcp(name, arguments, function, args).await,
        }
    }

    /// A `/virtual` call: from the run's cache when allowed, else sent within the rate limits. File
    /// handles in the arguments go as they are (see `tools::resources`).
    async fn call_virtual(
        &self,
        name: &str,
        arguments: &str,
        function: &Function,
        args: serde_json::Map<String, Value>,
    ) -> Observation {
        let args_value = Value::Object(args);
        let key = format!(
            "{}\u{1f}{}\u{1f}{}\u{1f}{}",
            function.category,
            function.tool,
            function.api,
            canonical_json(&args_value)
        );
        if self.env.config.cache_calls
            && let Some(reply) = self.env.cached(&key)
        {
            let code = observation::code_for_error(&reply.error);
            return self.observe(name, arguments, reply, code, false);
        }
        // The raw text goes on the wire when it is clean JSON, as ToolBench's client sends it; anything we
        // had to repair goes as the object we understood.
        let tool_input =
            if serde_json::from_str::<serde_json::Map<String, Value>>(arguments).is_ok() {
                Value::String(arguments.to_string())
            } else {
                args_value
            };
        let request = self.request(function, tool_input);
        let (result, retries) = self.limited_send(self.env.source.as_ref(), &request).await;
        let mut obs = match result {
            Ok(reply) => {
                let failed = !reply.error.is_empty();
                if self.env.config.cache_calls
                    && !failed
                    && reply.source != Some(ReplySource::Fault)
                {
                    self.env.remember(key, &reply);
                }
                let code = observation::code_for_error(&reply.error);
                self.observe(name, arguments, reply, code, failed)
            }
            Err(e) => {
                let mut obs = self.failed(name, arguments, &e);
                // No reply from the tool server at all: the environment failed, not the API (the
                // episode is not kept as a result, see `ReplySource::Unreachable`).
                if e.is_environment() {
                    obs.source = ReplySource::Unreachable;
                }
                obs
            }
        };
        obs.retries = retries;
        obs
    }

    /// An MCP tool call: file handles become the files' paths, the reply's binary outputs become
    /// the episode's files. Never answered from the run's cache: MCP tools may act (write, send).
    async fn call_mcp(
        &self,
        name: &str,
        arguments: &str,
        function: &Function,
        mut args: serde_json::Map<String, Value>,
    ) -> Observation {
        let resolved = match self.resources.lock() {
            Ok(store) => store.resolve(&mut args),
            Err(_) => Err("the episode's files are unavailable".to_string()),
        };
        if let Err(msg) = resolved {
            let reply = caller_reply(format!("{PARAMETER_ERROR}{msg}"));
            return self.observe(name, arguments, reply, ObservationCode::Ok, true);
        }
        let Some(hub) = self.env.mcp.clone() else {
            let reply = caller_reply("no MCP server is connected for this function".into());
            return self.observe(name, arguments, reply, ObservationCode::HttpError, true);
        };
        let request = self.request(function, Value::Object(args));
        let (result, retries) = self.limited_send(hub.as_ref(), &request).await;
        let mut obs = match result {
            Ok(mut reply) => {
                let stored = match self.resources.lock() {
                    Ok(mut store) => store.store_reply(&mut reply, name),
                    Err(_) => Vec::new(),
                };
                let failed = !reply.error.is_empty();
                let code = observation::code_for_error(&reply.error);
                let mut obs = self.observe(name, arguments, reply, code, failed);
                obs.resources = stored;
                obs
            }
            Err(e) => self.failed(name, arguments, &e),
        };
        obs.retries = retries;
        obs
    }

    fn request(&self, function: &Function, tool_input: Value) -> ToolRequest {
        ToolRequest {
            category: function.category.clone(),
            tool_name: function.tool.clone(),
            api_name: function.api.clone(),
            tool_input,
            strip: self.env.config.strip.clone(),
        }
    }

    /// `send` once the global and per-tool rate limits allow (per tool: the RapidAPI tool, or the
    /// MCP server).
    async fn limited_send(
        &self,
        source: &dyn ToolSource,
        request: &ToolRequest,
    ) -> (Result<ToolReply, ToolError>, Vec<Retry>) {
        if let Some(g) = &self.env.global {
            g.until_ready().await;
        }
        if let Some(t) = &self.env.per_tool {
            t.until_key_ready(&request.tool_name).await;
        }
        self.send(source, request).await
    }

    /// The observation of a call that got no usable reply.
    fn failed(&self, name: &str, arguments: &str, e: &ToolError) -> Observation {
        let (code, error) = failure(e);
        tracing::warn!(function = name, "tool call failed: {e}");
        self.observe(name, arguments, caller_reply(error), code, true)
    }

    /// One request with a timeout per attempt and bounded retries (exponential backoff) on timeouts,
    /// 429/5xx and connection failures; also the failed attempts that were retried.
    async fn send(
        &self,
        source: &dyn ToolSource,
        request: &ToolRequest,
    ) -> (Result<ToolReply, ToolError>, Vec<Retry>) {
        let c = &self.env.config;
        let mut retries = Vec::new();
        let mut attempt = 0u32;
        loop {
            let started = Instant::now();
            let result = self.attempt(source, request).await;
            let retriable = match &result {
                Err(ToolError::Status(s)) => *s == 429 || *s >= 500,
                Err(ToolError::Unreachable { .. } | ToolError::Timeout(_)) => true,
                _ => false,
            };
            if !retriable || attempt >= c.retries {
                return (result, retries);
            }
            let delay = c.backoff.saturating_mul(1u32 << attempt.min(10));
            if let Err(e) = &result {
                tracing::info!(
                    "tool call attempt {} failed ({e}); retrying in {delay:?}",
                    attempt + 1
                );
                retries.push(Retry {
                    attempt: attempt + 1,
                    error: e.to_string(),
                    elapsed_ms: started.elapsed().as_millis() as u64,
                    backoff_ms: delay.as_millis() as u64,
                });
            }
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    /// One attempt: ToolBench's timeout until the API answers or says it is simulating, then the
    /// simulator's own limit (if any) for the rest.
    async fn attempt(
        &self,
        source: &dyn ToolSource,
        request: &ToolRequest,
    ) -> Result<ToolReply, ToolError> {
        let c = &self.env.config;
        let limit = source.attempt_timeout().unwrap_or(c.timeout);
        let started = match tokio::time::timeout(limit, source.start(request)).await {
            Ok(r) => r?,
            Err(_) => return Err(ToolError::Timeout(limit)),
        };
        match started {
            Started::Ready(reply) => Ok(reply),
            Started::Simulating(rest) => match c.simulator_timeout {
                None => rest.await,
                Some(limit) => tokio::time::timeout(limit, rest)
                    .await
                    .unwrap_or(Err(ToolError::SimulatorTimeout(limit))),
            },
        }
    }

    fn observe(
        &self,
        name: &str,
        arguments: &str,
        reply: ToolReply,
        code: ObservationCode,
        failed: bool,
    ) -> Observation {
        let text = truncate(
            reply_text(&reply.error, &reply.response),
            self.env.config.max_observation_length,
        );
        Observation {
            function: name.to_string(),
            arguments: arguments.to_string(),
            text,
            code,
            error: reply.error,
            response: reply.response,
            source: reply.source.unwrap_or_default(),
            failed,
            finish: None,
            elapsed_ms: 0,
            resources: Vec::new(),
            retries: Vec::new(),
        }
    }
}

/// The observation code and error text of a call that got no usable reply.
fn failure(e: &ToolError) -> (ObservationCode, String) {
    match e {
        ToolError::Timeout(_) | ToolError::SimulatorTimeout(_) => (
            ObservationCode::Timeout,
            observation::TIMEOUT_ERROR.to_string(),
        ),
        ToolError::Status(s) => (
            ObservationCode::HttpError,
            format!("request invalid, data error. status_code={s}"),
        ),
        ToolError::BadReply(m) => (
            ObservationCode::HttpError,
            format!("request invalid, data error: {m}"),
        ),
        ToolError::TooLarge(cap) => (
            ObservationCode::HttpError,
            format!(
                "request invalid, data error: reply larger than {}",
                super::size(*cap)
            ),
        ),
        other => (
            ObservationCode::HttpError,
            format!("request invalid, data error. {other}"),
        ),
    }
}

fn caller_reply(error: String) -> ToolReply {
    ToolReply::new(
        error,
        Value::String(String::new()),
        Some(ReplySource::Caller),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers with the API it was asked for.
    struct Echo;

    #[async_trait::async_trait]
    impl ToolSource for Echo {
        async fn call(&self, request: &ToolRequest) -> Result<ToolReply, ToolError> {
            let api = Value::String(request.api_name.clone());
            Ok(ToolReply::new(String::new(), api, None))
        }

        fn describe(&self) -> String {
            "echo".into()
        }
    }

    #[tokio::test]
    async fn an_exact_name_wins_over_a_longer_name_ending_with_it() {
        let function = |api: &str| {
            let doc: crate::toolbench::ApiDoc = serde_json::from_value(serde_json::json!({
                "category_name": "C", "tool_name": "t", "api_name": api,
                "required_parameters": [], "optional_parameters": []
            }))
            .unwrap_or_else(|e| panic!("{e}"));
            Function::from_doc(&doc, "t")
        };
        let env = ToolEnv::new(Arc::new(Echo), ToolConfig::default());
        let caller = env.caller(vec![function("xa"), function("a")]);
        // `xa_for_t` also ends with `a_for_t`, and comes first.
        assert_eq!(caller.call("a_for_t", "{}").await.response, "a");
        // ToolBench's suffix match still finds the first function ending with a shorter name.
        assert_eq!(caller.call("for_t", "{}").await.response, "xa");
    }

    /// Answers after a delay, with its own per-attempt limit (as an MCP server of local tools has).
    struct SlowLocal(Option<Duration>);

    #[async_trait::async_trait]
    impl ToolSource for SlowLocal {
        async fn call(&self, _: &ToolRequest) -> Result<ToolReply, ToolError> {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(ToolReply::new(
                String::new(),
                Value::String("done".into()),
                None,
            ))
        }

        fn describe(&self) -> String {
            "slow".into()
        }

        fn attempt_timeout(&self) -> Option<Duration> {
            self.0
        }
    }

    #[tokio::test]
    async fn a_source_with_its_own_limit_is_not_held_to_toolbench_timeout() {
        let config = ToolConfig {
            timeout: Duration::from_millis(100),
            retries: 0,
            ..ToolConfig::default()
        };
        let doc: crate::toolbench::ApiDoc = serde_json::from_value(serde_json::json!({
            "category_name": "C", "tool_name": "t", "api_name": "a",
            "required_parameters": [], "optional_parameters": []
        }))
        .unwrap_or_else(|e| panic!("{e}"));
        let call = |limit| {
            let env = ToolEnv::new(Arc::new(SlowLocal(limit)), config.clone());
            let caller = env.caller(vec![Function::from_doc(&doc, "t")]);
            async move { caller.call("a_for_t", "{}").await }
        };
        let held = call(None).await;
        assert!(held.error.contains("Timeout"), "{held:?}");
        let own = call(Some(Duration::from_secs(5))).await;
        assert_eq!(
            (own.error.as_str(), own.response.as_str()),
            ("", Some("done"))
        );
    }
}
