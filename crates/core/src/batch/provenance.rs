//! Where a run's tool replies came from (recorded cache, schema simulator, LLM simulator, a remote
//! server, injected faults, the caller's own errors). A reader needs this to know how much of a
//! score rests on simulation. Counted from the observations that answer files keep.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;
use serde_json::Value;

use crate::toolbench::FINISH;
use crate::toolbench::answer::OUR_KEY;
use crate::tools::ReplySource;
use crate::tools::observation::ObservationCode;

/// Replies by source over a set of episodes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Provenance {
    /// Tool calls (not `Finish`) with an observation.
    pub tool_calls: u64,
    /// Tool calls by the source of their reply (`cache`, `simulated`, `llm`, `remote`, `fault`, `caller`).
    pub by_source: BTreeMap<String, u64>,
    /// Episodes counted.
    pub episodes: usize,
    /// Episodes whose every answered call was answered by the schema simulator (at least one call).
    pub all_simulated: usize,
    /// Tool-call attempts that failed transiently and were retried (each is in its observation's
    /// `retries`).
    pub retries: u64,
    /// Tool calls that ended in a timeout (code 5) after their retries.
    pub timeouts: u64,
}

/// The sources of one episode's tool-call replies, in order. `record` is the answer file's
/// `sum2act` record.
pub(crate) fn episode_sources(record: &Value) -> Vec<ReplySource> {
    tool_observations(record)
        .filter_map(|o| o.get("source").and_then(Value::as_str))
        .filter_map(ReplySource::parse)
        .collect()
}

/// The tool-call observations of one episode (not `Finish`).
fn tool_observations(record: &Value) -> impl Iterator<Item = &Value> {
    record
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("observation"))
        .filter(|o| o.get("function").and_then(Value::as_str) != Some(FINISH))
}

/// True when the episode's tool replies all came from the schema simulator. Calls the caller refused
/// (unknown function, bad arguments) are not replies and do not count either way.
pub fn all_simulated(record: &Value) -> bool {
    let answered: Vec<ReplySource> = episode_sources(record)
        .into_iter()
        .filter(|s| *s != ReplySource::Caller)
        .collect();
    !answered.is_empty() && answered.iter().all(|s| *s == ReplySource::Simulated)
}

impl Provenance {
    /// Adds one answer file (its `sum2act` record is read; other files are ignored).
    pub fn add(&mut self, file: &Value) {
        let Some(record) = file.get(OUR_KEY) else {
            return;
        };
        self.episodes += 1;
        for source in episode_sources(record) {
            self.tool_calls += 1;
            *self
                .by_source
                .entry(source.as_str().to_string())
                .or_default() += 1;
        }
        if all_simulated(record) {
            self.all_simulated += 1;
        }
        for o in tool_observations(record) {
            self.retries += o
                .get("retries")
                .and_then(Value::as_array)
                .map_or(0, |r| r.len() as u64);
            if o.get("code").and_then(Value::as_u64)
                == Some(u64::from(ObservationCode::Timeout.number()))
            {
                self.timeouts += 1;
            }
        }
    }

    /// One line for the end-of-run output.
    pub(crate) fn line(&self) -> String {
        let mut out = format!("tool replies by source ({} calls):", self.tool_calls);
        if self.tool_calls == 0 {
            out.push_str(" none");
        }
        for (source, n) in &self.by_source {
            let share = 100.0 * *n as f64 / self.tool_calls.max(1) as f64;
            let _ = write!(out, " {source} {share:.1}%");
        }
        let _ = write!(
            out,
            " · {} of {} queries answered only by the schema simulator",
            self.all_simulated, self.episodes
        );
        let _ = write!(
            out,
            " · {} retried attempts, {} calls timed out",
            self.retries, self.timeouts
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn file(sources: &[(&str, &str)]) -> Value {
        let steps: Vec<Value> = sources
            .iter()
            .map(|(f, s)| json!({"observation": {"function": f, "source": s}}))
            .collect();
        json!({"sum2act": {"steps": steps}})
    }

    #[test]
    fn counts_replies_by_source_and_flags_simulation_only_episodes() {
        let mut p = Provenance::default();
        p.add(&file(&[
            ("a", "simulated"),
            ("b", "caller"),
            ("Finish", "caller"),
        ]));
        p.add(&file(&[("a", "cache"), ("b", "simulated")]));
        p.add(&file(&[("Finish", "caller")]));
        p.add(&json!({"answer_generation": {}}));
        p.add(&json!({"sum2act": {"steps": [{"observation": {"function": "a", "source": "caller", "code": 5,
            "retries": [{"attempt": 1, "error": "timed out", "elapsed_ms": 15000, "backoff_ms": 500}]}}]}}));
        assert_eq!(p.episodes, 4);
        assert_eq!(p.tool_calls, 5);
        assert_eq!(p.by_source.get("simulated"), Some(&2));
        assert_eq!(p.by_source.get("caller"), Some(&2));
        assert_eq!(p.all_simulated, 1);
        assert_eq!((p.retries, p.timeouts), (1, 1));
        let line = p.line();
        assert!(
            line.contains("simulated 40.0%")
                && line.contains("1 of 4 queries")
                && line.contains("1 retried attempts, 1 calls timed out"),
            "{line}"
        );
    }
}
