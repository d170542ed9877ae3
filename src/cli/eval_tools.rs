//! The tool metrics of `eval` (IR/NR/HR/CR, planning P/R/F1): the relevant APIs come from the
//! queries of the data the run was made from (its run.json), or `--data` when given; queries whose
//! relevant APIs are not found there get only the metrics that need none, and are named.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::GlobalArgs;
use sum2act_core::toolbench::io::write_json_atomic;
use sum2act_eval::AnswerSet;
use sum2act_eval::tool_metrics::{Relevant, ToolMetrics, relevant_functions, table, tool_metrics};

/// Computes the metrics, writes `OUT/tool_metrics.json` and returns them with their table.
/// `run_data` is the data directory the run's manifest names.
pub fn report(
    global: &GlobalArgs,
    set: &AnswerSet,
    out: &Path,
    run_data: Option<PathBuf>,
) -> anyhow::Result<(Vec<ToolMetrics>, String)> {
    let mut relevant = Relevant::new();
    let mut global = global.clone();
    if global.data.is_none() {
        global.data = run_data.filter(|d| d.join("queries").is_dir());
    }
    let mut source = String::from("no data directory");
    match super::open_data(&global) {
        Ok((data, catalog)) => {
            source = data.root().display().to_string();
            for subset in set.subsets() {
                if let Ok(queries) = data.queries(&subset) {
                    relevant_functions(&subset, &queries, &catalog, &mut relevant);
                }
            }
        }
        Err(e) => eprintln!("warning: no relevant APIs for the tool metrics ({e})"),
    }
    let ms = tool_metrics(set, &relevant);
    write_json_atomic(&out.join("tool_metrics.json"), &ms)?;
    let mut text = table(&ms);
    // Per subset (the row `all`, when there is one, sums them).
    for m in ms
        .iter()
        .filter(|m| m.subset != "all" && m.with_relevant < m.queries)
    {
        let _ = writeln!(
            text,
            "note: {}: {} of {} queries have no relevant APIs in {source}; NR and plan P/R/F1 leave them out (--data names the data the run was made from)",
            m.subset,
            m.queries - m.with_relevant,
            m.queries
        );
    }
    Ok((ms, text))
}
