//! Reading answer files back (for resume, merge and reports) and the per-subset summary table.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::BatchError;
use crate::setup::ErrorEpisode;
use crate::toolbench::answer::{Counters, ErrorCause, FinishKind, OUR_KEY, RecordedFinish};
use crate::toolbench::io::parse_json;

/// The part of an answer file's `sum2act` record that batch bookkeeping needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EpisodeView {
    #[serde(default)]
    pub method: String,
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub subset: String,
    pub query_id: u64,
    /// `give_answer`, `give_up`, `limit` or `error`.
    #[serde(default)]
    pub finish: RecordedFinish,
    #[serde(default)]
    pub counters: Counters,
    /// Why an `error` episode stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whose failure that was (older files: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_cause: Option<ErrorCause>,
}

impl EpisodeView {
    /// An `error` episode that never got a reply from the model (a bad key, an unknown model, an
    /// endpoint that is not there): the setup is at fault, not the query.
    pub(crate) fn never_reached_model(&self) -> bool {
        matches!(
            self.error_episode(),
            Some(ErrorEpisode::Setup | ErrorEpisode::NoReply)
        )
    }

    /// Whose fault the episode is when it ended in `error` (`None` when it did not).
    pub fn error_episode(&self) -> Option<ErrorEpisode> {
        self.finish
            .is(FinishKind::Error)
            .then(|| ErrorEpisode::of(self.tokens(), self.error_cause))
    }

    /// Reads the view out of an answer file's JSON.
    pub fn from_answer(file: &Value) -> Option<Self> {
        serde_json::from_value(file.get(OUR_KEY)?.clone()).ok()
    }

    pub fn answered(&self) -> bool {
        self.finish.is(FinishKind::GiveAnswer)
    }

    pub(crate) fn tokens(&self) -> u64 {
        self.counters.prompt_tokens + self.counters.completion_tokens
    }
}

/// Reads an answer file; `None` when it is missing, half-written or not one of ours (such a query is
/// run again on resume).
pub(crate) fn read_answer_file(path: &Path) -> Option<(Value, EpisodeView)> {
    let text = std::fs::read_to_string(path).ok()?;
    let value: Value = parse_json(path, &text).ok()?;
    let view = EpisodeView::from_answer(&value)?;
    Some((value, view))
}

/// An answer file found in a run directory: its path, its JSON and the batch view of it.
pub(crate) type AnswerFile = (PathBuf, Value, EpisodeView);

/// Every answer file of a run directory (`*/{qid}_{method}.json`), sorted by (subset, query id).
/// Files that do not parse are returned separately so callers can name them.
pub fn scan_run_dir(run_dir: &Path) -> Result<(Vec<AnswerFile>, Vec<PathBuf>), BatchError> {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    let entries = std::fs::read_dir(run_dir).map_err(|e| BatchError::io(run_dir, e))?;
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for dir in subdirs {
        let Ok(files) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in files.filter_map(|e| e.ok().map(|e| e.path())) {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            // Only `{query_id}_{method}.json`: evaluation outputs and reports live beside answer files.
            let is_answer = name.ends_with(".json")
                && name.split_once('_').is_some_and(|(id, _)| {
                    !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())
                });
            if !is_answer {
                continue;
            }
            match read_answer_file(&path) {
                Some((value, mut view)) => {
                    // The folder is where the file is; a record's own subset is only trusted when
                    // it is a plain name (a path there would lead writers outside the run).
                    if crate::toolbench::check_subset_name(&view.subset).is_err() {
                        view.subset = dir
                            .file_name()
                            .map(|n| n.to_string_lossy().to_string())
                            .unwrap_or_default();
                    }
                    good.push((path, value, view));
                }
                None => bad.push(path),
            }
        }
    }
    good.sort_by(|a, b| (&a.2.subset, a.2.query_id).cmp(&(&b.2.subset, b.2.query_id)));
    bad.sort();
    Ok((good, bad))
}

/// One line of the summary table.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SummaryRow {
    pub subset: String,
    /// Queries selected for this run (this shard).
    pub queries: usize,
    /// Queries with an answer file.
    pub finished: usize,
    /// Finished with `give_answer`.
    pub answered: usize,
    pub give_answer_rate: f64,
    pub avg_steps: f64,
    pub llm_calls: u64,
    pub tokens: u64,
    pub cost_usd: f64,
    /// Mean wall time per finished query, seconds.
    pub avg_wall_s: f64,
    /// Episodes that ended in `error`.
    pub errors: usize,
}

impl SummaryRow {
    fn add(&mut self, v: &EpisodeView) {
        self.finished += 1;
        if v.answered() {
            self.answered += 1;
        }
        if v.finish.is(FinishKind::Error) {
            self.errors += 1;
        }
        self.avg_steps += v.counters.steps as f64;
        self.llm_calls += v.counters.llm_calls;
        self.tokens += v.tokens();
        self.cost_usd += v.counters.cost_usd;
        self.avg_wall_s += v.counters.wall_ms as f64 / 1000.0;
    }

    fn close(&mut self) {
        let n = self.finished.max(1) as f64;
        self.avg_steps /= n;
        self.avg_wall_s /= n;
        self.give_answer_rate = if self.finished == 0 {
            0.0
        } else {
            self.answered as f64 / self.finished as f64
        };
    }
}

/// The per-subset summary of a run, plus a total row.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub method: String,
    pub model: String,
    pub rows: Vec<SummaryRow>,
    pub total: SummaryRow,
    /// Wall time of this invocation, seconds.
    pub wall_s: f64,
    /// Where the tool replies came from, when the answer files were read for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<super::Provenance>,
}

impl Summary {
    /// Builds the table from the selected queries per subset and the episodes found for them.
    pub fn build(
        method: &str,
        model: &str,
        selected: &BTreeMap<String, usize>,
        episodes: &[EpisodeView],
        wall_s: f64,
    ) -> Self {
        let mut rows: BTreeMap<&str, SummaryRow> = selected
            .iter()
            .map(|(s, n)| {
                (
                    s.as_str(),
                    SummaryRow {
                        subset: s.clone(),
                        queries: *n,
                        ..SummaryRow::default()
                    },
                )
            })
            .collect();
        let mut total = SummaryRow {
            subset: "total".into(),
            queries: selected.values().sum(),
            ..SummaryRow::default()
        };
        for v in episodes {
            if let Some(row) = rows.get_mut(v.subset.as_str()) {
                row.add(v);
                total.add(v);
            }
        }
        let mut rows: Vec<SummaryRow> = rows.into_values().collect();
        rows.iter_mut().for_each(SummaryRow::close);
        total.close();
        Summary {
            method: method.to_string(),
            model: model.to_string(),
            rows,
            total,
            wall_s,
            provenance: None,
        }
    }

    /// Adds the run's reply provenance (printed under the table, kept in `summary.json`).
    pub fn with_provenance(mut self, provenance: super::Provenance) -> Self {
        self.provenance = Some(provenance);
        self
    }

    /// The table users read at the end of a batch.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "method {} · model {}", self.method, self.model);
        let _ = writeln!(
            out,
            "{:<16} {:>7} {:>8} {:>9} {:>9} {:>9} {:>10} {:>10} {:>9} {:>7}",
            "subset",
            "queries",
            "finished",
            "answered",
            "avg steps",
            "llm calls",
            "tokens",
            "cost $",
            "avg s",
            "errors"
        );
        for row in self.rows.iter().chain(std::iter::once(&self.total)) {
            if row.subset == "total" {
                let _ = writeln!(out, "{}", "-".repeat(103));
            }
            let _ = writeln!(
                out,
                "{:<16} {:>7} {:>8} {:>9} {:>9.1} {:>9} {:>10} {:>10.4} {:>9.2} {:>7}",
                row.subset,
                row.queries,
                row.finished,
                format!("{:.1}%", row.give_answer_rate * 100.0),
                row.avg_steps,
                row.llm_calls,
                row.tokens,
                row.cost_usd,
                row.avg_wall_s,
                row.errors
            );
        }
        let _ = writeln!(
            out,
            "answered = finished with give_answer (not judged; run `sum2act eval` for pass rates) · wall {:.1} s",
            self.wall_s
        );
        if let Some(p) = &self.provenance {
            let _ = writeln!(out, "{}", p.line());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view(subset: &str, id: u64, finish: &str) -> EpisodeView {
        EpisodeView::from_answer(&json!({"sum2act": {"subset": subset, "query_id": id, "finish": finish,
            "counters": {"llm_calls": 2, "prompt_tokens": 100, "completion_tokens": 20, "steps": 3, "wall_ms": 500, "cost_usd": 0.01}}}))
        .unwrap_or_default()
    }

    #[test]
    fn summary_counts_per_subset_and_total() {
        let selected = BTreeMap::from([("A".to_string(), 3), ("B".to_string(), 1)]);
        let eps = vec![
            view("A", 1, "give_answer"),
            view("A", 2, "give_up"),
            view("B", 7, "give_answer"),
        ];
        let s = Summary::build("sum2act", "m", &selected, &eps, 1.0);
        assert_eq!(s.rows[0].finished, 2);
        assert_eq!(s.rows[0].answered, 1);
        assert!((s.rows[0].give_answer_rate - 0.5).abs() < 1e-9);
        assert_eq!(s.total.queries, 4);
        assert_eq!(s.total.tokens, 360);
        let table = s.table();
        assert!(
            table.contains("50.0%") && table.contains("total"),
            "{table}"
        );
    }
}
