//! The model's two judgements in a graph search: how relevant each candidate API is to a subtask
//! (scores cached per subtask, asked only for candidates not scored yet) and which of several
//! solutions is best (ControlLLM's solution expert). An unusable reply falls back to word overlap
//! and the search order, with a note, so the search still runs.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::decompose::Subtask;
use super::search::{Scorer, Solution};
use crate::agent::parse::first_json_object;
use crate::agent::plan::select::words;
use crate::agent::{AgentError, SolveContext};
use crate::llm::Purpose;
use crate::llm::{CompletionRequest, Message};
use crate::prompts::PromptName;
use crate::text::clip;
use crate::tools::graph::ToolGraph;

/// Scores relevance with the model (0–5, shown as 0–1).
pub(crate) struct LlmScorer<'a> {
    pub ctx: &'a SolveContext,
    pub graph: &'a ToolGraph,
    pub subtask: &'a Subtask,
    cache: Mutex<HashMap<usize, f32>>,
    notes: Mutex<Vec<String>>,
}

impl<'a> LlmScorer<'a> {
    pub(crate) fn new(ctx: &'a SolveContext, graph: &'a ToolGraph, subtask: &'a Subtask) -> Self {
        LlmScorer {
            ctx,
            graph,
            subtask,
            cache: Mutex::new(HashMap::new()),
            notes: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn notes(&self) -> Vec<String> {
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }

    fn description(&self, api: usize) -> String {
        let name = &self.graph.apis[api].function;
        let doc = self
            .ctx
            .tools
            .functions()
            .iter()
            .find(|f| &f.name == name)
            .map(|f| f.doc.description().to_string())
            .unwrap_or_default();
        let params: Vec<&str> = self.graph.apis[api]
            .inputs
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        format!(
            "- {name}({}): {}",
            params.join(", "),
            clip(&doc.replace('\n', " "), 150)
        )
    }

    async fn ask(&self, apis: &[usize]) -> Option<Vec<(usize, f32)>> {
        let listing: Vec<String> = apis.iter().map(|a| self.description(*a)).collect();
        let prompt = self
            .ctx
            .prompts
            .render(
                PromptName::GraphScore,
                &[
                    ("subtask", &self.subtask.task),
                    ("tools", &listing.join("\n")),
                ],
            )
            .ok()?;
        let names: Vec<&str> = apis
            .iter()
            .map(|a| self.graph.apis[*a].function.as_str())
            .collect();
        let schema = json!({
            "type": "object",
            "properties": {"scores": {"type": "array", "minItems": 1, "maxItems": apis.len(), "items": {
                "type": "object",
                "properties": {"tool": {"enum": names}, "score": {"enum": [0, 1, 2, 3, 4, 5]}},
                "required": ["tool", "score"],
            }}},
            "required": ["scores"],
        });
        let request = CompletionRequest::new(Purpose::Score, vec![Message::user(prompt)])
            .with_json_schema("scores", schema)
            .with_max_tokens(ctx_tokens(self.ctx, apis.len()));
        let reply = self.ctx.complete(&request).await.ok()?;
        let v = first_json_object(&reply.content)?;
        let items = v.get("scores")?.as_array()?;
        let found: Vec<(usize, f32)> = items
            .iter()
            .filter_map(|i| {
                let name = i.get("tool")?.as_str()?;
                let api = apis
                    .iter()
                    .find(|a| self.graph.apis[**a].function == name)?;
                let score = i.get("score").and_then(Value::as_f64)?;
                Some((*api, (score as f32 / 5.0).clamp(0.0, 1.0)))
            })
            .collect();
        (!found.is_empty()).then_some(found)
    }

    /// Word overlap between the subtask (its text, input names and outputs) and the API's name,
    /// parameters and description, in 0–1.
    fn overlap(&self, api: usize) -> f32 {
        let inputs: Vec<&str> = self
            .subtask
            .inputs
            .iter()
            .map(|i| i.name.as_str())
            .collect();
        let want = words(&format!(
            "{} {} {}",
            self.subtask.task,
            inputs.join(" "),
            self.subtask.outputs.join(" ")
        ));
        let have = words(&self.description(api));
        let shared = want.intersection(&have).count() as f32;
        (shared / want.len().max(1) as f32).min(1.0)
    }

    fn note(&self, text: String) {
        if let Ok(mut n) = self.notes.lock() {
            n.push(text);
        }
    }
}

fn ctx_tokens(ctx: &SolveContext, n: usize) -> u32 {
    ctx.options.max_tokens.max(24 * n as u32 + 32)
}

/// Candidates the model rates per expansion at most: with a whole catalogue offered, the ones
/// sharing the most words with the subtask.
const SHORTLIST: usize = 10;

#[async_trait]
impl Scorer for LlmScorer<'_> {
    fn shortlist(&self, mut candidates: Vec<usize>) -> Vec<usize> {
        if candidates.len() > SHORTLIST {
            let mut scored: Vec<(f32, usize)> =
                candidates.iter().map(|c| (self.overlap(*c), *c)).collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            candidates = scored.into_iter().take(SHORTLIST).map(|(_, c)| c).collect();
        }
        candidates
    }

    async fn scores(&self, candidates: &[usize]) -> Vec<f32> {
        let missing: Vec<usize> = {
            let cache = self.cache.lock().map(|c| c.clone()).unwrap_or_default();
            candidates
                .iter()
                .copied()
                .filter(|c| !cache.contains_key(c))
                .collect()
        };
        let over_budget = self.ctx.llm_calls_spent();
        if !missing.is_empty() {
            let asked = if over_budget {
                None
            } else {
                self.ask(&missing).await
            };
            let scored = match asked {
                Some(s) => s,
                None => {
                    let why = if over_budget {
                        "LLM-call budget spent"
                    } else {
                        "relevance reply unusable"
                    };
                    self.note(format!(
                        "{why} for {} tools; word overlap used",
                        missing.len()
                    ));
                    missing.iter().map(|a| (*a, self.overlap(*a))).collect()
                }
            };
            if let Ok(mut cache) = self.cache.lock() {
                for a in &missing {
                    cache.insert(*a, 0.0);
                }
                cache.extend(scored);
            }
        }
        let cache = self.cache.lock().map(|c| c.clone()).unwrap_or_default();
        candidates
            .iter()
            .map(|c| cache.get(c).copied().unwrap_or(0.0))
            .collect()
    }
}

/// A solution as text for the solution expert.
pub(crate) fn describe(graph: &ToolGraph, s: &Solution) -> String {
    let steps: Vec<String> = s
        .path
        .iter()
        .enumerate()
        .map(|(k, a)| {
            let api = &graph.apis[*a];
            let fed: Vec<String> = s.path[..k]
                .iter()
                .flat_map(|from| graph.edges_between(*from, *a))
                .map(|e| format!("{} from {}", e.param, graph.apis[e.from].function))
                .collect();
            if fed.is_empty() {
                api.function.clone()
            } else {
                format!("{} ({})", api.function, fed.join(", "))
            }
        })
        .collect();
    steps.join(" -> ")
}

/// Orders solutions best first: the model ranks when there are several.
pub(crate) async fn rank(
    ctx: &SolveContext,
    graph: &ToolGraph,
    subtask: &Subtask,
    solutions: &[Solution],
    notes: &mut Vec<String>,
) -> Result<Vec<usize>, AgentError> {
    let n = solutions.len();
    if n <= 1 {
        return Ok((0..n).collect());
    }
    let listing: Vec<String> = solutions
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}. {}", i + 1, describe(graph, s)))
        .collect();
    let prompt = ctx.prompts.render(
        PromptName::GraphRank,
        &[
            ("subtask", &subtask.task),
            ("solutions", &listing.join("\n")),
        ],
    )?;
    let numbers: Vec<usize> = (1..=n).collect();
    let schema = json!({
        "type": "object",
        "properties": {"order": {"type": "array", "minItems": 1, "maxItems": n, "items": {"enum": numbers}}},
        "required": ["order"],
    });
    let request = CompletionRequest::new(Purpose::Rank, vec![Message::user(prompt)])
        .with_json_schema("ranking", schema)
        .with_max_tokens(ctx.options.max_tokens);
    let mut order: Vec<usize> = Vec::new();
    match ctx.complete(&request).await {
        Ok(reply) => {
            let picked = first_json_object(&reply.content)
                .and_then(|v| v.get("order").and_then(Value::as_array).cloned())
                .unwrap_or_default();
            for p in picked.iter().filter_map(Value::as_u64) {
                let i = p as usize;
                if (1..=n).contains(&i) && !order.contains(&(i - 1)) {
                    order.push(i - 1);
                }
            }
            if order.is_empty() {
                notes.push("ranking reply unusable; search order kept".into());
            }
        }
        Err(e) => notes.push(format!("ranking failed ({e}); search order kept")),
    }
    order.extend((0..n).filter(|i| !order.contains(i)).collect::<Vec<_>>());
    Ok(order)
}
