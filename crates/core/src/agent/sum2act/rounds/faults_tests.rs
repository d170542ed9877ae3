//! The prompt-fault test of issue 43: the round prompts a strong model was shown in the shipped
//! reference runs of Sum2Act in rounds hold none of the faults readers reported of the step loop's
//! prompts: an open part the facts already answer, a part marked answered with no fact of its own,
//! two parts saying the same thing, the user's framing as a part, an ask of the request dropped.
//! The ask and framing oracles are the English heuristics of `toolbench::request_asks`, used here
//! only to check (the reference queries are English); the loop itself uses none of them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::request::words;
use crate::toolbench::request_asks::{dropped_asks, is_framing};

/// The run of the equal-budget archive whose recorded prompts are checked.
const RUN: &str = "rec/sum2act@rounds";

/// One round prompt, read back: the request, each part with its shown status, the facts' parts.
struct Shown {
    query: String,
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
    let query = prompt
        .lines()
        .find_map(|l| l.strip_prefix("Request: "))?
        .to_string();
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
    Some(Shown {
        query,
        parts,
        facts,
    })
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
    let texts: Vec<String> = s.parts.iter().map(|(_, t, _)| t.clone()).collect();
    let dropped = dropped_asks(&s.query, &texts);
    if !dropped.is_empty() {
        out.push(format!("asks dropped: {dropped:?}"));
    }
    out
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
        (
            "1. the weather in Paris — open\n",
            "(none yet)\n",
            "asks dropped",
        ),
    ];
    for (parts, facts, fault) in cases {
        let found = faults(&prompt(parts, facts));
        assert!(
            found.iter().any(|f| f.contains(fault)),
            "{fault}: {found:?}"
        );
    }
}

/// Unpacks the run's recordings from the equal-budget archive.
fn recordings(into: &Path) -> Vec<Value> {
    let archive = crate::toolbench::source_root().join("eval/reference/strong/equal.tar.xz");
    let status = std::process::Command::new("tar")
        .args(["-xJf"])
        .arg(&archive)
        .arg("-C")
        .arg(into)
        .arg(format!("./{RUN}"))
        .status()
        .expect("tar runs");
    assert!(status.success(), "{} holds no {RUN}", archive.display());
    read_dir(&into.join(RUN))
}

fn read_dir(dir: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the run's recordings") {
        let text = std::fs::read_to_string(entry.expect("an entry").path()).unwrap_or_default();
        out.extend(serde_json::from_str::<Value>(&text).ok());
    }
    out
}

/// The shipped run's prompts, or those of the recordings folder in `SUM2ACT_ROUNDS_REC` (a run being
/// tuned).
#[test]
fn the_reference_runs_round_prompts_hold_no_fault() {
    let recorded = match std::env::var_os("SUM2ACT_ROUNDS_REC") {
        Some(dir) => read_dir(Path::new(&dir)),
        None => {
            let dir = std::env::temp_dir().join(format!("sum2act-faults-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("a temp dir");
            let recorded = recordings(&dir);
            let _ = std::fs::remove_dir_all(&dir);
            recorded
        }
    };
    let prompts: Vec<String> = recorded.iter().map(prompt_of).collect();
    let rounds = prompts.iter().filter(|p| read(p).is_some()).count();
    assert!(rounds >= 40, "only {rounds} round prompts recorded");
    let found: Vec<String> = prompts.iter().flat_map(|p| faults(p)).collect();
    assert!(
        found.is_empty(),
        "{rounds} round prompts:\n{}",
        found.join("\n")
    );
}
