//! Reports: plain-text tables for the terminal, and JSON/CSV files for machines. Also the human labels
//! file of judge calibration and the registry of known judge agreements.

use std::fmt::Write as _;
use std::path::Path;

use super::EvalError;
use super::headline::MISSING_NOTE;
use super::metrics::Metrics;
use super::pass_rate::PassRate;
use super::stats::Calibration;
use super::win_rate::Comparison;
use sum2act_core::toolbench::io::write_atomic;

/// The line printed next to every pass rate.
pub fn agreement_line(judge: &str, known: Option<&Calibration>) -> String {
    match known {
        Some(c) => format!(
            "judge {judge}: {} with human labels; ToolEval reports 87.1% for its ChatGPT judge",
            super::headline::agreement(Some(c))
        ),
        None => format!(
            "judge {judge}: agreement with human labels NOT MEASURED — run `sum2act calibrate RUN_DIR... --labels LABELS.json [--pairs PAIRS.json] --save REGISTRY` (ToolEval reports 87.1% for its ChatGPT judge)"
        ),
    }
}

pub fn calibration_table(c: &Calibration) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "judge calibration against {} human labels ({}):",
        c.n, c.judge
    );
    let _ = writeln!(
        s,
        "  accuracy {:.1}%   Cohen's kappa {}",
        c.accuracy * 100.0,
        c.kappa_text(3)
    );
    let _ = writeln!(
        s,
        "  {:<16} {:>8} {:>9} {:>7}",
        "human \\ judge", "Solved", "Unsolved", "Unsure"
    );
    for (name, row) in ["Solved", "Unsolved"].iter().zip(c.confusion) {
        let _ = writeln!(
            s,
            "  {:<16} {:>8} {:>9} {:>7}",
            name, row[0], row[1], row[2]
        );
    }
    if !c.unmatched.is_empty() {
        let _ = writeln!(
            s,
            "  {} labelled queries not in this run: {}",
            c.unmatched.len(),
            c.unmatched.join(", ")
        );
    }
    s
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

pub fn metrics_table(ms: &[Metrics]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "judge-free metrics (averages per answered query)");
    let _ = writeln!(
        s,
        "{:<16} {:>8} {:>8} {:>6} {:>9} {:>9} {:>10} {:>11} {:>12} {:>8} {:>8}",
        "subset",
        "answered",
        "finish%",
        "steps",
        "llm calls",
        "tokens",
        "cost $",
        "tok/solved",
        "$/solved",
        "tool err%",
        "halluc%"
    );
    for m in ms {
        let _ = writeln!(
            s,
            "{:<16} {:>8} {:>8.1} {:>6.1} {:>9} {:>9} {:>10} {:>11} {:>12} {:>8.1} {:>8.1}",
            m.subset,
            format!("{}/{}", m.answered, m.queries),
            m.finish_rate,
            m.avg_steps,
            opt(m.avg_llm_calls, 1),
            opt(m.avg_tokens, 0),
            opt(m.avg_cost_usd, 4),
            opt(m.tokens_per_solved, 0),
            opt(m.cost_per_solved_usd, 4),
            m.tool_error_rate,
            m.hallucination_rate
        );
    }
    s
}

pub fn comparison_table(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} (candidate) vs {} (reference): {} judge rounds per query, judge {}, 95% paired-bootstrap intervals ({} resamples, seed {})",
        c.candidate, c.reference, c.rounds, c.judge, c.resamples, c.seed
    );
    let _ = writeln!(
        s,
        "{:<16} {:>5} {:>4} {:>4} {:>4} {:>22} {:>8} {:>8} {:>8} {:>24} {:>8}",
        "subset",
        "n",
        "win",
        "loss",
        "tie",
        "win rate % [95% CI]",
        "p(sign)",
        "ref PR%",
        "cand PR%",
        "PR diff % [95% CI]",
        "p(sign)"
    );
    for g in c.subsets.iter().chain(std::iter::once(&c.overall)) {
        let _ = writeln!(
            s,
            "{:<16} {:>5} {:>4} {:>4} {:>4} {:>22} {:>8.3} {:>8.1} {:>8.1} {:>24} {:>8.3}",
            g.subset,
            g.queries,
            g.wins,
            g.losses,
            g.ties,
            format!(
                "{:.1} [{:.1}, {:.1}]",
                g.win_rate.estimate, g.win_rate.low, g.win_rate.high
            ),
            g.win_p_value,
            g.reference_pass_rate,
            g.candidate_pass_rate,
            format!(
                "{:+.1} [{:+.1}, {:+.1}]",
                g.pass_rate_difference.estimate,
                g.pass_rate_difference.low,
                g.pass_rate_difference.high
            ),
            g.pass_p_value
        );
    }
    let _ = writeln!(
        s,
        "note: win rate = wins / queries (ties count 0 and are shown separately); {MISSING_NOTE}"
    );
    s
}

/// Quotes a CSV field when needed.
fn csv_field(v: &str) -> String {
    if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

/// Writes one CSV table atomically: the header, then one row per item. Every CSV file the
/// evaluator writes goes through here.
fn write_table<T>(
    path: &Path,
    header: &[&str],
    items: impl IntoIterator<Item = T>,
    row: impl Fn(T) -> Vec<String>,
) -> Result<(), EvalError> {
    let mut out = header.join(",");
    out.push('\n');
    for item in items {
        let fields: Vec<String> = row(item).iter().map(|f| csv_field(f)).collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    write_atomic(path, out.as_bytes())?;
    Ok(())
}

/// `pass_rate.csv` (per subset and overall) and `verdicts.csv` (per query).
pub fn write_pass_rate_csv(dir: &Path, pr: &PassRate) -> Result<(), EvalError> {
    let header = [
        "subset",
        "queries",
        "missing",
        "by_rule",
        "pass_rate",
        "std",
        "pass_rate_without_missing",
        "run_pass_rates",
        "unusable_votes",
        "valid",
    ];
    let groups = pr.subsets.iter().chain(std::iter::once(&pr.overall));
    write_table(&dir.join("pass_rate.csv"), &header, groups, |g| {
        vec![
            g.subset.clone(),
            g.queries.to_string(),
            g.missing.to_string(),
            g.by_rule.to_string(),
            format!("{:.2}", g.pass_rate),
            format!("{:.2}", g.std),
            format!("{:.2}", g.pass_rate_without_missing),
            joined(g.run_pass_rates.iter().map(|r| format!("{r:.2}"))),
            format!("{}/{}", g.unusable_votes, g.judged_votes),
            // A pass rate with too many unusable votes is not a result, whatever its figure says.
            if super::headline::valid(g) {
                "yes"
            } else {
                "no"
            }
            .to_string(),
        ]
    })?;
    let header = [
        "subset", "query_id", "source", "rule", "score", "labels", "reason", "unusable",
    ];
    write_table(&dir.join("verdicts.csv"), &header, &pr.queries, |q| {
        vec![
            q.subset.clone(),
            q.query_id.to_string(),
            format!("{:?}", q.source).to_lowercase(),
            q.rule.map(|r| r.as_str()).unwrap_or_default().to_string(),
            format!("{:.3}", q.score),
            joined(q.labels.iter().map(|l| l.as_str().to_string())),
            q.reasons.first().cloned().unwrap_or_default(),
            q.unusable.to_string(),
        ]
    })
}

/// Values in one CSV field, space-separated.
fn joined(values: impl Iterator<Item = String>) -> String {
    values.collect::<Vec<_>>().join(" ")
}

pub fn write_metrics_csv(path: &Path, ms: &[Metrics]) -> Result<(), EvalError> {
    let o = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_default();
    let header = [
        "subset",
        "queries",
        "answered",
        "finish_rate",
        "avg_steps",
        "avg_llm_calls",
        "avg_tokens",
        "avg_cost_usd",
        "tokens_per_solved",
        "cost_per_solved_usd",
        "tool_calls",
        "tool_error_rate",
        "hallucination_rate",
    ];
    write_table(path, &header, ms, |m| {
        vec![
            m.subset.clone(),
            m.queries.to_string(),
            m.answered.to_string(),
            format!("{:.2}", m.finish_rate),
            format!("{:.3}", m.avg_steps),
            o(m.avg_llm_calls),
            o(m.avg_tokens),
            o(m.avg_cost_usd),
            o(m.tokens_per_solved),
            o(m.cost_per_solved_usd),
            m.tool_calls.to_string(),
            format!("{:.2}", m.tool_error_rate),
            format!("{:.2}", m.hallucination_rate),
        ]
    })
}

/// `compare.csv` (per subset and overall) and `preferences.csv` (per query).
pub fn write_comparison_csv(dir: &Path, c: &Comparison) -> Result<(), EvalError> {
    let header = [
        "subset",
        "queries",
        "wins",
        "losses",
        "ties",
        "win_rate",
        "win_rate_low",
        "win_rate_high",
        "win_rate_ties_half",
        "win_p_value",
        "reference_pass_rate",
        "candidate_pass_rate",
        "pass_rate_difference",
        "pass_rate_difference_low",
        "pass_rate_difference_high",
        "pass_p_value",
    ];
    let groups = c.subsets.iter().chain(std::iter::once(&c.overall));
    write_table(&dir.join("compare.csv"), &header, groups, |g| {
        vec![
            g.subset.clone(),
            g.queries.to_string(),
            g.wins.to_string(),
            g.losses.to_string(),
            g.ties.to_string(),
            format!("{:.2}", g.win_rate.estimate),
            format!("{:.2}", g.win_rate.low),
            format!("{:.2}", g.win_rate.high),
            format!("{:.2}", g.win_rate_ties_half),
            format!("{:.4}", g.win_p_value),
            format!("{:.2}", g.reference_pass_rate),
            format!("{:.2}", g.candidate_pass_rate),
            format!("{:.2}", g.pass_rate_difference.estimate),
            format!("{:.2}", g.pass_rate_difference.low),
            format!("{:.2}", g.pass_rate_difference.high),
            format!("{:.4}", g.pass_p_value),
        ]
    })?;
    let header = [
        "subset",
        "query_id",
        "outcome",
        "reference_rounds",
        "candidate_rounds",
        "decided_by",
    ];
    write_table(&dir.join("preferences.csv"), &header, &c.queries, |q| {
        vec![
            q.subset.clone(),
            q.query_id.to_string(),
            format!("{:?}", q.outcome).to_lowercase(),
            q.reference_rounds.to_string(),
            q.candidate_rounds.to_string(),
            joined(q.rounds.iter().map(|r| r.decided_by.as_str().to_string())),
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_fields() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
