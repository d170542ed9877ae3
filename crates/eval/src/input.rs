//! What the evaluator reads: our run directories (answer files with the `sum2act` record), and
//! StableToolBench's converted format (one `{subset}.json` per subset, keyed by query id), so old runs of
//! other harnesses can be scored too. Everything is normalised to one [`Answer`] per query.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{EvalError, QueryKey};
use sum2act_core::toolbench::answer;
pub use sum2act_core::toolbench::answer::Counters;
use sum2act_core::toolbench::answer::{FinishKind, OUR_KEY, RecordedFinish};
use sum2act_core::toolbench::io::{read_json, write_json_atomic};

/// Folder inside a run directory where the evaluator writes; never read as answers.
pub const EVAL_DIR: &str = "eval";

/// One answer in StableToolBench's converted format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Converted {
    #[serde(default)]
    pub query: String,
    #[serde(default)]
    pub available_tools: Vec<Value>,
    pub answer: ConvertedAnswer,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvertedAnswer {
    #[serde(default)]
    pub method: String,
    #[serde(default)]
    pub total_steps: u64,
    /// The raw `Finish` arguments string (or `""`).
    #[serde(default)]
    pub final_answer: String,
    /// The trajectory as a tree of `{role, message, next}` nodes; the first path is the one taken.
    #[serde(default)]
    pub answer_details: Value,
}

/// The part of our `sum2act` record the evaluator needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Record {
    pub method: String,
    pub model: String,
    /// `give_answer`, `give_up`, `limit` or `error`.
    pub finish: RecordedFinish,
    /// The final answer text.
    pub answer: String,
    pub counters: Counters,
    /// Method-specific detail (the plan of `plan`, for its planning metrics).
    pub details: Value,
    /// The steps with their whole observations (the answer file's are cut at 1,024 characters).
    pub steps: Vec<RecordStep>,
    /// Calls the model was shown beside its path (DFSDT's earlier attempts on abandoned branches).
    pub attempts: Vec<RecordStep>,
}

/// One step of our episode record, as far as the judge needs it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecordStep {
    pub action: String,
    pub arguments: String,
    pub observation: RecordObservation,
}

/// The observation of a recorded step: the text the agent was shown, and the reply it came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecordObservation {
    pub text: String,
    pub error: String,
    pub response: Value,
    /// Set when the reply was longer than the record keeps: `response` is then the first characters
    /// of its text, and this the whole length.
    pub reply_chars: Option<usize>,
}

/// One tool call on the path an answer took.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolStep {
    pub name: String,
    pub arguments: String,
    pub response: String,
}

/// One query's answer, whatever file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub key: QueryKey,
    pub converted: Converted,
    pub record: Option<Record>,
}

impl Answer {
    /// The answer text shown to the judge: our record's answer, else the `final_answer` field of the
    /// raw Finish arguments, else the raw string.
    pub fn final_text(&self) -> String {
        if let Some(r) = &self.record
            && r.finish.is(FinishKind::GiveAnswer)
            && !r.answer.trim().is_empty()
        {
            return r.answer.clone();
        }
        finish_answer_text(&self.converted.answer.final_answer)
    }

    /// The tool calls along the first path of `answer_details`, Finish included.
    pub fn tool_steps(&self) -> Vec<ToolStep> {
        let mut steps = Vec::new();
        let mut node = self
            .converted
            .answer
            .answer_details
            .as_array()
            .and_then(|a| a.first());
        while let Some(n) = node {
            if n["role"] == "tool" {
                steps.push(tool_step(&n["message"]));
            }
            node = n["next"].as_array().and_then(|a| a.first());
        }
        steps
    }

    /// Names of the functions this query offered (from `available_tools`).
    pub fn available_names(&self) -> BTreeSet<String> {
        self.converted
            .available_tools
            .iter()
            .filter_map(|t| {
                t.get("function").unwrap_or(t)["name"]
                    .as_str()
                    .map(str::to_string)
            })
            .collect()
    }
}

fn tool_step(message: &Value) -> ToolStep {
    match message {
        Value::Object(m) => ToolStep {
            name: m
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            arguments: text_of(m.get("arguments")),
            response: text_of(m.get("response")),
        },
        // Old converted files (ToolEval's default evalset) store the message as a Python repr string.
        Value::String(s) => ToolStep {
            name: repr_field(s, "name").unwrap_or_default(),
            arguments: String::new(),
            response: s.clone(),
        },
        _ => ToolStep {
            name: String::new(),
            arguments: String::new(),
            response: String::new(),
        },
    }
}

fn text_of(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// `'name': 'Finish'` (Python repr) or `"name": "Finish"` (JSON) → `Finish`.
fn repr_field(text: &str, field: &str) -> Option<String> {
    for (open, quote) in [
        (format!("'{field}': '"), '\''),
        (format!("\"{field}\": \""), '"'),
    ] {
        if let Some(start) = text.find(&open) {
            let rest = &text[start + open.len()..];
            return rest.find(quote).map(|end| rest[..end].to_string());
        }
    }
    None
}

/// The answer text inside raw Finish arguments (`{"return_type": "give_answer", "final_answer": "…"}`).
pub fn finish_answer_text(raw: &str) -> String {
    if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(raw) {
        return match m.get("final_answer") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
    }
    // Not valid JSON (models write broken JSON): take what follows the key, as ToolBench does.
    for key in ["\"final_answer\": \"", "\"final_answer\":\""] {
        if let Some(start) = raw.find(key) {
            let rest = raw[start + key.len()..].trim_end();
            let rest = rest.strip_suffix('}').unwrap_or(rest).trim_end();
            let rest = match rest.strip_suffix('"') {
                Some(r) if !r.ends_with('\\') => r,
                _ => rest,
            };
            return rest.replace("\\n", "\n").replace("\\\"", "\"");
        }
    }
    if raw.trim_start().starts_with('{') && raw.contains("return_type") {
        return String::new();
    }
    raw.to_string()
}

/// Cuts `s` to at most `n` characters, marking the cut.
pub fn cut(s: &str, n: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(n) {
        Some((i, _)) => std::borrow::Cow::Owned(format!("{}…", &s[..i])),
        None => std::borrow::Cow::Borrowed(s),
    }
}

/// The answers of one run (or one converted folder/file) and the queries they should cover.
#[derive(Debug, Clone, Default)]
pub struct AnswerSet {
    /// Where the answers came from.
    pub source: PathBuf,
    /// Method and agent model, when known (manifest or records).
    pub method: String,
    pub model: String,
    pub answers: BTreeMap<QueryKey, Answer>,
    /// The queries the run should have answered: a missing answer counts as a failure.
    pub expected: BTreeSet<QueryKey>,
}

impl AnswerSet {
    pub fn subsets(&self) -> Vec<String> {
        let set: BTreeSet<&str> = self.expected.iter().map(|k| k.subset.as_str()).collect();
        set.into_iter().map(str::to_string).collect()
    }

    /// Keeps only the given subsets (all when empty).
    pub fn restrict(&mut self, subsets: &[String]) {
        if subsets.is_empty() {
            return;
        }
        self.answers.retain(|k, _| subsets.contains(&k.subset));
        self.expected.retain(|k| subsets.contains(&k.subset));
    }

    /// Declares which ids a subset should cover (a StableToolBench id file); answers outside are dropped.
    pub fn expect_ids(&mut self, subset: &str, ids: &BTreeSet<u64>) {
        self.expected.retain(|k| k.subset != subset);
        self.answers
            .retain(|k, _| k.subset != subset || ids.contains(&k.query_id));
        self.expected
            .extend(ids.iter().map(|&id| QueryKey::new(subset, id)));
    }

    /// Adds queries the answers should cover (a run's manifest names them), keeping every answer.
    pub fn expect_also(&mut self, keys: impl IntoIterator<Item = QueryKey>) {
        self.expected.extend(keys);
    }

    pub fn missing(&self) -> Vec<&QueryKey> {
        self.expected
            .iter()
            .filter(|k| !self.answers.contains_key(k))
            .collect()
    }

    /// A short name for tables: the method, else the folder name.
    pub fn name(&self) -> String {
        if !self.method.is_empty() {
            return self.method.clone();
        }
        self.source
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "run".into())
    }

    /// Writes the answers in StableToolBench's converted format, one `{subset}.json` per subset.
    pub fn write_converted(&self, dir: &Path) -> Result<Vec<PathBuf>, EvalError> {
        let mut by_subset: BTreeMap<&str, BTreeMap<String, &Converted>> = BTreeMap::new();
        for (k, a) in &self.answers {
            by_subset
                .entry(k.subset.as_str())
                .or_default()
                .insert(k.query_id.to_string(), &a.converted);
        }
        let mut written = Vec::new();
        for (subset, map) in by_subset {
            let path = dir.join(format!("{subset}.json"));
            write_json_atomic(&path, &map)?;
            written.push(path);
        }
        Ok(written)
    }
}

/// Loads answers from a run directory, a folder of converted `{subset}.json` files, or one converted file
/// (its subset is the file's base name).
pub fn load_answers(path: &Path) -> Result<AnswerSet, EvalError> {
    load_answers_repeat(path, 0)
}

/// [`load_answers`] for repeat `repeat` of a `batch --repeats` run (`{id}_{method}.rR.json`; repeat 0
/// is the plain ToolBench name). Converted files hold one repeat only: they answer for repeat 0.
pub fn load_answers_repeat(path: &Path, repeat: u32) -> Result<AnswerSet, EvalError> {
    if path.is_file() {
        let subset = path
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        return load_converted_file(path, &subset);
    }
    if !path.is_dir() {
        return Err(EvalError::bad_input(
            path,
            "no such run directory or converted answer file",
        ));
    }
    let mut files = Vec::new();
    let mut subset_dirs = Vec::new();
    for entry in
        std::fs::read_dir(path).map_err(|e| sum2act_core::toolbench::DataError::io(path, e))?
    {
        let p = entry
            .map_err(|e| sum2act_core::toolbench::DataError::io(path, e))?
            .path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != EVAL_DIR) {
            subset_dirs.push(p);
        } else if p.extension().is_some_and(|e| e == "json")
            && p.file_name().is_some_and(|n| n != "run.json")
        {
            files.push(p);
        }
    }
    subset_dirs.sort();
    files.sort();
    if path.join("run.json").is_file() || (!subset_dirs.is_empty() && files.is_empty()) {
        load_run_dir(path, &subset_dirs, repeat)
    } else if !files.is_empty() && files.iter().all(|f| parse_answer_name(f).is_some()) {
        // One subset's raw answer folder as StableToolBench writes it (`{subset}/{id}_{method}.json`):
        // the subset is the folder's name.
        load_run_dir(path, &[path.to_path_buf()], repeat)
    } else if !files.is_empty() {
        let mut set = AnswerSet {
            source: path.to_path_buf(),
            ..AnswerSet::default()
        };
        for f in files {
            let subset = f
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            let one = load_converted_file(&f, &subset)?;
            set.method = one.method;
            set.answers.extend(one.answers);
            set.expected.extend(one.expected);
        }
        Ok(set)
    } else {
        Err(EvalError::bad_input(
            path,
            "neither a run directory (run.json, {subset}/{id}_{method}.json) nor a folder of converted {subset}.json files",
        ))
    }
}

/// Loads one StableToolBench converted file (`{qid: {query, available_tools, answer}}`).
pub fn load_converted_file(path: &Path, subset: &str) -> Result<AnswerSet, EvalError> {
    let map: BTreeMap<String, Converted> = read_json(path)?;
    let mut set = AnswerSet {
        source: path.to_path_buf(),
        ..AnswerSet::default()
    };
    for (id, converted) in map {
        let query_id = id
            .parse::<u64>()
            .map_err(|_| EvalError::bad_input(path, format!("key `{id}` is not a query id")))?;
        if set.method.is_empty() {
            set.method = converted.answer.method.clone();
        }
        let key = QueryKey::new(subset, query_id);
        set.expected.insert(key.clone());
        set.answers.insert(
            key.clone(),
            Answer {
                key,
                converted,
                record: None,
            },
        );
    }
    Ok(set)
}

fn load_run_dir(path: &Path, subset_dirs: &[PathBuf], repeat: u32) -> Result<AnswerSet, EvalError> {
    let manifest: Value = match path.join("run.json") {
        p if p.is_file() => read_json(&p)?,
        _ => Value::Null,
    };
    let mut set = AnswerSet {
        source: path.to_path_buf(),
        method: manifest["method"].as_str().unwrap_or("").to_string(),
        // The model asked for (labels name it; an endpoint may serve it under its own name).
        model: manifest["requested_model"]
            .as_str()
            .or(manifest["model"].as_str())
            .unwrap_or("")
            .to_string(),
        ..AnswerSet::default()
    };
    for dir in subset_dirs {
        let subset = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| sum2act_core::toolbench::DataError::io(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        for file in files {
            let Some((query_id, method, r)) = parse_answer_name(&file) else {
                continue;
            };
            if r != repeat {
                continue;
            }
            if !set.method.is_empty() && method != set.method {
                continue;
            }
            let value: Value = read_json(&file)?;
            if value.get("answer_generation").is_none() {
                return Err(EvalError::bad_input(
                    &file,
                    "not an answer file: no `answer_generation`",
                ));
            }
            let converted: Converted = serde_json::from_value(answer::convert(&value, &method))
                .map_err(|e| EvalError::bad_input(&file, format!("cannot convert: {e}")))?;
            let record = match value.get(OUR_KEY) {
                Some(v) => Some(
                    serde_json::from_value::<Record>(v.clone())
                        .map_err(|e| EvalError::bad_input(&file, format!("`{OUR_KEY}`: {e}")))?,
                ),
                None => None,
            };
            if set.method.is_empty() {
                set.method = method.clone();
            }
            if set.model.is_empty()
                && let Some(r) = &record
            {
                set.model = r.model.clone();
            }
            let key = QueryKey::new(subset.clone(), query_id);
            set.expected.insert(key.clone());
            set.answers.insert(
                key.clone(),
                Answer {
                    key,
                    converted,
                    record,
                },
            );
        }
    }
    Ok(set)
}

/// `{query_id}_{method}.json` → (id, method, 0); `{query_id}_{method}.rR.json` → (id, method, R).
fn parse_answer_name(path: &Path) -> Option<(u64, String, u32)> {
    let stem = path.file_stem()?.to_str()?;
    let (id, method) = stem.split_once('_')?;
    let (method, repeat) = match method.rsplit_once(".r") {
        Some((m, r)) if !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()) => {
            (m, r.parse().ok()?)
        }
        _ => (method, 0),
    };
    Some((id.parse().ok()?, method.to_string(), repeat))
}

/// How many repeats a run directory holds: one more than the highest `.rR` of any answer file (1
/// for a run without repeats or anything that is not a run directory).
pub fn repeats_in(path: &Path) -> u32 {
    let Ok(dirs) = std::fs::read_dir(path) else {
        return 1;
    };
    let mut most = 0;
    for dir in dirs.flatten().filter(|d| d.path().is_dir()) {
        for f in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Some((_, _, r)) = parse_answer_name(&f.path()) {
                most = most.max(r);
            }
        }
    }
    most.saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn converted(final_answer: &str, steps: &[(&str, &str)]) -> Converted {
        let mut next = json!([]);
        for (name, response) in steps.iter().rev() {
            next = json!([{"role": "tool", "message": {"name": name, "arguments": "{}", "response": response}, "next": next}]);
        }
        Converted {
            query: "q".into(),
            available_tools: vec![json!({"name": "get_x_for_t"}), json!({"name": "Finish"})],
            answer: ConvertedAnswer {
                method: "m".into(),
                total_steps: steps.len() as u64 + 2,
                final_answer: final_answer.into(),
                answer_details: json!([{"role": "system", "message": "", "next": [{"role": "user", "message": "", "next": next}]}]),
            },
        }
    }

    fn answer(c: Converted) -> Answer {
        Answer {
            key: QueryKey::new("G1", 1),
            converted: c,
            record: None,
        }
    }

    #[test]
    fn finish_text_from_raw_arguments() {
        let raw = "{\n  \"return_type\": \"give_answer\",\n  \"final_answer\": \"It is 21C\"\n}";
        assert_eq!(finish_answer_text(raw), "It is 21C");
        assert_eq!(
            finish_answer_text(
                "{\"return_type\": \"give_answer\", \"final_answer\": \"broken \\\"q\\\" }"
            ),
            "broken \"q\""
        );
        assert_eq!(finish_answer_text("{\"return_type\": \"give_answer\"}"), "");
        assert_eq!(finish_answer_text("plain text"), "plain text");
    }

    #[test]
    fn rules_catch_missing_finish_give_up_and_empty_answers() {
        let ok = answer(converted(
            "{\"return_type\":\"give_answer\",\"final_answer\":\"42\"}",
            &[("get_x_for_t", "{}"), ("Finish", "")],
        ));
        assert_eq!(ok.rule_failure(), None);
        assert_eq!(ok.final_text(), "42");
        let no_finish = answer(converted("", &[("get_x_for_t", "{}")]));
        assert!(
            no_finish
                .rule_failure()
                .is_some_and(|r| r.contains("Finish"))
        );
        let gave_up = answer(converted(
            "{\"return_type\": \"give_up_and_restart\"}",
            &[("Finish", "")],
        ));
        assert!(
            gave_up
                .rule_failure()
                .is_some_and(|r| r.contains("gave up"))
        );
        let empty = answer(converted(
            "{\"return_type\":\"give_answer\",\"final_answer\":\"  \"}",
            &[("Finish", "")],
        ));
        assert_eq!(empty.rule_failure().as_deref(), Some("empty final answer"));
        let mut ours = ok.clone();
        ours.record = Some(Record {
            finish: FinishKind::Limit.into(),
            ..Record::default()
        });
        assert!(ours.rule_failure().is_some_and(|r| r.contains("limit")));
    }

    #[test]
    fn old_repr_messages_are_understood() {
        let mut c = converted("{\"final_answer\": \"x\"}", &[]);
        c.answer.answer_details = json!([{"role": "tool", "message": "{'name': 'Finish', 'arguments': '{}'}", "next": []}]);
        assert_eq!(answer(c).tool_steps()[0].name, "Finish");
    }
}
