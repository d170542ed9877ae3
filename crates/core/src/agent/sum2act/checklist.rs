//! The parts of the request as a checklist in the Sum2Act state: each part is open, partly answered
//! (facts the code found for it), answered (facts the state manager said answer it completely) or
//! failed (with why). The router sees it, so it does not finish after the first fact; the code gates
//! Finish on it, so a part is never silently dropped.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::text::clip;

/// Shortest part word looked for inside a longer call word ("news" in "topnews"): shorter ones
/// ("get", "top") are inside too many names to mean anything.
const MIN_INNER_WORD: usize = 4;
use crate::toolbench::claims::content_words;
use crate::toolbench::request_asks::topic_words;

/// Longest failure reason kept per part (characters).
const MAX_REASON_CHARS: usize = 160;

/// Where a part stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum PartStatus {
    Open,
    /// Facts the code attributed to the part (shared words); not known to answer all of it.
    Partial {
        facts: Vec<String>,
    },
    /// Answered by these facts (their texts, as in the state).
    Answered {
        facts: Vec<String>,
    },
    /// Could not be answered, and why.
    Failed {
        reason: String,
    },
}

/// One part of the request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub text: String,
    #[serde(flatten)]
    pub status: PartStatus,
    /// The last failed call that concerned the part, and why (the part stays open after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tried: Option<String>,
}

/// The request's parts, in the order asked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Checklist {
    pub parts: Vec<Part>,
}

impl Checklist {
    pub fn new(parts: &[String]) -> Self {
        Checklist {
            parts: parts
                .iter()
                .map(|p| Part {
                    text: p.clone(),
                    status: PartStatus::Open,
                    tried: None,
                })
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// 0-based indices of the parts not settled: open, or only partly answered.
    pub fn open(&self) -> Vec<usize> {
        (0..self.parts.len())
            .filter(|&i| {
                matches!(
                    self.parts[i].status,
                    PartStatus::Open | PartStatus::Partial { .. }
                )
            })
            .collect()
    }

    /// Parts that failed, with their reasons.
    pub fn failed(&self) -> Vec<(&str, &str)> {
        self.parts
            .iter()
            .filter_map(|p| match &p.status {
                PartStatus::Failed { reason } => Some((p.text.as_str(), reason.as_str())),
                _ => None,
            })
            .collect()
    }

    /// 0-based indices of the parts no fact was found for (the nudge names them).
    pub fn unanswered(&self) -> Vec<usize> {
        (0..self.parts.len())
            .filter(|&i| self.parts[i].status == PartStatus::Open)
            .collect()
    }

    /// The facts found for parts (answered or partly), each once, in part order.
    pub fn answer_facts(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in &self.parts {
            if let PartStatus::Answered { facts } | PartStatus::Partial { facts } = &p.status {
                for f in facts {
                    if !out.contains(f) {
                        out.push(f.clone());
                    }
                }
            }
        }
        out
    }

    /// Marks part `i` answered by `facts` (a failed or partly answered part a later call answered
    /// becomes answered, its facts kept).
    pub fn answer(&mut self, i: usize, facts: &[String]) {
        let Some(part) = self.parts.get_mut(i) else {
            return;
        };
        let mut known = match &part.status {
            PartStatus::Answered { facts } | PartStatus::Partial { facts } => facts.clone(),
            _ => Vec::new(),
        };
        add_new(&mut known, facts);
        part.status = PartStatus::Answered { facts: known };
    }

    /// Adds `facts` to part `i` without saying they answer all of it (an answered part stays answered).
    pub fn partly(&mut self, i: usize, facts: &[String]) {
        let Some(part) = self.parts.get_mut(i) else {
            return;
        };
        match &mut part.status {
            PartStatus::Answered { facts: known } | PartStatus::Partial { facts: known } => {
                add_new(known, facts)
            }
            other => {
                *other = PartStatus::Partial {
                    facts: facts.to_vec(),
                }
            }
        }
    }

    /// Marks part `i` failed, unless facts were found for it.
    pub fn fail(&mut self, i: usize, reason: &str) {
        if let Some(part) = self.parts.get_mut(i)
            && matches!(part.status, PartStatus::Open | PartStatus::Failed { .. })
        {
            part.status = PartStatus::Failed {
                reason: clip(reason.trim(), MAX_REASON_CHARS),
            };
        }
    }

    /// Notes a failed call that concerned part `i`; the part stays as it is.
    pub fn tried(&mut self, i: usize, what: &str) {
        if let Some(part) = self.parts.get_mut(i) {
            part.tried = Some(clip(what.trim(), MAX_REASON_CHARS));
        }
    }

    /// Settles the parts still open when the episode finishes: a part with facts counts as answered
    /// by them, one without fails with `reason` (or with its last failed call, when there was one).
    pub fn settle(&mut self, reason: &str) {
        for i in self.open() {
            let part = &mut self.parts[i];
            match &part.status {
                PartStatus::Partial { facts } => {
                    part.status = PartStatus::Answered {
                        facts: facts.clone(),
                    }
                }
                _ => {
                    let why = part.tried.clone().unwrap_or_else(|| reason.to_string());
                    self.fail(i, &why);
                }
            }
        }
    }

    /// The parts a call concerns, when the state manager did not say: the not-yet-answered parts that
    /// share the most content words with the call and its facts; none when no part shares a word
    /// (`sole`: a single-part request's part, whatever its words).
    pub fn concerned(&self, call_text: &str, sole: bool) -> Vec<usize> {
        let candidates: Vec<usize> = (0..self.parts.len())
            .filter(|&i| !matches!(self.parts[i].status, PartStatus::Answered { .. }))
            .collect();
        let best = self.best_overlap(&candidates, call_text);
        if best.is_empty() && sole && self.parts.len() == 1 {
            return candidates;
        }
        best
    }

    /// The not-yet-answered parts a call is about by the words only that part has (not its API's tool
    /// name, not words other parts share): "Find the delivery date" is not about `get_order {5}` for a
    /// request whose other parts are about orders too, and "Extract the content of example.com" is not
    /// about `get_trending_for_url_content_extractor`. `api` is the function's name without its
    /// `_for_<tool>` suffix; `arguments` its arguments.
    pub fn touched(&self, api: &str, arguments: &str) -> Vec<usize> {
        let call = content_words(&format!("{} {arguments}", api.replace('_', " ")));
        let words: Vec<BTreeSet<String>> =
            self.parts.iter().map(|p| topic_words(&p.text)).collect();
        (0..self.parts.len())
            .filter(|&i| !matches!(self.parts[i].status, PartStatus::Answered { .. }))
            .filter(|&i| {
                words[i]
                    .iter()
                    .filter(|w| {
                        words
                            .iter()
                            .enumerate()
                            .all(|(j, other)| j == i || !other.contains(*w))
                    })
                    .any(|w| found_in(w, &call))
            })
            .collect()
    }

    /// The parts among `named` (the state manager's attribution) that the call and its facts speak of:
    /// at least half of the part's topic words are found in `call_text` (a strong model's attribution
    /// stands: "the products I ordered" in an order's `productId` items). A small model names every
    /// part for the first call it sees; a part whose words the call does not hold is not believed.
    pub fn believed(&self, named: &[usize], call_text: &str) -> Vec<usize> {
        named
            .iter()
            .copied()
            .filter(|&i| {
                self.parts
                    .get(i)
                    .is_some_and(|p| speaks_of(call_text, &p.text))
            })
            .collect()
    }

    /// The parts among `among` that share the most content words with `call_text`; none when no part
    /// shares a word.
    fn best_overlap(&self, among: &[usize], call_text: &str) -> Vec<usize> {
        let words = content_words(call_text);
        let scored: Vec<(usize, usize)> = among
            .iter()
            .map(|&i| (i, self.overlap(i, &words)))
            .collect();
        let best = scored.iter().map(|&(_, n)| n).max().unwrap_or(0);
        if best == 0 {
            return Vec::new();
        }
        scored
            .into_iter()
            .filter(|&(_, n)| n == best)
            .map(|(i, _)| i)
            .collect()
    }

    /// How many of part `i`'s content words are among `words`, or inside one of them: API names run
    /// words together (`teamlastevents` holds the part's "events").
    pub fn overlap(&self, i: usize, words: &BTreeSet<String>) -> usize {
        let found = |w: &String| {
            words.contains(w)
                || (w.len() >= MIN_INNER_WORD
                    && words
                        .iter()
                        .any(|c| c.len() > w.len() && c.contains(w.as_str())))
        };
        // Topic words only: "get", "API" or "using" shared with a call name says nothing about
        // which part the call concerns (a page's content once counted for "get the trending news").
        self.parts.get(i).map_or(0, |p| {
            topic_words(&p.text).iter().filter(|w| found(w)).count()
        })
    }

    /// The checklist as the router sees it (empty when there are no parts).
    pub fn render(&self) -> String {
        if self.parts.is_empty() {
            return String::new();
        }
        let lines: Vec<String> = self
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let status = match (&p.status, &p.tried) {
                    (PartStatus::Open, None) => "[open]".to_string(),
                    (PartStatus::Open, Some(t)) => format!("[open; {t}]"),
                    (PartStatus::Partial { .. }, _) => "[partly answered]".to_string(),
                    (PartStatus::Answered { .. }, _) => "[answered]".to_string(),
                    (PartStatus::Failed { reason }, _) => format!("[failed: {reason}]"),
                };
                format!("{}. {status} {}", i + 1, p.text)
            })
            .collect();
        format!("Checklist (parts of the request):\n{}", lines.join("\n"))
    }

    /// The parts no fact was found for, numbered as in `render`, for the nudge on an early Finish.
    pub fn render_open(&self) -> String {
        self.unanswered()
            .into_iter()
            .map(|i| format!("{}. {}", i + 1, self.parts[i].text))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Whether `text` speaks of `part`: at least a third of the part's topic words (one at least) are in
/// it. Half was too many for a part with its purpose in it ("a flowering plant that can add a pop of
/// color to a living room": a strong state manager's right attribution was not believed).
pub fn speaks_of(text: &str, part: &str) -> bool {
    let words = content_words(text);
    let topics = topic_words(part);
    let found = topics.iter().filter(|w| found_in(w, &words)).count();
    found > 0 && found * 3 >= topics.len()
}

/// Whether `word` (or its stem: "products", "delivery") is among `words` or inside one of them: API
/// names and fields run words together (`productId`, `teamlastevents`).
fn found_in(word: &str, words: &BTreeSet<String>) -> bool {
    let stem = ["ing", "ed", "es", "s", "y", "e"]
        .iter()
        .find_map(|end| {
            word.strip_suffix(end)
                .filter(|s| s.chars().count() >= MIN_INNER_WORD)
        })
        .unwrap_or(word);
    words.contains(word)
        || (stem.chars().count() >= MIN_INNER_WORD && words.iter().any(|c| c.contains(stem)))
}

fn add_new(known: &mut Vec<String>, facts: &[String]) {
    for f in facts {
        if !known.contains(f) {
            known.push(f.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> Checklist {
        Checklist::new(&[
            "find hotels near the Eiffel Tower".into(),
            "tell me the weather forecast in Paris".into(),
        ])
    }

    #[test]
    fn parts_move_from_open_to_answered_or_failed() {
        let mut c = list();
        assert_eq!(c.open(), vec![0, 1]);
        c.answer(0, &["Hotel Lutetia".into()]);
        c.fail(1, "weather API error");
        assert_eq!(c.answer_facts(), vec!["Hotel Lutetia"]);
        assert!(c.open().is_empty());
        assert_eq!(
            c.failed(),
            vec![("tell me the weather forecast in Paris", "weather API error")]
        );
        // A later answer wins over a failure; a failure never overwrites an answer.
        c.answer(1, &["18 C".into()]);
        c.fail(0, "x");
        assert!(c.failed().is_empty());
        let shown = c.render();
        assert!(shown.contains("1. [answered] find hotels"), "{shown}");
        assert!(shown.contains("2. [answered] tell me"), "{shown}");
    }

    #[test]
    fn a_call_concerns_the_part_it_shares_words_with() {
        let c = list();
        assert_eq!(
            c.concerned(
                "weather_forecast_for_weather {\"city\":\"Paris\"} 18 C",
                true
            ),
            vec![1]
        );
        assert_eq!(
            c.concerned("hotels_near_for_booking Eiffel", false),
            vec![0]
        );
        // No shared word: no part, unless the request has only one.
        assert!(c.concerned("xyz", true).is_empty());
        let one = Checklist::new(&["what is trending".into()]);
        assert_eq!(one.concerned("xyz", true), vec![0]);
        assert!(one.concerned("xyz", false).is_empty());
        assert!(Checklist::default().concerned("x", true).is_empty());
    }

    #[test]
    fn asking_words_shared_with_a_call_do_not_make_it_concern_a_part() {
        let mut c = Checklist::new(&[
            "Fetch the content of the URL 'https://www.example.com' using the 'Get Content' API"
                .into(),
            "Get the trending news articles using the 'Get Trending' API".into(),
        ]);
        c.answer(
            0,
            &["The page at https://www.example.com has the title Example Domain".into()],
        );
        let call = "get_content_for_url_extractor {\"url\":\"https://www.example.com\"} Example Domain: this domain is for use in examples, using an API";
        assert!(c.concerned(call, false).is_empty());
        assert_eq!(
            c.concerned("get_trending_for_url_extractor {} 5 news articles", false),
            vec![1]
        );
    }

    #[test]
    fn a_part_the_state_manager_names_must_share_words_with_the_call() {
        // Two parts one order's details answer, named by a strong state manager, both stand.
        let orders = Checklist::new(&[
            "Find the products I ordered".into(),
            "Find the order status".into(),
            "Find the delivery date".into(),
        ]);
        let details = "get_order_for_shop {\"is_id\":\"1038\"} Order 1038: status delivered, delivered at 2024-05-03; Mechanical Keyboard (productId 128) x1";
        assert_eq!(orders.believed(&[0, 1, 2], details), vec![0, 1, 2]);
        let c = Checklist::new(&[
            "search for videos about 'animation' on Vimeo".into(),
            "fetch the related people in the 'animation' category".into(),
            "give me a streaming link for the YouTube clip UxxajLWwzqY".into(),
        ]);
        let call = "searchvideos_for_vimeo {\"query\":\"animation\"} 88088897 Vimeo videos";
        // The state manager claimed all three parts for one Vimeo search: only the part whose words the
        // call holds stays ("animation" alone does not make the related people found).
        assert_eq!(c.believed(&[0, 1, 2], call), vec![0]);
        // A claim that shares no word with the call is not believed.
        assert!(c.believed(&[2], call).is_empty());
        // API names run words together: "events" is found in `teamlastevents`.
        let team = Checklist::new(&[
            "get the last events of the team".into(),
            "find a placeholder image".into(),
        ]);
        assert_eq!(
            team.believed(
                &[0],
                "teamlastevents_for_sportapi {\"teamid\":\"42\"} 5 events"
            ),
            vec![0]
        );
        assert_eq!(
            team.concerned("teamlastevents_for_sportapi {}", false),
            vec![0]
        );
        // Two parts a call really answers both stay.
        let both = Checklist::new(&[
            "the temperature in Paris".into(),
            "the humidity in Paris".into(),
        ]);
        assert_eq!(
            both.believed(
                &[0, 1],
                "weather_for_meteo {\"city\":\"Paris\"} temperature 18 humidity 60"
            ),
            vec![0, 1]
        );
    }

    #[test]
    fn open_parts_fail_with_a_reason_and_render_for_the_nudge() {
        let mut c = list();
        c.answer(0, &["Hotel Lutetia".into()]);
        assert_eq!(c.render_open(), "2. tell me the weather forecast in Paris");
        c.settle("the step budget was spent");
        assert!(c.render().contains("[failed: the step budget was spent]"));
    }

    #[test]
    fn partly_answered_parts_stay_open_until_the_end_and_a_failed_call_only_notes_itself() {
        let mut c = list();
        c.partly(1, &["Paris: 18 C today".into()]);
        c.tried(0, "hotels_for_booking failed: Timeout error...");
        assert_eq!(c.open(), vec![0, 1]);
        let shown = c.render();
        assert!(
            shown.contains("1. [open; hotels_for_booking failed: Timeout error...]"),
            "{shown}"
        );
        assert!(shown.contains("2. [partly answered] tell me"), "{shown}");
        // The nudge names only the part nothing was found for.
        assert_eq!(c.unanswered(), vec![0]);
        assert_eq!(c.render_open(), "1. find hotels near the Eiffel Tower");
        // A failure does not undo facts; an answer keeps the facts found before it.
        c.fail(1, "x");
        c.answer(1, &["Paris: 20 C tomorrow".into()]);
        assert_eq!(
            c.answer_facts(),
            vec!["Paris: 18 C today", "Paris: 20 C tomorrow"]
        );
        // At the end a part with facts counts as answered; one without fails with its last failed call.
        c.partly(1, &["x".into()]);
        c.settle("no call answered it before Finish");
        assert!(c.open().is_empty());
        assert_eq!(
            c.failed(),
            vec![(
                "find hotels near the Eiffel Tower",
                "hotels_for_booking failed: Timeout error..."
            )]
        );
    }
}
