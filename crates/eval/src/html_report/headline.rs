//! The report's headline, rendered here rather than in the page's script so it reads the same without
//! JavaScript and is checked by tests. Each run leads with the most trustworthy figure it has: the
//! solve rate by hand labels; else the pass rate of a judge whose agreement with hand labels was
//! measured at or above the threshold; else none ("not measured"). The checks without a model
//! (answered, evidence-backed) and an uncalibrated judge's pass rate follow as what they are: an
//! answer can be evidence-backed and still wrong.

use serde_json::Value;

/// Agreement with hand labels at or above which a judge's pass rate leads, when the evaluation does
/// not say (`eval` writes its threshold into `pass_rate.json`).
const DEFAULT_THRESHOLD: f64 = 0.70;

/// HTML-escapes text for element content and attribute values.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// How far a run's judge may be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    Unjudged,
    Calibrated,
    Uncalibrated,
}

impl Standing {
    fn of(run: &Value) -> Standing {
        if run["judged"].as_bool() != Some(true) {
            Standing::Unjudged
        } else if run["judge"]["trusted"].as_bool() == Some(true) {
            Standing::Calibrated
        } else {
            Standing::Uncalibrated
        }
    }

    fn class(self) -> &'static str {
        match self {
            Standing::Unjudged => "unjudged",
            Standing::Calibrated => "calibrated",
            Standing::Uncalibrated => "uncalibrated",
        }
    }

    /// The judge column's text.
    fn describe(self, run: &Value) -> String {
        let agreement = run["judge"]["agreement"]
            .as_str()
            .unwrap_or("agreement not measured");
        match self {
            Standing::Unjudged => "not judged".into(),
            Standing::Calibrated => format!("calibrated judge: {agreement}"),
            Standing::Uncalibrated if run["judge"]["agreement_value"].is_number() => format!(
                "uncalibrated judge: {agreement} (below {:.0}%)",
                threshold(run) * 100.0
            ),
            Standing::Uncalibrated => format!("uncalibrated judge: {agreement}"),
        }
    }
}

fn threshold(run: &Value) -> f64 {
    run["judge"]["threshold"]
        .as_f64()
        .unwrap_or(DEFAULT_THRESHOLD)
}

fn percent(v: &Value) -> String {
    v.as_f64().map_or("–".into(), |x| format!("{x:.1}%"))
}

/// The run's leading figure and what it is: hand labels, a calibrated judge, or nothing measured.
fn lead_figure(run: &Value) -> (String, String) {
    let labels = &run["labels"];
    if let (Some(rate), Some(solved), Some(n)) = (
        labels["rate"].as_f64(),
        labels["solved"].as_u64(),
        labels["n"].as_u64(),
    ) {
        return (
            format!("{rate:.1}%"),
            format!("solved by hand labels ({solved} of {n} labelled answers)"),
        );
    }
    match (Standing::of(run), run["pass_rates"]["ours"].as_f64()) {
        (Standing::Calibrated, Some(p)) => (
            format!("{p:.1}%"),
            format!(
                "pass rate by a calibrated judge ({})",
                run["judge"]["agreement"].as_str().unwrap_or("")
            ),
        ),
        (standing, _) => (
            "not measured".into(),
            match standing {
                Standing::Unjudged => "no hand labels and no judge results",
                _ => "no hand labels, and the judge's agreement with them is below the threshold or not measured",
            }
            .into(),
        ),
    }
}

/// The headline section for the runs of a report (the `runs` of its data).
pub fn render(runs: &[Value]) -> String {
    let bar = runs.first().map_or(DEFAULT_THRESHOLD, threshold);
    let lead = format!(
        "Each run leads with its most trustworthy figure: the solve rate by hand labels, else the pass rate of a judge whose agreement with hand labels is at least {:.0}%; without either its solve rate is not measured. Answered and evidence-backed are checks without a model, not solve rates: an evidence-backed answer can still be wrong.",
        bar * 100.0
    );
    let mut rows = String::new();
    for r in runs {
        let standing = Standing::of(r);
        let class = standing.class();
        let judge = &r["judge"];
        let (figure, what) = lead_figure(r);
        let pass = match r["pass_rates"]["ours"].as_f64() {
            Some(p) if standing == Standing::Uncalibrated => {
                format!("{p:.1}% (uncalibrated judge)")
            }
            Some(p) => format!("{p:.1}%"),
            None => "–".into(),
        };
        rows.push_str(&format!(
            "<tr class=\"{class}\"><td class=\"l\">{}</td><td class=\"lead\">{}</td><td class=\"l wrap\">{}</td><td>{}</td><td>{}</td><td class=\"l wrap\">{}</td><td class=\"l wrap judge-{class}\">{}</td></tr>\n",
            escape(r["name"].as_str().unwrap_or("")),
            escape(&figure),
            escape(&what),
            percent(&judge["answered"]),
            percent(&judge["evidence_backed"]),
            escape(&format!("{pass} by {}", judge["name"].as_str().unwrap_or("no judge"))),
            escape(&standing.describe(r)),
        ));
    }
    format!(
        "<section id=\"headline\"><h2>Headline</h2><p id=\"headline-lead\">{}</p>\n<div class=\"scroll\"><table><tr><th class=\"l\">run</th><th>solve rate</th><th class=\"l\">measured by</th><th>answered</th><th>evidence-backed</th><th class=\"l\">judge's pass rate</th><th class=\"l\">judge</th></tr>\n{rows}</table></div><div class=\"note\">answered: finished with an answer no rule rejected · evidence-backed: at least one claim found in a tool observation and no concrete value found nowhere (no model involved; not a solve rate) · the judge's pass rate counts missing answers as failures.</div></section>",
        escape(&lead)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(name: &str, trusted: bool, agreement: Option<f64>) -> Value {
        let text = agreement.map_or("agreement not measured".to_string(), |a| {
            format!("agreement {:.1}%, kappa 0.33, n = 6", a * 100.0)
        });
        json!({"name": name, "judged": true, "pass_rates": {"ours": 100.0},
               "judge": {"name": "m (evidence judge)", "agreement": text, "agreement_value": agreement,
                         "trusted": trusted, "answered": 100.0, "evidence_backed": 100.0}})
    }

    #[test]
    fn labels_lead_then_a_calibrated_judge_else_not_measured() {
        let mut labelled = run("demo", false, Some(0.667));
        labelled["labels"] = json!({"solved": 1, "n": 6, "rate": 100.0 / 6.0});
        let html = render(&[labelled]);
        assert!(
            html.contains(
                "<td class=\"lead\">16.7%</td><td class=\"l wrap\">solved by hand labels (1 of 6 labelled answers)"
            ),
            "{html}"
        );
        assert!(
            html.contains("uncalibrated judge: agreement 66.7%, kappa 0.33, n = 6 (below 70%)")
        );
        assert!(html.contains("100.0% (uncalibrated judge) by m (evidence judge)"));
        let unmeasured = render(&[run("x", false, None)]);
        assert!(unmeasured.contains("<td class=\"lead\">not measured</td>"));
        assert!(unmeasured.contains("uncalibrated judge: agreement not measured"));
        let good = render(&[run("y", true, Some(0.9))]);
        assert!(good.contains(
            "<td class=\"lead\">100.0%</td><td class=\"l wrap\">pass rate by a calibrated judge (agreement 90.0%"
        ));
        assert!(!good.contains("uncalibrated"));
        let unjudged = render(&[json!({"name": "<b>", "judged": false})]);
        assert!(unjudged.contains("&lt;b&gt;"));
        assert!(unjudged.contains("no hand labels and no judge results"));
        // The lead figure comes before the checks without a model.
        assert!(good.find("solve rate") < good.find("evidence-backed"));
    }
}
