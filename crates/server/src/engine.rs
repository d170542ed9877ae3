//! The virtual API itself, independent of HTTP: normalises a `/virtual` request as StableToolBench does
//! (StableToolBench `server/main.py`), checks it against the catalogue, and answers from the response
//! cache, from its world (the replies it made before), by schema-driven simulation, or by an LLM, with
//! optional fault injection. The HTTP server and the in-process `CatalogSource` both call this, so they
//! answer identically. The answer itself is in `answer.rs`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use super::cache::ResponseCache;
use super::faults::{FaultConfig, FaultKind, Faults};
use super::llm_sim::LlmSimulator;
use super::mirrorapi::{MirrorApiSimulator, MirrorMode};
use super::simulate::parse_template;
use super::world::World;
use sum2act_core::llm::LlmClient;
use sum2act_core::toolbench::naming::{pure_api_name, standard_category, standardize};
use sum2act_core::toolbench::{Catalog, Tool, ToolApi};
use sum2act_core::tools::args::canonical_json;
use sum2act_core::tools::observation::{
    MESSAGE_ERROR, NOT_WORKING_ERROR, RATE_LIMIT_ERROR, TIMEOUT_ERROR, TOO_MANY_REQUESTS_ERROR,
    UNAUTHORIZED_ERROR, UNSUBSCRIBED_ERROR,
};
use sum2act_core::tools::{ReplySource, ToolReply, ToolRequest};

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

sum2act_core::names::named_values!(SimulationMode, "simulation mode" {
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
            SimulationMode::Hybrid => !template.is_some_and(crate::simulate::gives_shape),
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
    pub(super) templates: HashMap<String, Option<Value>>,
    /// The recorded real replies.
    pub(super) cache: Option<ResponseCache>,
    /// The replies made up before, kept so that a call gets the same reply every time.
    pub(super) world: Option<World>,
    pub(super) mode: SimulationMode,
    pub(super) llm: Option<LlmSimulator>,
    pub(super) mirror: Option<MirrorApiSimulator>,
    faults: Option<Faults>,
    /// StableToolBench's own behaviour (`serve --stb-compat`): see [`VirtualApi::with_stb_compat`].
    pub(super) stb_compat: bool,
    /// Said after "No such tool" (`serve` of the shipped sample says how to serve other tools).
    unknown_tool_hint: Option<String>,
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
            .field(
                "world",
                &self
                    .world
                    .as_ref()
                    .map(|w| w.dir().map(|d| d.to_path_buf())),
            )
            .field("mode", &self.mode)
            .finish()
    }
}

pub(super) fn api_key(category: &str, tool: &str, api: &str) -> String {
    format!("{category}/{tool}/{api}")
}

/// A reply with no response, as ToolBench servers send errors.
pub(super) fn error_reply(
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
            world: None,
            mode: SimulationMode::Schema,
            llm: None,
            mirror: None,
            faults: None,
            stb_compat: false,
            unknown_tool_hint: None,
            stats: Stats::default(),
        }
    }

    /// Adds `hint` to every "No such tool" reply: a caller that names a tool this catalogue lacks
    /// learns why (e.g. the server was started on the shipped sample).
    pub fn with_unknown_tool_hint(mut self, hint: impl Into<String>) -> Self {
        self.unknown_tool_hint = Some(hint.into());
        self
    }

    /// Also answers from StableToolBench's cache folder `theirs` (`DATA/tool_response_cache`), after
    /// ours when there is one.
    pub fn with_stb_cache(mut self, theirs: Option<PathBuf>) -> Self {
        if let Some(theirs) = theirs {
            self.cache = Some(match self.cache.take() {
                Some(ours) => ours.with_theirs(theirs),
                None => ResponseCache::new(theirs),
            });
        }
        self
    }

    /// Keeps the replies it makes in `world` (see `server::world`), and answers a call the world
    /// has answered before with the same reply.
    pub fn with_world(mut self, world: World) -> Self {
        self.world = Some(world);
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
            s.push_str(&format!(", cache {}", c.describe()));
        }
        if let Some(w) = &self.world {
            match w.dir() {
                Some(d) => s.push_str(&format!(", world {}", d.display())),
                None => s.push_str(", world in memory"),
            }
            if !w.entity_memory() {
                s.push_str(" (no entity memory)");
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

    /// The catalogue's tool and API for the request's names; else the reply to give instead (a
    /// `--stb-compat` cache hit outside the catalogue, or ToolBench's error).
    #[allow(clippy::result_large_err)]
    pub(super) fn resolve(
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
            let mut msg = format!("No such tool: `{}` in category `{category}`", names.tool);
            if let Some(hint) = &self.unknown_tool_hint {
                msg.push_str(&format!(" ({hint})"));
            }
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

    pub(super) async fn fault(&self, label: &str, key: &str) -> Option<Answer> {
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
pub(super) struct Names<'a> {
    pub(super) category: String,
    /// The tool name as sent, less a `_for_{category}` suffix.
    pub(super) tool: &'a str,
    pub(super) std_tool: String,
    pub(super) api: String,
}

impl<'a> Names<'a> {
    pub(super) fn of(request: &'a ToolRequest) -> Self {
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
    pub(super) fn label(&self) -> String {
        format!("{}/{}/{}", self.category, self.std_tool, self.api)
    }
}
