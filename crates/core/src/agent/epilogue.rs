//! What every method does around its steps: the step recorder, the conversation messages of a tool
//! call, and the one episode epilogue that writes the answer file in the layout ToolBench uses for the
//! method (one chain, CoT tries, or a DFS tree) and the episode record with its counters.

use serde_json::Value;

use crate::llm::{Message, ToolCall};
use crate::toolbench::Task;
use crate::toolbench::answer::{ChainStep, Generation, Node, cot_answer_file, dfs_answer_file};
use crate::tools::Finish;

use super::Method;
use super::SolveContext;
use super::common::schemas;
use super::episode::{Episode, FinishKind, Step};
use super::parse::Action;

/// Shows a finished step to the observer and appends it: every step a method keeps goes through here.
pub(crate) fn record(ctx: &SolveContext, steps: &mut Vec<Step>, step: Step) {
    ctx.observer.step(&step);
    steps.push(step);
}

/// How a `Finish` call ends the episode.
pub(crate) fn finish_kind(finish: &Finish) -> FinishKind {
    match finish {
        Finish::Answer(_) => FinishKind::GiveAnswer,
        Finish::GiveUp => FinishKind::GiveUp,
    }
}

/// The assistant message carrying the call (id `call_{index}`) and the tool message with its
/// observation, as the model sees them in the conversation of ReAct and DFSDT.
pub(crate) fn tool_call_messages(index: u32, action: &Action, observation: &str) -> [Message; 2] {
    let call = ToolCall {
        id: format!("call_{index}"),
        name: action.name.clone(),
        arguments: action.arguments.clone(),
    };
    let mut assistant = Message::assistant(action.thought.clone());
    assistant.tool_calls = vec![call.clone()];
    [assistant, Message::tool(&call, observation.to_string())]
}

/// How a method's episode ended, handed to [`conclude`].
pub(crate) struct Ending {
    pub finish: FinishKind,
    /// The steps the episode record keeps.
    pub steps: Vec<Step>,
    /// Method-specific detail.
    pub details: Value,
    /// Why the episode stopped early, when it did.
    pub error: Option<String>,
}

/// The answer file's layout, as ToolBench writes it for the method.
pub(crate) enum Layout<'a> {
    /// One chain, the episode's steps, winning when it gave an answer (Sum2Act, plan, graph).
    Chain,
    /// CoT@n (ReAct): every try, `winner` the index of the one that gave an answer.
    Tries {
        tries: &'a [Vec<Step>],
        winner: Option<usize>,
    },
    /// DFSDT: the search tree and the path to the node the search ended on (empty when none).
    Tree {
        root: &'a Node,
        path: &'a [Step],
        forward_args: Value,
    },
}

/// The episode epilogue every method shares: the answer file in `layout` and the episode record.
pub(crate) fn conclude(
    method: Method,
    task: &Task,
    ctx: &SolveContext,
    system: &str,
    layout: Layout<'_>,
    ending: Ending,
) -> Episode {
    // The raw `final_answer` of the answer file comes from the chain the layout counts as the answer.
    let answered: &[Step] = match &layout {
        Layout::Chain => &ending.steps,
        Layout::Tries { tries, winner } => winner
            .and_then(|w| tries.get(w))
            .map_or(&[][..], Vec::as_slice),
        Layout::Tree { path, .. } => path,
    };
    let (_, final_raw) = final_answer(answered);
    let functions = schemas(ctx);
    let generation = generation(task, ctx, &functions, &final_raw, system);
    let answer_file = match layout {
        Layout::Chain => {
            let winner = (ending.finish == FinishKind::GiveAnswer).then_some(0);
            let chains = [chain_steps(&ending.steps)];
            cot_answer_file(&generation, &chains, winner, ctx.options.budget.max_steps)
        }
        Layout::Tries { tries, winner } => {
            let chains: Vec<_> = tries.iter().map(|c| chain_steps(c)).collect();
            cot_answer_file(
                &generation,
                &chains,
                winner,
                ctx.options
                    .budget
                    .max_depth
                    .unwrap_or(ctx.options.budget.max_steps),
            )
        }
        Layout::Tree {
            root,
            path,
            forward_args,
        } => {
            let winning = (ending.finish == FinishKind::GiveAnswer).then(|| chain_steps(path));
            // ToolBench's DFS files know two finish types: a search that ended any other way is written
            // as `give_answer` without a winning path.
            let finish_type = if ending.finish == FinishKind::GiveUp {
                FinishKind::GiveUp
            } else {
                FinishKind::GiveAnswer
            };
            dfs_answer_file(
                &generation,
                root,
                winning.as_deref(),
                finish_type,
                forward_args,
            )
        }
    };
    episode(method, task, ctx, ending, answer_file)
}

/// Steps in the shape answer files need.
fn chain_steps(steps: &[Step]) -> Vec<ChainStep> {
    steps
        .iter()
        .map(|s| ChainStep {
            thought: s.thought.clone(),
            name: s.action.clone(),
            arguments: s.arguments.clone(),
            observation: s.observation.text.clone(),
            code: s.observation.code.number(),
        })
        .collect()
}

/// The final answer text and ToolBench's raw `final_answer` of an episode's last step.
fn final_answer(steps: &[Step]) -> (String, String) {
    match steps.last() {
        Some(s) => match &s.observation.finish {
            Some(Finish::Answer(a)) => (a.clone(), s.arguments.clone()),
            Some(Finish::GiveUp) => (String::new(), s.arguments.clone()),
            None => (String::new(), String::new()),
        },
        None => (String::new(), String::new()),
    }
}

/// Assembles the episode with the shared counters.
fn episode(
    method: Method,
    task: &Task,
    ctx: &SolveContext,
    ending: Ending,
    answer_file: Value,
) -> Episode {
    let (answer, _) = final_answer(&ending.steps);
    let counters = ctx.counters(ending.steps.len());
    // An episode that met an unreachable tool server ran against a broken environment: whatever it
    // concluded is not a result (kept as an `error`, so it is not judged and a rerun solves it again).
    let (finish, error) = match ctx.environment_failure() {
        Some(why) if ending.finish != FinishKind::Error => (FinishKind::Error, Some(why)),
        _ => (ending.finish, ending.error),
    };
    Episode {
        method,
        model: ctx.llm.model_id(),
        subset: task.subset.clone(),
        query_id: task.query_id,
        query: task.query.clone(),
        finish,
        answer,
        steps: ending.steps,
        attempts: Vec::new(),
        counters,
        details: ending.details,
        error_cause: (finish == FinishKind::Error).then(|| ctx.error_cause()),
        error,
        resources: ctx.tools.resources(),
        answer_file,
    }
}

/// The `answer_generation` fields shared by every answer file.
fn generation<'a>(
    task: &'a Task,
    ctx: &SolveContext,
    functions: &'a [Value],
    final_raw: &'a str,
    system: &'a str,
) -> Generation<'a> {
    let c = ctx.counters(0);
    Generation {
        query: &task.query,
        functions,
        final_answer: final_raw,
        query_count: c.llm_calls,
        total_tokens: c.prompt_tokens + c.completion_tokens,
        system,
    }
}
