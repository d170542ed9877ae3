//! Issue 43: a request in German or French gets a checklist as good as its English original. Six dev
//! requests (queries 1-8 of their subsets), each translated into both languages
//! (`eval/reference/strong/{de,fr}.tar.xz`, Sum2Act in rounds with readers playing the model), replay
//! exactly; each translated checklist has as many parts as the English one of the same request (the
//! `dev` set's `sum2act@rounds` run) and keeps every value the English parts name (ids, numbers,
//! quoted terms, URLs), whatever words carry them.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::common::shared_toolbench;
use super::reference_checklists::unpack;
use super::reference_runs::replays;

/// `(subset/id, checklist)` of every Sum2Act answer file under `dir`.
fn checklists(dir: &Path) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for subset in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        if !subset.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(subset.path())
            .unwrap()
            .filter_map(Result::ok)
        {
            let name = f.file_name().to_string_lossy().to_string();
            let Some(id) = name.strip_suffix("_sum2act.json") else {
                continue;
            };
            let v: Value =
                serde_json::from_str(&std::fs::read_to_string(f.path()).unwrap()).unwrap();
            let parts = v["sum2act"]["details"]["subtasks"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            out.push((
                format!("{}/{id}", subset.file_name().to_string_lossy()),
                parts,
            ));
        }
    }
    out.sort();
    out
}

/// The values a checklist names: words with a digit, quoted terms, URLs.
fn values(parts: &[String]) -> BTreeSet<String> {
    let text = parts.join(" ");
    let mut out: BTreeSet<String> = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '/' && c != ':'))
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()) || w.starts_with("http"))
        .map(String::from)
        .collect();
    out.extend(quoted(&text));
    out
}

/// The terms between single quotes; an apostrophe inside a word (`l'URL`, `d'actualité`) is no quote.
fn quoted(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let word = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(|c| c.is_alphanumeric())
    };
    let marks: Vec<usize> = (0..chars.len())
        .filter(|&i| chars[i] == '\'' && !(word(i.checked_sub(1)) && word(Some(i + 1))))
        .collect();
    marks
        .chunks(2)
        .filter(|pair| pair.len() == 2)
        .map(|pair| chars[pair[0] + 1..pair[1]].iter().collect())
        .collect()
}

#[test]
fn translated_requests_get_the_checklists_of_their_english_originals() {
    if shared_toolbench().is_none() {
        eprintln!("skipped: no ../shared/toolbench");
        return;
    }
    replays("de", "sum2act@rounds", true);
    replays("fr", "sum2act@rounds", true);
    let english = checklists(&unpack("dev").path().join("runs/sum2act@rounds"));
    for language in ["de", "fr"] {
        let to = unpack(language);
        let translated = checklists(&to.path().join("runs/sum2act@rounds"));
        assert_eq!(translated.len(), 6, "{language}: {translated:?}");
        for (key, parts) in translated {
            let (_, original) = english
                .iter()
                .find(|(k, _)| *k == key)
                .unwrap_or_else(|| panic!("{key} has no English run"));
            assert_eq!(
                parts.len(),
                original.len(),
                "{language} {key}: {parts:?} against {original:?}"
            );
            let lost: Vec<String> = values(original)
                .difference(&values(&parts))
                .cloned()
                .collect();
            assert!(lost.is_empty(), "{language} {key} lost {lost:?}: {parts:?}");
        }
    }
}
