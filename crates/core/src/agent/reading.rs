//! An observation read in full by the steps that digest it (Sum2Act's state manager, the answer call of
//! `plan` and `graph`): the reply as ToolBench writes it, cut at a large cap (`--observation-read-chars`)
//! instead of ToolBench's 1,024 characters, which exists for ReAct's ever-growing prompt. Values too
//! large to copy into a fact (a base64 image, a long list) get a reference, `[value 3.1]`, that a fact
//! or the final answer can carry; the final answer gets the whole value back (`expand`).

use serde_json::Value;

use crate::text::{clip, truncate};
use crate::tools::Observation;
use crate::tools::observation::{python_dumps, reply_text};

/// Default of `AgentOptions::observation_read_chars`.
#[cfg(test)]
pub(crate) const DEFAULT_READ_CHARS: usize = 16_384;
/// A string without whitespace at least this long is opaque data (base64, a data URI, a token): the
/// reader gets its reference and its first characters, not the data.
const OPAQUE_CHARS: usize = 200;
/// A list whose text is at least this long is too long to copy into one fact: it gets a reference.
const LONG_LIST_CHARS: usize = 1_500;
/// References listed per observation at most.
const MAX_REFERENCES: usize = 12;
/// Longest final answer after references are expanded (bytes): a size guard, far above any answer.
pub(crate) const MAX_EXPANDED_BYTES: usize = 256 * 1024;

/// A value kept by reference: `[value {step}.{k}]`.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptValue {
    pub step: u32,
    pub k: usize,
    /// Where it is in the response (`response.results`).
    pub path: String,
    /// What it is, for the reader (`base64 data, 54,321 characters`, `list of 48 items`).
    pub what: String,
    pub value: Value,
}

impl KeptValue {
    pub(crate) fn reference(&self) -> String {
        format!("[value {}.{}]", self.step, self.k)
    }
}

/// What the reader of one observation gets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reading {
    /// The reply text (opaque data replaced by its reference), at most the cap plus `...`.
    pub text: String,
    /// The response as read (opaque data replaced by its reference).
    pub shown: Value,
    /// The values this reading gave references to.
    pub values: Vec<KeptValue>,
}

impl Reading {
    /// The references as lines for the reader's prompt (empty when there are none).
    pub(crate) fn legend(&self) -> String {
        if self.values.is_empty() {
            return String::new();
        }
        let lines: Vec<String> = self
            .values
            .iter()
            .map(|v| format!("- {} = {} ({})", v.reference(), v.path, v.what))
            .collect();
        format!(
            "Large values in this result, kept in full by reference (write the reference in a fact to keep the whole value for the final answer):\n{}",
            lines.join("\n")
        )
    }
}

/// Reads the observation of step `step` up to `cap` characters.
pub(crate) fn read(obs: &Observation, step: u32, cap: usize) -> Reading {
    let mut values = Vec::new();
    let shown = mark(&obs.response, "response", step, &mut values);
    Reading {
        text: truncate(reply_text(&obs.error, &shown), cap),
        shown,
        values,
    }
}

/// Longest result written as one fact of its values; a longer one is kept by reference.
const RESULT_FACT_CHARS: usize = 1_000;

impl Reading {
    /// The result's own values as one fact (`name: city: Lisbon; temperature: 21.4; …`), whole; a
    /// result too long for one fact is kept whole by reference (`[value 3.0]`). For a state manager
    /// that says a result answers a part but writes no fact stating it.
    pub(crate) fn result_fact(&mut self, name: &str, step: u32) -> String {
        let mut leaves = Vec::new();
        collect_leaves(&self.shown, "", &mut leaves);
        let text = leaves.join("; ");
        if text.chars().count() <= RESULT_FACT_CHARS {
            return format!("{name}: {text}");
        }
        let whole = KeptValue {
            step,
            k: 0,
            path: "response".into(),
            what: "the whole result".into(),
            value: self.shown.clone(),
        };
        let reference = whole.reference();
        self.values.push(whole);
        format!("{name} returned a result too long for one fact, kept whole: {reference}")
    }
}

/// `path: value` for every scalar of `value` (the path from the last key or index).
fn collect_leaves(value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                collect_leaves(v, k, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                collect_leaves(v, &format!("{path}[{i}]"), out);
            }
        }
        Value::Null => {}
        Value::String(s) if s.trim().is_empty() => {}
        Value::String(s) => out.push(format!("{path}: {s}")),
        other => out.push(format!("{path}: {other}")),
    }
}

/// The observation's text as the reader's step records it: the whole reply (opaque data included) up
/// to `cap` characters, so what an answer states can be checked against what was read.
pub(crate) fn recorded_text(obs: &Observation, cap: usize) -> String {
    truncate(reply_text(&obs.error, &obs.response), cap)
}

/// `value` as shown to the reader: opaque strings replaced by their reference; long lists kept in
/// place and given a reference too.
fn mark(value: &Value, path: &str, step: u32, values: &mut Vec<KeptValue>) -> Value {
    let room = values.len() < MAX_REFERENCES;
    match value {
        Value::String(s) if room && is_opaque(s) => {
            let kept = keep(value, path, step, values, opaque_what(s));
            Value::String(format!("{} (starts {:?})", kept, clip(s, 40)))
        }
        Value::Array(items) => {
            if room && python_dumps(value).chars().count() >= LONG_LIST_CHARS {
                keep(
                    value,
                    path,
                    step,
                    values,
                    format!("list of {} items", items.len()),
                );
            }
            let shown = items
                .iter()
                .enumerate()
                .map(|(i, v)| mark(v, &format!("{path}[{i}]"), step, values))
                .collect();
            Value::Array(shown)
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), mark(v, &format!("{path}.{k}"), step, values)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn keep(value: &Value, path: &str, step: u32, values: &mut Vec<KeptValue>, what: String) -> String {
    let kept = KeptValue {
        step,
        k: values.len() + 1,
        path: path.to_string(),
        what,
        value: value.clone(),
    };
    let reference = kept.reference();
    values.push(kept);
    reference
}

fn is_opaque(s: &str) -> bool {
    s.chars().count() >= OPAQUE_CHARS && !s.chars().any(char::is_whitespace)
}

fn opaque_what(s: &str) -> String {
    let kind = if s.starts_with("data:") {
        "data URI"
    } else if s.starts_with("http") {
        "long URL"
    } else {
        "opaque data (base64 or a token)"
    };
    format!("{kind}, {} characters", s.chars().count())
}

/// Every `[value S.K]` reference in `text`: its byte range, step and number.
fn references(text: &str) -> Vec<(usize, usize, u32, usize)> {
    const OPEN: &str = "[value ";
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = text[from..].find(OPEN) {
        let start = from + rel;
        let rest = &text[start + OPEN.len()..];
        let inner: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let end = start + OPEN.len() + inner.len();
        from = end.max(start + 1);
        if !text[end..].starts_with(']') {
            continue;
        }
        if let Some((s, k)) = inner.split_once('.')
            && let (Ok(s), Ok(k)) = (s.parse(), k.parse())
        {
            out.push((start, end + 1, s, k));
        }
    }
    out
}

/// `text` with each reference replaced by a plain phrase: a reference is not a value to look up in
/// the evidence (its digits are not a claim), and what it stands for comes from an observation.
pub(crate) fn neutral(text: &str) -> String {
    replace(text, |_, _| Some("the kept value".to_string()))
}

/// `text` with each known reference replaced by its whole value, within `MAX_EXPANDED_BYTES`; a
/// reference nothing is known for, or that would pass the guard, is left as written.
pub(crate) fn expand(text: &str, values: &[KeptValue]) -> String {
    let mut budget = MAX_EXPANDED_BYTES.saturating_sub(text.len());
    replace(text, |s, k| {
        let v = values.iter().find(|v| v.step == s && v.k == k)?;
        let full = render(&v.value);
        if full.len() > budget {
            return None;
        }
        budget -= full.len();
        Some(full)
    })
}

/// Whether `text` holds a reference.
pub(crate) fn has_references(text: &str) -> bool {
    !references(text).is_empty()
}

fn replace(text: &str, mut with: impl FnMut(u32, usize) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, end, s, k) in references(text) {
        if let Some(v) = with(s, k) {
            out.push_str(&text[last..start]);
            out.push_str(&v);
            last = end;
        }
    }
    out.push_str(&text[last..]);
    out
}

/// A value as an answer shows it: a string as it is, a list one item a line, an object one field a
/// line (its lists as lists).
fn render(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| format!("\n- {}", item_text(i)))
            .collect(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| match v {
                Value::Array(_) => format!("\n{k}:{}", render(v)),
                _ => format!("\n{k}: {}", item_text(v)),
            })
            .collect(),
        other => other.to_string(),
    }
}

/// One list item on one line: scalars as they are, objects as `key: value` pairs.
fn item_text(item: &Value) -> String {
    match item {
        Value::String(s) => s.clone(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}: {s}"),
                other => format!("{k}: {other}"),
            })
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ReplySource;
    use serde_json::json;

    fn observation(response: Value) -> Observation {
        Observation {
            error: String::new(),
            response,
            source: ReplySource::Cache,
            failed: false,
            ..crate::agent::common::harness_observation("f", "{}", "")
        }
    }

    #[test]
    fn the_reader_sees_past_the_toolbench_cut_and_large_values_by_reference() {
        let image = format!("data:image/png;base64,{}", "iVBORw0KGgo".repeat(40));
        let titles: Vec<Value> = (0..60)
            .map(|i| json!({"title": format!("Comedy number {i}"), "year": 2000 + i % 20}))
            .collect();
        let note = "rating 8.5, runtime 142 min. ".repeat(50);
        let obs = observation(json!({"qr": image, "movies": titles, "note": note}));
        let r = read(&obs, 3, DEFAULT_READ_CHARS);
        // The note past ToolBench's 1,024 characters is read; the image is not copied into the text.
        assert!(r.text.contains(&note), "{}", r.text.len());
        assert!(!r.text.contains(&image));
        assert!(r.text.contains("[value 3."), "{}", r.text);
        assert!(r.text.contains("Comedy number 59"));
        let legend = r.legend();
        assert!(legend.contains("response.qr (data URI"), "{legend}");
        assert!(
            legend.contains("response.movies (list of 60 items)"),
            "{legend}"
        );
        // The recorded text holds the data itself, and a cap still bounds both.
        assert!(recorded_text(&obs, DEFAULT_READ_CHARS).contains(&image));
        assert!(read(&obs, 3, 100).text.chars().count() <= 103);
        // The answer gets the whole values back.
        let movies = r.values.iter().find(|v| v.path == "response.movies");
        let qr = r.values.iter().find(|v| v.path == "response.qr");
        let (Some(movies), Some(qr)) = (movies, qr) else {
            panic!("{:?}", r.values)
        };
        let answer = format!(
            "The QR code: {}. The comedies: {}",
            qr.reference(),
            movies.reference()
        );
        let full = expand(&answer, &r.values);
        assert!(full.contains(&image));
        assert!(
            full.contains("\n- title: Comedy number 59; year: 2019"),
            "{full}"
        );
        assert_eq!(
            neutral(&answer),
            "The QR code: the kept value. The comedies: the kept value"
        );
        // An unknown reference stays as written.
        assert_eq!(expand("see [value 9.9]", &r.values), "see [value 9.9]");
    }

    #[test]
    fn a_result_becomes_one_fact_of_its_values_or_a_reference() {
        let obs = observation(
            json!({"city": "Lisbon", "temperature": 21.4, "tags": ["sunny"], "note": ""}),
        );
        let mut r = read(&obs, 1, DEFAULT_READ_CHARS);
        assert_eq!(
            r.result_fact("weather", 1),
            "weather: city: Lisbon; temperature: 21.4; tags[0]: sunny"
        );
        let big = observation(
            json!({"items": (0..200).map(|i| format!("item {i}")).collect::<Vec<_>>()}),
        );
        let mut r = read(&big, 2, DEFAULT_READ_CHARS);
        let fact = r.result_fact("list", 2);
        assert!(fact.ends_with("[value 2.0]"), "{fact}");
        assert!(expand(&fact, &r.values).contains("- item 199"));
    }

    #[test]
    fn small_values_are_read_as_they_are() {
        let obs = observation(json!({"temperature": 21, "tags": ["a", "b"], "id": "tt0133093"}));
        let r = read(&obs, 1, DEFAULT_READ_CHARS);
        assert!(r.values.is_empty());
        assert_eq!(r.text, recorded_text(&obs, DEFAULT_READ_CHARS));
        assert_eq!(r.legend(), "");
    }
}
