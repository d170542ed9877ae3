//! Pieces every method shares: the tool listing shown in prompts, one model turn with a repair retry,
//! the forced `Finish` and the repeat guard. The end of an episode is in `epilogue`.

use serde_json::{Value, json};

use crate::llm::{Completion, CompletionRequest, LlmError, Message, Purpose, ToolChoice};
use crate::prompts::PromptName;
use crate::toolbench::{FINISH, Function, function_schemas};
use crate::tools::observation::ObservationCode;
use crate::tools::{Observation, ReplySource};

use super::SolveContext;
use super::episode::Step;
use super::parse::{self, Action};
use crate::text::{clip, clip_at_words, collapse_loops};

/// Longest example value shown in the tool listing; a longer one is left out, never cut: a model
/// copies what it is shown into its calls, and a cut value answers nothing.
pub(crate) const MAX_EXAMPLE_CHARS: usize = 80;

/// Longest description in the tool listing: whole sentences up to it, else whole words and `…`.
pub(crate) const MAX_LISTED_DESCRIPTION: usize = 160;

/// The system prompt of ReAct and DFSDT (one conversation per chain): the rules, the budget's policy
/// and the tool listing.
pub(crate) fn react_system(ctx: &SolveContext) -> Result<String, crate::prompts::PromptError> {
    let tools = tool_listing(ctx.tools.functions());
    let policy = ctx.assume_missing(PromptName::AssumeMissing)?;
    ctx.prompts.render(
        PromptName::ReactSystem,
        &[("tools", &tools), ("assume_missing", &policy)],
    )
}

/// One line per function: name, description and parameters, compact enough for a small model's context.
/// Example values are whole or absent; descriptions end at a sentence or a word.
pub(crate) fn tool_listing(functions: &[Function]) -> String {
    let mut out = String::new();
    for f in functions {
        out.push_str(&format!("- {}: {}", f.name, listed_description(f)));
        let props = &f.schema["parameters"]["properties"];
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| {
                let spec = &props[p.as_str()];
                let ty = spec["type"].as_str().unwrap_or("string");
                let req = if f.required.contains(p) {
                    "required"
                } else {
                    "optional"
                };
                match listed_example(spec) {
                    Some(ex) => format!("{p} ({ty}, {req}, e.g. {ex})"),
                    None => format!("{p} ({ty}, {req})"),
                }
            })
            .collect();
        if params.is_empty() {
            out.push_str(". No arguments.\n");
        } else {
            out.push_str(&format!(". Arguments: {}\n", params.join("; ")));
        }
    }
    out.push_str("- Finish: end the task. Arguments: return_type (\"give_answer\" or \"give_up_and_restart\"); final_answer (string, the full answer for the user)\n");
    out
}

/// A function's description as the listing shows it: whole sentences up to
/// [`MAX_LISTED_DESCRIPTION`] characters (else whole words and `…`), one line; its API's name when it
/// has none.
pub(crate) fn listed_description(f: &Function) -> String {
    let desc = f.doc.description().trim();
    let desc = if desc.is_empty() {
        f.doc.api_name.as_str()
    } else {
        desc
    };
    clip_at_words(&desc.replace('\n', " "), MAX_LISTED_DESCRIPTION)
}

/// An argument's example value as the listing shows it (JSON), when it is short enough to show whole.
pub(crate) fn listed_example(spec: &Value) -> Option<String> {
    spec.get("example_value")
        .map(Value::to_string)
        .filter(|ex| ex.chars().count() <= MAX_EXAMPLE_CHARS)
}

/// The function schemas offered to the model (Finish last).
pub(crate) fn schemas(ctx: &SolveContext) -> Vec<Value> {
    function_schemas(ctx.tools.functions())
}

/// Why a turn produced no action.
pub(crate) enum TurnError {
    /// The model's replies could not be parsed, even after a repair request.
    Malformed(String),
    /// The model could not be reached at all.
    Llm(LlmError),
}

/// Asks the model for one action; a reply that cannot be parsed is shown back to the model once with
/// the parse error. Returns the action and the prompt tokens of the first call.
pub(crate) async fn turn(
    ctx: &SolveContext,
    purpose: Purpose,
    messages: Vec<Message>,
    temperature: f32,
) -> Result<(Action, u64), TurnError> {
    let t = turn_with_tools(ctx, purpose, messages, temperature, schemas(ctx), true).await?;
    Ok((t.action, t.prompt_tokens))
}

/// What one turn of a model offered functions came to.
pub(crate) struct Turn {
    /// The reply's (first) action.
    pub action: Action,
    /// The reply's further function calls, in order (a model may call several at once).
    pub also: Vec<Action>,
    /// Prompt tokens of the turn's first call.
    pub prompt_tokens: u64,
}

/// [`turn`] offering `tools` (function schemas) instead of the toolset's ToolBench schemas, keeping
/// every function call of the reply; `described`: the messages already list the tools.
pub(crate) async fn turn_with_tools(
    ctx: &SolveContext,
    purpose: Purpose,
    messages: Vec<Message>,
    temperature: f32,
    tools: Vec<Value>,
    described: bool,
) -> Result<Turn, TurnError> {
    let mut request =
        CompletionRequest::new(purpose, messages.clone()).with_tools(tools, ToolChoice::Required);
    if described {
        request = request.tools_described();
    }
    let mut request = request
        .with_max_tokens(ctx.options.max_tokens)
        .with_temperature(temperature);
    if temperature > 0.0 {
        request.seed = Some(ctx.llm_calls());
    }
    let first = complete_action(ctx, &request).await?;
    let prompt_tokens = first.usage.prompt_tokens;
    let (first, max_tokens) = with_room_for_the_answer(ctx, &request, first).await?;
    let error = match read_action(&first, max_tokens) {
        Ok(action) => {
            return Ok(Turn {
                action,
                also: parse::further_actions(&first),
                prompt_tokens,
            });
        }
        Err(e) => e,
    };
    ctx.observer
        .note(&format!("malformed reply ({error}); asking again"));
    let names: Vec<&str> = ctx
        .tools
        .functions()
        .iter()
        .map(|f| f.name.as_str())
        .chain([FINISH])
        .collect();
    let repair = ctx
        .prompts
        .render(
            PromptName::Repair,
            &[("error", &error), ("names", &names.join(", "))],
        )
        .map_err(|e| TurnError::Malformed(e.to_string()))?;
    let mut retry = request.clone();
    retry
        .messages
        .push(Message::assistant(clip(&reply_text(&first), 600)));
    retry.messages.push(Message::user(repair));
    let second = complete_action(ctx, &retry).await?;
    read_action(&second, retry.max_tokens)
        .map(|action| Turn {
            action,
            also: parse::further_actions(&second),
            prompt_tokens,
        })
        .map_err(|e| TurnError::Malformed(format!("{error}; after a retry: {e}")))
}

/// One action call. A reply cut at the token cap before its JSON closed comes back as a completion
/// with `finish_reason: length`, so `read_action` can salvage a final answer from it (or report it
/// as malformed) instead of ending the episode as an error.
async fn complete_action(
    ctx: &SolveContext,
    request: &CompletionRequest,
) -> Result<Completion, TurnError> {
    match ctx.complete(request).await {
        Ok(c) => Ok(c),
        Err(LlmError::Truncated { content, .. }) => Ok(Completion {
            content,
            finish_reason: Some("length".into()),
            ..Completion::default()
        }),
        Err(e) => Err(TurnError::Llm(e)),
    }
}

/// The action of a completion. A `Finish` whose reply hit the token cap keeps its answer cut at the
/// cap (its JSON closed) and marked in the thought (`SolveContext::complete` counts the cut).
fn read_action(c: &Completion, max_tokens: u32) -> Result<Action, String> {
    let cut = c.finish_reason.as_deref() == Some("length");
    let parsed = match parse::action(c) {
        Err(e) if cut => parse::salvage_finish(&c.content).ok_or(e),
        other => other,
    };
    let mut action = parsed?;
    if cut && action.name == FINISH {
        action = kept_as_cut(action, &format!("{max_tokens} tokens or the size cap"));
    }
    Ok(action)
}

/// A `Finish` cut at the cap, kept: native call arguments that stop mid-string are closed so the
/// answer up to the cut survives, and the thought says it was cut (`cap` names the limit).
pub(crate) fn kept_as_cut(mut action: Action, cap: &str) -> Action {
    if serde_json::from_str::<Value>(&action.arguments).is_err()
        && let Some(closed) = parse::close_json(&action.arguments)
        && let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(&closed)
    {
        action.arguments = v.to_string();
    }
    action.thought = format!(
        "[reply cut at its length cap ({cap}); the answer is kept as cut] {}",
        action.thought
    )
    .trim_end()
    .to_string();
    action
}

/// Forces a `Finish` call (answer or give up) with the same messages plus an instruction to finish:
/// used when the router has nothing new to do but does not stop by itself (small models rarely do).
pub(crate) async fn finish_turn(
    ctx: &SolveContext,
    purpose: Purpose,
    mut messages: Vec<Message>,
) -> Result<Action, TurnError> {
    let note = ctx
        .prompts
        .render(PromptName::FinishNow, &[])
        .map_err(|e| TurnError::Malformed(e.to_string()))?;
    messages.push(Message::user(note));
    let request = CompletionRequest::new(purpose, messages)
        .with_tools(schemas(ctx), ToolChoice::Function(FINISH.to_string()))
        .tools_described()
        .with_max_tokens(ctx.options.max_tokens);
    let reply = complete_action(ctx, &request).await?;
    let (reply, max_tokens) = with_room_for_the_answer(ctx, &request, reply).await?;
    read_action(&reply, max_tokens).map_err(TurnError::Malformed)
}

/// A `Finish` cut at the step's token cap is asked for again, once, with the answer's budget
/// (`answer_max_tokens`): a final answer with a list or an image does not fit a step's 384 tokens. Not
/// when the reply reached the byte cap (more tokens cannot help) or loops (they would only loop
/// longer). Returns the reply to read and the token cap it was written under.
async fn with_room_for_the_answer(
    ctx: &SolveContext,
    request: &CompletionRequest,
    reply: Completion,
) -> Result<(Completion, u32), TurnError> {
    let budget = ctx.options.answer_max_tokens;
    let cut = reply.finish_reason.as_deref() == Some("length");
    if !cut || budget <= request.max_tokens {
        return Ok((reply, request.max_tokens));
    }
    let written = reply_text(&reply);
    let finish = match parse::action(&reply) {
        Ok(a) => Some(a),
        Err(_) => parse::salvage_finish(&reply.content),
    }
    .filter(|a| a.name == FINISH);
    let looping = collapse_loops(&written).1;
    if finish.is_none() || looping || written.len() >= ctx.options.max_reply_bytes {
        return Ok((reply, request.max_tokens));
    }
    ctx.observer.note(&format!(
        "the answer reached {} tokens; asking again with {budget}",
        request.max_tokens
    ));
    let mut again = request.clone();
    again.max_tokens = budget;
    Ok((complete_action(ctx, &again).await?, budget))
}

/// Thought of the `Finish` the harness makes itself when the model ignores a forced `Finish`.
pub(crate) const HARNESS_GIVE_UP: &str =
    "(the harness gave up: the model did not call Finish when it was made to)";

/// A forced `Finish` the model must obey. Some servers ignore `tool_choice`, and a small model can
/// also answer with an unreadable reply: then the harness ends the episode itself with a give-up
/// rather than letting the model repeat itself until the step limit. Returns the `Finish` action and,
/// when the harness stepped in, a note saying what the model proposed instead.
/// `failed_before` tells whether an action repeats a call that already failed (a `Finish` with bad
/// arguments, say): a forced turn that only repeats it is ignored too.
pub(crate) async fn force_finish(
    ctx: &SolveContext,
    purpose: Purpose,
    messages: Vec<Message>,
    failed_before: &(dyn Fn(&Action) -> bool + Send + Sync),
) -> Result<(Action, Option<String>), LlmError> {
    let why = match finish_turn(ctx, purpose, messages).await {
        Ok(a) if a.name == FINISH && !failed_before(&a) => return Ok((a, None)),
        Ok(a) if a.name == FINISH => "repeated a Finish that already failed".to_string(),
        Ok(a) => format!("proposed {} instead", clip(&a.name, 80)),
        Err(TurnError::Malformed(e)) => format!("unreadable reply: {}", clip(&e, 200)),
        Err(TurnError::Llm(e)) => return Err(e),
    };
    ctx.observer.note(&format!(
        "the model ignored the forced Finish ({why}); giving up"
    ));
    let give_up = Action {
        thought: HARNESS_GIVE_UP.to_string(),
        name: FINISH.to_string(),
        arguments: json!({"return_type": "give_up_and_restart", "final_answer": ""}).to_string(),
    };
    Ok((
        give_up,
        Some(format!(
            "the model ignored the forced Finish ({why}); the harness gave up"
        )),
    ))
}

/// Whether a step is the harness's own give-up after an ignored forced `Finish`.
pub(crate) fn harness_gave_up(step: &Step) -> bool {
    step.action == FINISH && step.thought == HARNESS_GIVE_UP
}

/// The repeat guard of ReAct and DFSDT: an exact repeat of a call made earlier on the same chain
/// (`earlier`), or of a `Finish` that failed there, is not run again (a retry of a call that timed
/// out or got a 429 is not a repeat, up to `failure::MAX_RETRIES` times); the model is made to finish
/// instead, and when it does not, the harness gives up for it (`force_finish`). Returns the action to
/// run and, when the guard stepped in, a note for the step.
pub(crate) async fn guard_repeat(
    ctx: &SolveContext,
    purpose: Purpose,
    messages: Vec<Message>,
    action: Action,
    earlier: &[Step],
) -> Result<(Action, Option<String>), LlmError> {
    let key = super::parse::call_key(&action.arguments);
    let repeats = |s: &Step| s.action == action.name && super::parse::call_key(&s.arguments) == key;
    // A `Finish` is a repeat only of one that failed (bad arguments): trying to finish again is fine.
    // A call that timed out or was refused with a 429 may be made again a few times: a retry.
    let transient = earlier
        .iter()
        .filter(|s| repeats(s) && super::failure::is_transient(&s.observation))
        .count() as u32;
    let repeated = earlier.iter().any(|s| {
        repeats(s)
            && (action.name != FINISH || s.observation.failed)
            && !super::failure::is_transient(&s.observation)
    }) || transient > super::failure::MAX_RETRIES;
    if !ctx.options.repeat_guard || !repeated {
        return Ok((action, None));
    }
    ctx.observer.note(&format!(
        "{} repeated; asking the model to finish",
        action.name
    ));
    let failed = |a: &Action| {
        earlier
            .iter()
            .any(|s| s.observation.failed && s.action == a.name && s.arguments == a.arguments)
    };
    let (finish, ignored) = force_finish(ctx, purpose, messages, &failed).await?;
    let mut note = format!("repeated {}; asked the model to finish", action.name);
    if let Some(ignored) = ignored {
        note = format!("{note}; {ignored}");
    }
    Ok((finish, Some(note)))
}

fn reply_text(c: &Completion) -> String {
    match c.tool_calls.first() {
        Some(t) => format!("{} {} {}", c.content, t.name, t.arguments),
        None => c.content.clone(),
    }
}

/// An observation the harness makes up without calling anything (a malformed reply, a repeated call).
pub(crate) fn harness_observation(function: &str, arguments: &str, error: &str) -> Observation {
    Observation {
        function: function.to_string(),
        arguments: arguments.to_string(),
        text: json!({"error": error, "response": ""}).to_string(),
        code: ObservationCode::Ok,
        error: error.to_string(),
        response: Value::String(String::new()),
        source: ReplySource::Caller,
        failed: true,
        finish: None,
        elapsed_ms: 0,
        resources: Vec::new(),
        retries: Vec::new(),
    }
}
