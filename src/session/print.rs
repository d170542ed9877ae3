//! Shows an episode as it happens: each action, its observation (with where it came from), and the
//! Sum2Act state after it.

use std::io::Write;

use crate::agent::state::clip;
use crate::agent::{Observer, Step};

/// Prints steps to stdout.
pub struct PrintObserver {
    /// Characters of each observation to show.
    pub observation_chars: usize,
}

impl Default for PrintObserver {
    fn default() -> Self {
        PrintObserver {
            observation_chars: 300,
        }
    }
}

impl Observer for PrintObserver {
    fn step(&self, step: &Step) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "── step {} ──", step.index);
        if !step.thought.trim().is_empty() {
            let _ = writeln!(out, "  thought: {}", clip(step.thought.trim(), 200));
        }
        let name = if step.action.is_empty() {
            "(no action)"
        } else {
            step.action.as_str()
        };
        let _ = writeln!(out, "  action:  {name} {}", clip(&step.arguments, 200));
        let obs = &step.observation;
        let status = if obs.failed { "failed" } else { "ok" };
        let _ = writeln!(
            out,
            "  result:  [{} · code {} · {status} · {} ms] {}",
            obs.source.as_str(),
            obs.code,
            obs.elapsed_ms,
            clip(&obs.text, self.observation_chars)
        );
        for note in &step.notes {
            let _ = writeln!(out, "  note:    {note}");
        }
        if let Some(state) = &step.state {
            print_state(&mut out, state);
        }
        let _ = out.flush();
    }

    fn note(&self, text: &str) {
        println!("  · {text}");
    }
}

/// Prints a Sum2Act state (as stored in steps and episodes).
pub fn print_state(out: &mut impl Write, state: &serde_json::Value) {
    let facts = state["facts"].as_array().cloned().unwrap_or_default();
    let failures = state["failures"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(
        out,
        "  state:   {} fact(s), {} failed call(s)",
        facts.len(),
        failures.len()
    );
    if let Some(c) = state["compressed"].as_str() {
        let _ = writeln!(out, "    (earlier) {}", clip(c, 200));
    }
    for (i, f) in facts.iter().enumerate() {
        let _ = writeln!(
            out,
            "    {}. {}",
            i + 1,
            clip(f["text"].as_str().unwrap_or(""), 200)
        );
    }
    for f in &failures {
        let _ = writeln!(
            out,
            "    ✗ {} {} — {}",
            f["action"].as_str().unwrap_or(""),
            clip(f["arguments"].as_str().unwrap_or(""), 80),
            clip(f["reason"].as_str().unwrap_or(""), 120)
        );
    }
}
