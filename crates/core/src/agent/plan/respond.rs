//! HuggingGPT's response generation: one model call writes the final answer from the request and
//! what the calls returned (each whole, up to `--observation-read-chars`), through `Finish`. With no successful call there is nothing to answer
//! from, and the episode gives up without asking the model. An answer cut at the token cap is kept
//! as cut, as the step-by-step methods keep theirs.

use serde_json::json;

use super::execute::{TaskRun, TaskStatus};
use crate::agent::common::kept_as_cut;
use crate::agent::parse::{self, Action};
use crate::agent::reading::recorded_text;
use crate::agent::{AgentError, SolveContext};
use crate::llm::Purpose;
use crate::llm::{Completion, CompletionRequest, LlmError, Message, ToolChoice};
use crate::prompts::PromptName;
use crate::text::clip;
use crate::toolbench::FINISH;

/// Characters of one result shown to the re-planning call (it needs what worked, not all of it).
pub(crate) const REPLAN_RESULT_CHARS: usize = 700;

/// The results as the answer and re-planning calls see them, one line per task, each result up to
/// `chars` characters (the answer call reads them whole, up to `--observation-read-chars`).
pub(crate) fn results_text(runs: &[TaskRun], chars: usize) -> String {
    let mut out = String::new();
    for r in runs {
        let what = match (r.status, &r.observation) {
            (TaskStatus::Done, Some(obs)) => recorded_text(obs, chars),
            (TaskStatus::Skipped, _) => format!("not run: {}", r.error),
            (TaskStatus::NotSent, _) => r.error.clone(),
            _ => format!("failed: {}", r.error),
        };
        out.push_str(&format!(
            "<resource-{}> {}({}) -> {what}\n",
            r.id,
            r.tool,
            clip(&r.arguments, 200)
        ));
    }
    if out.is_empty() {
        out.push_str("(no calls were made)\n");
    }
    out
}

/// The `Finish` action ending the episode, the prompt tokens of the call, and a note when the reply
/// had to be patched.
pub(crate) async fn respond(
    ctx: &SolveContext,
    query: &str,
    runs: &[TaskRun],
) -> Result<(Action, u64, Option<String>), AgentError> {
    if !runs.iter().any(|r| r.status == TaskStatus::Done) {
        let give_up = Action {
            thought: "no call returned anything to answer from".into(),
            name: FINISH.into(),
            arguments: json!({"return_type": "give_up_and_restart"}).to_string(),
        };
        return Ok((give_up, 0, None));
    }
    let prompt = ctx.prompts.render(
        PromptName::PlanResponse,
        &[
            ("query", query),
            (
                "results",
                &results_text(runs, ctx.options.budget.observation_chars),
            ),
        ],
    )?;
    let request = CompletionRequest::new(Purpose::Respond, vec![Message::user(prompt)])
        .with_tools(
            vec![finish_with_answer()],
            ToolChoice::Function(FINISH.into()),
        )
        .tools_described()
        .with_max_tokens(ctx.options.answer_max_tokens);
    let (reply, cut) = match ctx.complete(&request).await {
        Ok(c) => {
            let cut = c.finish_reason.as_deref() == Some("length");
            (c, cut)
        }
        // Cut before its JSON closed: what was written up to the cap may still be an answer.
        Err(LlmError::Truncated { content, .. }) => (
            Completion {
                content,
                ..Completion::default()
            },
            true,
        ),
        Err(e) => return Err(e.into()),
    };
    let tokens = reply.usage.prompt_tokens;
    let parsed = match parse::action(&reply) {
        Err(e) if cut => parse::salvage_finish(&reply.content).ok_or(e),
        other => other,
    };
    match parsed {
        Ok(a) if a.name == FINISH && cut => Ok((
            kept_as_cut(a, &format!("{} tokens", request.max_tokens)),
            tokens,
            Some(format!(
                "the answer reached the {} token cap and is kept as cut",
                request.max_tokens
            )),
        )),
        Ok(a) if a.name == FINISH => Ok((a, tokens, None)),
        Ok(a) => Ok((
            give_up(),
            tokens,
            Some(format!(
                "the answer call chose {} instead of Finish",
                a.name
            )),
        )),
        Err(e) => Ok((
            give_up(),
            tokens,
            Some(format!("unreadable answer reply: {e}")),
        )),
    }
}

/// `Finish` with `final_answer` required: the answer call exists to write it, and a small model
/// left free to omit it often does.
fn finish_with_answer() -> serde_json::Value {
    let mut f = crate::toolbench::finish_schema();
    f["parameters"]["required"] = json!(["return_type", "final_answer"]);
    f
}

fn give_up() -> Action {
    Action {
        thought: String::new(),
        name: FINISH.into(),
        arguments: json!({"return_type": "give_up_and_restart"}).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::common::harness_observation;

    /// The answer call reads a result whole (up to the read cap), not a 700-character copy: a field
    /// after 1,500 characters of text is there to answer from.
    #[test]
    fn the_answer_call_reads_results_past_the_toolbench_cut() {
        let plot = "A thief steals secrets through dreams. ".repeat(40);
        let obs = crate::tools::Observation {
            failed: false,
            error: String::new(),
            response: json!({"plot": plot, "rating": "8.8"}),
            ..harness_observation("details_for_imdb", "{}", "")
        };
        let run = TaskRun {
            id: 1,
            tool: "details_for_imdb".into(),
            arguments: "{}".into(),
            status: TaskStatus::Done,
            start_ms: 0,
            end_ms: 1,
            error: String::new(),
            notes: Vec::new(),
            observation: Some(obs),
            order: (0, 0),
        };
        let runs = [run];
        let read = results_text(&runs, crate::agent::reading::DEFAULT_READ_CHARS);
        assert!(read.contains("\"rating\": \"8.8\""), "{read}");
        let replan = results_text(&runs, REPLAN_RESULT_CHARS);
        assert!(!replan.contains("8.8"));
    }
}
