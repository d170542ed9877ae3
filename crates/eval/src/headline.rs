//! The pass-rate headline: every pass rate printed with the judge that produced it, its measured
//! agreement with people (or "not measured"), which variance its ± is, and, when the judge is not shown
//! to be trustworthy (agreement unmeasured or below 70%), the judge-free and evidence figures first.

use std::fmt::Write as _;

use super::calibration::{ModeChoice, split_words};
use super::pass_rate::{GroupPassRate, PassRate};
use super::stats::Calibration;

/// Agreement with human labels below which the judge's pass rate is not the headline.
pub const TRUSTED_AGREEMENT: f64 = 0.70;
/// Share of unusable votes above which `eval` fails.
pub const MAX_UNUSABLE_SHARE: f64 = 0.05;

/// What every pass-rate report says about missing answers.
pub const MISSING_NOTE: &str =
    "missing answers count as failures (StableToolBench drops them from the denominator)";

/// The name a judge's numbers are reported under: model and mode.
pub fn judge_name(pr: &PassRate) -> String {
    format!("{} ({} judge)", pr.judge, pr.mode.as_str())
}

/// Whether the judge's agreement has been measured and is at least [`TRUSTED_AGREEMENT`].
pub fn trusted(calibration: Option<&Calibration>) -> bool {
    calibration.is_some_and(|c| c.accuracy >= TRUSTED_AGREEMENT)
}

/// The agreement figure that goes next to every pass rate, with the labels it was measured on.
pub fn agreement(calibration: Option<&Calibration>) -> String {
    match calibration {
        Some(c) => {
            let mut s = format!(
                "agreement {:.1}%, kappa {}, n = {}",
                c.accuracy * 100.0,
                c.kappa_text(2),
                c.n
            );
            if !c.label_set.is_empty() {
                let split = c.split.parse().map_or("", split_words);
                s.push_str(&format!(" on {} ({split})", c.label_set));
            }
            s
        }
        None => "agreement not measured".into(),
    }
}

/// Which judge mode produced the pass rate, and why that one.
pub fn mode_line(pr: &PassRate, choice: &ModeChoice) -> String {
    let why = match choice.chosen_by {
        "flag" => "set by --judge-mode".to_string(),
        "registry" => format!("chosen by {}", choice.why),
        _ => choice.why.clone(),
    };
    format!("judge {}: {} mode, {why}", pr.judge, pr.mode.as_str())
}

/// Unusable votes over judged votes (0 when nothing was judged).
pub fn unusable_share(g: &GroupPassRate) -> f64 {
    if g.judged_votes == 0 {
        0.0
    } else {
        g.unusable_votes as f64 / g.judged_votes as f64
    }
}

/// Whether a group's pass rate is a result: at most [`MAX_UNUSABLE_SHARE`] of its votes unusable.
pub fn valid(g: &GroupPassRate) -> bool {
    unusable_share(g) <= MAX_UNUSABLE_SHARE
}

/// Why a group's pass rate is not valid (`N of M judge votes (P%) got no usable verdict`), if it is not.
pub fn invalid_reason(g: &GroupPassRate) -> Option<String> {
    (!valid(g)).then(|| {
        format!(
            "{} of {} judge votes ({:.1}%) got no usable verdict (limit {:.0}%)",
            g.unusable_votes,
            g.judged_votes,
            unusable_share(g) * 100.0,
            MAX_UNUSABLE_SHARE * 100.0
        )
    })
}

/// The judge-free and evidence figures per subset.
pub fn judge_free_table(s: &mut String, pr: &PassRate) {
    let _ = writeln!(s, "judge-free and evidence figures (no model involved):");
    let _ = writeln!(
        s,
        "{:<16} {:>7} {:>7} {:>10} {:>16} {:>15} {:>16}",
        "subset",
        "queries",
        "missing",
        "answered %",
        "evidence-backed %",
        "claims supp.",
        "invented values"
    );
    for g in pr.subsets.iter().chain(std::iter::once(&pr.overall)) {
        let _ = writeln!(
            s,
            "{:<16} {:>7} {:>7} {:>10.1} {:>16.1} {:>15} {:>16}",
            g.subset,
            g.queries,
            g.missing,
            g.answered,
            g.evidence_backed,
            format!("{}/{}", g.claims_supported, g.claims),
            g.answers_with_invented_values
        );
    }
    let _ = writeln!(
        s,
        "answered: finished with an answer no rule rejected; evidence-backed: at least one claim found in a tool observation and no concrete value found nowhere; invented values: answers with a number, date, id, URL or e-mail found in no observation, argument or the request"
    );
}

fn judge_table(s: &mut String, pr: &PassRate, calibration: Option<&Calibration>) {
    let _ = writeln!(
        s,
        "pass rate by {} — {}, {} votes per query",
        judge_name(pr),
        agreement(calibration),
        pr.votes
    );
    let _ = writeln!(
        s,
        "{:<16} {:>7} {:>7} {:>7} {:>14} {:>15} {:>18} {:>9}",
        "subset",
        "queries",
        "missing",
        "by rule",
        "ours %",
        "95% CI",
        "missing dropped %",
        "unusable"
    );
    for g in pr.subsets.iter().chain(std::iter::once(&pr.overall)) {
        let _ = writeln!(
            s,
            "{:<16} {:>7} {:>7} {:>7} {:>14} {:>15} {:>18.1} {:>9}",
            g.subset,
            g.queries,
            g.missing,
            g.by_rule,
            format!("{:.1} ± {:.1}", g.pass_rate, g.std),
            format!("{:.1}–{:.1}", g.ci.low, g.ci.high),
            g.pass_rate_without_missing,
            format!("{}/{}", g.unusable_votes, g.judged_votes)
        );
    }
    let _ = writeln!(
        s,
        "±: population std over the {} judge votes (judge variance, one inference run); 95% CI: bootstrap over queries",
        pr.votes
    );
    let o = &pr.overall;
    let _ = writeln!(
        s,
        "pass rate: ours {:.1}% (missing = failure, {} of {} queries answered) · {:.1}% with missing answers dropped (StableToolBench's denominator; our judge, not its evaluator)",
        o.pass_rate,
        o.queries - o.missing,
        o.queries,
        o.pass_rate_without_missing
    );
}

/// The whole headline: judge-free figures first unless the judge is measured and trusted.
pub fn pass_rate_report(pr: &PassRate, calibration: Option<&Calibration>) -> String {
    let mut s = String::new();
    if trusted(calibration) {
        judge_table(&mut s, pr, calibration);
        s.push('\n');
        judge_free_table(&mut s, pr);
    } else {
        let why = match calibration {
            Some(c) => format!(
                "agreement with human labels is {:.1}% (< 70%)",
                c.accuracy * 100.0
            ),
            None => {
                "agreement with human labels is not measured for this judge (`--labels`)".into()
            }
        };
        let _ = writeln!(s, "the judge's pass rate is not the headline: {why}");
        judge_free_table(&mut s, pr);
        s.push('\n');
        judge_table(&mut s, pr, calibration);
    }
    let _ = writeln!(s, "note: {MISSING_NOTE}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Label;
    use crate::pass_rate::{QueryVerdict, summarise};
    use crate::stats::calibration;

    fn pr() -> PassRate {
        let v = QueryVerdict {
            subset: "G1".into(),
            query_id: 1,
            labels: vec![Label::Solved],
            reasons: vec![String::new()],
            score: 1.0,
            ..QueryVerdict::default()
        };
        summarise("m", 1, vec![v])
    }

    #[test]
    fn untrusted_or_unmeasured_judges_come_second() {
        let unmeasured = pass_rate_report(&pr(), None);
        assert!(unmeasured.starts_with("the judge's pass rate is not the headline"));
        assert!(unmeasured.find("judge-free") < unmeasured.find("pass rate by m (evidence judge)"));
        assert!(unmeasured.contains("agreement not measured"));
        let low = calibration(
            "m",
            &[
                (Label::Solved, Label::Unsolved),
                (Label::Unsolved, Label::Unsolved),
            ],
        );
        assert!(pass_rate_report(&pr(), Some(&low)).contains("50.0% (< 70%)"));
        let good = calibration(
            "m",
            &[
                (Label::Solved, Label::Solved),
                (Label::Unsolved, Label::Unsolved),
            ],
        );
        let trusted = pass_rate_report(&pr(), Some(&good));
        assert!(
            trusted.starts_with(
                "pass rate by m (evidence judge) — agreement 100.0%, kappa 1.00, n = 2"
            )
        );
        assert!(trusted.contains("±: population std over the 1 judge votes"));
    }
}
