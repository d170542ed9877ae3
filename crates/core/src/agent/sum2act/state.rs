//! The Sum2Act state: what the router sees instead of the raw history. *Facts* are the current results,
//! *failures* the failure history. The state manager model proposes updates; this code merges them,
//! detects repeated failed calls on its own, and keeps the rendered state within a token budget.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::checklist::Checklist;
use crate::agent::failure::{FailureKind, MAX_RETRIES};
use crate::agent::reading::KeptValue;
use crate::text::clip;
use crate::toolbench::request_parts::MAX_PARTS;

/// A fact the agent has established.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// The step that produced it.
    pub step: u32,
    pub text: String,
    /// The call's small result itself, folded by code (`fold.rs`) with no state-manager call: which
    /// parts it answers, only the router (who reads it) knows.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_code: bool,
}

/// A call that did not help, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub step: u32,
    pub action: String,
    /// The arguments as the model wrote them (its key order); compared by `parse::call_key`.
    pub arguments: String,
    pub reason: String,
    /// How many times this exact call was made.
    pub attempts: u32,
    /// Whether calling it again may work (a timeout may; an API that is down will not).
    #[serde(default)]
    pub kind: FailureKind,
}

impl Failure {
    /// A transient failure within its retries: making the call again is a retry, not a repeat.
    pub fn may_retry(&self) -> bool {
        self.kind == FailureKind::Transient && self.attempts <= MAX_RETRIES
    }
}

/// A call that answered but added no new fact. It did not fail, so it is kept apart from the
/// failures: the router is told it has that result already, never that the call failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Redundant {
    /// The step that first made it.
    pub step: u32,
    pub action: String,
    pub arguments: String,
    /// How many times this exact call answered with nothing new.
    pub attempts: u32,
}

/// What merging one update did to the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The call added this many facts.
    NewFacts(usize),
    /// The call answered, but everything in it was known already.
    NothingNew,
    /// The call failed (its reason is in the failure history).
    Failed,
}

/// The state manager's structured answer (its JSON schema is `update_schema`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StateUpdate {
    pub success: bool,
    pub new_facts: Vec<String>,
    pub failure_reason: String,
    /// 1-based numbers of earlier facts shown to be wrong.
    pub wrong_facts: Vec<u32>,
    /// 1-based numbers of the checklist parts this result answers.
    pub parts: Vec<u32>,
}

/// Whether two argument texts are the same call (key order does not matter).
fn same_arguments(a: &str, b: &str) -> bool {
    a == b || crate::agent::parse::call_key(a) == crate::agent::parse::call_key(b)
}

/// Most lessons kept (tool-level generalisations of failures).
const MAX_LESSONS: usize = 5;

/// Longest fact the state manager is asked for (characters): room for a value, a sentence or a short
/// list; a longer list or an image goes by reference (`reading`).
const MAX_FACT_CHARS: usize = 1_000;
/// Longest fact kept: a size guard for a model that ignores the schema, not a cut of real facts.
const FACT_SIZE_GUARD: usize = 4_000;
const MAX_FACTS_PER_STEP: usize = 8;
/// Shortest a fact is shown to the router once the state is over its budget (the fact itself is
/// kept): facts are shown as long as the budget allows, down to this, before the oldest are folded.
const SHOWN_FACT_CHARS: usize = 120;
/// Said under facts shown shortened: the router once called a tool again, or wrote that the data was
/// cut off, because a fact ended in "…".
const SHORTENED_NOTE: &str = "(Facts ending in \"…\" or folded are shown shortened here; they are kept whole, and the final answer is written from the whole facts: do not call a tool again to see them.)\n";
/// Readers met `[value 1.1]` in the facts and looked for the value in vain: say what it is.
const REFERENCE_NOTE: &str = "(A reference such as [value 1.1] stands for a long value kept aside, an image or a long list: write the reference where the value belongs in the final answer and it is put in whole.)\n";
/// Readers passed `<file-1>` to the next tool without being told they may (they may: `tools::resources`).
const FILE_NOTE: &str = "(A handle such as <file-1> is a file a tool made, an image or an audio file: pass it as it is in another tool's arguments, and name it in the final answer.)\n";
/// Longest summary line of the folded facts shown to the router.
const FOLDED_CHARS: usize = 240;

/// JSON schema of the state manager's reply; `maxLength`/`maxItems` keep a small model from looping.
pub fn update_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "success": {"type": "boolean"},
            "new_facts": {"type": "array", "items": {"type": "string", "maxLength": MAX_FACT_CHARS}, "maxItems": MAX_FACTS_PER_STEP},
            "failure_reason": {"type": "string", "maxLength": 160},
            "wrong_facts": {"type": "array", "items": {"type": "integer"}, "maxItems": 5},
            "parts": {"type": "array", "items": {"type": "integer"}, "maxItems": MAX_PARTS}
        },
        "required": ["success", "new_facts", "failure_reason", "wrong_facts", "parts"]
    })
}

/// The state. Facts are kept whole, for the final answer; what the router is shown of them is bounded
/// by `fit` (a view: long facts shown clipped, the oldest folded into one line).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub facts: Vec<Fact>,
    pub failures: Vec<Failure>,
    /// Calls that answered with nothing new (not failures).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redundant: Vec<Redundant>,
    /// The parts of the current request: open, answered or failed.
    #[serde(default, skip_serializing_if = "Checklist::is_empty")]
    pub checklist: Checklist,
    /// What failures taught about whole tools ("tool X's APIs take no parameters").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lessons: Vec<String>,
    /// The router's view of the facts, set by `fit`.
    #[serde(skip)]
    view: View,
    /// Values the facts name by reference (`[value 3.1]`), whole (they are in the steps' observations).
    #[serde(skip)]
    pub values: Vec<KeptValue>,
}

/// How the facts are shown to the router.
#[derive(Debug, Clone, Default, PartialEq)]
struct View {
    /// The oldest facts shown only as one summary line.
    folded: usize,
    /// Longest fact shown (characters); 0: whole.
    shown_chars: usize,
    /// The oldest redundant calls and failures left out of the view (they stay in the state: the
    /// repeat guard and the checklist still know them).
    hidden_redundant: usize,
    hidden_failures: usize,
}

impl State {
    /// The earlier failure of exactly this call, if any.
    pub fn failed_before(&self, action: &str, arguments: &str) -> Option<&Failure> {
        self.failures
            .iter()
            .find(|f| f.action == action && same_arguments(&f.arguments, arguments))
    }

    /// The earlier failure of this call that makes making it again a repeat (not a retry).
    pub fn blocks_repeat(&self, action: &str, arguments: &str) -> Option<&Failure> {
        self.failed_before(action, arguments)
            .filter(|f| !f.may_retry())
    }

    /// Records a failed call (or one more attempt of a known one). `step` stays the first failure's,
    /// so a repeat is told where the call first failed.
    pub fn record_failure(
        &mut self,
        step: u32,
        action: &str,
        arguments: &str,
        reason: &str,
        kind: FailureKind,
    ) {
        let reason = clip(reason.trim(), 200);
        if let Some(f) = self
            .failures
            .iter_mut()
            .find(|f| f.action == action && same_arguments(&f.arguments, arguments))
        {
            f.attempts += 1;
            if !reason.is_empty() {
                f.reason = reason;
                f.kind = kind;
            }
            return;
        }
        self.failures.push(Failure {
            step,
            action: action.to_string(),
            arguments: arguments.to_string(),
            reason: if reason.is_empty() {
                "no usable result".to_string()
            } else {
                reason
            },
            attempts: 1,
            kind,
        });
    }

    /// Merges the state manager's update for the call at `step`. A successful call that adds no new
    /// fact is recorded as redundant, not as a failure, whatever `failure_reason` the model wrote.
    pub fn apply(
        &mut self,
        step: u32,
        action: &str,
        arguments: &str,
        update: &StateUpdate,
    ) -> Applied {
        // Reflection: drop facts the new result contradicts (numbers are 1-based as shown).
        let mut wrong: Vec<usize> = update
            .wrong_facts
            .iter()
            .filter_map(|&n| (n as usize).checked_sub(1))
            .filter(|&i| i < self.facts.len())
            .collect();
        wrong.sort_unstable();
        wrong.dedup();
        for i in wrong.into_iter().rev() {
            self.facts.remove(i);
        }
        let mut added = 0;
        for text in update.new_facts.iter().take(MAX_FACTS_PER_STEP) {
            let text = clip(text.trim(), FACT_SIZE_GUARD);
            if text.is_empty() || self.facts.iter().any(|f| f.text == text) {
                continue;
            }
            self.facts.push(Fact {
                step,
                text,
                by_code: false,
            });
            added += 1;
        }
        if !update.success {
            let reason = if update.failure_reason.trim().is_empty() {
                "the call failed"
            } else {
                update.failure_reason.as_str()
            };
            self.record_failure(step, action, arguments, reason, FailureKind::Final);
            return Applied::Failed;
        }
        if added > 0 {
            return Applied::NewFacts(added);
        }
        self.record_redundant(step, action, arguments);
        Applied::NothingNew
    }

    /// Records a call that answered with nothing new (or one more time of a known one).
    pub fn record_redundant(&mut self, step: u32, action: &str, arguments: &str) {
        match self
            .redundant
            .iter_mut()
            .find(|r| r.action == action && r.arguments == arguments)
        {
            Some(r) => r.attempts += 1,
            None => self.redundant.push(Redundant {
                step,
                action: action.to_string(),
                arguments: arguments.to_string(),
                attempts: 1,
            }),
        }
    }

    /// Calls that answered with nothing new, as the router sees them (empty when there are none).
    pub fn render_redundant(&self) -> String {
        let shown = &self.redundant[self.view.hidden_redundant.min(self.redundant.len())..];
        if shown.is_empty() {
            return String::new();
        }
        let lines: Vec<String> = shown
            .iter()
            .map(|r| {
                format!(
                    "- {} {} (step {}): answered, but nothing new beyond the facts",
                    r.action,
                    clip(&r.arguments, 160),
                    r.step
                )
            })
            .collect();
        format!(
            "Calls that worked but added nothing new (their results are in the facts; do not repeat them):\n{}",
            lines.join("\n")
        )
    }

    fn rendered_tokens(&self, count: &impl Fn(&str) -> usize) -> usize {
        count(&self.render_facts())
            + count(&self.render_failures())
            + count(&self.render_redundant())
    }

    /// Keeps the router's view of the state under `budget` tokens: long facts are shown clipped first,
    /// as long as the budget allows (a strong model's facts carry URLs and lists a 120-character cut
    /// breaks), then the oldest facts are folded into a one-line summary, then redundant calls and the
    /// oldest failures are left out of the view. The state itself keeps everything: the facts whole for
    /// the final answer, the failures for the repeat guard (a failure dropped from the state once let
    /// the router run the same failed call again).
    pub fn fit(&mut self, budget: usize, count: impl Fn(&str) -> usize) {
        let folded = self.view.folded.min(self.facts.len().saturating_sub(1));
        self.view = View::default();
        if self.rendered_tokens(&count) <= budget {
            return;
        }
        self.view = View {
            folded,
            shown_chars: self.longest_shown(budget, &count, folded),
            ..View::default()
        };
        while self.rendered_tokens(&count) > budget && self.view.folded + 1 < self.facts.len() {
            self.view.folded += 1;
        }
        while self.rendered_tokens(&count) > budget
            && self.view.hidden_redundant < self.redundant.len()
        {
            self.view.hidden_redundant += 1;
        }
        while self.rendered_tokens(&count) > budget
            && self.view.hidden_failures + 1 < self.failures.len()
        {
            self.view.hidden_failures += 1;
        }
    }

    /// The longest clip of the facts (at least `SHOWN_FACT_CHARS`) under which the view fits `budget`
    /// with `folded` facts folded; binary search, as tokens grow with the clip.
    fn longest_shown(
        &mut self,
        budget: usize,
        count: &impl Fn(&str) -> usize,
        folded: usize,
    ) -> usize {
        let longest = self
            .facts
            .iter()
            .map(|f| f.text.chars().count())
            .max()
            .unwrap_or(0);
        let (mut lo, mut hi) = (SHOWN_FACT_CHARS, longest.max(SHOWN_FACT_CHARS));
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            self.view = View {
                folded,
                shown_chars: mid,
                ..View::default()
            };
            if self.rendered_tokens(count) <= budget {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    /// Whether the router's view hides part of a fact (clipped or folded): its answer is then written
    /// again from the whole facts.
    pub fn view_is_lossy(&self) -> bool {
        self.view.folded > 0
            || (self.view.shown_chars > 0
                && self
                    .facts
                    .iter()
                    .any(|f| f.text.chars().count() > self.view.shown_chars))
    }

    /// Facts as the router and the state manager see them, numbered from 1 (folded ones summarised).
    pub fn render_facts(&self) -> String {
        let folded = self.view.folded.min(self.facts.len());
        let shown = |t: &str| match self.view.shown_chars {
            0 => t.to_string(),
            n => clip(t, n),
        };
        let mut out = String::new();
        if folded > 0 {
            let summary: Vec<String> = self.facts[..folded]
                .iter()
                .map(|f| shown(&f.text))
                .collect();
            out.push_str(&format!(
                "(facts 1-{folded}, folded) {}\n",
                clip(&summary.join("; "), FOLDED_CHARS)
            ));
        }
        for (i, f) in self.facts.iter().enumerate().skip(folded) {
            out.push_str(&format!("{}. {}\n", i + 1, shown(&f.text)));
        }
        if out.is_empty() {
            out.push_str("(none yet)\n");
        }
        if self.view_is_lossy() {
            out.push_str(SHORTENED_NOTE);
        }
        if self
            .facts
            .iter()
            .any(|f| crate::agent::reading::has_references(&f.text))
        {
            out.push_str(REFERENCE_NOTE);
        }
        if self.facts.iter().any(|f| f.text.contains("<file-")) {
            out.push_str(FILE_NOTE);
        }
        out.trim_end().to_string()
    }

    /// Every fact whole, numbered from 1, for the final answer.
    pub fn render_all_facts(&self) -> String {
        if self.facts.is_empty() {
            return "(none yet)".to_string();
        }
        self.facts
            .iter()
            .enumerate()
            .map(|(i, f)| format!("{}. {}", i + 1, f.text))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Keeps a lesson (once; the oldest goes when there are too many).
    pub fn add_lesson(&mut self, lesson: &str) {
        if self.lessons.iter().any(|l| l == lesson) {
            return;
        }
        if self.lessons.len() >= MAX_LESSONS {
            self.lessons.remove(0);
        }
        self.lessons.push(clip(lesson, 300));
    }

    /// Failures as the router sees them, with the lessons drawn from them.
    pub fn render_failures(&self) -> String {
        let calls = self.render_failed_calls();
        if self.lessons.is_empty() {
            return calls;
        }
        let lessons: Vec<String> = self.lessons.iter().map(|l| format!("- {l}")).collect();
        format!("{calls}\nLessons from failures:\n{}", lessons.join("\n"))
    }

    fn render_failed_calls(&self) -> String {
        let shown = &self.failures[self.view.hidden_failures.min(self.failures.len())..];
        if shown.is_empty() {
            return "(none)".to_string();
        }
        shown
            .iter()
            .map(|f| {
                let mut times = if f.attempts > 1 {
                    format!(" (tried {} times)", f.attempts)
                } else {
                    String::new()
                };
                if f.may_retry() {
                    times.push_str(" (temporary: this call may be tried again)");
                }
                format!(
                    "- {} {}: {}{}",
                    f.action,
                    clip(&f.arguments, 160),
                    f.reason,
                    times
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Marks the last `k` facts as results folded by code.
    pub fn mark_by_code(&mut self, k: usize) {
        let n = self.facts.len();
        for f in &mut self.facts[n.saturating_sub(k)..] {
            f.by_code = true;
        }
    }

    /// The results folded by code that no part of the checklist holds among its facts: they may answer
    /// any open part (only the router, who read them, knows which).
    pub fn unattributed_results(&self) -> Vec<String> {
        let held = self.checklist.answer_facts();
        self.facts
            .iter()
            .filter(|f| f.by_code && !held.contains(&f.text))
            .map(|f| f.text.clone())
            .collect()
    }

    /// Before the checklist is settled: the parts nothing was attributed to take the results folded by
    /// code that no part holds (the router read them and chose to finish), so a part they answered is
    /// not reported as not obtained.
    pub fn credit_unattributed(&mut self) {
        let results = self.unattributed_results();
        if results.is_empty() {
            return;
        }
        for i in self.checklist.unanswered() {
            self.checklist.partly(i, &results);
        }
    }

    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(success: bool, facts: &[&str], reason: &str, wrong: &[u32]) -> StateUpdate {
        StateUpdate {
            success,
            new_facts: facts.iter().map(|s| s.to_string()).collect(),
            failure_reason: reason.into(),
            wrong_facts: wrong.to_vec(),
            parts: vec![],
        }
    }

    #[test]
    fn success_adds_facts_failure_adds_history() {
        let mut s = State::default();
        s.apply(1, "w", "{}", &update(true, &["Paris is 21C"], "", &[]));
        assert_eq!(s.facts.len(), 1);
        assert!(s.failures.is_empty());
        s.apply(
            2,
            "w",
            "{\"city\":\"X\"}",
            &update(false, &[], "unknown city", &[]),
        );
        assert_eq!(s.failures.len(), 1);
        assert_eq!(s.failures[0].reason, "unknown city");
        assert!(s.failed_before("w", "{\"city\":\"X\"}").is_some());
        assert!(s.failed_before("w", "{ \"city\": \"X\" }").is_some());
    }

    #[test]
    fn success_without_new_facts_is_redundant_not_failed() {
        let mut s = State::default();
        s.apply(1, "w", "{}", &update(true, &["Paris is 21C"], "", &[]));
        // The state manager wrote a failure reason for a call that worked: it must not become a failure.
        let applied = s.apply(
            2,
            "w",
            "{\"x\":1}",
            &update(true, &["Paris is 21C"], "already known", &[]),
        );
        assert_eq!(applied, Applied::NothingNew);
        assert!(s.failures.is_empty(), "{:?}", s.failures);
        assert!(s.failed_before("w", "{\"x\":1}").is_none());
        assert_eq!(s.redundant.len(), 1);
        assert_eq!(s.render_failures(), "(none)");
        let shown = s.render_redundant();
        assert!(
            shown.contains("added nothing new") && shown.contains("step 2"),
            "{shown}"
        );
        assert!(!shown.contains("fail"), "{shown}");
        s.apply(3, "w", "{\"x\":1}", &update(true, &[], "", &[]));
        assert_eq!(s.redundant[0].attempts, 2);
        assert_eq!(s.redundant[0].step, 2);
    }

    #[test]
    fn reflection_removes_wrong_facts() {
        let mut s = State::default();
        s.apply(1, "a", "{}", &update(true, &["x = 1", "y = 2"], "", &[]));
        s.apply(2, "b", "{}", &update(true, &["x = 3"], "", &[1, 99, 0]));
        let texts: Vec<&str> = s.facts.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, vec!["y = 2", "x = 3"]);
    }

    #[test]
    fn repeated_failures_are_counted() {
        let mut s = State::default();
        s.record_failure(1, "w", "{}", "error", FailureKind::Final);
        s.record_failure(2, "w", "{}", "", FailureKind::Final);
        assert_eq!(s.failures.len(), 1);
        assert_eq!(s.failures[0].attempts, 2);
        // A repeat cites the step where the call first failed.
        assert_eq!(s.failures[0].step, 1);
        assert!(s.render_failures().contains("tried 2 times"));
        assert!(s.blocks_repeat("w", "{}").is_some());
        // A timeout may be retried twice; a third retry is a repeat.
        s.record_failure(3, "t", "{}", "Timeout error...", FailureKind::Transient);
        assert!(s.blocks_repeat("t", "{}").is_none());
        assert!(s.render_failures().contains("may be tried again"));
        s.record_failure(4, "t", "{}", "Timeout error...", FailureKind::Transient);
        assert!(s.blocks_repeat("t", "{}").is_none());
        s.record_failure(5, "t", "{}", "Timeout error...", FailureKind::Transient);
        assert!(s.blocks_repeat("t", "{}").is_some());
    }

    #[test]
    fn failures_left_out_of_the_view_still_block_a_repeat() {
        let mut s = State::default();
        for i in 0..30 {
            s.record_failure(
                i,
                &format!("tool_{i}"),
                "{}",
                "API not working error with a long reason to fill the view",
                crate::agent::failure::FailureKind::Final,
            );
        }
        let words = |t: &str| t.split_whitespace().count();
        s.fit(60, words);
        assert!(
            !s.render_failures().contains("tool_0 "),
            "{}",
            s.render_failures()
        );
        assert!(s.render_failures().contains("tool_29"));
        // The state keeps every failure: the guard still refuses the first failed call again.
        assert_eq!(s.failures.len(), 30);
        assert!(s.blocks_repeat("tool_0", "{}").is_some());
    }

    #[test]
    fn budget_folds_oldest_facts_in_the_view_only() {
        let mut s = State::default();
        for i in 0..40 {
            s.facts.push(Fact {
                step: i,
                text: format!("fact number {i} with some padding words to make it longer"),
                by_code: false,
            });
        }
        let words = |t: &str| t.split_whitespace().count();
        assert!(!s.view_is_lossy());
        s.fit(150, words);
        assert!(words(&s.render_facts()) + words(&s.render_failures()) <= 150);
        assert!(s.render_facts().contains("39. fact number 38"));
        assert!(
            s.render_facts().starts_with("(facts 1-"),
            "{}",
            s.render_facts()
        );
        assert!(s.view_is_lossy());
        // Every fact is still there, whole, for the answer.
        assert_eq!(s.facts.len(), 40);
        assert!(
            s.render_all_facts()
                .contains("1. fact number 0 with some padding words")
        );
        // A long fact is shown clipped but kept whole.
        let mut one = State::default();
        let long = format!("The comedies are {}", "Title, ".repeat(100));
        one.facts.push(Fact {
            step: 1,
            text: long.clone(),
            by_code: false,
        });
        one.fit(60, words);
        let shown = one.render_facts();
        let line = shown.lines().next().unwrap_or_default();
        assert!(line.ends_with('…'), "{shown}");
        // As long as the budget allows (more than the 120-character floor), and said to be shortened.
        assert!(line.chars().count() > 120, "{shown}");
        assert!(words(&shown) <= 60, "{shown}");
        assert!(shown.contains("kept whole"), "{shown}");
        assert_eq!(one.facts[0].text, long);
        assert!(one.view_is_lossy());
        // Within the budget again, the view is whole again.
        one.fit(10_000, words);
        assert!(!one.view_is_lossy());
    }
}
