//! Live progress of a batch: what the runner reports ([`Progress`]), one plain log line per query
//! (CI logs, `nohup`), or nothing; the binary adds terminal bars over the same [`Totals`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::EpisodeView;

/// Receives the runner's events; called from many tasks at once.
pub trait Progress: Send + Sync {
    /// The batch starts: per subset (name, selected queries, already finished).
    fn start(&self, subsets: &[(String, usize, usize)]);
    /// A query finished and its answer file is written.
    fn finished(&self, episode: &EpisodeView);
    /// A query could not be run (no answer file written).
    fn failed(&self, subset: &str, query_id: u64, error: &str);
    /// A message for the user (stopping, abandoning).
    fn note(&self, text: &str);
    /// The batch ended; clear bars.
    fn end(&self);
}

/// Shows nothing.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: &[(String, usize, usize)]) {}
    fn finished(&self, _: &EpisodeView) {}
    fn failed(&self, _: &str, _: u64, _: &str) {}
    fn note(&self, _: &str) {}
    fn end(&self) {}
}

/// Running totals shared by every display.
#[derive(Default)]
pub struct Totals {
    total: AtomicU64,
    done: AtomicU64,
    answered: AtomicU64,
    tokens: AtomicU64,
    /// Micro-dollars, so an atomic integer can hold it.
    cost_micro: AtomicU64,
}

impl Totals {
    /// The batch starts with `subsets` (name, selected, already finished): the queries in all and
    /// those already finished, which the totals start from.
    pub fn begin(&self, subsets: &[(String, usize, usize)]) -> (usize, usize) {
        let total: usize = subsets.iter().map(|s| s.1).sum();
        let done: usize = subsets.iter().map(|s| s.2).sum();
        self.total.store(total as u64, Ordering::Relaxed);
        self.done.store(done as u64, Ordering::Relaxed);
        (total, done)
    }

    /// Counts a finished episode; the number finished so far.
    pub fn record(&self, ep: &EpisodeView) -> u64 {
        if ep.answered() {
            self.answered.fetch_add(1, Ordering::Relaxed);
        }
        self.tokens.fetch_add(ep.tokens(), Ordering::Relaxed);
        self.cost_micro.fetch_add(
            (ep.counters.cost_usd * 1e6).round() as u64,
            Ordering::Relaxed,
        );
        self.done.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The queries in all, as the batch started.
    pub(crate) fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// "answered A/D · T tokens · $C".
    pub fn line(&self) -> String {
        format!(
            "answered {}/{} · {} tokens · ${:.4}",
            self.answered.load(Ordering::Relaxed),
            self.done.load(Ordering::Relaxed),
            human(self.tokens.load(Ordering::Relaxed)),
            self.cost_micro.load(Ordering::Relaxed) as f64 / 1e6
        )
    }
}

fn human(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.2}M", n as f64 / 1e6),
    }
}

/// One log line per finished query, on stderr.
pub struct PlainProgress {
    totals: Totals,
    started: Instant,
}

impl PlainProgress {
    pub fn new() -> Self {
        PlainProgress {
            totals: Totals::default(),
            started: Instant::now(),
        }
    }
}

impl Default for PlainProgress {
    fn default() -> Self {
        Self::new()
    }
}

impl Progress for PlainProgress {
    fn start(&self, subsets: &[(String, usize, usize)]) {
        let (total, done) = self.totals.begin(subsets);
        let parts: Vec<String> = subsets
            .iter()
            .map(|(s, n, d)| format!("{s} {d}/{n}"))
            .collect();
        eprintln!(
            "batch: {total} queries, {done} already finished ({})",
            parts.join(", ")
        );
    }

    fn finished(&self, ep: &EpisodeView) {
        let done = self.totals.record(ep);
        eprintln!(
            "[{done}/{}] {} {}: {} in {} steps, {} llm calls, {} tokens, {:.2} s · {} · {:.0} s elapsed",
            self.totals.total(),
            ep.subset,
            ep.query_id,
            ep.finish,
            ep.counters.steps,
            ep.counters.llm_calls,
            ep.tokens(),
            ep.counters.wall_ms as f64 / 1000.0,
            self.totals.line(),
            self.started.elapsed().as_secs_f64()
        );
    }

    fn failed(&self, subset: &str, query_id: u64, error: &str) {
        eprintln!(
            "[failed] {} {query_id}: {}",
            crate::terminal::safe_line(subset),
            crate::terminal::safe_line(error)
        );
    }

    fn note(&self, text: &str) {
        eprintln!("{}", crate::terminal::safe(text));
    }

    fn end(&self) {}
}
