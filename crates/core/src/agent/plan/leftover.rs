//! The last check before a call: a placeholder still in an argument reaches a real API as garbage
//! (strong-model runs sent `<id of Rome from call_1 result>`). Left over are a formal `<resource-N>`
//! that was not resolved, a reference in another form (`<call_1>`), and a description written where
//! a value belongs. One that is a parameter's whole value is filled when the earlier outputs hold
//! exactly one value of the parameter's kind; otherwise the call is withheld, never sent.

use serde_json::{Map, Value};

use super::execute::ExecTask;
use super::placeholder::{self, Outputs};
use crate::tools::graph::{gives, kind_of};

/// Words that make bracketed text a description of a value (`<id of Rome from call_1 result>`):
/// markup (`<td nowrap>`) and addresses (`<a@b.c>`) have none of them.
const CUES: &[&str] = &[
    "of",
    "from",
    "returned",
    "result",
    "results",
    "output",
    "response",
    "given",
    "obtained",
    "retrieved",
    "produced",
    "previous",
    "earlier",
    "above",
    "placeholder",
];

/// Longest bracketed text read as a description.
const MAX_DESCRIPTION: usize = 300;

/// Bracketed descriptions of a value in `text`, brackets included. A description is two or more
/// words, one of them a cue, without markup's `=`, `"` or a leading `/`, `!`, `?`; a whole value of
/// one snake_case name (`<task_id>`) is a parameter's name copied, not a value, and counts too.
pub(crate) fn descriptions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = text[from..].find('<') {
        let start = from + rel;
        from = start + 1;
        let Some(len) = text[start + 1..].find('>') else {
            break;
        };
        let inner = &text[start + 1..start + 1 + len];
        let whole = text.trim().len() == len + 2;
        let bracketed = &text[start..start + len + 2];
        // `<call_1>` is a reference in another form, reported as such.
        let not_stray = placeholder::stray_references(bracketed).is_empty();
        if !inner.contains('<') && is_description(inner, whole) && not_stray {
            out.push(bracketed.to_string());
        }
    }
    out
}

fn is_description(inner: &str, whole: bool) -> bool {
    if inner.is_empty()
        || inner.len() > MAX_DESCRIPTION
        || inner != inner.trim()
        || inner.starts_with(['/', '!', '?'])
        || inner.contains(['=', '"'])
    {
        return false;
    }
    let words: Vec<String> = inner
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_')
                .to_lowercase()
        })
        .collect();
    if words.len() >= 2 && words.iter().any(|w| CUES.contains(&w.as_str())) {
        return true;
    }
    whole && inner.contains('_') && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A placeholder left in the value of one parameter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Leftover {
    pub param: String,
    pub text: String,
}

/// Placeholders left in the arguments about to be sent: descriptions and references in another
/// form the plan wrote (read in `planned`: a value taken from an output is data, not a
/// placeholder) that are still in the value sent, and formal ones left in `sent`.
pub(crate) fn leftovers(planned: &Map<String, Value>, sent: &Map<String, Value>) -> Vec<Leftover> {
    let mut out = Vec::new();
    for (param, value) in sent {
        let sent_texts = strings(value);
        let mut found: Vec<String> = Vec::new();
        for s in planned.get(param).map(strings).unwrap_or_default() {
            found.extend(placeholder::stray_references(&s));
            found.extend(descriptions(&s));
        }
        for s in &sent_texts {
            found.extend(
                placeholder::find(s)
                    .iter()
                    .map(|r| s[r.span.0..r.span.1].to_string()),
            );
        }
        for text in found {
            if sent_texts.iter().any(|s| s.contains(&text))
                && !out.iter().any(|l: &Leftover| l.text == text)
            {
                out.push(Leftover {
                    param: param.clone(),
                    text,
                });
            }
        }
    }
    out
}

/// Every string in a value, at any depth.
fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().flat_map(strings).collect(),
        Value::Object(m) => m.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

/// What the last check made of a call's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Settled {
    /// Nothing left over: sent as they are.
    Clean,
    /// Every placeholder left over was filled from an earlier output (noted).
    Filled,
}

/// The last check of `args` (the task's arguments, resolved) before they are sent; the error says
/// why they must not be sent, in words the re-planning and answer calls read.
pub(crate) fn settle(
    task: &ExecTask,
    args: &mut Map<String, Value>,
    outputs: &Outputs,
    notes: &mut Vec<String>,
) -> Result<Settled, String> {
    let left = leftovers(&task.args, args);
    if left.is_empty() {
        return Ok(Settled::Clean);
    }
    let mut unfilled = Vec::new();
    for l in &left {
        let whole = args.get(&l.param).and_then(Value::as_str) == Some(l.text.as_str());
        match whole.then(|| only_value(&l.param, task, outputs)).flatten() {
            Some((value, from)) => {
                notes.push(format!(
                    "`{}`: {} was filled with the only `{}` in task {from}'s output",
                    l.param,
                    l.text,
                    kind_of(&l.param)
                ));
                args.insert(l.param.clone(), value);
            }
            None => unfilled.push(l),
        }
    }
    if unfilled.is_empty() {
        return Ok(Settled::Filled);
    }
    let listed: Vec<String> = unfilled
        .iter()
        .map(|l| format!("`{}` = {:?}", l.param, l.text))
        .collect();
    Err(format!(
        "not called: {} is a placeholder, not a value, and no earlier result fills it; give the \
         value itself or <resource-N>.field of a task that worked",
        listed.join(", ")
    ))
}

/// The one distinct value of `param`'s kind among the outputs the task waits for (all earlier
/// outputs when it waits for none), with the task it came from; `None` when there are none or
/// several (choosing one would be a guess).
fn only_value(param: &str, task: &ExecTask, outputs: &Outputs) -> Option<(Value, u32)> {
    let kind = kind_of(param);
    if kind.is_empty() {
        return None;
    }
    let sources: Vec<(u32, &Value)> = outputs
        .iter()
        .filter(|(id, _)| task.deps.is_empty() || task.deps.contains(id))
        .map(|(id, v)| (*id, v))
        .collect();
    let mut found: Vec<(Value, u32)> = Vec::new();
    for (id, output) in sources {
        let mut values = Vec::new();
        of_kind(output, "", &kind, &mut values);
        for v in values {
            if !found.iter().any(|(f, _)| *f == v) {
                found.push((v, id));
            }
        }
    }
    match found.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// Scalar values under a key of kind `kind` anywhere in `v` (every list element, not only the first).
fn of_kind(v: &Value, key: &str, kind: &str, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| of_kind(x, k, kind, out)),
        Value::Array(a) => a.iter().for_each(|x| of_kind(x, key, kind, out)),
        Value::Null => {}
        leaf => {
            if !key.is_empty() && gives(&kind_of(key), kind) {
                out.push(leaf.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn descriptions_are_told_from_markup_and_addresses() {
        // Strong-model runs (dev graph 2121, 3510, plan 9834; mixed graph 701, 717, 727).
        for text in [
            "<id of Rome from call_1 result>",
            "<task_id returned by call_1>",
            "<playerId of a top player from the 2022 world ranking>",
            "<user's height in cm - not given>",
            "<PNG image URL returned by create_qr_code_for_qr_forge for https://lisboa-bistro.example/menu>",
            "<URL of today's menu board photo of Tasca do Chico, from the menu-of-the-day API>",
            "<image URL returned by call_1 (QR Forge QR code)>",
            "<task_id>",
            "Trips from <id of Rome from call_1 result> today",
        ] {
            assert_eq!(descriptions(text).len(), 1, "{text}");
        }
        for text in [
            "<b>The result of the vote</b>",
            "<p>Output</p><br />",
            "<a href=\"https://x.y\">list of results</a>",
            "<td nowrap>",
            "John Doe <john@example.com>",
            "<a@b.c>",
            "<https://example.com/a>",
            "a < b of c > d",
            "<!-- output of step 1 -->",
            "<?xml version=\"1.0\"?><result>1</result>",
            "<resource-1>.id",
            "<file-1>",
            "<search_results>x</search_results>",
            "plain text",
        ] {
            assert!(descriptions(text).is_empty(), "{text}");
        }
    }

    fn task(args: Value, deps: &[u32]) -> ExecTask {
        ExecTask {
            id: 3,
            tool: "search_trips".into(),
            args: args.as_object().cloned().unwrap_or_default(),
            deps: deps.to_vec(),
        }
    }

    #[test]
    fn a_description_is_filled_only_from_the_one_value_of_its_kind() {
        let planned =
            json!({"station_id": "<id of Rome from call_1 result>", "date": "2022-04-30"});
        let t = task(planned.clone(), &[1]);
        let args = planned.as_object().cloned().unwrap_or_default();
        let mut outputs = Outputs::new();
        outputs.insert(
            1,
            json!({"stations": [{"station_id": "rm-1", "name": "Roma Tiburtina"}]}),
        );
        let mut notes = Vec::new();
        let mut got = args.clone();
        assert_eq!(
            settle(&t, &mut got, &outputs, &mut notes),
            Ok(Settled::Filled)
        );
        assert_eq!(got["station_id"], "rm-1");
        assert!(
            notes[0].contains("only `station_id` in task 1"),
            "{notes:?}"
        );
        // Two stations: which one is meant is a guess, and the call is withheld.
        outputs.insert(
            1,
            json!({"stations": [{"station_id": "rm-1"}, {"station_id": "rm-2"}]}),
        );
        let withheld = settle(&t, &mut args.clone(), &outputs, &mut Vec::new());
        assert!(
            withheld
                .as_ref()
                .is_err_and(|why| why.contains("<id of Rome from call_1 result>")),
            "{withheld:?}"
        );
    }

    #[test]
    fn placeholders_left_in_what_would_be_sent_are_found() {
        let planned = json!({
            "q": "<id of Rome from call_1 result>",
            "nested": {"url": "<resource-1>.qr_code_url"},
            "other": "<call_2>.id",
            "html": "<b>bold</b>",
        });
        let mut sent = planned.as_object().cloned().unwrap_or_default();
        let found: Vec<String> = leftovers(&task(planned.clone(), &[]).args, &sent)
            .into_iter()
            .map(|l| l.text)
            .collect();
        assert_eq!(
            found,
            [
                "<id of Rome from call_1 result>",
                "<resource-1>.qr_code_url",
                "<call_2>"
            ]
        );
        // A description the state memory replaced is gone from what is sent.
        sent.insert("q".into(), json!("rm-1"));
        sent.insert("other".into(), json!("7"));
        sent.insert("nested".into(), json!({"url": "https://x"}));
        assert!(leftovers(&task(planned, &[]).args, &sent).is_empty());
    }
}
