//! The tool metrics of `eval` (IR/NR/HR/CR, planning P/R/F1): the relevant APIs come from the
//! queries of `--data`; subsets it does not have get the metrics that need no relevant APIs.

use std::path::Path;

use super::GlobalArgs;
use crate::eval::AnswerSet;
use crate::eval::tool_metrics::{Relevant, ToolMetrics, relevant_functions, table, tool_metrics};
use crate::toolbench::io::write_json_atomic;

/// Computes the metrics, writes `OUT/tool_metrics.json` and returns them with their table.
pub fn report(
    global: &GlobalArgs,
    set: &AnswerSet,
    out: &Path,
) -> anyhow::Result<(Vec<ToolMetrics>, String)> {
    let mut relevant = Relevant::new();
    match super::open_data(global) {
        Ok((data, catalog)) => {
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
    Ok((ms.clone(), table(&ms)))
}
