//! Placeholders in planned arguments: `<resource-2>` stands for task 2's output and
//! `<resource-2>.results[0].id` for one field of it (a JSON-path subset: `.key` and `[index]`).
//! They are found when the plan is validated and replaced by the real outputs just before a task runs.

use serde_json::{Map, Value};

use crate::toolbench::naming::squash;
use crate::tools::resources::file_handles;

/// One step of a field path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Segment {
    Key(String),
    Index(usize),
}

/// A placeholder found in an argument value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reference {
    /// The task whose output it names.
    pub task: u32,
    pub path: Vec<Segment>,
    /// Byte range of the placeholder (path included) in the string it was found in.
    pub span: (usize, usize),
}

impl Reference {
    /// The path as written (`results[0].id`), for messages.
    pub(crate) fn path_text(&self) -> String {
        let mut out = String::new();
        for s in &self.path {
            match s {
                Segment::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Segment::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }
}

const OPEN: &str = "<resource-";

/// Every placeholder in a string, in order.
pub(crate) fn find(text: &str) -> Vec<Reference> {
    let mut refs = Vec::new();
    let mut from = 0;
    while let Some(rel) = text[from..].find(OPEN) {
        let start = from + rel;
        let digits_at = start + OPEN.len();
        let digits: String = text[digits_at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let close = digits_at + digits.len();
        if digits.is_empty() || !text[close..].starts_with('>') {
            from = digits_at;
            continue;
        }
        let Ok(task) = digits.parse::<u32>() else {
            from = close;
            continue;
        };
        let (path, end) = parse_path(text, close + 1);
        refs.push(Reference {
            task,
            path,
            span: (start, end),
        });
        from = end;
    }
    refs
}

/// Reads `.key[0].other` starting at `at`; returns the segments and where the path ends.
fn parse_path(text: &str, mut at: usize) -> (Vec<Segment>, usize) {
    let bytes = text.as_bytes();
    let mut path = Vec::new();
    loop {
        match bytes.get(at) {
            Some(b'.') => {
                let key: String = text[at + 1..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
                    .collect();
                if key.is_empty() {
                    break;
                }
                at += 1 + key.len();
                path.push(Segment::Key(key));
            }
            Some(b'[') => {
                let digits: String = text[at + 1..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                let close = at + 1 + digits.len();
                match (digits.parse::<usize>(), bytes.get(close)) {
                    (Ok(i), Some(b']')) => {
                        path.push(Segment::Index(i));
                        at = close + 1;
                    }
                    _ => break,
                }
            }
            _ => break,
        }
    }
    (path, at)
}

/// Words a model may use for an earlier result in a reference this method does not read.
const REFERENCE_WORDS: &[&str] = &["resource", "call", "task", "step", "output", "result"];

/// References to earlier results written in a form no resolver reads (`<call_1>.rankings[0].id`,
/// `<resource_2>`, `<task 3>`): sent as they are, they would reach the API as literal text. A valid
/// `<resource-N>` placeholder and a file handle (`<file-N>`) are not stray.
pub(crate) fn stray_references(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = text[from..].find('<') {
        let start = from + rel;
        from = start + 1;
        let Some(len) = text[start + 1..].find('>').filter(|n| *n <= 40) else {
            continue;
        };
        let inner = text[start + 1..start + 1 + len].to_lowercase();
        let Some(rest) = REFERENCE_WORDS.iter().find_map(|w| inner.strip_prefix(w)) else {
            continue;
        };
        let digits = rest.trim_start_matches(['-', '_', ' ', '#', ':']);
        let numbered = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit());
        let valid = find(&text[start..]).first().is_some_and(|r| r.span.0 == 0);
        if numbered && !valid {
            out.push(text[start..start + len + 2].to_string());
        }
    }
    out
}

/// Every placeholder in an argument object (strings at any depth).
pub(crate) fn in_arguments(args: &Map<String, Value>) -> Vec<Reference> {
    let mut refs = Vec::new();
    for v in args.values() {
        collect(v, &mut refs);
    }
    refs
}

fn collect(v: &Value, refs: &mut Vec<Reference>) {
    match v {
        Value::String(s) => refs.extend(find(s)),
        Value::Array(a) => a.iter().for_each(|x| collect(x, refs)),
        Value::Object(m) => m.values().for_each(|x| collect(x, refs)),
        _ => {}
    }
}

/// Follows a path in a value; arrays of one template element accept any index (`template_response`
/// shows one element per list).
pub(crate) fn follow<'a>(value: &'a Value, path: &[Segment], template: bool) -> Option<&'a Value> {
    let mut cur = value;
    for seg in path {
        cur = match (seg, cur) {
            (Segment::Key(k), Value::Object(m)) => field(m, k)?,
            (Segment::Index(i), Value::Array(a)) if template => a.first().filter(|_| *i < 1000)?,
            (Segment::Index(i), Value::Array(a)) => a.get(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// A field by name, or by the name without its punctuation and case when no field has it exactly:
/// a placeholder path cannot spell a key such as `movies:` (a recorded API's own quirk).
fn field<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    m.get(key).or_else(|| {
        let want = squash(key);
        m.iter()
            .find(|(k, _)| !want.is_empty() && squash(k) == want)
            .map(|(_, v)| v)
    })
}

/// The first value under `key` anywhere in `value` (depth first): the fallback when a planned path
/// does not match the real output but the field it wanted is there under another path.
pub(crate) fn find_key<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    match value {
        Value::Object(m) => field(m, key)
            .filter(|v| !v.is_object() && !v.is_array())
            .or_else(|| m.values().find_map(|v| find_key(v, key))),
        Value::Array(a) => a.iter().find_map(|v| find_key(v, key)),
        _ => None,
    }
}

/// A tool response as JSON: ToolBench responses are often JSON texts inside a string.
pub(crate) fn output_value(response: &Value) -> Value {
    match response {
        Value::String(s) => serde_json::from_str(s).unwrap_or_else(|_| response.clone()),
        other => other.clone(),
    }
}

/// Outputs of finished tasks, by task id.
pub(crate) type Outputs = std::collections::BTreeMap<u32, Value>;

/// Replaces every placeholder in `args` by the output it names. A path that does not match the
/// real output falls back to the first field of the same name (noted); a bare placeholder given to a
/// parameter that wants one value takes the parameter's own field from the output (noted).
pub(crate) fn resolve(
    args: &Map<String, Value>,
    outputs: &Outputs,
    notes: &mut Vec<String>,
) -> Result<Map<String, Value>, String> {
    let mut out = Map::new();
    for (param, v) in args {
        out.insert(param.clone(), resolve_value(param, v, outputs, notes)?);
    }
    Ok(out)
}

fn resolve_value(
    param: &str,
    v: &Value,
    outputs: &Outputs,
    notes: &mut Vec<String>,
) -> Result<Value, String> {
    match v {
        Value::String(s) => resolve_string(param, s, outputs, notes),
        Value::Array(a) => a
            .iter()
            .map(|x| resolve_value(param, x, outputs, notes))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        // A placeholder inside an object is resolved too: left as it is it would be sent as text.
        Value::Object(m) => m
            .iter()
            .map(|(k, x)| Ok((k.clone(), resolve_value(param, x, outputs, notes)?)))
            .collect::<Result<Map<_, _>, String>>()
            .map(Value::Object),
        other => Ok(other.clone()),
    }
}

fn resolve_string(
    param: &str,
    s: &str,
    outputs: &Outputs,
    notes: &mut Vec<String>,
) -> Result<Value, String> {
    if let Some(stray) = stray_references(s).first() {
        return Err(format!(
            "`{param}` = {s:?} names an earlier result as {stray}, which is not a placeholder: \
             write <resource-N> or <resource-N>.field for task N's output"
        ));
    }
    let refs = find(s);
    if refs.is_empty() {
        return Ok(Value::String(s.to_string()));
    }
    let whole = refs.len() == 1 && refs[0].span == (0, s.trim_end().len()) && !s.starts_with(' ');
    if whole {
        return lookup(param, &refs[0], outputs, notes);
    }
    let mut text = String::new();
    let mut last = 0;
    for r in &refs {
        text.push_str(&s[last..r.span.0]);
        text.push_str(&scalar_text(&lookup(param, r, outputs, notes)?));
        last = r.span.1;
    }
    text.push_str(&s[last..]);
    Ok(Value::String(text))
}

fn lookup(
    param: &str,
    r: &Reference,
    outputs: &Outputs,
    notes: &mut Vec<String>,
) -> Result<Value, String> {
    let output = outputs
        .get(&r.task)
        .ok_or_else(|| format!("<resource-{}> has no output (task not run)", r.task))?;
    if let Some(v) = follow(output, &r.path, false) {
        if r.path.is_empty()
            && (v.is_object() || v.is_array())
            && let Some(field) = find_key(v, param)
        {
            notes.push(format!(
                "`{param}`: took field `{param}` of <resource-{}>",
                r.task
            ));
            return Ok(field.clone());
        }
        // A task whose output is one file (an image, audio) passes that file: its handle, which
        // the caller turns into the file's path for an MCP tool.
        if r.path.is_empty()
            && let [handle] = file_handles(v).as_slice()
        {
            notes.push(format!(
                "`{param}`: took the file {handle} of <resource-{}>",
                r.task
            ));
            return Ok(Value::String(handle.clone()));
        }
        return Ok(v.clone());
    }
    let key = r.path.iter().rev().find_map(|s| match s {
        Segment::Key(k) => Some(k.as_str()),
        Segment::Index(_) => None,
    });
    match key.and_then(|k| find_key(output, k)) {
        Some(v) => {
            notes.push(format!(
                "`{param}`: <resource-{}>.{} not in the output; used the first `{}` found",
                r.task,
                r.path_text(),
                key.unwrap_or_default()
            ));
            Ok(v.clone())
        }
        None => Err(format!(
            "<resource-{}>.{} is not in task {}'s output",
            r.task,
            r.path_text(),
            r.task
        )),
    }
}

/// A value as text inside a longer string.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_placeholders_with_paths() {
        let refs = find("see <resource-2>.results[0].movie_id and <resource-13>");
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[0].task, 2);
        assert_eq!(
            refs[0].path,
            vec![
                Segment::Key("results".into()),
                Segment::Index(0),
                Segment::Key("movie_id".into())
            ]
        );
        assert_eq!(refs[0].path_text(), "results[0].movie_id");
        assert_eq!(refs[1].task, 13);
        assert!(refs[1].path.is_empty());
        assert!(find("<resource-x> <resource-> plain").is_empty());
    }

    /// `args` resolved against `outputs`, with the notes.
    fn resolved(args: &Value, outputs: &Outputs) -> (Map<String, Value>, Vec<String>) {
        let mut notes = Vec::new();
        let got = resolve(args.as_object().unwrap_or(&Map::new()), outputs, &mut notes)
            .unwrap_or_else(|e| panic!("{e}"));
        (got, notes)
    }

    #[test]
    fn resolves_whole_embedded_and_fallback_references() {
        let mut outputs = Outputs::new();
        outputs.insert(
            1,
            json!({"results": [{"movie_id": "tt01", "title": "Matrix"}, {"movie_id": "tt02"}]}),
        );
        outputs.insert(2, json!({"price": 61000.5}));
        let args = json!({
            "movie_id": "<resource-1>.results[1].movie_id",
            "note": "price <resource-2>.price USD",
            "id2": "<resource-1>.items[0].movie_id",
            "price": "<resource-2>",
        });
        let (got, notes) = resolved(&args, &outputs);
        assert_eq!(got["movie_id"], "tt02");
        assert_eq!(got["note"], "price 61000.5 USD");
        // The wrong path falls back to the first field of that name, with a note.
        assert_eq!(got["id2"], "tt01");
        // A bare placeholder for a one-value parameter takes that field.
        assert_eq!(got["price"], json!(61000.5));
        assert_eq!(notes.len(), 2, "{notes:?}");
    }

    #[test]
    fn placeholders_inside_objects_are_resolved() {
        let mut outputs = Outputs::new();
        outputs.insert(1, json!({"url": "https://x.example/qr.png"}));
        let (got, _) = resolved(
            &json!({"body": {"image": {"src": "<resource-1>.url"}}}),
            &outputs,
        );
        assert_eq!(got["body"]["image"]["src"], "https://x.example/qr.png");
        let args = json!({"body": {"src": "<resource-1>.qr_code_url"}});
        let got = resolve(
            args.as_object().unwrap_or(&Map::new()),
            &outputs,
            &mut Vec::new(),
        );
        assert!(got.is_err(), "{got:?}");
    }

    #[test]
    fn a_task_that_made_one_file_passes_its_handle() {
        let mut outputs = Outputs::new();
        outputs.insert(
            1,
            json!([{"width": 1}, {"type": "image", "mime_type": "image/png", "file": "<file-3>", "bytes": 9}]),
        );
        let (got, notes) = resolved(&json!({"image": "<resource-1>"}), &outputs);
        assert_eq!(got["image"], "<file-3>");
        assert!(notes[0].contains("took the file <file-3>"), "{notes:?}");
    }

    #[test]
    fn unresolvable_references_are_errors() {
        let mut outputs = Outputs::new();
        outputs.insert(1, json!({"a": 1}));
        let mut notes = Vec::new();
        let args = json!({"x": "<resource-1>.zzz"});
        assert!(
            resolve(
                args.as_object().unwrap_or(&Map::new()),
                &outputs,
                &mut notes
            )
            .is_err()
        );
        let args = json!({"x": "<resource-9>"});
        assert!(
            resolve(
                args.as_object().unwrap_or(&Map::new()),
                &outputs,
                &mut notes
            )
            .is_err()
        );
    }

    #[test]
    fn references_in_another_form_are_errors_not_literal_arguments() {
        // Simulator request 245: a graph argument call answered with `<call_1>.rankings[0].playerId`.
        assert_eq!(
            stray_references("<call_1>.rankings[0].playerId"),
            vec!["<call_1>"]
        );
        for text in ["<resource_2>", "see <Task 3>", "<output-1>.id", "<step#4>"] {
            assert_eq!(stray_references(text).len(), 1, "{text}");
        }
        for text in [
            "<resource-2>.id",
            "<file-1>",
            "a < b > c",
            "<callback>",
            "<b>bold</b>",
        ] {
            assert!(stray_references(text).is_empty(), "{text}");
        }
        let mut outputs = Outputs::new();
        outputs.insert(1, json!({"rankings": [{"playerId": "28237"}]}));
        let args = json!({"playerid": "<call_1>.rankings[0].playerId"});
        let err = resolve(
            args.as_object().unwrap_or(&Map::new()),
            &outputs,
            &mut Vec::new(),
        );
        assert!(err.is_err_and(|e| e.contains("<call_1>") && e.contains("<resource-N>")));
    }

    #[test]
    fn a_path_reaches_a_key_written_with_punctuation() {
        // Similar Movies answers under `movies:`; a placeholder path can only say `movies`.
        let mut outputs = Outputs::new();
        outputs.insert(1, json!({"movies:": [{"id": "24168-titanic"}]}));
        let (got, notes) = resolved(&json!({"id": "<resource-1>.movies[0].id"}), &outputs);
        assert_eq!(got["id"], "24168-titanic");
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn template_paths_accept_any_index() {
        let t = json!({"results": [{"movie_id": "str", "_list_length": 3}]});
        let path = vec![
            Segment::Key("results".into()),
            Segment::Index(2),
            Segment::Key("movie_id".into()),
        ];
        assert_eq!(follow(&t, &path, true), Some(&json!("str")));
        assert_eq!(follow(&t, &path, false), None);
    }
}
