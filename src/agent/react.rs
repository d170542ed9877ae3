//! ReAct / CoT@n (ToolLLM's single chain): the model sees the whole history of its calls and their
//! observations, and acts or finishes. `tries` independent chains; the first that gives an answer wins.
//! The step limit counts tree levels as ToolBench does (Thought, Action, Action Input each one level).

use async_trait::async_trait;
use serde_json::json;

use crate::llm::{Message, ToolCall};
use crate::toolbench::Task;
use crate::toolbench::answer::cot_answer_file;
use crate::tools::Finish;

use super::common::{self, Outcome, TurnError, harness_observation};
use super::episode::{Episode, FinishKind, Step};
use super::parse::Action;
use super::{AgentError, AgentOptions, SolveContext, Solver};

pub struct React {
    tries: u32,
}

impl React {
    pub fn new(options: &AgentOptions) -> Self {
        React {
            tries: options.tries.max(1),
        }
    }
}

/// Tree levels one step adds: a thought (when present), the action and its input.
pub fn levels(step: &Step) -> u32 {
    if step.thought.trim().is_empty() { 2 } else { 3 }
}

#[async_trait]
impl Solver for React {
    fn method(&self) -> &str {
        "react"
    }

    async fn solve(&self, task: &Task, ctx: &SolveContext) -> Result<Episode, AgentError> {
        let tools = common::tool_listing(ctx.tools.functions());
        let system = ctx.prompts.render("react_system", &[("tools", &tools)])?;
        let mut tries: Vec<Vec<Step>> = Vec::new();
        let mut all_steps: Vec<Step> = Vec::new();
        let (mut finish, mut winner, mut error) = (FinishKind::Limit, None, None);
        // Set when the model ignored a forced Finish: another try would only do the same.
        let mut harness_ended = false;

        for t in 0..self.tries {
            let mut messages = vec![
                Message::system(system.clone()),
                Message::user(task.query.clone()),
            ];
            let mut chain: Vec<Step> = Vec::new();
            let mut depth = 0;
            let mut outcome = FinishKind::Limit;
            while depth < ctx.options.max_depth {
                let index = (all_steps.len() + chain.len() + 1) as u32;
                let (action, prompt_tokens) =
                    match common::turn(ctx, "react", messages.clone(), 0.0).await {
                        Ok(r) => r,
                        Err(TurnError::Malformed(e)) => {
                            // A reply with no usable action prunes this chain, as an LLM error does in ToolBench.
                            ctx.observer.note(&format!(
                                "try {}: unreadable reply ({e}); chain pruned",
                                t + 1
                            ));
                            let obs = harness_observation("", "", &format!("malformed reply: {e}"));
                            chain.push(Step::new(index, &Action::default(), obs, 0));
                            break;
                        }
                        Err(TurnError::Llm(e)) => {
                            outcome = FinishKind::Error;
                            error = Some(e.to_string());
                            break;
                        }
                    };
                let (action, note) = match common::guard_repeat(
                    ctx,
                    "react",
                    messages.clone(),
                    action,
                    &chain,
                )
                .await
                {
                    Ok(r) => r,
                    Err(e) => {
                        outcome = FinishKind::Error;
                        error = Some(e.to_string());
                        break;
                    }
                };
                let obs = ctx.act(&action.name, &action.arguments).await;
                let call = ToolCall {
                    id: format!("call_{index}"),
                    name: action.name.clone(),
                    arguments: action.arguments.clone(),
                };
                let mut assistant = Message::assistant(action.thought.clone());
                assistant.tool_calls = vec![call.clone()];
                messages.push(assistant);
                messages.push(Message::tool(&call, obs.text.clone()));
                let ended = obs.finish.clone();
                let mut s = Step::new(index, &action, obs, prompt_tokens);
                s.notes.extend(note);
                harness_ended |= common::harness_gave_up(&s);
                depth += levels(&s);
                ctx.observer.step(&s);
                chain.push(s);
                match ended {
                    Some(Finish::Answer(_)) => {
                        outcome = FinishKind::GiveAnswer;
                        break;
                    }
                    Some(Finish::GiveUp) => {
                        outcome = FinishKind::GiveUp;
                        break;
                    }
                    None => {}
                }
            }
            all_steps.extend(chain.iter().cloned());
            tries.push(chain);
            finish = outcome;
            if outcome == FinishKind::GiveAnswer {
                winner = Some(tries.len() - 1);
                break;
            }
            if outcome == FinishKind::Error || harness_ended {
                break;
            }
        }

        let winning_steps = winner
            .and_then(|w| tries.get(w))
            .cloned()
            .unwrap_or_default();
        let (_, final_raw) = common::final_answer(&winning_steps);
        let functions = common::schemas(ctx);
        let generation = common::generation(task, ctx, &functions, &final_raw, &system);
        let chains: Vec<_> = tries.iter().map(|c| common::chain_steps(c)).collect();
        let answer_file = cot_answer_file(&generation, &chains, winner, ctx.options.max_depth);
        // The episode's steps are the winning chain when there is one, else the last try.
        let steps = if winner.is_some() {
            winning_steps
        } else {
            tries.last().cloned().unwrap_or_default()
        };
        let details = json!({"tries": tries.len(), "total_steps_all_tries": all_steps.len()});
        Ok(common::episode(
            "react",
            task,
            ctx,
            Outcome {
                finish,
                steps,
                details,
                error,
                answer_file,
            },
        ))
    }
}
