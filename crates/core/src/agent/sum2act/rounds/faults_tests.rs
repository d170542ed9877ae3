//! The prompt-fault test of issue 43: the round prompts a strong model was shown in the shipped
//! reference runs of Sum2Act in rounds hold none of the faults readers reported of the step loop's
//! prompts: an open part the facts already answer, a part marked answered with no fact of its own,
//! two parts saying the same thing, the user's framing as a part, an ask of the request dropped.
//! A dropped ask is read against the blind labels: every part a labeller listed as asked, for any
//! method's answer to the query, must share a word with the checklist. The framing oracle is the
//! English heuristic of `toolbench::request_asks`, used here only to check (the reference queries are
//! English); the loop itself uses no word list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::request::words;
use crate::toolbench::claims::content_words;
use crate::toolbench::request_asks::is_framing;

/// The run of the equal-budget archive whose recorded prompts are checked.
const RUN: &str = "sum2act@rounds";

/// One round prompt, read back: each part with its shown status, the facts' parts.
struct Shown {
    parts: Vec<(usize, String, String)>,
    facts: BTreeMap<String, usize>,
}

fn section<'a>(prompt: &'a str, start: &str, end: &str) -> &'a str {
    let from = prompt.find(start).map_or(prompt.len(), |i| i + start.len());
    let rest = &prompt[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// `None` for a prompt that is not a round prompt.
fn read(prompt: &str) -> Option<Shown> {
    if !prompt.contains("This round's calls have returned") {
        return None;
    }
    let parts = section(prompt, "Parts of the request:\n", "\nFacts found so far")
        .lines()
        .filter_map(|l| {
            let (number, rest) = l.split_once(". ")?;
            let (text, status) = rest.rsplit_once(" — ")?;
            Some((number.parse().ok()?, text.to_string(), status.to_string()))
        })
        .collect();
    let facts = section(prompt, "the call that returned it):\n", "\nFailed calls:")
        .lines()
        .filter_map(|l| {
            let (id, rest) = l.split_once(" (part ")?;
            let part = rest.split(',').next()?.parse().ok()?;
            Some((id.to_string(), part))
        })
        .collect();
    Some(Shown { parts, facts })
}

/// The faults of one round prompt, each said in a few words.
fn faults(prompt: &str) -> Vec<String> {
    let Some(s) = read(prompt) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (n, text, status) in &s.parts {
        let of_part: Vec<&String> = s
            .facts
            .iter()
            .filter(|(_, p)| *p == n)
            .map(|(id, _)| id)
            .collect();
        if status == "open" && !of_part.is_empty() {
            out.push(format!("part {n} shown open with facts {of_part:?}"));
        }
        if let Some(ids) = status.strip_prefix("answered by ") {
            for id in ids.split(", ") {
                if s.facts.get(id) != Some(n) {
                    out.push(format!("part {n} answered by {id}, not a fact of it"));
                }
            }
        }
        if is_framing(text) {
            out.push(format!("part {n} is framing: {text}"));
        }
    }
    let sets: Vec<BTreeSet<String>> = s
        .parts
        .iter()
        .map(|(_, t, _)| words(t).into_iter().collect())
        .collect();
    for (i, a) in sets.iter().enumerate() {
        for b in &sets[i + 1..] {
            if a.is_subset(b) || b.is_subset(a) {
                out.push(format!("duplicate parts in {:?}", s.parts));
            }
        }
    }
    out
}

/// The labelled parts (what labellers listed as asked) that share no word with the checklist.
fn dropped(checklist: &[String], labelled: &BTreeSet<String>) -> Vec<String> {
    let held: BTreeSet<String> = checklist.iter().flat_map(|p| content_words(p)).collect();
    let same = |a: &str, b: &str| {
        let n = a.chars().count().min(b.chars().count()).min(5);
        n >= 3 && a.chars().take(n).eq(b.chars().take(n))
    };
    labelled
        .iter()
        .filter(|part| {
            !content_words(part)
                .iter()
                .any(|w| held.iter().any(|h| same(h, w)))
        })
        .cloned()
        .collect()
}

fn prompt_of(recording: &Value) -> String {
    recording["request"]["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|x| x["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn each_fault_is_found_in_a_made_up_prompt() {
    let prompt = |parts: &str, facts: &str| {
        format!(
            "This round's calls have returned: read them.\n\nRequest: I am a chef. Find the weather in Paris. Also, list the hotels in Rome.\n\nParts of the request:\n{parts}\nFacts found so far (each with its part and the call that returned it):\n{facts}\nFailed calls:\n(none)\n"
        )
    };
    let good = prompt(
        "1. the weather in Paris — answered by F1\n2. hotels in Rome — open\n",
        "F1 (part 1, call 1): 21 C\n",
    );
    assert!(faults(&good).is_empty(), "{:?}", faults(&good));
    let cases = [
        (
            "1. the weather in Paris — open\n2. hotels in Rome — open\n",
            "F1 (part 1, call 1): 21 C\n",
            "shown open",
        ),
        (
            "1. the weather in Paris — answered by F2\n2. hotels in Rome — open\n",
            "F1 (part 1, call 1): 21 C\n",
            "not a fact of it",
        ),
        (
            "1. the weather in Paris — open\n2. weather in Paris — open\n3. hotels in Rome — open\n",
            "(none yet)\n",
            "duplicate",
        ),
        (
            "1. I am a chef — open\n2. the weather in Paris — open\n3. hotels in Rome — open\n",
            "(none yet)\n",
            "framing",
        ),
    ];
    for (parts, facts, fault) in cases {
        let found = faults(&prompt(parts, facts));
        assert!(
            found.iter().any(|f| f.contains(fault)),
            "{fault}: {found:?}"
        );
    }
    let labelled: BTreeSet<String> = ["weather in Paris", "Rome hotel list"]
        .into_iter()
        .map(String::from)
        .collect();
    let whole = [
        "the weather in Paris".to_string(),
        "the hotels in Rome".to_string(),
    ];
    assert!(dropped(&whole, &labelled).is_empty());
    assert_eq!(
        dropped(&whole[..1], &labelled),
        vec!["Rome hotel list".to_string()]
    );
}

/// The run's work folder: `SUM2ACT_ROUNDS_WORK` (a run being tuned: `rec/` and `runs/` of the
/// `sum2act@rounds` run), else the run unpacked from the equal-budget archive into `into`.
fn work(into: &Path) -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("SUM2ACT_ROUNDS_WORK") {
        return dir.into();
    }
    let archive = crate::toolbench::source_root().join("eval/reference/strong/equal.tar.xz");
    let status = std::process::Command::new("tar")
        .args(["-xJf"])
        .arg(&archive)
        .arg("-C")
        .arg(into)
        .arg(format!("./rec/{RUN}"))
        .arg(format!("./runs/{RUN}"))
        .status()
        .expect("tar runs");
    assert!(status.success(), "{} holds no {RUN}", archive.display());
    into.to_path_buf()
}

/// Every JSON file under `dir`, recursively.
fn json_files(dir: &Path) -> Vec<(std::path::PathBuf, Value)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)
        .expect("the run's folder")
        .filter_map(Result::ok)
    {
        let path = entry.path();
        if path.is_dir() {
            out.extend(json_files(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                out.push((path, v));
            }
        }
    }
    out
}

/// The parts labellers listed as asked, by `SUBSET/ID`, over every shipped label file.
fn labelled_parts() -> BTreeMap<String, BTreeSet<String>> {
    let dir = crate::toolbench::source_root().join("eval/labels");
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, file) in json_files(&dir) {
        for l in file["labels"].as_array().into_iter().flatten() {
            let key = format!("{}/{}", l["subset"].as_str().unwrap_or(""), l["query_id"]);
            let parts = l["parts_asked"].as_array().into_iter().flatten();
            out.entry(key)
                .or_default()
                .extend(parts.filter_map(|p| p.as_str().map(String::from)));
        }
    }
    out
}

#[test]
fn the_reference_runs_round_prompts_and_checklists_hold_no_fault() {
    let tmp = std::env::temp_dir().join(format!("sum2act-faults-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("a temp dir");
    let work = work(&tmp);
    let recorded = json_files(&work.join("rec").join(RUN));
    let prompts: Vec<String> = recorded.iter().map(|(_, r)| prompt_of(r)).collect();
    let rounds = prompts.iter().filter(|p| read(p).is_some()).count();
    assert!(rounds >= 40, "only {rounds} round prompts recorded");
    let mut found: Vec<String> = prompts.iter().flat_map(|p| faults(p)).collect();
    let labels = labelled_parts();
    let mut checked = 0;
    for (path, answer) in json_files(&work.join("runs").join(RUN)) {
        let details = &answer["sum2act"]["details"];
        let (Some(parts), Some(subset)) = (details["subtasks"].as_array(), path.parent()) else {
            continue;
        };
        let subset = subset.file_name().unwrap_or_default().to_string_lossy();
        let id = path.file_name().unwrap_or_default().to_string_lossy();
        let key = format!("{subset}/{}", id.trim_end_matches("_sum2act.json"));
        // What the request model kept of the request: its parts and how the answer is to be given.
        let form = details["form"].as_array().into_iter().flatten();
        let checklist: Vec<String> = parts
            .iter()
            .chain(form)
            .filter_map(|p| p.as_str().map(String::from))
            .collect();
        if let Some(labelled) = labels.get(&key) {
            checked += 1;
            for lost in dropped(&checklist, labelled) {
                found.push(format!(
                    "{key}: the labelled part {lost:?} is in no part of {checklist:?}"
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(checked >= 40, "only {checked} checklists had labels");
    assert!(
        found.is_empty(),
        "{rounds} round prompts, {checked} checklists:\n{}",
        found.join("\n")
    );
}
