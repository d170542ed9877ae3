//! How the virtual API answers one request, in two parts: [`VirtualApi::prepare`] settles everything
//! that is instant (a bad request, a fault, the recorded cache, a reply the world already gave), and
//! what is left is a [`Pending`] simulation that [`VirtualApi::finish`] makes (once per call for the
//! world) and stores. The HTTP route answers a client that accepts it at once when the simulation goes
//! to a model, and sends the body when it is made (see `tools::http::SIMULATING_HEADER`).

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{Map, Value};

use super::engine::{Answer, Names, VirtualApi, api_key, error_reply};
use super::llm_sim::Given;
use super::simulate::simulate;
use super::template_fit::recorded_for_other_kind;
use super::world::Call;
use sum2act_core::toolbench::naming::pure_api_name;
use sum2act_core::toolbench::{ApiDoc, Tool, ToolApi};
use sum2act_core::tools::args::{canonical_json, check_params, input_object, with_declared_names};
use sum2act_core::tools::caller::PARAMETER_ERROR;
use sum2act_core::tools::observation::PARSE_ERROR;
use sum2act_core::tools::{ReplySource, ToolReply, ToolRequest};

/// The first part of an answer.
pub enum Prepared {
    /// Answered already.
    Done(Answer),
    /// A reply to make up.
    Simulate(Box<Pending>),
}

/// A simulation still to make, with everything it needs (owned: it may outlive its request).
pub struct Pending {
    /// `category/tool/api` for the log line.
    label: String,
    call: Call,
    tool_description: String,
    doc: ApiDoc,
    args: Map<String, Value>,
    /// The API's file of recorded replies (for the examples).
    cache_file: Option<PathBuf>,
    started: Instant,
}

impl VirtualApi {
    /// Answers one request and logs a line saying where the answer came from.
    pub async fn answer(&self, request: &ToolRequest) -> Answer {
        match self.prepare(request).await {
            Prepared::Done(answer) => answer,
            Prepared::Simulate(pending) => self.finish(*pending).await.0,
        }
    }

    /// The instant part of an answer (logged when it is the whole answer).
    pub async fn prepare(&self, request: &ToolRequest) -> Prepared {
        let started = Instant::now();
        let (prepared, label) = self.prepare_inner(request, started).await;
        if let Prepared::Done(answer) = &prepared {
            self.log(&label, answer, started);
        }
        prepared
    }

    /// Whether a pending simulation goes to a model (seconds, or minutes by hand) rather than the
    /// instant schema simulator.
    pub fn slow(&self, pending: &Pending) -> bool {
        self.mirror.is_some()
            || (self.llm.is_some() && self.mode.llm_for(self.template(&pending.call)))
    }

    /// Makes (or, for the world, waits for) the pending reply; also says where it came from.
    pub async fn finish(&self, pending: Pending) -> (Answer, ReplySource) {
        let reply = match &self.world {
            Some(world) => {
                world
                    .get_or_make(&pending.call, &pending.args, || self.simulate(&pending))
                    .await
            }
            None => self.simulate(&pending).await,
        };
        let source = reply.source.unwrap_or_default();
        let answer = Answer::Reply(reply);
        self.log(&pending.label, &answer, pending.started);
        (answer, source)
    }

    async fn prepare_inner(&self, request: &ToolRequest, started: Instant) -> (Prepared, String) {
        let names = Names::of(request);
        let label = names.label();
        let done = |reply| Prepared::Done(Answer::Reply(reply));
        if names.api == "chat_with_user" {
            return (
                done(error_reply("", "Chat with user.", ReplySource::Simulated)),
                label,
            );
        }
        let args = match input_object(&request.tool_input) {
            Ok(a) => a,
            Err(msg) => {
                return (
                    done(error_reply(PARSE_ERROR, msg, ReplySource::Caller)),
                    label,
                );
            }
        };
        match self.resolve(&names, &args) {
            Ok((tool, api)) => self.prepare_api(tool, api, args, started).await,
            Err(reply) => (done(reply), label),
        }
    }

    /// A catalogued API's answer: an injected fault, the recorded cache, a missing-parameter error, the
    /// world's reply, or a simulation to make. Every name comes from the catalogue, never the request.
    async fn prepare_api(
        &self,
        tool: &Tool,
        api: &ToolApi,
        args: Map<String, Value>,
        started: Instant,
    ) -> (Prepared, String) {
        let pure = pure_api_name(&api.name);
        let label = format!("{}/{}/{pure}", tool.category, tool.standard_name);
        let call = Call {
            category: tool.category.clone(),
            tool: tool.standard_name.clone(),
            api: pure.clone(),
            arguments: canonical_json(&Value::Object(args.clone())),
        };
        if let Some(answer) = self.fault(&label, &call.arguments).await {
            return (Prepared::Done(answer), label);
        }
        let cache_file = self
            .cache
            .as_ref()
            .map(|c| c.file(&tool.category, &tool.standard_name, &pure));
        if let (Some(cache), Some(path)) = (&self.cache, &cache_file)
            && let Some(hit) = cache.get(path, &call.arguments)
            && let Ok(mut reply) = serde_json::from_value::<ToolReply>(hit)
        {
            reply.source = Some(ReplySource::Cache);
            if let Some(world) = &self.world {
                world.observe(&call, &args, &reply);
            }
            return (Prepared::Done(Answer::Reply(reply)), label);
        }
        let doc = tool.api_doc(api);
        let problems = check_params(&doc, &args);
        if !problems.missing.is_empty() && !self.stb_compat {
            let only_missing = sum2act_core::tools::args::ParamProblems {
                unknown: Vec::new(),
                ..problems
            };
            let msg = format!("{PARAMETER_ERROR}{}", only_missing.message());
            let reply = error_reply(msg, "", ReplySource::Caller);
            return (Prepared::Done(Answer::Reply(reply)), label);
        }
        if let Some(reply) = self.world.as_ref().and_then(|w| w.get(&call)) {
            return (Prepared::Done(Answer::Reply(reply)), label);
        }
        let pending = Pending {
            label: label.clone(),
            call,
            tool_description: tool.description().to_string(),
            doc,
            args,
            cache_file,
            started,
        };
        (Prepared::Simulate(Box::new(pending)), label)
    }

    fn template(&self, call: &Call) -> Option<&Value> {
        self.templates
            .get(&api_key(&call.category, &call.tool, &call.api))
            .and_then(Option::as_ref)
    }

    /// A new reply: MirrorAPI, the LLM (given the world's facts) or the schema simulator. Each sees the
    /// arguments under the names its documentation uses (the world and the cache keep them as sent).
    async fn simulate(&self, p: &Pending) -> ToolReply {
        let template = self.template(&p.call);
        let args = with_declared_names(&p.doc, &p.args);
        if let Some(mirror) = &self.mirror {
            match mirror.simulate(&p.tool_description, &p.doc, &args).await {
                Ok(reply) => return reply,
                Err(e) => {
                    tracing::warn!("MirrorAPI simulation failed ({e}); using the schema simulator")
                }
            }
        } else if let (true, Some(llm)) = (self.mode.llm_for(template), &self.llm) {
            let recorded = match (&self.cache, &p.cache_file) {
                (Some(c), Some(path)) => c.examples(path, usize::MAX),
                _ => Vec::new(),
            };
            let facts = self
                .world
                .as_ref()
                .map(|w| w.facts(&p.call, &p.args))
                .unwrap_or_default();
            let given = Given {
                template,
                template_for_other_call: recorded_for_other_kind(&p.doc, &args),
                recorded: &recorded,
                args: &args,
                facts: &facts,
            };
            match llm.simulate(&p.tool_description, &p.doc, &given).await {
                Ok(reply) => return reply,
                Err(e) => tracing::warn!("LLM simulation failed ({e}); using the schema simulator"),
            }
        }
        ToolReply::new(
            String::new(),
            simulate(&p.doc, template, &args),
            Some(ReplySource::Simulated),
        )
    }

    /// One log line and one count per answer.
    fn log(&self, label: &str, answer: &Answer, started: Instant) {
        let source = match answer {
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
            started.elapsed().as_secs_f64() * 1e3
        );
    }
}
