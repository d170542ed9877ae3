//! The virtual API itself, independent of HTTP: normalises a `/virtual` request as StableToolBench does
//! (StableToolBench `server/main.py`), checks it against the catalogue, and answers from the response cache, by schema-driven
//! simulation, or by an LLM, with optional fault injection. The HTTP server and the in-process
//! `CatalogSource` both call this, so they answer identically.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde_json::{Map, Value};

use super::cache::ResponseCache;
use super::faults::{FaultConfig, FaultKind, Faults};
use super::llm_sim::LlmSimulator;
use super::mirrorapi::{MirrorApiSimulator, MirrorMode};
use super::simulate::{parse_template, simulate};
use crate::llm::LlmClient;
use crate::toolbench::naming::{pure_api_name, standard_category, standardize};
use crate::toolbench::{ApiDoc, Catalog, Tool, ToolApi};
use crate::tools::args::{canonical_json, check_params, input_object};
use crate::tools::caller::PARAMETER_ERROR;
use crate::tools::observation::{
    MESSAGE_ERROR, NOT_WORKING_ERROR, PARSE_ERROR, RATE_LIMIT_ERROR, TIMEOUT_ERROR,
    TOO_MANY_REQUESTS_ERROR, UNAUTHORIZED_ERROR, UNSUBSCRIBED_ERROR,
};
use crate::tools::{ReplySource, ToolReply, ToolRequest};

/// How answers that are not in the cache are made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SimulationMode {
    /// Schema-driven, deterministic, instant.
    #[default]
    Schema,
    /// The configured LLM (as StableToolBench does with GPT), falling back to the schema on failure.
    Llm,
    /// The LLM only for APIs whose shape the schema simulator would have to infer (no template, or
    /// one with status fields only); the schema simulator for the rest.
    Hybrid,
    /// MirrorAPI behind an OpenAI-compatible endpoint (vLLM), in its own prompt and reply format
    /// (`server::mirrorapi`), falling back to the schema on failure.
    Mirrorapi,
    /// MirrorAPI in its chain-of-thought mode: it explains the API's mechanism before the reply.
    MirrorapiCot,
}

crate::names::named_values!(SimulationMode, "simulation mode" {
    Schema => "schema": "Schema-driven, deterministic, instant",
    Llm => "llm": "The configured LLM (as StableToolBench does with GPT), falling back to the schema on failure",
    Hybrid => "hybrid": "The LLM only for APIs whose shape the schema simulator would have to infer (no template, or one with status fields only); the schema simulator for the rest",
    Mirrorapi => "mirrorapi": "MirrorAPI behind an OpenAI-compatible endpoint (vLLM), in its own prompt and reply format (`server::mirrorapi`), falling back to the schema on failure",
    MirrorapiCot => "mirrorapi-cot": "MirrorAPI in its chain-of-thought mode: it explains the API's mechanism before the reply",
});

impl SimulationMode {
    /// Whether this mode needs a model.
    pub fn uses_llm(self) -> bool {
        self != SimulationMode::Schema
    }

    /// Whether a call to an API with this template goes to the LLM.
    pub fn llm_for(self, template: Option<&Value>) -> bool {
        match self {
            SimulationMode::Schema => false,
            SimulationMode::Llm | SimulationMode::Mirrorapi | SimulationMode::MirrorapiCot => true,
            SimulationMode::Hybrid => !template.is_some_and(crate::server::simulate::carries_data),
        }
    }

    /// MirrorAPI's trained mode, for the MirrorAPI simulations.
    pub fn mirror(self) -> Option<MirrorMode> {
        match self {
            SimulationMode::Mirrorapi => Some(MirrorMode::Sft),
            SimulationMode::MirrorapiCot => Some(MirrorMode::Cot),
            _ => None,
        }
    }
}

/// An answer: a reply, or an HTTP error status (only fault injection produces those).
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Reply(ToolReply),
    HttpError(u16),
}

/// Counts of answers by source, for the shutdown summary and `/health`.
#[derive(Debug, Default)]
pub struct Stats {
    pub cache: AtomicU64,
    pub simulated: AtomicU64,
    pub llm: AtomicU64,
    pub fault: AtomicU64,
    pub invalid: AtomicU64,
}

impl Stats {
    pub fn snapshot(&self) -> Value {
        serde_json::json!({
            "cache": self.cache.load(Ordering::Relaxed),
            "simulated": self.simulated.load(Ordering::Relaxed),
            "llm": self.llm.load(Ordering::Relaxed),
            "fault": self.fault.load(Ordering::Relaxed),
            "invalid": self.invalid.load(Ordering::Relaxed),
        })
    }
}

/// The virtual API server's logic.
pub struct VirtualApi {
    catalog: Arc<Catalog>,
    /// Parsed templates by `category/tool/api`, so string templates are repaired once, not per request.
    templates: HashMap<String, Option<Value>>,
    cache: Option<ResponseCache>,
    save: bool,
    mode: SimulationMode,
    llm: Option<LlmSimulator>,
    mirror: Option<MirrorApiSimulator>,
    faults: Option<Faults>,
    /// StableToolBench's own behaviour (`serve --stb-compat`): see [`VirtualApi::with_stb_compat`].
    stb_compat: bool,
    pub stats: Stats,
}

impl std::fmt::Debug for VirtualApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtualApi")
            .field("tools", &self.catalog.tool_count())
            .field(
                "cache",
                &self.cache.as_ref().map(|c| c.root().to_path_buf()),
            )
            .field("save", &self.save)
            .field("mode", &self.mode)
            .finish()
    }
}

fn api_key(category: &str, tool: &str, api: &str) -> String {
    format!("{category}/{tool}/{api}")
}

/// A reply with no response, as ToolBench servers send errors.
fn error_reply(
    error: impl Into<String>,
    response: impl Into<String>,
    source: ReplySource,
) -> ToolReply {
    ToolReply::new(error.into(), Value::String(response.into()), Some(source))
}

impl VirtualApi {
    pub fn new(catalog: Arc<Catalog>, cache_dir: Option<PathBuf>) -> Self {
        let mut templates = HashMap::new();
        for tool in catalog.tools() {
            for api in &tool.file.api_list {
                let doc = tool.api_doc(api);
                templates.insert(
                    api_key(
                        &tool.category,
                        &tool.standard_name,
                        &pure_api_name(&api.name),
                    ),
                    parse_template(&doc),
                );
            }
        }
        VirtualApi {
            catalog,
            templates,
            cache: cache_dir.map(ResponseCache::new),
            save: false,
            mode: SimulationMode::Schema,
            llm: None,
            mirror: None,
            faults: None,
            stb_compat: false,
            stats: Stats::default(),
        }
    }

    /// Write new simulated or LLM answers into the cache (needs a cache folder).
    pub fn with_save(mut self, save: bool) -> Self {
        self.save = save;
        self
    }

    /// Answers as StableToolBench's `server/main.py` does where we differ by default: a call missing
    /// required parameters is simulated (it never checks them) instead of getting a parameter error, and
    /// a cache entry is served for a tool or API that is not in the catalogue (it looks the cache up by
    /// the request's names before anything else). Off by default: a real API rejects a call without its
    /// required parameters, and an agent should learn that, not read an invented answer.
    pub fn with_stb_compat(mut self, on: bool) -> Self {
        self.stb_compat = on;
        self
    }

    pub fn with_faults(mut self, faults: FaultConfig) -> Self {
        self.faults = (faults.rate > 0.0 || !faults.latency.is_zero()).then(|| Faults::new(faults));
        self
    }

    /// Uses `llm` for answers not in the cache: all of them (`Llm`) or those whose shape would be
    /// inferred (`Hybrid`). `Schema` keeps the model unused.
    pub fn with_llm(mut self, llm: Arc<dyn LlmClient>, mode: SimulationMode) -> Self {
        self.mode = mode;
        self.mirror = mode
            .mirror()
            .map(|m| MirrorApiSimulator::new(llm.clone(), m));
        self.llm = (mode.uses_llm() && self.mirror.is_none()).then(|| LlmSimulator::new(llm));
        self
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn describe(&self) -> String {
        let mut s = format!(
            "virtual API: {} tools, {} APIs, simulation {:?}",
            self.catalog.tool_count(),
            self.catalog.api_count(),
            self.mode
        );
        if let Some(c) = &self.cache {
            s.push_str(&format!(", cache {}", c.root().display()));
            if self.save {
                s.push_str(" (saving)");
            }
        }
        if self.stb_compat {
            s.push_str(", StableToolBench-compatible");
        }
        if let Some(f) = &self.faults {
            s.push_str(&format!(
                ", faults {:.0}% [{}]",
                f.config.rate * 100.0,
                f.config.mix
            ));
        }
        s
    }

    /// Answers one request and logs a line saying where the answer came from.
    pub async fn answer(&self, request: &ToolRequest) -> Answer {
        let start = Instant::now();
        let (answer, label) = self.answer_inner(request).await;
        let source = match &answer {
            Answer::Reply(r) => r.source.map_or("remote", |s| s.as_str()),
            Answer::HttpError(_) => "fault",
        };
        let counter = match source {
            "cache" => &self.stats.cache,
            "simulated" => &self.stats.simulated,
            "llm" => &self.stats.llm,
            "fault" => &self.stats.fault,
            _ => &self.stats.invalid,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        // The label comes from request fields: escaped, so a newline in one cannot forge a log line.
        tracing::info!(
            target: "sum2act::server",
            "{} source={source} {:.2}ms",
            label.escape_debug(),
            start.elapsed().as_secs_f64() * 1e3
        );
        answer
    }

    async fn answer_inner(&self, request: &ToolRequest) -> (Answer, String) {
        let names = Names::of(request);
        let label = names.label();
        if names.api == "chat_with_user" {
            return (
                Answer::Reply(error_reply("", "Chat with user.", ReplySource::Simulated)),
                label,
            );
        }
        let args = match input_object(&request.tool_input) {
            Ok(a) => a,
            Err(msg) => {
                return (
                    Answer::Reply(error_reply(PARSE_ERROR, msg, ReplySource::Caller)),
                    label,
                );
            }
        };
        match self.resolve(&names, &args) {
            Ok((tool, api)) => self.answer_api(tool, api, args).await,
            Err(reply) => (Answer::Reply(reply), label),
        }
    }

    /// The catalogue's tool and API for the request's names; else the reply to give instead (a
    /// `--stb-compat` cache hit outside the catalogue, or ToolBench's error).
    #[allow(clippy::result_large_err)]
    fn resolve(
        &self,
        names: &Names<'_>,
        args: &Map<String, Value>,
    ) -> Result<(&Tool, &ToolApi), ToolReply> {
        let (category, api_name) = (&names.category, &names.api);
        let tool = self.catalog.tool(category, names.tool);
        let in_catalogue = tool.is_some_and(|t| self.catalog.api(t, api_name).is_some());
        if self.stb_compat
            && !in_catalogue
            && let Some(reply) = self.uncatalogued_hit(category, &names.std_tool, api_name, args)
        {
            return Err(reply);
        }
        let Some(tool) = tool else {
            let msg = format!("No such tool: `{}` in category `{category}`", names.tool);
            return Err(error_reply(MESSAGE_ERROR, msg, ReplySource::Caller));
        };
        let Some(api) = self.catalog.api(tool, api_name) else {
            let known: Vec<String> = tool
                .file
                .api_list
                .iter()
                .map(|a| pure_api_name(&a.name))
                .collect();
            let msg = format!(
                "No such API: tool `{}` has no API `{api_name}` (its APIs: {})",
                tool.standard_name,
                known.join(", ")
            );
            return Err(error_reply(MESSAGE_ERROR, msg, ReplySource::Caller));
        };
        Ok((tool, api))
    }

    /// A catalogued API's answer: an injected fault, the cache, a missing-parameter error or a
    /// simulated reply (saved with `--save`). Every name comes from the catalogue, never the request.
    async fn answer_api(
        &self,
        tool: &Tool,
        api: &ToolApi,
        args: Map<String, Value>,
    ) -> (Answer, String) {
        let pure = pure_api_name(&api.name);
        let label = format!("{}/{}/{pure}", tool.category, tool.standard_name);
        let key = canonical_json(&Value::Object(args.clone()));
        if let Some(answer) = self.fault(&label, &key).await {
            return (answer, label);
        }
        let file = self
            .cache
            .as_ref()
            .map(|c| (c, c.file(&tool.category, &tool.standard_name, &pure)));
        if let Some((cache, path)) = &file
            && let Some(hit) = cache.get(path, &key)
            && let Ok(mut reply) = serde_json::from_value::<ToolReply>(hit)
        {
            reply.source = Some(ReplySource::Cache);
            return (Answer::Reply(reply), label);
        }
        let doc = tool.api_doc(api);
        let problems = check_params(&doc, &args);
        if !problems.missing.is_empty() && !self.stb_compat {
            let only_missing = crate::tools::args::ParamProblems {
                unknown: Vec::new(),
                ..problems
            };
            let msg = format!("{PARAMETER_ERROR}{}", only_missing.message());
            return (
                Answer::Reply(error_reply(msg, "", ReplySource::Caller)),
                label,
            );
        }
        let template = self
            .templates
            .get(&api_key(&tool.category, &tool.standard_name, &pure))
            .and_then(Option::as_ref);
        let reply = self
            .simulate(tool.description(), &doc, template, &args, file.as_ref())
            .await;
        if self.save
            && let Some((cache, path)) = &file
        {
            let stored = serde_json::json!({"error": reply.error, "response": reply.response});
            if let Err(e) = cache.put(path, &key, stored) {
                tracing::warn!("cannot save the response: {e}");
            }
        }
        (Answer::Reply(reply), label)
    }

    /// A cache entry for a tool or API outside the catalogue (`--stb-compat`). The path is built from
    /// standardised names (letters, digits, `_`) under a category folder that exists in the cache.
    fn uncatalogued_hit(
        &self,
        category: &str,
        tool: &str,
        api: &str,
        args: &Map<String, Value>,
    ) -> Option<ToolReply> {
        let cache = self.cache.as_ref()?;
        if tool.is_empty() || api.is_empty() || !cache.has_category(category) {
            return None;
        }
        let path = cache.file(category, tool, api);
        let hit = cache.get(&path, &canonical_json(&Value::Object(args.clone())))?;
        let mut reply = serde_json::from_value::<ToolReply>(hit).ok()?;
        reply.source = Some(ReplySource::Cache);
        Some(reply)
    }

    async fn simulate(
        &self,
        tool_description: &str,
        doc: &ApiDoc,
        template: Option<&Value>,
        args: &Map<String, Value>,
        file: Option<&(&ResponseCache, PathBuf)>,
    ) -> ToolReply {
        if let Some(mirror) = &self.mirror {
            match mirror.simulate(tool_description, doc, args).await {
                Ok(reply) => return reply,
                Err(e) => {
                    tracing::warn!("MirrorAPI simulation failed ({e}); using the schema simulator")
                }
            }
        } else if let (true, Some(llm)) = (self.mode.llm_for(template), &self.llm) {
            let examples = file.map(|(c, p)| c.examples(p, 5)).unwrap_or_default();
            match llm
                .simulate(tool_description, doc, template, &examples, args)
                .await
            {
                Ok(reply) => return reply,
                Err(e) => tracing::warn!("LLM simulation failed ({e}); using the schema simulator"),
            }
        }
        ToolReply::new(
            String::new(),
            simulate(doc, template, args),
            Some(ReplySource::Simulated),
        )
    }

    async fn fault(&self, label: &str, key: &str) -> Option<Answer> {
        let faults = self.faults.as_ref()?;
        let c = &faults.config;
        if !c.latency.is_zero() {
            tokio::time::sleep(c.latency).await;
        }
        let kind = faults.decide(&format!("{label}\u{1f}{key}"))?;
        let fault = |error: &str, response: &str| {
            Some(Answer::Reply(error_reply(
                error,
                response,
                ReplySource::Fault,
            )))
        };
        match kind {
            FaultKind::RateLimit => fault(
                RATE_LIMIT_ERROR,
                "You have exceeded the rate limit per minute for your plan.",
            ),
            FaultKind::TooManyRequests => fault(TOO_MANY_REQUESTS_ERROR, "Too many requests"),
            FaultKind::Unauthorized => fault(UNAUTHORIZED_ERROR, "Unauthorized"),
            FaultKind::Unsubscribed => {
                fault(UNSUBSCRIBED_ERROR, "You are not subscribed to this API.")
            }
            FaultKind::NotWorking => fault(
                NOT_WORKING_ERROR,
                "Your Client (working) ---> Gateway (working) ---> API (not working)",
            ),
            FaultKind::Timeout => {
                tokio::time::sleep(c.timeout_delay).await;
                fault(TIMEOUT_ERROR, "")
            }
            FaultKind::ServerError => Some(Answer::HttpError(503)),
            FaultKind::Huge => {
                let unit = "All work and no play makes a huge response. ";
                let body = unit.repeat(c.huge_bytes / unit.len() + 1);
                Some(Answer::Reply(ToolReply::new(
                    String::new(),
                    Value::String(body),
                    Some(ReplySource::Fault),
                )))
            }
        }
    }
}

/// A request's names, normalised as the StableToolBench server does it.
struct Names<'a> {
    category: String,
    /// The tool name as sent, less a `_for_{category}` suffix.
    tool: &'a str,
    std_tool: String,
    api: String,
}

impl<'a> Names<'a> {
    fn of(request: &'a ToolRequest) -> Self {
        let category = standard_category(&request.category);
        let suffix = format!("_for_{category}");
        let tool = request
            .tool_name
            .strip_suffix(&suffix)
            .unwrap_or(&request.tool_name);
        let std_tool = standardize(tool);
        let mut api = pure_api_name(&request.api_name);
        if let Some(i) = api.find(&format!("_for_{std_tool}")) {
            api.truncate(i);
        }
        Names {
            category,
            tool,
            std_tool,
            api,
        }
    }

    /// `category/tool/api` for the log line.
    fn label(&self) -> String {
        format!("{}/{}/{}", self.category, self.std_tool, self.api)
    }
}
