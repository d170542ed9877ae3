//! The report's headline, rendered here rather than in the page's script so it reads the same without
//! JavaScript and is checked by tests: per run, the judge-free figures first, then the judge's pass
//! rate named as a calibrated judge's (agreement at or above the threshold, shown beside it) or an
//! uncalibrated one's (below it, or never measured), as `sum2act eval` prints it.

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
fn standing(run: &Value) -> (&'static str, String) {
    let judge = &run["judge"];
    if run["judged"].as_bool() != Some(true) {
        return ("unjudged", "not judged".into());
    }
    let agreement = judge["agreement"]
        .as_str()
        .unwrap_or("agreement not measured");
    if judge["trusted"].as_bool() == Some(true) {
        ("calibrated", format!("calibrated judge: {agreement}"))
    } else if judge["agreement_value"].is_number() {
        (
            "uncalibrated",
            format!(
                "uncalibrated judge: {agreement} (below {:.0}%)",
                threshold(run) * 100.0
            ),
        )
    } else {
        ("uncalibrated", format!("uncalibrated judge: {agreement}"))
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

/// The headline section for the runs of a report (the `runs` of its data).
pub fn render(runs: &[Value]) -> String {
    let bar = runs.first().map_or(DEFAULT_THRESHOLD, threshold);
    let uncalibrated: Vec<&str> = runs
        .iter()
        .filter(|r| standing(r).0 == "uncalibrated")
        .filter_map(|r| r["name"].as_str())
        .collect();
    let lead = if uncalibrated.is_empty() {
        "Pass rates are those of judges whose agreement with hand labels was measured at or above the threshold; the judge-free figures are beside them.".to_string()
    } else {
        format!(
            "The judge-free figures lead: the judge of {} is not calibrated (agreement with hand labels below {:.0}% or not measured), so its pass rate and its Solved / Unsolved verdicts are an uncalibrated judge's opinion, not a measured result.",
            uncalibrated.join(", "),
            bar * 100.0
        )
    };
    let mut rows = String::new();
    for r in runs {
        let (class, judge_text) = standing(r);
        let judge = &r["judge"];
        let pass = match r["pass_rates"]["ours"].as_f64() {
            Some(p) if class == "uncalibrated" => format!("{p:.1}% (uncalibrated judge)"),
            Some(p) => format!("{p:.1}%"),
            None => "–".into(),
        };
        rows.push_str(&format!(
            "<tr class=\"{class}\"><td class=\"l\">{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l judge-{class}\">{}</td></tr>\n",
            escape(r["name"].as_str().unwrap_or("")),
            percent(&judge["answered"]),
            percent(&judge["evidence_backed"]),
            escape(&format!("{pass} by {}", judge["name"].as_str().unwrap_or("no judge"))),
            escape(&judge_text),
        ));
    }
    format!(
        "<section id=\"headline\"><h2>Headline</h2><p id=\"headline-lead\">{}</p>\n<table><tr><th class=\"l\">run</th><th>answered</th><th>evidence-backed</th><th class=\"l\">judge's pass rate</th><th class=\"l\">judge</th></tr>\n{rows}</table><div class=\"note\">answered: finished with an answer no rule rejected · evidence-backed: at least one claim found in a tool observation and no concrete value found nowhere (no model involved) · the judge's pass rate counts missing answers as failures.</div></section>",
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
                         "trusted": trusted, "answered": 100.0, "evidence_backed": 50.0}})
    }

    #[test]
    fn an_uncalibrated_judge_follows_the_judge_free_figures() {
        let html = render(&[run("demo", false, Some(0.667))]);
        assert!(html.contains("The judge-free figures lead: the judge of demo is not calibrated"));
        assert!(
            html.contains("uncalibrated judge: agreement 66.7%, kappa 0.33, n = 6 (below 70%)")
        );
        assert!(html.contains("100.0% (uncalibrated judge) by m (evidence judge)"));
        assert!(
            html.find("evidence-backed")
                < html
                    .find("judge&#39;s pass rate")
                    .or(html.find("judge's pass rate"))
        );
        let unmeasured = render(&[run("x", false, None)]);
        assert!(unmeasured.contains("uncalibrated judge: agreement not measured"));
        let good = render(&[run("y", true, Some(0.9))]);
        assert!(good.contains("calibrated judge: agreement 90.0%"));
        assert!(!good.contains("uncalibrated"));
        assert!(render(&[json!({"name": "<b>", "judged": false})]).contains("&lt;b&gt;"));
    }
}
