//! Shows an episode as it happens: each action, its observation (with where it came from), and the
//! Sum2Act state after it.

use std::io::Write;

use sum2act_core::agent::{Observer, Step};
use sum2act_core::terminal::{safe, safe_line};
use sum2act_core::text::clip;

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
        // Built first, then neutralised as a whole: thoughts, arguments and observations are model
        // and server text.
        let mut text: Vec<u8> = Vec::new();
        let out = &mut text;
        let _ = writeln!(out, "── step {} ──", step.index);
        if !step.thought.trim().is_empty() {
            let _ = writeln!(
                out,
                "  thought: {}",
                safe_line(&clip(step.thought.trim(), 200))
            );
        }
        let name = if step.action.is_empty() {
            "(no action)"
        } else {
            step.action.as_str()
        };
        let _ = writeln!(
            out,
            "  action:  {} {}",
            safe_line(name),
            safe_line(&clip(&step.arguments, 200))
        );
        let obs = &step.observation;
        let status = if obs.failed { "failed" } else { "ok" };
        let _ = writeln!(
            out,
            "  result:  [{} · code {} · {status} · {} ms] {}",
            obs.source.as_str(),
            obs.code,
            obs.elapsed_ms,
            safe_line(&clip(&obs.text, self.observation_chars))
        );
        for r in &obs.resources {
            let _ = writeln!(
                out,
                "  file:    {} ({}, {} bytes) {}",
                r.handle,
                safe_line(&r.mime_type),
                r.bytes,
                safe_line(&r.path.to_string_lossy())
            );
        }
        for note in &step.notes {
            let _ = writeln!(out, "  note:    {}", safe_line(note));
        }
        if let Some(state) = &step.state {
            print_state(out, state);
        }
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(safe(&String::from_utf8_lossy(&text)).as_bytes());
        let _ = stdout.flush();
    }

    fn note(&self, text: &str) {
        println!("  · {}", safe_line(text));
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
        let _ = writeln!(out, "    (earlier) {}", safe_line(&clip(c, 200)));
    }
    for (i, f) in facts.iter().enumerate() {
        let _ = writeln!(
            out,
            "    {}. {}",
            i + 1,
            safe_line(&clip(f["text"].as_str().unwrap_or(""), 200))
        );
    }
    for r in state["redundant"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "    = {} {} — answered, nothing new",
            safe_line(r["action"].as_str().unwrap_or("")),
            safe_line(&clip(r["arguments"].as_str().unwrap_or(""), 80))
        );
    }
    for f in &failures {
        let _ = writeln!(
            out,
            "    ✗ {} {} — {}",
            safe_line(f["action"].as_str().unwrap_or("")),
            safe_line(&clip(f["arguments"].as_str().unwrap_or(""), 80)),
            safe_line(&clip(f["reason"].as_str().unwrap_or(""), 120))
        );
    }
}
