//! The default pass-rate judge mode. Per judge model and mode, the confusion matrices of its
//! calibrate-half and all-label entries are added up over label sets that do not overlap, and the
//! mode with the best pooled agreement wins: with several label sets measured, the choice then rests
//! on all their labels instead of on whichever single set happens to favour one mode.

use std::cmp::{Ordering, Reverse};
use std::collections::BTreeMap;

use super::{Entry, ModeChoice, Registry, Split, Verdicts, split_words};
use crate::JudgeMode;
use crate::stats::from_confusion;

/// One candidate for the default mode: the entries it adds up and the figure they make.
struct Pooled {
    /// Larger n first.
    parts: Vec<Entry>,
    /// The part itself when alone, else a synthetic entry of the summed confusion matrix.
    figure: Entry,
}

impl Registry {
    /// The pass-rate judge mode for `model`: the one with the best agreement pooled over its
    /// entries (see the module doc); for a model never measured, the best pooled mode of any model;
    /// with no measurement at all, the evidence judge. Figures of earlier prompts count only when
    /// there is nothing newer.
    pub fn choose(&self, model: &str, prompts: &BTreeMap<String, String>) -> ModeChoice {
        let found = [(true, true), (false, true), (true, false), (false, false)]
            .into_iter()
            .find_map(|(own, fresh)| self.best_pool(model, own, fresh, prompts));
        let Some((pooled, mode)) = found.and_then(|p| p.figure.mode.judge_mode().map(|m| (p, m)))
        else {
            return ModeChoice {
                mode: JudgeMode::Evidence,
                chosen_by: "default",
                entry: None,
                why: "no judge mode has a measured agreement: the evidence judge by default".into(),
            };
        };
        let why = pooled.why(model, prompts);
        ModeChoice {
            mode,
            chosen_by: "registry",
            entry: Some(pooled.figure),
            why,
        }
    }

    /// The best pool of the usable entries (never the report half) of `model` (or of any model),
    /// of current prompts only when `fresh`.
    fn best_pool(
        &self,
        model: &str,
        own: bool,
        fresh: bool,
        prompts: &BTreeMap<String, String>,
    ) -> Option<Pooled> {
        let mut groups: BTreeMap<(&str, Verdicts), Vec<&Entry>> = BTreeMap::new();
        self.entries
            .iter()
            .filter(|e| e.mode.judge_mode().is_some() && e.split != Split::Report)
            .filter(|e| !own || e.judge_model == model)
            .filter(|e| !fresh || e.fresh(prompts))
            .for_each(|e| groups.entry((&e.judge_model, e.mode)).or_default().push(e));
        // Ties go to the larger n, then to the evidence judge (the default without figures).
        let key = |p: &Pooled| {
            let f = &p.figure;
            (f.agreement, f.kappa, f.n, f.mode == Verdicts::Evidence)
        };
        groups
            .into_values()
            .flat_map(pools)
            .max_by(|a, b| key(a).partial_cmp(&key(b)).unwrap_or(Ordering::Equal))
    }
}

/// The candidates of one model and mode: one pool of the entries whose confusion matrices can be
/// added up, each over label files no larger-n part already holds, and every other entry alone (a
/// figure without its matrix cannot be added to another).
fn pools(mut entries: Vec<&Entry>) -> Vec<Pooled> {
    entries.sort_by_key(|e| Reverse(e.n));
    let (summable, alone): (Vec<&Entry>, Vec<&Entry>) =
        entries.into_iter().partition(|e| matrix(e).is_some());
    let mut parts: Vec<&Entry> = Vec::new();
    for e in summable {
        if !parts.iter().any(|p| overlap(p, e)) {
            parts.push(e);
        }
    }
    let mut out: Vec<Pooled> = alone.into_iter().map(|e| Pooled::of(&[e])).collect();
    if !parts.is_empty() {
        out.push(Pooled::of(&parts));
    }
    out
}

/// The entry's confusion matrix, when it has one that accounts for its n.
fn matrix(e: &Entry) -> Option<[[u64; 3]; 2]> {
    let m = e.calibration().confusion;
    let total: u64 = m.iter().flatten().sum();
    (e.n > 0 && total == e.n as u64).then_some(m)
}

impl Pooled {
    fn of(parts: &[&Entry]) -> Pooled {
        let parts: Vec<Entry> = parts.iter().map(|e| (*e).clone()).collect();
        let figure = match parts.as_slice() {
            [one] => one.clone(),
            _ => synthetic(&parts),
        };
        Pooled { parts, figure }
    }

    /// `the best measured agreement: …`, naming what was pooled, whose figures and how old.
    fn why(&self, model: &str, prompts: &BTreeMap<String, String>) -> String {
        let f = &self.figure;
        let whose = if f.judge_model == model {
            String::new()
        } else {
            format!(
                "; {model} itself is not measured, this is {}'s",
                f.judge_model
            )
        };
        let stale = if self.parts.iter().all(|e| e.fresh(prompts)) {
            ""
        } else {
            " (measured with earlier prompts)"
        };
        let figures = if self.parts.len() == 1 {
            format!(": {}", f.describe())
        } else {
            format!(
                ", pooled over {} label sets: {:.1}%, kappa {}, n = {} ({})",
                self.parts.len(),
                f.agreement * 100.0,
                f.calibration().kappa_text(2),
                f.n,
                f.label_set
            )
        };
        format!("the best measured agreement{figures}{whose}{stale}")
    }
}

/// One entry standing for `parts` (two or more): their summed matrix with its agreement and kappa,
/// a `label_set` naming each part (`A calibrate half + B all labels`), the parts' split when they
/// share one, else calibrate (the pool is not every label of its sets).
fn synthetic(parts: &[Entry]) -> Entry {
    let mut sum = [[0u64; 3]; 2];
    for m in parts.iter().filter_map(matrix) {
        for (row, add) in sum.iter_mut().zip(m) {
            for (cell, v) in row.iter_mut().zip(add) {
                *cell += v;
            }
        }
    }
    let c = from_confusion("", sum);
    let first = &parts[0];
    let same = |f: fn(&Entry) -> u32| parts.iter().all(|e| f(e) == f(first));
    let label_set = parts
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                label_files(&e.label_set).join(", "),
                split_words(e.split)
            )
        })
        .collect::<Vec<_>>()
        .join(" + ");
    Entry {
        judge_model: first.judge_model.clone(),
        mode: first.mode,
        label_set,
        split: if parts.iter().all(|e| e.split == first.split) {
            first.split
        } else {
            Split::Calibrate
        },
        n: c.n,
        agreement: c.accuracy,
        kappa: c.kappa,
        confusion: sum.iter().map(|r| r.to_vec()).collect(),
        prompts: parts.iter().flat_map(|e| e.prompts.clone()).collect(),
        votes: if same(|e| e.votes) { first.votes } else { 0 },
        measured: parts
            .iter()
            .map(|e| e.measured.as_str())
            .collect::<Vec<_>>()
            .join("; "),
        command: String::new(),
    }
}

/// Whether two entries share a label file.
fn overlap(a: &Entry, b: &Entry) -> bool {
    let (fa, fb) = (label_files(&a.label_set), label_files(&b.label_set));
    fa.iter()
        .any(|x| fb.iter().any(|y| glob(x, y) || glob(y, x)))
}

/// The label files a `label_set` text names: its `….json` words, a bare file name sitting beside
/// the path before it (`eval/labels/a.json + b.json`); the whole text when it names none, so that
/// only the same text overlaps it.
fn label_files(label_set: &str) -> Vec<String> {
    let mut dir = String::new();
    let mut files = Vec::new();
    for word in label_set.split(|c: char| c.is_whitespace() || "+,;()".contains(c)) {
        if !word.ends_with(".json") {
            continue;
        }
        match word.rsplit_once('/') {
            Some((d, _)) => {
                dir = format!("{d}/");
                files.push(word.to_string());
            }
            None => files.push(format!("{dir}{word}")),
        }
    }
    if files.is_empty() {
        files.push(label_set.trim().to_string());
    }
    files
}

/// Whether `path` matches `pattern`, where `*` stands for any run of characters: a label set
/// recorded as `eval/labels/*.json` holds every file there.
fn glob(pattern: &str, path: &str) -> bool {
    let Some((head, rest)) = pattern.split_once('*') else {
        return pattern == path;
    };
    let Some(mut tail) = path.strip_prefix(head) else {
        return false;
    };
    let pieces: Vec<&str> = rest.split('*').collect();
    let (last, middle) = pieces.split_last().unwrap_or((&"", &[]));
    for piece in middle {
        match tail.find(piece) {
            Some(i) => tail = &tail[i + piece.len()..],
            None => return false,
        }
    }
    tail.ends_with(last)
}
