//! Step 3 of the Sum2Act loop, the gate: a `Finish` with an answer runs only when every part is
//! answered or failed (an early one spends the episode's one nudge, `guard::nudge`), and only with what
//! the episode observed. The final answer is made here, before `Finish` runs, so the answer file, the
//! episode and the evaluator see the same text: written again from the whole facts when the router saw
//! them shortened, keeping what an earlier draft (sent back by the nudge) stated, checked against what
//! the episode observed (`grounded.rs`), and with the values facts name by reference put back whole.

use serde_json::Value;

use crate::llm::Purpose;
use crate::llm::{CompletionRequest, Message, ToolChoice};
use crate::prompts::PromptName;
use crate::toolbench::claims::{extract_claims, normalize};
use crate::toolbench::{FINISH, Task};

use crate::agent::episode::Step;
use crate::agent::parse;
use crate::agent::reading::expand;
use crate::agent::{AgentError, SolveContext};

use super::grounded::{evidence, ground};
use super::guard::{may_nudge, nudge};
use super::parts::gives_answer;
use super::run::{Proposal, Run, Stage};
use super::state::State;

/// Gates a `Finish` that gives an answer (other actions go on unchanged): with parts open and the
/// nudge left, it is sent back naming them (its answer kept as the draft); else the open parts are
/// settled and the answer is made final (`final_arguments`).
pub(super) async fn gate(run: &mut Run<'_>, n: u32, mut p: Proposal) -> Result<Stage, AgentError> {
    if p.action.name != FINISH || !gives_answer(&p.action.arguments) {
        return Ok(Stage::Go(p));
    }
    if !p.forced && may_nudge(run, n) {
        run.draft = answer_text(&p.action.arguments);
        return Ok(nudge(
            run,
            n,
            p,
            "Finish not run",
            "early Finish with open parts; nudged",
        ));
    }
    run.state.credit_unattributed();
    run.state.checklist.settle(if p.forced {
        "no further call was found for it"
    } else {
        "no call answered it before Finish"
    });
    let draft = Draft {
        task: run.task,
        state: &run.state,
        steps: &run.steps,
        earlier: run.draft.as_deref(),
    };
    p.action.arguments =
        final_arguments(run.ctx, &draft, &p.action.arguments, &mut p.notes).await?;
    Ok(Stage::Go(p))
}

/// The answer text of `Finish` arguments that give one.
fn answer_text(arguments: &str) -> Option<String> {
    serde_json::from_str::<Value>(arguments)
        .ok()
        .and_then(|v| v["final_answer"].as_str().map(str::to_string))
        .filter(|a| !a.trim().is_empty())
}

/// What the final answer is made from.
pub struct Draft<'a> {
    pub task: &'a Task,
    pub state: &'a State,
    pub steps: &'a [Step],
    /// An earlier answer the nudge sent back (its values must not be lost).
    pub earlier: Option<&'a str>,
}

/// The `Finish` arguments with the final answer made as the module says; other arguments unchanged.
pub async fn final_arguments(
    ctx: &SolveContext,
    d: &Draft<'_>,
    arguments: &str,
    notes: &mut Vec<String>,
) -> Result<String, AgentError> {
    let Ok(Value::Object(mut args)) = serde_json::from_str::<Value>(arguments) else {
        return Ok(arguments.to_string());
    };
    if !gives_answer(arguments) {
        return Ok(arguments.to_string());
    }
    let original = args
        .get("final_answer")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut answer = original.clone();
    if d.state.view_is_lossy()
        && let Some(whole) = write_from_whole_facts(ctx, d, &answer).await?
    {
        notes.push(
            "final answer: written again from the whole facts (the router saw them shortened)"
                .into(),
        );
        answer = whole;
    }
    if let Some(earlier) = d.earlier {
        let (merged, kept) = keep_earlier_values(earlier, &answer);
        if kept > 0 {
            notes.push(format!(
                "final answer: {kept} line(s) of the earlier answer kept (their values were missing)"
            ));
            answer = merged;
        }
    }
    let cleaned = grounded(d, &answer);
    notes.extend(cleaned.notes());
    let answer = expand(&cleaned.answer, &d.state.values);
    if answer == original {
        return Ok(arguments.to_string());
    }
    args.insert("final_answer".into(), Value::String(answer));
    Ok(Value::Object(args).to_string())
}

/// The answer checked against the episode's observations (as its steps recorded them: the whole reply
/// up to the read cap), the request and the checklist.
fn grounded(d: &Draft<'_>, answer: &str) -> super::grounded::Cleaned {
    let calls: Vec<(String, String, String)> = d
        .steps
        .iter()
        .filter(|s| !s.observation.failed && s.observation.finish.is_none())
        .map(|s| {
            (
                format!("step {} {}", s.index, s.action),
                s.arguments.clone(),
                s.observation.text.clone(),
            )
        })
        .collect();
    // The facts found for parts (all facts when there is no checklist): a result no part asked for
    // does not belong in the answer.
    let facts: Vec<String> = if d.state.checklist.is_empty() {
        d.state.facts.iter().map(|f| f.text.clone()).collect()
    } else {
        d.state.checklist.answer_facts()
    };
    ground(
        answer,
        &d.task.query,
        &evidence(&d.task.query, &calls),
        &d.state.checklist,
        &facts,
    )
}

/// The answer written by the model from every fact, whole; `None` when the call gives no answer.
async fn write_from_whole_facts(
    ctx: &SolveContext,
    d: &Draft<'_>,
    router_answer: &str,
) -> Result<Option<String>, AgentError> {
    let drafts: Vec<&str> = d
        .earlier
        .into_iter()
        .chain([router_answer])
        .filter(|a| !a.trim().is_empty())
        .collect();
    let prompt = ctx.prompts.render(
        PromptName::Sum2actAnswer,
        &[
            ("query", &d.task.query),
            ("checklist", &d.state.checklist.render()),
            ("facts", &d.state.render_all_facts()),
            ("drafts", &drafts.join("\n---\n")),
        ],
    )?;
    let request = CompletionRequest::new(Purpose::Answer, vec![Message::user(prompt)])
        .with_tools(
            vec![crate::toolbench::finish_schema()],
            ToolChoice::Function(FINISH.into()),
        )
        .tools_described()
        .with_max_tokens(ctx.options.answer_max_tokens);
    let Ok(reply) = ctx.complete(&request).await else {
        return Ok(None);
    };
    Ok(parse::action(&reply)
        .ok()
        .filter(|a| a.name == FINISH && gives_answer(&a.arguments))
        .and_then(|a| serde_json::from_str::<Value>(&a.arguments).ok())
        .and_then(|v| v["final_answer"].as_str().map(str::to_string))
        .filter(|a| !a.trim().is_empty()))
}

/// `answer` with the lines of `earlier` most of whose values (numbers, ids, names, list items) it does
/// not state put first: a second Finish after the nudge must not lose what the first one said (it once
/// lost a flight list). A line whose values the answer restates in other words is not repeated, and
/// lines are kept whole (never a sentence's fragment). Returns the text and how many lines were kept.
pub fn keep_earlier_values(earlier: &str, answer: &str) -> (String, usize) {
    let written = normalize(answer);
    let kept: Vec<&str> = earlier
        .lines()
        .filter(|line| !gives_up(line))
        .filter(|line| {
            let claims = extract_claims(line);
            let missing = claims
                .iter()
                .filter(|c| !written.contains(&normalize(&c.text)))
                .count();
            missing * 2 > claims.len()
        })
        .collect();
    if kept.is_empty() {
        return (answer.to_string(), 0);
    }
    let n = kept.len();
    (format!("{}\n{}", kept.join("\n"), answer.trim()), n)
}

/// A line of a draft that says a part was not obtained: the call made after the nudge may have
/// obtained it, and the last answer says so or not (a kept "Not obtained" line once contradicted it).
fn gives_up(line: &str) -> bool {
    let lower = line.to_lowercase();
    GAVE_UP.iter().any(|p| lower.contains(p))
}

const GAVE_UP: &[&str] = &[
    "not obtained",
    "could not",
    "couldn't",
    "unable to",
    "wasn't able",
    "was not able",
    "not available",
    "no data",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_earlier_answer_keeps_the_values_the_last_one_lost() {
        let earlier = "Flights: LH 1234 at 09:10, AF 5678 at 11:45.\nI could not find hotels.";
        let last = "I found no hotels near the airport.";
        let (merged, kept) = keep_earlier_values(earlier, last);
        assert_eq!(kept, 1);
        assert_eq!(
            merged,
            "Flights: LH 1234 at 09:10, AF 5678 at 11:45.\nI found no hotels near the airport."
        );
        // A draft's give-up line is not kept: the last answer knows better.
        let draft = "Languages: not obtained (list 25 was empty).\nFlights: LH 1234 at 09:10.";
        let (merged, kept) = keep_earlier_values(draft, "Languages: Arabic, Bengali.");
        assert_eq!(kept, 1, "{merged}");
        assert!(!merged.contains("not obtained"), "{merged}");
        // Nothing is added when the last answer states the same values.
        let same = "LH 1234 leaves at 09:10 and AF 5678 at 11:45.";
        assert_eq!(keep_earlier_values(earlier, same), (same.to_string(), 0));
        // A rewrite that restates most of a line's values in other words keeps nothing of it, and never
        // a fragment such as "(id 66f1c2a9)" at the top of the answer.
        let draft = "1. From noreply@github.com (2024-06-14 09:12:47): code 48213907, expiring in 15 minutes. (id 66f1c2a9)\n2. From welcome@notion.so (2024-06-14 09:05:18). (id 66f1c0d3)";
        let rewrite = "1. From noreply@github.com - 2024-06-14 09:12:47: a code, 48213907, which expires in 15 minutes.\n2. From welcome@notion.so - 2024-06-14 09:05:18: a welcome email.";
        assert_eq!(
            keep_earlier_values(draft, rewrite),
            (rewrite.to_string(), 0)
        );
    }
}
