//! Live progress on a terminal, with indicatif: a batch's bars (one per subset plus a total), chosen by
//! `--progress` (the plain lines and the totals are the core's `batch::PlainProgress`, `Totals`), and a
//! judging pass's bar ([`Judging`]). Every bar is drawn in one style ([`counting_bar`]).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use sum2act_core::batch::{EpisodeView, NoProgress, PlainProgress, Progress, Totals};
use sum2act_core::terminal::safe_line;
use sum2act_eval::JudgeProgress;

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

sum2act_core::names::named_values!(ProgressMode, "progress mode" {
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
        let mut bars = BTreeMap::new();
        for (name, total, done) in subsets {
            let bar = self.multi.add(counting_bar(name, *total, "{msg}"));
            bar.set_position(*done as u64);
            bars.insert(name.clone(), (bar, 0));
        }
        let (total, done) = self.totals.begin(subsets);
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
            sum2act_core::terminal::safe_line(subset),
            sum2act_core::terminal::safe_line(error)
        ));
    }

    fn note(&self, text: &str) {
        let _ = self.multi.println(sum2act_core::terminal::safe(text));
    }

    fn end(&self) {
        if let Ok(bars) = self.subsets.lock() {
            bars.values().for_each(|(bar, _)| bar.finish());
        }
        self.total.finish();
        let _ = self.multi.clear();
    }
}

/// A bar of `total` things counted, in the one style every bar here is drawn with: `prefix`, the bar,
/// `pos/len`, then `tail` (an indicatif template fragment).
pub fn counting_bar(prefix: &str, total: usize, tail: &str) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    let template = format!("{{prefix:<16}} [{{bar:30.cyan/blue}}] {{pos}}/{{len}} {tail}");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(prefix.to_string());
    bar
}

/// One judging pass on stderr: a line saying what is judged, always (judging with a local model takes
/// minutes), then a bar of items judged while stderr is a terminal.
pub struct Judging {
    /// What is judged, e.g. "answers of runs/a".
    what: String,
    model: String,
    bar: std::sync::Mutex<Option<ProgressBar>>,
}

impl Judging {
    /// Judging `noun` of `run` (a path, or "B against A") with `model`.
    pub fn new(noun: &str, run: &std::path::Path, model: &str) -> Self {
        Self::of(noun, &run.display().to_string(), model)
    }

    /// Judging `noun` of `what` with `model`.
    pub fn of(noun: &str, what: &str, model: &str) -> Self {
        Judging {
            what: safe_line(&format!("{noun} of {what}")),
            model: safe_line(model),
            bar: std::sync::Mutex::new(None),
        }
    }
}

impl JudgeProgress for Judging {
    fn start(&self, total: usize) {
        if total == 0 {
            return;
        }
        eprintln!("judging {total} {} with {}…", self.what, self.model);
        if !std::io::stderr().is_terminal() {
            return;
        }
        let bar = counting_bar("judging", total, "{elapsed} (eta {eta})");
        bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(8));
        bar.enable_steady_tick(Duration::from_millis(250));
        if let Ok(mut slot) = self.bar.lock() {
            *slot = Some(bar);
        }
    }

    fn judged(&self) {
        if let Ok(slot) = self.bar.lock()
            && let Some(bar) = slot.as_ref()
        {
            bar.inc(1);
        }
    }

    fn end(&self) {
        if let Ok(mut slot) = self.bar.lock()
            && let Some(bar) = slot.take()
        {
            bar.finish_and_clear();
        }
    }
}
