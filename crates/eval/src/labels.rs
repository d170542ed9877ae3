//! Human labels for judge calibration (`eval/labels/*.json`). A label is keyed by subset, query id,
//! method, agent model and a hash of the final answer, so it applies to exactly the answer that was read:
//! an answer that changed since (a rerun) is reported as stale, never silently scored.
//!
//! Two file formats: `{"format": 2, "labels": [entry, ...]}`, and the older map
//! `{"SUBSET/ID" | "ID": "Solved" | "Unsolved"}` (any method and model, no hash).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::input::AnswerSet;
use super::pass_rate::PassRate;
use super::stats::{Calibration, calibration};
use super::{EvalError, Label, QueryKey};
use sum2act_core::toolbench::io::read_json;

/// The main reason an answer failed, as the labeller saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Solved: no failure.
    #[default]
    None,
    /// The environment returned no usable data.
    NoData,
    Hallucination,
    WrongToolOrArguments,
    MissedPart,
    HarnessError,
}

/// One human label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelEntry {
    /// The data directory the labelled runs were made from, as a path suffix (`toolbench/sample`,
    /// `shared/toolbench`); empty: any. Usually set once for the whole file.
    #[serde(default)]
    pub data: String,
    pub subset: String,
    pub query_id: u64,
    /// Empty: any method / model (old-format labels).
    #[serde(default)]
    pub method: String,
    #[serde(default)]
    pub model: String,
    /// [`answer_hash`] of the final answer that was labelled (empty: not checked).
    #[serde(default)]
    pub answer_hash: String,
    pub label: String,
    #[serde(default)]
    pub parts_asked: Vec<String>,
    #[serde(default)]
    pub parts_delivered: Vec<String>,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub cause: Cause,
    /// Why the answer was labelled again (a change made its answer differ from the one first labelled);
    /// empty: labelled once.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub relabelled: String,
}

impl LabelEntry {
    pub fn name(&self) -> String {
        let mut s = format!("{}/{}", self.subset, self.query_id);
        if !self.method.is_empty() {
            s.push_str(&format!(" {}", self.method));
        }
        if !self.model.is_empty() {
            s.push_str(&format!(" {}", self.model));
        }
        s
    }

    pub fn parsed_label(&self) -> Option<Label> {
        Label::parse(&self.label)
    }
}

/// Short hash of a final answer's text (whitespace at the ends ignored).
pub fn answer_hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.trim().as_bytes()))[..16].to_string()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileV2 {
    format: u32,
    #[serde(default)]
    description: String,
    #[serde(default)]
    data: String,
    labels: Vec<Value>,
}

/// Loads and checks a label file: labels must be Solved, Unsolved or Unsure, keys unique, ids integers.
pub fn load(path: &Path) -> Result<Vec<LabelEntry>, EvalError> {
    let raw: Value = read_json(path)?;
    let entries = if raw.get("format").is_some() {
        let file: FileV2 = serde_json::from_value(raw)
            .map_err(|e| EvalError::bad_input(path, format!("not a label file: {e}")))?;
        let _ = file.description;
        if file.format != 2 {
            return Err(EvalError::bad_input(
                path,
                format!("unknown label format {}", file.format),
            ));
        }
        let data = file.data;
        file.labels
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let mut e = serde_json::from_value::<LabelEntry>(v)
                    .map_err(|e| EvalError::bad_input(path, format!("labels[{i}]: {e}")))?;
                if e.data.is_empty() {
                    e.data = data.clone();
                }
                Ok(e)
            })
            .collect::<Result<Vec<_>, EvalError>>()?
    } else {
        old_format(path, raw)?
    };
    let mut seen = BTreeSet::new();
    for e in &entries {
        if e.parsed_label().is_none() {
            return Err(EvalError::bad_input(
                path,
                format!(
                    "`{}`: label must be Solved, Unsolved or Unsure, got {:?}",
                    e.name(),
                    e.label
                ),
            ));
        }
        // A label is for one answer: two runs of the same query, method and model (before and after a
        // change of the agent) are two answers, told apart by their hashes.
        let key = (e.data.clone(), e.subset.clone(), e.query_id);
        if !seen.insert((
            key,
            e.method.clone(),
            e.model.clone(),
            e.answer_hash.clone(),
        )) {
            return Err(EvalError::bad_input(
                path,
                format!("`{}`: labelled twice", e.name()),
            ));
        }
    }
    if entries.is_empty() {
        return Err(EvalError::bad_input(path, "no labels"));
    }
    Ok(entries)
}

fn old_format(path: &Path, raw: Value) -> Result<Vec<LabelEntry>, EvalError> {
    let Value::Object(map) = raw else {
        return Err(EvalError::bad_input(path, "a label file is a JSON object"));
    };
    map.into_iter()
        .map(|(k, v)| {
            let (subset, id) = k.split_once('/').unwrap_or(("", k.as_str()));
            let query_id = id.parse::<u64>().map_err(|_| {
                EvalError::bad_input(path, format!("`{k}`: not a query id (ID or SUBSET/ID)"))
            })?;
            let label = v
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string());
            Ok(LabelEntry {
                data: String::new(),
                subset: subset.to_string(),
                query_id,
                method: String::new(),
                model: String::new(),
                answer_hash: String::new(),
                label,
                parts_asked: Vec::new(),
                parts_delivered: Vec::new(),
                reason: String::new(),
                cause: Cause::None,
                relabelled: String::new(),
            })
        })
        .collect()
}

impl LabelEntry {
    /// Whether the label was made on runs of `data` (the run's data directory, when known).
    pub fn same_data(&self, data: Option<&Path>) -> bool {
        match data {
            Some(d) if !self.data.is_empty() => d.ends_with(&self.data),
            _ => true,
        }
    }
}

impl LabelEntry {
    /// Whether the label is about answers of `set`: made on its data, for its method and model (any,
    /// when the label leaves them empty).
    pub fn applies_to(&self, set: &AnswerSet, data: Option<&Path>) -> bool {
        self.same_data(data)
            && (self.method.is_empty() || self.method == set.method)
            && (self.model.is_empty() || set.model.is_empty() || self.model == set.model)
    }
}

/// Checks that every label made on `data` names one of its queries, where the data has that subset.
pub fn check_ids(
    path: &Path,
    entries: &[LabelEntry],
    data: Option<&Path>,
    known: &BTreeMap<String, BTreeSet<u64>>,
) -> Result<(), EvalError> {
    for e in entries.iter().filter(|e| e.same_data(data)) {
        if let Some(ids) = known.get(&e.subset)
            && !ids.contains(&e.query_id)
        {
            return Err(EvalError::bad_input(
                path,
                format!(
                    "`{}`: unknown query id {} in subset {}",
                    e.name(),
                    e.query_id,
                    e.subset
                ),
            ));
        }
    }
    Ok(())
}

/// How the labels of a file met one evaluated run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Matching {
    /// (label name, human, judge majority) of labels that apply to this run's answers.
    pub pairs: Vec<(String, Label, Label)>,
    /// The judge's mean score (0..1) of each pair's answer, in the order of `pairs`.
    #[serde(default)]
    pub scores: Vec<f64>,
    /// Labels whose answer changed since labelling (hash mismatch): not used.
    pub stale: Vec<String>,
    /// Labels Unsure by the person: shown, not scored.
    pub human_unsure: Vec<String>,
    /// Labels of this run's method, model and subsets whose query is not in the run.
    pub unmatched: Vec<String>,
}

/// Pairs the labels that apply to `set` (same subset, method and model) with the judge's majority.
pub fn match_run(
    entries: &[LabelEntry],
    set: &AnswerSet,
    data: Option<&Path>,
    pr: &PassRate,
) -> Result<Matching, String> {
    let by_key = pr.by_key();
    let subsets = set.subsets();
    let mut m = Matching::default();
    let mut matched = BTreeSet::new();
    for e in entries {
        if !e.applies_to(set, data) {
            continue;
        }
        let keys: Vec<QueryKey> = if e.subset.is_empty() {
            by_key
                .keys()
                .filter(|k| k.query_id == e.query_id)
                .cloned()
                .collect()
        } else {
            vec![QueryKey::new(e.subset.clone(), e.query_id)]
        };
        if keys.len() > 1 {
            return Err(format!(
                "query id `{}` is in several subsets; write it as `SUBSET/{}`",
                e.query_id, e.query_id
            ));
        }
        let Some(verdict) = keys.first().and_then(|k| by_key.get(k)) else {
            if e.subset.is_empty() || subsets.contains(&e.subset) {
                m.unmatched.push(e.name());
            }
            continue;
        };
        let key = verdict.key();
        if !e.answer_hash.is_empty() {
            let now = set.answers.get(&key).map(|a| answer_hash(&a.final_text()));
            if now.as_deref() != Some(e.answer_hash.as_str()) {
                m.stale.push(e.name());
                continue;
            }
        }
        matched.insert(e.name());
        match e.parsed_label() {
            Some(Label::Unsure) | None => m.human_unsure.push(e.name()),
            Some(human) => {
                m.pairs.push((e.name(), human, verdict.majority()));
                m.scores.push(verdict.score);
            }
        }
    }
    // A label of another answer of a query whose present answer is labelled too is not stale.
    m.stale.retain(|name| !matched.contains(name));
    Ok(m)
}

/// Agreement and kappa of a matching (`None` when no label applied).
pub fn calibrate(judge: &str, m: &Matching) -> Option<Calibration> {
    if m.pairs.is_empty() {
        return None;
    }
    let pairs: Vec<(Label, Label)> = m.pairs.iter().map(|(_, h, j)| (*h, *j)).collect();
    let mut c = calibration(judge, &pairs);
    c.unmatched = m.unmatched.clone();
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every label file the repository ships loads: `calibrate` and `eval --labels` read them with this
    /// parser, which refuses a field it does not know.
    #[test]
    fn every_shipped_label_file_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/labels");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let labels = load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(!labels.is_empty(), "{}", path.display());
                n += 1;
            }
        }
        assert!(n >= 2, "label files found: {n}");
    }

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn both_formats_load_and_bad_entries_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let old = write(
            dir.path(),
            "old.json",
            r#"{"G1/1": "Solved", "2": "unsolved"}"#,
        );
        let e = load(&old).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].subset.as_str(), e[0].query_id), ("G1", 1));
        let v2 = r#"{"format": 2, "labels": [
            {"subset": "G1", "query_id": 1, "method": "react", "model": "m", "answer_hash": "ab", "label": "Unsure", "cause": "no_data"},
            {"subset": "G1", "query_id": 1, "method": "dfsdt", "model": "m", "label": "Solved"}]}"#;
        assert_eq!(load(&write(dir.path(), "v2.json", v2)).unwrap().len(), 2);
        // Two answers of one query, method and model (two runs): one label each.
        let two = r#"{"format": 2, "labels": [
            {"subset": "G1", "query_id": 1, "method": "react", "model": "m", "answer_hash": "aa", "label": "Solved"},
            {"subset": "G1", "query_id": 1, "method": "react", "model": "m", "answer_hash": "bb", "label": "Unsolved"}]}"#;
        assert_eq!(load(&write(dir.path(), "two.json", two)).unwrap().len(), 2);
        for (text, needle) in [
            (r#"{"G1/1": "Maybe"}"#, "G1/1"),
            (r#"{"G1/x": "Solved"}"#, "G1/x"),
            (
                r#"{"format": 2, "labels": [{"subset": "G1", "query_id": 3, "label": "Solved"}, {"subset": "G1", "query_id": 3, "label": "Unsolved"}]}"#,
                "labelled twice",
            ),
            (
                r#"{"format": 2, "labels": [{"subset": "G1", "query_id": 3, "answer_hash": "aa", "label": "Solved"}, {"subset": "G1", "query_id": 3, "answer_hash": "aa", "label": "Unsolved"}]}"#,
                "labelled twice",
            ),
            (
                r#"{"format": 2, "labels": [{"subset": "G1", "query_id": 3, "label": "Solved", "cause": "bad"}]}"#,
                "labels[0]",
            ),
            (r#"{"format": 2, "labels": []}"#, "no labels"),
        ] {
            let p = write(dir.path(), "bad.json", text);
            let err = load(&p).unwrap_err().to_string();
            assert!(err.contains("bad.json") && err.contains(needle), "{err}");
        }
        let known = BTreeMap::from([("G1".to_string(), BTreeSet::from([1u64]))]);
        let err = check_ids(&old, &load(&old).unwrap(), None, &known);
        assert!(err.is_ok(), "id 2 has no subset: not checked");
        let entries = load(&write(dir.path(), "x.json", r#"{"G1/9": "Solved"}"#)).unwrap();
        let err = check_ids(&old, &entries, None, &known)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown query id 9"), "{err}");
        let mut other = entries.clone();
        other[0].data = "shared/toolbench".into();
        let sample = Path::new("/x/toolbench/sample");
        assert!(
            check_ids(&old, &other, Some(sample), &known).is_ok(),
            "labels of other data are not checked"
        );
        assert!(err.contains("unknown query id 9"), "{err}");
    }

    #[test]
    fn matching_uses_ids_method_model_and_hash() {
        use crate::pass_rate::{QueryVerdict, summarise};
        use Label::*;
        let verdict = |subset: &str, id: u64, labels: Vec<Label>| QueryVerdict {
            subset: subset.into(),
            query_id: id,
            score: labels.iter().map(|l| l.score()).sum::<f64>() / labels.len() as f64,
            labels,
            ..QueryVerdict::default()
        };
        let pr = summarise(
            "j",
            3,
            vec![
                verdict("G1", 1, vec![Solved, Solved, Unsolved]),
                verdict("G1", 2, vec![Unsolved, Unsolved, Unsolved]),
                verdict("G2", 2, vec![Solved, Solved, Solved]),
            ],
        );
        let mut set = AnswerSet {
            method: "react".into(),
            model: "m".into(),
            ..AnswerSet::default()
        };
        set.expected = pr.queries.iter().map(|q| q.key()).collect();
        let entry = |subset: &str, id: u64, method: &str, hash: &str, label: &str| LabelEntry {
            data: String::new(),
            subset: subset.into(),
            query_id: id,
            method: method.into(),
            model: String::new(),
            answer_hash: hash.into(),
            label: label.into(),
            parts_asked: vec![],
            parts_delivered: vec![],
            reason: String::new(),
            cause: Cause::None,
            relabelled: String::new(),
        };
        let entries = vec![
            entry("", 1, "", "", "Solved"),
            entry("G1", 2, "react", "", "Solved"),
            entry("G1", 2, "dfsdt", "", "Unsolved"),
            entry("G1", 99, "", "", "Unsolved"),
            entry("G2", 2, "", "0123456789abcdef", "Solved"),
        ];
        let m = match_run(&entries, &set, None, &pr).unwrap();
        assert_eq!(m.pairs.len(), 2, "{m:?}");
        assert_eq!(m.pairs[1], ("G1/2 react".to_string(), Solved, Unsolved));
        assert_eq!(m.unmatched, vec!["G1/99".to_string()]);
        assert_eq!(
            m.stale,
            vec!["G2/2".to_string()],
            "no answer: its hash cannot match"
        );
        let c = calibrate("j", &m).unwrap();
        assert_eq!(c.confusion, [[1, 1, 0], [0, 0, 0]]);
        // The label of an earlier answer of G1/2 react is not stale while the present one is labelled.
        let mut both = entries.clone();
        both.push(entry("G1", 2, "react", "fedcba9876543210", "Unsolved"));
        let m2 = match_run(&both, &set, None, &pr).unwrap();
        assert_eq!(m2.pairs.len(), 2, "{m2:?}");
        assert_eq!(m2.stale, vec!["G2/2".to_string()]);
        let err = match_run(&[entry("", 2, "", "", "Solved")], &set, None, &pr).unwrap_err();
        assert!(err.contains("SUBSET/2"), "{err}");
    }

    #[test]
    fn hashes_ignore_surrounding_whitespace() {
        assert_eq!(answer_hash(" a b \n"), answer_hash("a b"));
        assert_ne!(answer_hash("a b"), answer_hash("a  b"));
        assert_eq!(answer_hash("x").len(), 16);
    }
}
