//! HuggingGPT's model selection, for API tasks: a planned task that names a capability ("find
//! hotels") rather than an offered function is mapped to one. The offered functions (under
//! `--tools retrieved:K`, the retriever's top K) are filtered by word overlap with the capability and
//! its arguments, then the model ranks the few left by their documentation.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Value, json};

use super::dag::{Plan, find_function};
use crate::agent::parse::first_json_object;
use crate::agent::{AgentError, SolveContext};
use crate::llm::Purpose;
use crate::llm::{CompletionRequest, Message};
use crate::prompts::PromptName;
use crate::text::clip;
use crate::toolbench::{FINISH, Function};

/// Candidates the model chooses among.
const SHORTLIST: usize = 5;

/// How one task's tool was chosen.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Selection {
    pub task: u32,
    pub capability: String,
    pub candidates: Vec<String>,
    pub chosen: Option<String>,
    /// `only` (one candidate), `model` (ranked by the LLM) or `overlap` (the model's choice was unusable).
    pub by: &'static str,
}

/// Maps every task whose tool is not an offered function. Tasks naming `Finish` are dropped.
pub(crate) async fn select_tools(
    ctx: &SolveContext,
    plan: &mut Plan,
) -> Result<Vec<Selection>, AgentError> {
    plan.tasks.retain(|t| t.tool != FINISH);
    let functions = ctx.tools.functions();
    let mut selections = Vec::new();
    for t in plan.tasks.iter_mut() {
        if find_function(functions, &t.tool).is_some() {
            continue;
        }
        let capability = t.tool.clone();
        let args = Value::Object(t.args.clone()).to_string();
        let shortlist = shortlist(functions, &format!("{capability} {args}"));
        let names: Vec<String> = shortlist.iter().map(|f| f.name.clone()).collect();
        let (chosen, by) = match shortlist.as_slice() {
            [] => (None, "none"),
            [only] => (Some(only.name.clone()), "only"),
            many => match choose(ctx, &capability, &args, many).await {
                Ok(Some(name)) => (Some(name), "model"),
                Ok(None) | Err(AgentError::Llm(_)) => (Some(many[0].name.clone()), "overlap"),
                Err(e) => return Err(e),
            },
        };
        if let Some(name) = &chosen {
            ctx.observer
                .note(&format!("task {}: `{capability}` -> {name} ({by})", t.id));
            t.tool = name.clone();
        }
        selections.push(Selection {
            task: t.id,
            capability,
            candidates: names,
            chosen,
            by,
        });
    }
    Ok(selections)
}

/// Offered functions sharing at least one word with the capability, most shared first.
pub(crate) fn shortlist<'a>(functions: &'a [Function], capability: &str) -> Vec<&'a Function> {
    let want = words(capability);
    let mut scored: Vec<(usize, usize, &Function)> = functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let have = words(&format!(
                "{} {} {}",
                f.name,
                f.doc.api_name,
                f.doc.description()
            ));
            (want.intersection(&have).count(), i, f)
        })
        .filter(|(n, _, _)| *n > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(SHORTLIST)
        .map(|(_, _, f)| f)
        .collect()
}

/// Lower-case words of three letters or more, a plural `s` dropped.
pub(crate) fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 3)
        .map(|w| {
            let w = w.to_lowercase();
            match w.strip_suffix('s') {
                Some(stem) if stem.len() >= 3 => stem.to_string(),
                _ => w,
            }
        })
        .filter(|w| {
            ![
                "for",
                "the",
                "and",
                "with",
                "this",
                "that",
                "you",
                "can",
                "use",
                "tool",
                "function",
                "subfunction",
                "description",
            ]
            .contains(&w.as_str())
        })
        .collect()
}

async fn choose(
    ctx: &SolveContext,
    capability: &str,
    args: &str,
    candidates: &[&Function],
) -> Result<Option<String>, AgentError> {
    let listing: Vec<String> = candidates
        .iter()
        .map(|f| format!("- {}: {}", f.name, clip(f.doc.description(), 200)))
        .collect();
    let prompt = ctx.prompts.render(
        PromptName::PlanSelect,
        &[
            ("capability", capability),
            ("args", &clip(args, 300)),
            ("candidates", &listing.join("\n")),
        ],
    )?;
    let names: Vec<&str> = candidates.iter().map(|f| f.name.as_str()).collect();
    let schema =
        json!({"type": "object", "properties": {"tool": {"enum": names}}, "required": ["tool"]});
    let request = CompletionRequest::new(Purpose::Select, vec![Message::user(prompt)])
        .with_json_schema("selection", schema)
        .with_max_tokens(ctx.options.max_tokens);
    let reply = ctx.complete(&request).await?;
    Ok(first_json_object(&reply.content)
        .and_then(|v| v["tool"].as_str().map(str::to_string))
        .filter(|n| names.contains(&n.as_str())))
}
