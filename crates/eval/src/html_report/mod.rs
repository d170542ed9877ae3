//! `sum2act report RUN_DIR...`: one self-contained HTML page (inline CSS, JS and SVG; no network)
//! with per-subset pass rates, a cost/steps/tokens table per run and a searchable trajectory viewer.
//! The data travels as JSON inside a `<script type="application/json">` tag.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use sum2act_core::batch::{BatchError, Manifest, scan_run_dir, timestamp};
use sum2act_core::toolbench::answer::OUR_KEY;
use sum2act_core::toolbench::io::{read_json, write_atomic};

/// The page; `__SUM2ACT_HEADLINE__` is replaced by the headline section and `__SUM2ACT_DATA__` by the
/// data.
mod headline;
mod media;

const TEMPLATE: &str = include_str!("report.html");
const HEADLINE_MARKER: &str = "__SUM2ACT_HEADLINE__";
const DATA_MARKER: &str = "__SUM2ACT_DATA__";

/// Names of files in a run directory that may hold judge results: a JSON object keyed by query id
/// (or by `subset/query id`) with per-query verdicts, or with a `queries` list of them.
const EVAL_FILES: [&str; 3] = ["eval/pass_rate.json", "eval.json", "pass_rate.json"];

/// What went into a report.
#[derive(Debug, Clone, Default)]
pub struct ReportStats {
    pub runs: usize,
    pub queries: usize,
    /// Runs for which judge results were found.
    pub judged_runs: usize,
    /// Runs whose evaluation is not valid (too many unusable judge votes), with why: their judge
    /// results are left out, never charted as 0%.
    pub invalid: Vec<(PathBuf, String)>,
    pub bytes: usize,
}

/// Writes the report for `run_dirs` to `out`.
pub fn write_report(run_dirs: &[PathBuf], out: &Path) -> Result<ReportStats, BatchError> {
    let (html, stats) = render_report(run_dirs)?;
    write_atomic(out, html.as_bytes())?;
    Ok(stats)
}

/// Builds the page for `run_dirs`.
pub fn render_report(run_dirs: &[PathBuf]) -> Result<(String, ReportStats), BatchError> {
    if run_dirs.is_empty() {
        return Err(BatchError::BadInput(
            "report: give at least one RUN_DIR".into(),
        ));
    }
    let mut stats = ReportStats::default();
    let mut runs = Vec::new();
    for (index, dir) in run_dirs.iter().enumerate() {
        let run = load_run(dir, index)?;
        stats.queries += run["episodes"].as_array().map_or(0, Vec::len);
        if run["judged"].as_bool() == Some(true) {
            stats.judged_runs += 1;
        }
        if let Some(why) = run["judge_invalid"].as_str() {
            stats.invalid.push((dir.clone(), why.to_string()));
        }
        runs.push(run);
    }
    stats.runs = runs.len();
    let data = json!({
        "generated": timestamp(),
        "version": env!("CARGO_PKG_VERSION"),
        "runs": runs,
    });
    let html = fill(&headline::render(&runs), &embed_json(&data));
    stats.bytes = html.len();
    Ok((html, stats))
}

/// The template with its two markers filled in one pass (neither filling is searched for the other's
/// marker, so no run name or query can move data into the page's markup).
fn fill(headline: &str, data: &str) -> String {
    let (head, rest) = TEMPLATE
        .split_once(HEADLINE_MARKER)
        .unwrap_or((TEMPLATE, ""));
    let (middle, tail) = rest.split_once(DATA_MARKER).unwrap_or((rest, ""));
    [head, headline, middle, data, tail].concat()
}

/// JSON safe inside a `<script>` element: every `<` becomes `\u003c`, so neither `</script>` nor
/// `<!--` can end or change the element; the result still parses as the same JSON.
pub fn embed_json(value: &Value) -> String {
    let text = value.to_string();
    text.replace('<', "\\u003c")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

fn load_run(dir: &Path, index: usize) -> Result<Value, BatchError> {
    if !dir.is_dir() {
        return Err(BatchError::BadInput(format!(
            "{}: run directory not found",
            dir.display()
        )));
    }
    let manifest = Manifest::read(dir)?;
    let (files, unreadable) = scan_run_dir(dir)?;
    if manifest.is_none() && files.is_empty() {
        return Err(BatchError::BadInput(format!(
            "{}: not a run directory (no run.json and no answer files)",
            dir.display()
        )));
    }
    // An evaluation whose votes were mostly unusable says nothing: its verdicts are not shown.
    let invalid = invalid_evaluation(dir);
    let verdicts = match invalid {
        Some(_) => BTreeMap::new(),
        None => load_verdicts(dir),
    };
    let mut episodes = Vec::with_capacity(files.len());
    let mut media = media::MediaBudget::default();
    for (path, file, view) in &files {
        let mut ep = slim_episode(file);
        media::embed_resources(&mut ep, path, &mut media);
        let key = format!("{}/{}", view.subset, view.query_id);
        let verdict = verdicts
            .get(&key)
            .or_else(|| verdicts.get(&view.query_id.to_string()))
            .cloned();
        if let Some(obj) = ep.as_object_mut() {
            obj.insert("subset".into(), json!(view.subset));
            obj.insert("file".into(), json!(path.strip_prefix(dir).unwrap_or(path)));
            if let Some(v) = verdict {
                obj.insert("verdict".into(), v);
            }
        }
        episodes.push(ep);
    }
    let manifest = manifest.unwrap_or_else(|| {
        let first = files.first().map(|f| &f.2);
        Manifest::new(
            first.map_or("unknown", |v| v.method.as_str()),
            first.map_or("unknown", |v| v.model.as_str()),
        )
    });
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| dir.display().to_string());
    Ok(json!({
        "id": index,
        "name": name,
        "dir": dir.display().to_string(),
        "method": manifest.method,
        "model": manifest.model,
        "manifest": {
            "created": manifest.created, "updated": manifest.updated, "version": manifest.sum2act_version,
            "data": manifest.data, "subsets": manifest.subsets, "shard": manifest.shard, "tools": manifest.tools,
            "prompts": manifest.prompts, "agent": manifest.agent, "merged_from": manifest.merged_from,
        },
        "judged": !verdicts.is_empty(),
        "judge_invalid": invalid,
        "pass_rates": if invalid.is_some() { Value::Null } else { headline_pass_rates(dir) },
        "judge": judge_info(dir),
        "labels": labelled(dir),
        // `sum2act eval` writes these (IR/NR/HR/CR, planning P/R/F1); the last row is the overall one.
        "tool_metrics": std::fs::read_to_string(dir.join("eval/tool_metrics.json")).ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v.as_array().and_then(|a| a.last().cloned())),
        "unreadable": unreadable.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "episodes": episodes,
    }))
}

/// Why the run's evaluation (`eval/pass_rate.json`) is not valid, when it is not: too many of its
/// judge votes got no usable verdict.
fn invalid_evaluation(dir: &Path) -> Option<String> {
    let v = read_json::<Value>(&dir.join(EVAL_FILES[0])).ok()?;
    let overall = serde_json::from_value::<crate::pass_rate::GroupPassRate>(
        v["pass_rate"]["overall"].clone(),
    )
    .ok()?;
    crate::headline::invalid_reason(&overall)
}

/// Which judge produced the run's verdicts and its measured agreement with people (`eval/pass_rate.json`),
/// so the report prints both next to the pass rate.
fn judge_info(dir: &Path) -> Value {
    let Ok(v) = read_json::<Value>(&dir.join("eval/pass_rate.json")) else {
        return Value::Null;
    };
    let j = &v["judge"];
    let name = j["name"].as_str().map(str::to_string).unwrap_or_else(|| {
        format!(
            "{} ({})",
            j["model"].as_str().unwrap_or("?"),
            j["mode"].as_str().unwrap_or("tooleval")
        )
    });
    let agreement_value = j["agreement"]["accuracy"].clone();
    let agreement = match serde_json::from_value::<crate::Calibration>(j["agreement"].clone()) {
        Ok(c) => format!(
            "agreement {:.1}%, kappa {}, n = {}",
            c.accuracy * 100.0,
            c.kappa_text(2),
            c.n
        ),
        Err(_) => "agreement not measured".to_string(),
    };
    let label_set = j["agreement"]["label_set"].as_str().unwrap_or("");
    let agreement = if label_set.is_empty() {
        agreement
    } else {
        format!("{agreement} on {label_set}")
    };
    let overall = &v["pass_rate"]["overall"];
    json!({
        "name": name,
        "agreement": agreement,
        "agreement_value": agreement_value,
        "trusted": j["trusted"].as_bool().unwrap_or(false),
        "threshold": j["trust_threshold"],
        "evidence_backed": overall["evidence_backed"],
        "answered": overall["answered"],
    })
}

/// The run's answers as people labelled them (`eval --labels` writes `eval/label_matching.json`): the
/// most trustworthy figure a report can lead with. Solved of labelled, overall and per subset; `null`
/// without labels.
fn labelled(dir: &Path) -> Value {
    let Ok(m) = read_json::<crate::labels::Matching>(&dir.join("eval/label_matching.json")) else {
        return Value::Null;
    };
    if m.pairs.is_empty() {
        return Value::Null;
    }
    let mut subsets: BTreeMap<&str, [usize; 2]> = BTreeMap::new();
    for (name, human, _) in &m.pairs {
        let counts = subsets
            .entry(name.split('/').next().unwrap_or_default())
            .or_default();
        counts[0] += usize::from(*human == crate::Label::Solved);
        counts[1] += 1;
    }
    let solved: usize = subsets.values().map(|c| c[0]).sum();
    json!({
        "solved": solved,
        "n": m.pairs.len(),
        "rate": 100.0 * solved as f64 / m.pairs.len() as f64,
        "unsure": m.human_unsure.len(),
        "subsets": subsets,
    })
}

/// The episode record without bulky duplicates (raw responses are already in the observation text).
fn slim_episode(file: &Value) -> Value {
    let mut ep = file.get(OUR_KEY).cloned().unwrap_or(Value::Null);
    // A reader should see when a score rests only on schema-simulated replies.
    let simulated_only = sum2act_core::batch::provenance::all_simulated(&ep);
    if let Some(map) = ep.as_object_mut() {
        map.insert("all_simulated".into(), Value::Bool(simulated_only));
    }
    if let Some(steps) = ep.get_mut("steps").and_then(Value::as_array_mut) {
        for step in steps {
            if let Some(obs) = step.get_mut("observation").and_then(Value::as_object_mut) {
                obs.remove("response");
            }
        }
    }
    ep
}

/// Per-query judge verdicts found in the run directory, keyed by `subset/qid` or `qid`.
/// `sum2act eval`'s overall pass rate with both denominators, when the run was judged: ours (missing
/// answers are failures) and StableToolBench's (missing answers dropped).
fn headline_pass_rates(dir: &Path) -> Value {
    let Ok(text) = std::fs::read_to_string(dir.join(EVAL_FILES[0])) else {
        return Value::Null;
    };
    let Ok(v) = serde_json::from_str::<Value>(&text) else {
        return Value::Null;
    };
    let o = &v["pass_rate"]["overall"];
    match (
        o["pass_rate"].as_f64(),
        o["pass_rate_without_missing"].as_f64(),
    ) {
        (Some(ours), Some(stb)) => {
            json!({"ours": ours, "stabletoolbench": stb, "missing": o["missing"]})
        }
        _ => Value::Null,
    }
}

fn load_verdicts(dir: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for name in EVAL_FILES {
        let path = dir.join(name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<Value>(&text) else {
            tracing::warn!(
                "{}: not JSON; judge results left out of the report",
                path.display()
            );
            continue;
        };
        collect_verdicts(&value, &mut out);
        if !out.is_empty() {
            break;
        }
    }
    out
}

fn collect_verdicts(value: &Value, out: &mut BTreeMap<String, Value>) {
    let list = value
        .get("queries")
        .or_else(|| value.get("per_query"))
        .and_then(Value::as_array);
    if let Some(items) = list {
        for item in items {
            let Some(id) = item
                .get("query_id")
                .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
            else {
                continue;
            };
            let key = match item.get("subset").and_then(Value::as_str) {
                Some(s) => format!("{s}/{id}"),
                None => id.to_string(),
            };
            out.insert(key, item.clone());
        }
        return;
    }
    if let Some(map) = value.as_object() {
        let keyed: Map<String, Value> = map
            .iter()
            .filter(|(k, v)| {
                v.is_object()
                    && k.split('/')
                        .next_back()
                        .is_some_and(|id| id.parse::<u64>().is_ok())
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.extend(keyed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_pass_rate_denominators_reach_the_report() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(headline_pass_rates(dir.path()), Value::Null);
        std::fs::create_dir_all(dir.path().join("eval")).unwrap();
        let eval = json!({"pass_rate": {"overall": {"pass_rate": 25.0, "pass_rate_without_missing": 50.0, "missing": 2}}});
        std::fs::write(dir.path().join(EVAL_FILES[0]), eval.to_string()).unwrap();
        assert_eq!(
            headline_pass_rates(dir.path()),
            json!({"ours": 25.0, "stabletoolbench": 50.0, "missing": 2})
        );
    }

    #[test]
    fn embedded_json_cannot_close_the_script() {
        let v = json!({"a": "</script><script>alert(1)</script><!--"});
        let text = embed_json(&v);
        assert!(!text.contains('<'), "{text}");
        let back: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        assert_eq!(back, v);
    }

    #[test]
    fn template_has_one_marker_each_in_order() {
        assert_eq!(TEMPLATE.matches(DATA_MARKER).count(), 1);
        assert_eq!(TEMPLATE.matches(HEADLINE_MARKER).count(), 1);
        assert!(TEMPLATE.find(HEADLINE_MARKER) < TEMPLATE.find(DATA_MARKER));
        let page = fill(
            "<p>__SUM2ACT_DATA__</p>",
            "{\"q\": \"__SUM2ACT_HEADLINE__\"}",
        );
        assert!(
            page.contains("<p>__SUM2ACT_DATA__</p>") && page.contains("\"__SUM2ACT_HEADLINE__\"")
        );
    }

    #[test]
    fn verdicts_by_list_or_map() {
        let mut out = BTreeMap::new();
        collect_verdicts(
            &json!({"queries": [{"subset": "G1", "query_id": 5, "label": "Solved"}]}),
            &mut out,
        );
        assert!(out.contains_key("G1/5"));
        let mut out = BTreeMap::new();
        collect_verdicts(&json!({"7": {"label": "Unsolved"}, "summary": 1}), &mut out);
        assert_eq!(out.keys().collect::<Vec<_>>(), vec!["7"]);
    }
}
