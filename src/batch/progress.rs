//! Live progress of a batch: indicatif bars (one per subset plus a total) on a terminal, one plain
//! log line per query otherwise (CI logs, `nohup`), or nothing.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

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

/// How to show progress (`--progress`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProgressMode {
    /// Bars when stdout and stderr are terminals, plain lines otherwise.
    #[default]
    Auto,
    Bars,
    Plain,
    Off,
}

crate::names::named_values!(ProgressMode, "progress mode" {
    Auto => "auto": "Bars when stdout and stderr are terminals, plain lines otherwise",
    Bars => "bars": "",
    Plain => "plain": "",
    Off => "off": "",
});

/// Builds the progress display for `mode`.
pub fn make_progress(mode: ProgressMode) -> Arc<dyn Progress> {
    let bars = match mode {
        ProgressMode::Auto => std::io::stdout().is_terminal() && std::io::stderr().is_terminal(),
        ProgressMode::Bars => true,
        ProgressMode::Plain => false,
        ProgressMode::Off => return Arc::new(NoProgress),
    };
    if bars {
        Arc::new(Bars::new())
    } else {
        Arc::new(PlainProgress::new())
    }
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

/// Running totals shared by both displays.
#[derive(Default)]
struct Totals {
    total: AtomicU64,
    done: AtomicU64,
    answered: AtomicU64,
    tokens: AtomicU64,
    /// Micro-dollars, so an atomic integer can hold it.
    cost_micro: AtomicU64,
}

impl Totals {
    fn record(&self, ep: &EpisodeView) -> u64 {
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

    fn line(&self) -> String {
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
        let total: usize = subsets.iter().map(|s| s.1).sum();
        let done: usize = subsets.iter().map(|s| s.2).sum();
        self.totals.total.store(total as u64, Ordering::Relaxed);
        self.totals.done.store(done as u64, Ordering::Relaxed);
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
            self.totals.total.load(Ordering::Relaxed),
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

/// indicatif bars: one per subset and a total with ETA.
struct Bars {
    multi: MultiProgress,
    subsets: std::sync::Mutex<BTreeMap<String, (ProgressBar, u64)>>,
    total: ProgressBar,
    totals: Totals,
}

impl Bars {
    fn new() -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8));
        let total = ProgressBar::new(0);
        if let Ok(style) = ProgressStyle::with_template(
            "{prefix:<16.bold} [{bar:30.green/white}] {pos}/{len} {percent:>3}% ETA {eta:<5} {msg}",
        ) {
            total.set_style(style.progress_chars("=> "));
        }
        total.set_prefix("total");
        Bars {
            multi,
            subsets: std::sync::Mutex::new(BTreeMap::new()),
            total,
            totals: Totals::default(),
        }
    }
}

impl Progress for Bars {
    fn start(&self, subsets: &[(String, usize, usize)]) {
        let style =
            ProgressStyle::with_template("{prefix:<16} [{bar:30.cyan/blue}] {pos}/{len} {msg}")
                .map(|s| s.progress_chars("=> "));
        let mut bars = BTreeMap::new();
        for (name, total, done) in subsets {
            let bar = self.multi.add(ProgressBar::new(*total as u64));
            if let Ok(style) = &style {
                bar.set_style(style.clone());
            }
            bar.set_prefix(name.clone());
            bar.set_position(*done as u64);
            bars.insert(name.clone(), (bar, 0));
        }
        let total: usize = subsets.iter().map(|s| s.1).sum();
        let done: usize = subsets.iter().map(|s| s.2).sum();
        self.totals.done.store(done as u64, Ordering::Relaxed);
        let total_bar = self.multi.add(self.total.clone());
        total_bar.set_length(total as u64);
        total_bar.set_position(done as u64);
        // ETA counts only this invocation's queries, not those resumed from disk.
        total_bar.reset_eta();
        total_bar.enable_steady_tick(Duration::from_millis(250));
        total_bar.set_message(self.totals.line());
        if let Ok(mut guard) = self.subsets.lock() {
            *guard = bars;
        }
    }

    fn finished(&self, ep: &EpisodeView) {
        self.totals.record(ep);
        if let Ok(mut bars) = self.subsets.lock()
            && let Some((bar, answered)) = bars.get_mut(&ep.subset)
        {
            bar.inc(1);
            *answered += u64::from(ep.answered());
            bar.set_message(format!("answered {answered} this run"));
        }
        self.total.inc(1);
        self.total.set_message(self.totals.line());
    }

    fn failed(&self, subset: &str, query_id: u64, error: &str) {
        let _ = self.multi.println(format!(
            "failed: {} {query_id}: {}",
            crate::terminal::safe_line(subset),
            crate::terminal::safe_line(error)
        ));
    }

    fn note(&self, text: &str) {
        let _ = self.multi.println(crate::terminal::safe(text));
    }

    fn end(&self) {
        if let Ok(bars) = self.subsets.lock() {
            bars.values().for_each(|(bar, _)| bar.finish());
        }
        self.total.finish();
        let _ = self.multi.clear();
    }
}
