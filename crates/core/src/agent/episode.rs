//! The record of one episode: steps, counters, how it ended, and the ToolBench answer file built from
//! it. One file per query holds both (the answer file plus our `sum2act` key), so a finished query is
//! exactly one atomic write.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub(crate) use crate::toolbench::answer::Counters;

pub(crate) use crate::toolbench::answer::ErrorCause;

pub use crate::toolbench::answer::FinishKind;
use crate::toolbench::method::Method;
use crate::tools::observation::{Ascii, reply_text_as};
use crate::tools::{Observation, Resource};

/// One action and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub index: u32,
    /// The model's reasoning before the action.
    pub thought: String,
    /// The function called (`Finish` included).
    pub action: String,
    pub arguments: String,
    pub observation: Observation,
    /// Sum2Act: the state after this step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// Prompt tokens of the call that chose this action.
    pub prompt_tokens: u64,
    /// What the harness noticed (a repeated failed call, a malformed reply that was retried, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Step {
    /// A step for `action` and what it produced; the state and notes are added by the method.
    pub(crate) fn new(
        index: u32,
        action: &super::parse::Action,
        observation: Observation,
        prompt_tokens: u64,
    ) -> Self {
        Step {
            index,
            thought: action.thought.clone(),
            action: action.name.clone(),
            arguments: action.arguments.clone(),
            observation,
            state: None,
            prompt_tokens,
            notes: Vec::new(),
        }
    }
}

/// The result of solving one task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Episode {
    pub method: Method,
    pub model: String,
    pub subset: String,
    pub query_id: u64,
    pub query: String,
    pub finish: FinishKind,
    /// The final answer text (empty unless `give_answer`).
    pub answer: String,
    pub steps: Vec<Step>,
    /// Calls the model was shown beside its path's steps: DFSDT's earlier attempts, the first call
    /// of each abandoned sibling branch its re-expansion prompts listed. An answer may use their
    /// data, so the evaluator reads them too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Step>,
    pub counters: Counters,
    /// Method-specific detail (Sum2Act's final state and subtasks, DFSDT's tree statistics, …).
    #[serde(default)]
    pub details: Value,
    /// Why the episode stopped early, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whose failure that was (the setup, the model, the tool server), for exit codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_cause: Option<ErrorCause>,
    /// Files the tools produced (images, audio), in the episode's folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
    /// The ToolBench answer file (as ToolBench's `toolbench/inference/Downstream_tasks/rapidapi.py` writes it), without our key.
    #[serde(skip)]
    pub answer_file: Value,
}

pub(crate) use crate::toolbench::answer::OUR_KEY;

/// Longest reply our record keeps whole (characters of its `{"error": …, "response": …}` text): far
/// beyond what an answer quotes from, so a judge reads what the agent did not, while a 5 MB page
/// does not bloat the answer file.
pub(crate) const RECORD_REPLY_CHARS: usize = 64 * 1024;

/// A recorded observation whose reply is longer than [`RECORD_REPLY_CHARS`] keeps the first
/// characters of its text as `response` (a string) and the whole length as `reply_chars`.
fn cap_reply(observation: &mut Value) {
    let error = observation["error"].as_str().unwrap_or("");
    let text = reply_text_as(error, &observation["response"], Ascii::Keep);
    let chars = text.chars().count();
    if chars <= RECORD_REPLY_CHARS {
        return;
    }
    let head: String = text.chars().take(RECORD_REPLY_CHARS).collect();
    observation["response"] = Value::String(head);
    observation["reply_chars"] = json!(chars);
}

impl Episode {
    /// The answer file with our record added under `sum2act` (and the episode's files listed under
    /// `resources` when it has any).
    pub fn to_json(&self) -> Value {
        let mut file = self.answer_file.clone();
        if !file.is_object() {
            file = json!({});
        }
        if !self.resources.is_empty() {
            file["resources"] = serde_json::to_value(&self.resources).unwrap_or(Value::Null);
        }
        let mut ours = serde_json::to_value(self).unwrap_or(Value::Null);
        for key in ["steps", "attempts"] {
            if let Some(steps) = ours.get_mut(key).and_then(Value::as_array_mut) {
                steps
                    .iter_mut()
                    .for_each(|s| cap_reply(&mut s["observation"]));
            }
        }
        file[OUR_KEY] = ours;
        file
    }

    /// Reads an episode back from an answer file written by `to_json`.
    pub fn from_json(file: &Value) -> Option<Episode> {
        let mut ep: Episode = serde_json::from_value(file.get(OUR_KEY)?.clone()).ok()?;
        let mut rest = file.clone();
        if let Some(map) = rest.as_object_mut() {
            map.remove(OUR_KEY);
            map.remove("resources");
        }
        ep.answer_file = rest;
        Some(ep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_reply_is_kept_to_the_cap_with_its_whole_length() {
        let long = json!({"error": "", "response": {"rows": "x".repeat(RECORD_REPLY_CHARS)}});
        let mut observation = long.clone();
        cap_reply(&mut observation);
        let head = observation["response"].as_str().unwrap_or_default();
        assert_eq!(head.chars().count(), RECORD_REPLY_CHARS);
        assert!(head.starts_with(r#"{"error": "", "response": {"rows": "xxx"#));
        assert_eq!(observation["reply_chars"], RECORD_REPLY_CHARS + 39);
        let mut short = json!({"error": "", "response": {"temp": 21}});
        cap_reply(&mut short);
        assert_eq!(short, json!({"error": "", "response": {"temp": 21}}));
    }
}
