//! The Sum2Act checklist from a model's split of the request: the model's parts are kept when they are
//! made of the request's words and are not the user's framing, and every ask of the request they
//! dropped is added back whole (`request_asks`); a split may refine the asks, never lose or invent one.

use std::collections::BTreeSet;

use super::claims::content_words;
use super::request_asks::{ask_list, asks, is_framing, same_stem, topic_words};
use super::request_coordination::keep_value_end;
use super::request_parts::{MAX_PART_CHARS, MAX_PARTS, validate_split};

/// The checklist made of a split, and what mending it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Checklisted {
    pub parts: Vec<String>,
    /// Asks of the request the split dropped, added back whole.
    pub added_back: usize,
    /// Whether the model's split was used (else the request's own asks are the checklist).
    pub split_used: bool,
}

/// The checklist of `query` from the model's `proposed` parts (empty: the request's asks).
pub fn checklist_from_split(query: &str, proposed: &[String]) -> Checklisted {
    // A tool name ("search_trips_for_flixbus") is a plan step, not a part of the request; a part at
    // the length limit was cut.
    let proposed: Vec<String> = proposed
        .iter()
        .filter(|p| !p.split_whitespace().any(|w| w.contains('_')))
        .filter(|p| p.trim().chars().count() < MAX_PART_CHARS)
        .filter(|p| !is_framing(p) && !adds_topics(query, p))
        .cloned()
        .collect();
    match validate_split(query, &proposed) {
        Some(parts) => {
            let parts = with_value_ends(parts, &proposed);
            let mended = with_dropped_asks(query, &parts);
            Checklisted {
                added_back: mended.len() - parts.len(),
                parts: mended.into_iter().take(MAX_PARTS).collect(),
                split_used: true,
            }
        }
        None => Checklisted {
            parts: asks(query),
            added_back: 0,
            split_used: false,
        },
    }
}

/// The split's parts with the `;` that end a value put back (a Wi-Fi string's `;;`): the splitter
/// trims a part's closing punctuation (`request_coordination::keep_value_end`).
fn with_value_ends(parts: Vec<String>, proposed: &[String]) -> Vec<String> {
    parts
        .into_iter()
        .map(|part| {
            proposed
                .iter()
                .map(|p| keep_value_end(p.trim()))
                .find(|whole| {
                    whole.len() > part.len()
                        && whole.starts_with(part.as_str())
                        && whole[part.len()..].chars().all(|c| c == ';')
                })
                .map_or(part, str::to_string)
        })
        .collect()
}

/// `parts` with each ask of the request whose required words no part holds appended whole: a split
/// may merge, reword or refine the request's asks, never drop one. An ask the parts hold (its purpose
/// clause aside: "to use as IDs for my friends' profiles") is not added again in its own words.
pub(crate) fn with_dropped_asks(query: &str, parts: &[String]) -> Vec<String> {
    let mut out = parts.to_vec();
    for ask in ask_list(query) {
        let held: BTreeSet<String> = out.iter().flat_map(|p| content_words(p)).collect();
        let dropped = ask
            .required
            .iter()
            .any(|w| !held.iter().any(|h| same_stem(h, w)));
        if dropped && !out.contains(&ask.text) {
            // A part that is the ask shortened ("fetch the top 100 torrents" of "… top 100 torrents
            // for background music", "Apple's balance sheet" of "… balance sheet and earnings") gives
            // way to the whole ask: added beside it, the ask would be a duplicate part.
            // Several parts that each say part of it ("its light conditions", "its diseases") give way
            // to it together.
            let shortened: Vec<usize> = (0..out.len())
                .filter(|&i| is_shortened(&out[i], &ask.text))
                .collect();
            match shortened.first() {
                Some(&first) => {
                    out[first] = ask.text;
                    for &i in shortened[1..].iter().rev() {
                        out.remove(i);
                    }
                }
                None => out.push(ask.text),
            }
        }
    }
    out
}

/// Whether every topic word of `part` is in `ask` (by stem; asking words such as "get" or "details"
/// aside): the part says part of the ask.
fn is_shortened(part: &str, ask: &str) -> bool {
    let theirs = topic_words(ask);
    let ours = topic_words(part);
    !ours.is_empty() && ours.iter().all(|w| theirs.iter().any(|t| same_stem(t, w)))
}

/// Whether a part names things the request does not: more than a third of its topic words found
/// nowhere in the request, asking verbs aside (a small model "splits" a weather request into
/// temperature, humidity, wind direction, …; a strong one writes "calculate the BMI" or "referees in
/// Messi's matches" for what was asked).
pub(crate) fn adds_topics(query: &str, part: &str) -> bool {
    let request = content_words(query);
    let topics: Vec<String> = topic_words(part)
        .into_iter()
        .filter(|w| !ASKING_VERBS.contains(&w.as_str()))
        .collect();
    let new = topics
        .iter()
        .filter(|w| !request.iter().any(|r| same_stem(r, w)))
        .count();
    new * 3 > topics.len()
}

/// Verbs a split writes for what the request asks in other words ("calculate", "find out whether").
const ASKING_VERBS: &[&str] = &[
    "calculate",
    "check",
    "create",
    "determine",
    "find",
    "generate",
    "get",
    "list",
    "obtain",
    "out",
    "provide",
    "recommend",
    "retrieve",
    "return",
    "search",
    "show",
    "tell",
    "whether",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolbench::request_asks::missing_words;

    #[test]
    fn a_split_that_drops_an_ask_is_detected_and_mended() {
        let q = "I'm an investor. Give me Apple's balance sheet and earnings. I'm also interested in the recommendation trends for Apple.";
        let split = vec!["Give me Apple's balance sheet".to_string()];
        // A need kept for its values needs only its values kept.
        let review = "I'm a blogger and I want to write a review of the product with SKU W003247135. Can you provide its images and pricing?";
        let parts = vec!["Images and pricing of the product SKU W003247135".to_string()];
        assert!(
            missing_words(review, &parts).is_empty(),
            "{:?}",
            missing_words(review, &parts)
        );
        let missing = missing_words(q, &split);
        assert!(
            missing.contains("earnings") && missing.contains("recommendation"),
            "{missing:?}"
        );
        // The part that says part of an ask gives way to the whole ask: no duplicate part.
        let mended = with_dropped_asks(q, &split);
        assert_eq!(
            mended,
            [
                "Give me Apple's balance sheet and earnings",
                "I'm also interested in the recommendation trends for Apple"
            ]
        );
        assert!(missing_words(q, &mended).is_empty());
        // Asking words the split wrote ("Get the details of …") do not make it another ask.
        let plane = "Can you list languages? Additionally, I would like to know the details of a specific airplane for a presentation on aviation history.";
        let split = vec![
            "List languages".to_string(),
            "Get the details of a specific airplane".to_string(),
        ];
        assert_eq!(
            with_dropped_asks(plane, &split),
            [
                "List languages",
                "I would like to know the details of a specific airplane for a presentation on aviation history"
            ]
        );
        // Each of two parts says part of an ask that one word of them dropped: both give way to it.
        let plant = "Can you suggest a flowering plant? It would be helpful if you could provide information about its ideal light conditions and any common diseases it might be prone to.";
        let split = vec![
            "Suggest a flowering plant".to_string(),
            "Provide its ideal light conditions".to_string(),
            "Provide any common diseases".to_string(),
        ];
        assert_eq!(
            with_dropped_asks(plant, &split),
            [
                "Suggest a flowering plant",
                "It would be helpful if you could provide information about its ideal light conditions and any common diseases it might be prone to"
            ]
        );
        let torrents = "Can you provide the details of the movie with ID 399566? Additionally, fetch the monthly top 100 music torrents for some lively background music during the movie night.";
        let split = vec![
            "Provide the details of the movie with ID 399566".to_string(),
            "Fetch the monthly top 100 music torrents".to_string(),
        ];
        assert_eq!(
            with_dropped_asks(torrents, &split),
            [
                "Provide the details of the movie with ID 399566",
                "fetch the monthly top 100 music torrents for some lively background music during the movie night"
            ]
        );
        // Reworded parts that keep every topic word (plurals and verb endings aside) drop nothing.
        let full = vec![
            "Apple's balance sheet".to_string(),
            "Apple's earning".to_string(),
            "Recommendation trend for Apple".to_string(),
        ];
        assert!(
            missing_words(q, &full).is_empty(),
            "{:?}",
            missing_words(q, &full)
        );
        assert_eq!(with_dropped_asks(q, &full), full);
    }

    #[test]
    fn a_split_part_ending_in_a_value_keeps_its_semicolons() {
        let q = "Make a QR code for the Wi-Fi string WIFI:S:Home;T:WPA;P:secret;; and tell me the size of the image.";
        let split = vec![
            "Make a QR code for the Wi-Fi string WIFI:S:Home;T:WPA;P:secret;;".to_string(),
            "Tell me the size of the image".to_string(),
        ];
        assert_eq!(checklist_from_split(q, &split).parts, split);
    }

    #[test]
    fn a_split_naming_what_the_request_does_not_is_not_kept() {
        let weather = "What is the weather in Lisbon right now? Please use metric units.";
        assert!(adds_topics(
            weather,
            "What is the wind direction in Lisbon right now?"
        ));
        assert!(!adds_topics(
            weather,
            "the weather in Lisbon, in metric unit"
        ));
        // A strong model's asking verb or one word of context is no new topic.
        let bmi = "Additionally, I would like to know the BMI based on my height and weight.";
        assert!(!adds_topics(
            bmi,
            "Calculate the BMI based on my height and weight"
        ));
        let messi =
            "Can you tell me about Lionel Messi's clubs, managers, teammates, and referees?";
        assert!(!adds_topics(
            messi,
            "Provide information about referees in Lionel Messi's matches"
        ));
    }

    /// The checklists the current code makes of recorded model splits (`decompose` requests of a
    /// recorded Sum2Act run, `SUM2ACT_DECOMPOSE_RECS` = its `rec/sum2act` folder): none drops an ask,
    /// keeps framing or holds a part twice.
    #[test]
    fn recorded_splits_make_checklists_that_keep_every_ask_once() {
        let Ok(dir) = std::env::var("SUM2ACT_DECOMPOSE_RECS") else {
            return;
        };
        let mut wrong = Vec::new();
        let mut checked = 0;
        for (query, proposed) in recorded_splits(std::path::Path::new(&dir)) {
            let c = checklist_from_split(&query, &proposed);
            checked += 1;
            println!("Q: {query}\n  split: {proposed:?}\n  parts: {:?}", c.parts);
            let missing = missing_words(&query, &c.parts);
            let framing: Vec<&String> = c.parts.iter().filter(|p| is_framing(p)).collect();
            // An ask added back must hold a word no part of the split holds.
            let repeated: Vec<&String> = c.parts[c.parts.len() - c.added_back..]
                .iter()
                .filter(|p| missing_words(p, &proposed).is_empty())
                .collect();
            if !missing.is_empty() || !framing.is_empty() || !repeated.is_empty() {
                wrong.push(format!(
                    "{query}: dropped {missing:?}, framing {framing:?}, repeated {repeated:?}"
                ));
            }
        }
        assert!(wrong.is_empty(), "{checked} checked:\n{}", wrong.join("\n"));
    }

    /// (request, the model's parts) of every recorded `decompose` request under `dir`.
    fn recorded_splits(dir: &std::path::Path) -> Vec<(String, Vec<String>)> {
        let mut out = Vec::new();
        for path in crate::toolbench::io::json_files_under(dir) {
            let Ok(v) = crate::toolbench::io::read_json::<serde_json::Value>(&path) else {
                continue;
            };
            if v["request"]["purpose"] != "decompose" {
                continue;
            }
            let prompt = v["request"]["messages"][0]["content"]
                .as_str()
                .unwrap_or("");
            let Some(query) = prompt
                .split("\nRequest: ")
                .nth(1)
                .and_then(|r| r.rsplit_once("\nAnswer with JSON only"))
                .map(|(q, _)| q.trim().to_string())
            else {
                continue;
            };
            let reply = v["responses"][0]["content"].as_str().unwrap_or("");
            let parts = serde_json::from_str::<serde_json::Value>(reply)
                .ok()
                .and_then(|r| serde_json::from_value::<Vec<String>>(r["subtasks"].clone()).ok())
                .unwrap_or_default();
            out.push((query, parts));
        }
        out
    }
}
