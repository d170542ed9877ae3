//! Sum2Act's checklist over the strong-model reference runs (`eval/reference/strong/SET.tar.xz`): for
//! every query of the three sets, the checklist this build makes from the recorded decomposition (or
//! from the request's own asks, where no split was asked for) is the one recorded, and, read against
//! the blind labels (`eval/labels/strong_SET.json`: the parts each labeller listed as asked, for every
//! method's answer), it drops no part, repeats none and invents none. The media set is checked here
//! too: its runs are not replayed (live MCP tools), but its checklists come before any tool call.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use sum2act_core::toolbench::request_asks::asks;
use sum2act_core::toolbench::request_split::checklist_from_split;

/// Words that say how something is asked, not what.
const ASKING: &[&str] = &[
    "a",
    "about",
    "additionally",
    "all",
    "also",
    "an",
    "and",
    "any",
    "api",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "could",
    "detail",
    "details",
    "did",
    "do",
    "does",
    "fetch",
    "find",
    "for",
    "from",
    "get",
    "give",
    "help",
    "how",
    "i",
    "if",
    "in",
    "information",
    "is",
    "it",
    "its",
    "know",
    "like",
    "list",
    "me",
    "my",
    "need",
    "of",
    "on",
    "or",
    "our",
    "please",
    "provide",
    "retrieve",
    "show",
    "some",
    "tell",
    "that",
    "the",
    "their",
    "them",
    "there",
    "these",
    "they",
    "this",
    "those",
    "to",
    "tool",
    "us",
    "use",
    "using",
    "want",
    "we",
    "what",
    "when",
    "where",
    "which",
    "who",
    "with",
    "would",
    "you",
    "your",
];

fn words(text: &str) -> BTreeSet<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '\''))
        .map(|w| w.trim_matches(['-', '\'']))
        .filter(|w| w.chars().count() > 1 && !ASKING.contains(w))
        .map(str::to_string)
        .collect()
}

fn stem(w: &str) -> &str {
    ["ing", "ed", "es", "s"]
        .iter()
        .find_map(|e| w.strip_suffix(e).filter(|s| s.chars().count() >= 4))
        .unwrap_or(w)
}

/// `w` is among `among`, by stem or as the start of a longer word ("upright"/"upright", "read"/"reading").
fn held(w: &str, among: &BTreeSet<String>) -> bool {
    among.iter().any(|x| {
        stem(w) == stem(x)
            || (w.chars().count() >= 5 && (x.starts_with(stem(w)) || w.starts_with(stem(x))))
    })
}

pub(super) fn unpack(set: &str) -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let archive = root.join(format!("eval/reference/strong/{set}.tar.xz"));
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new("tar")
        .arg("-C")
        .arg(dir.path())
        .arg("-xJf")
        .arg(&archive)
        .status()
        .unwrap();
    assert!(status.success(), "could not unpack {}", archive.display());
    dir
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The model's recorded splits, by the request they split.
fn recorded_splits(run: &Path) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(run.join("rec/sum2act")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let rec = json(&path);
        if rec["request"]["purpose"] != "decompose" {
            continue;
        }
        let prompt = rec["request"]["messages"][0]["content"].as_str().unwrap();
        let query = prompt
            .split("\nRequest: ")
            .nth(1)
            .and_then(|r| r.split("\nAnswer with JSON only").next())
            .unwrap()
            .to_string();
        let reply = rec["responses"].as_array().unwrap().last().unwrap()["content"].clone();
        let reply: Value = match reply {
            Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::Null),
            v => v,
        };
        let split = serde_json::from_value(reply["subtasks"].clone()).unwrap_or_default();
        out.insert(query, split);
    }
    out
}

/// What is wrong with `checklist` for `query`, read against the parts the labellers listed.
fn faults(query: &str, checklist: &[String], labelled: &[String]) -> Vec<String> {
    let asked = words(query);
    let held_words: BTreeSet<String> = checklist.iter().flat_map(|p| words(p)).collect();
    let mut out = Vec::new();
    for part in labelled {
        let theirs: Vec<String> = words(part)
            .into_iter()
            .filter(|w| held(w, &asked))
            .collect();
        if !theirs.is_empty() && !theirs.iter().any(|w| held(w, &held_words)) {
            out.push(format!("drops \"{part}\""));
        }
    }
    for (i, a) in checklist.iter().enumerate() {
        let (wa, mut new) = (words(a), 0);
        for b in &checklist[i + 1..] {
            // The same ask twice: the same words, asking words aside ("I would appreciate it if you
            // could also provide the CPC" and "Provide the CPC"). A part and a more precise one ("all
            // the information about the product" and "its images") are not a repeat.
            let wb = words(b);
            let same = wa.len() == wb.len() && wa.iter().all(|w| held(w, &wb));
            if same {
                out.push(format!("repeats \"{a}\" in \"{b}\""));
            }
        }
        new += wa.iter().filter(|w| !held(w, &asked)).count();
        if new * 3 > wa.len() {
            out.push(format!("invents \"{a}\""));
        }
    }
    out
}

fn checklists_hold_every_labelled_part(set: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = unpack(set);
    let splits = recorded_splits(run.path());
    let labels = json(&root.join(format!("eval/labels/strong_{set}.json")));
    let mut problems = Vec::new();
    let mut checked = 0;
    for subset in std::fs::read_dir(run.path().join("runs/sum2act")).unwrap() {
        let subset = subset.unwrap().path();
        if !subset.is_dir() {
            continue;
        }
        for answer in std::fs::read_dir(&subset).unwrap() {
            let answer = answer.unwrap().path();
            if !answer.to_string_lossy().ends_with("_sum2act.json") {
                continue;
            }
            let ours = json(&answer)["sum2act"].clone();
            let query = ours["query"].as_str().unwrap();
            let recorded: Vec<String> = ours["details"]["state"]["checklist"]["parts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["text"].as_str().unwrap().to_string())
                .collect();
            let made = match splits.get(query) {
                Some(split) => checklist_from_split(query, split).parts,
                None => asks(query),
            };
            let id = format!("{set} {} {}", ours["subset"], ours["query_id"]);
            if made != recorded {
                problems.push(format!(
                    "{id}: this build makes {made:?}, the run recorded {recorded:?} (re-record it)"
                ));
            }
            let labelled: Vec<String> = labels["labels"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|l| l["subset"] == ours["subset"] && l["query_id"] == ours["query_id"])
                .flat_map(|l| l["parts_asked"].as_array().cloned().unwrap_or_default())
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect();
            assert!(!labelled.is_empty(), "{id}: no labelled parts");
            for fault in faults(query, &made, &labelled) {
                problems.push(format!("{id}: {made:?} {fault}"));
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "{set}: no Sum2Act answers");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_checklist_finds_a_dropped_repeated_or_invented_part() {
    let query = "Read the total amount on invoice INV-7 and convert it to US dollars.";
    let labelled = [
        "the total on invoice INV-7".into(),
        "the total in US dollars".into(),
    ];
    assert!(faults(query, &["convert it to US dollars".into()], &labelled)[0].starts_with("drops"));
    let repeated = [
        "Read the total on invoice INV-7".into(),
        "I would like you to read the total on invoice INV-7 for me".into(),
    ];
    assert!(faults(query, &repeated, &labelled)[0].starts_with("repeats"));
    // A second action on the same thing is no repeat.
    let two = [
        "Read the total on invoice INV-7".into(),
        "convert the total on invoice INV-7 to US dollars".into(),
    ];
    assert!(faults(query, &two, &labelled).is_empty());
    let invented = [
        "Read the total on invoice INV-7".into(),
        "Book a hotel room in Lisbon".into(),
    ];
    assert!(faults(query, &invented, &labelled)[0].starts_with("invents"));
    let right = [
        "Read the total amount on invoice INV-7".into(),
        "convert it to US dollars".into(),
    ];
    assert!(faults(query, &right, &labelled).is_empty());
}

#[test]
fn the_sample_checklists_hold_every_part_asked() {
    checklists_hold_every_labelled_part("sample");
}

#[test]
fn the_media_set_checklists_hold_every_part_asked() {
    checklists_hold_every_labelled_part("mixed");
}

#[test]
fn the_dev_split_checklists_hold_every_part_asked() {
    checklists_hold_every_labelled_part("dev");
}
