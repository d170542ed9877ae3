//! Which facts a later call is given. First the facts about the identifiers it names. A call that names
//! none (a list by actor, by equipment, or of everything) gets the facts whose record holds one of its
//! argument values in the same tool (`actor = al_pacino`: the quotes whose `actor` is "Al Pacino"),
//! else the facts earlier replies of the same API fixed, else those of the same tool. The reference world's contradictions were of
//! that kind: three quote lists of one actor gave quote 12 three texts, and an exercise list by
//! equipment gave exercise 0001 another image than the list of all exercises; each call named no
//! identifier, so it was given no fact.

use serde_json::{Map, Value};

use super::{EntityMemory, Fact, Index, named_values, names_identifier, norm, render_one, tool_of};
use super::{MAX_FACTS_CHARS, MAX_FACTS_SHOWN, weak_identifier};
use sum2act_core::toolbench::naming::squash;

impl EntityMemory {
    /// The facts about the values a call of `api` (`category/tool/api`) names (see the module doc),
    /// most recent first, within the prompt's bounds. A short number (`12`, `2015`) is an identifier
    /// only where the call names it as one: under an identifier's name, and the fact from the same tool
    /// or under the same name (a hole `12` is not the `itemsperpage` 12 of a shop).
    pub fn recall(&self, api: &str, args: &Map<String, Value>) -> Vec<Fact> {
        self.refresh();
        let Ok(index) = self.index.lock() else {
            return Vec::new();
        };
        let mut ids = by_identifier(&index, api, args);
        if ids.is_empty() {
            ids = by_attribute(&index, api, args);
        }
        if ids.is_empty() {
            ids = of_api(&index, |fact_api| fact_api == api);
        }
        if ids.is_empty() {
            ids = of_api(&index, |fact_api| tool_of(fact_api) == tool_of(api));
        }
        ids.sort_unstable_by(|a, b| b.cmp(a));
        ids.dedup();
        let mut out = Vec::new();
        let mut chars = 0;
        for fact in ids.into_iter().map(|i| &index.facts[i]) {
            let line = render_one(fact);
            if out.len() >= MAX_FACTS_SHOWN || chars + line.len() > MAX_FACTS_CHARS {
                break;
            }
            chars += line.len() + 1;
            out.push(fact.clone());
        }
        out
    }
}

fn of_api(index: &Index, keep: impl Fn(&str) -> bool) -> Vec<usize> {
    (0..index.facts.len())
        .filter(|&i| keep(&index.facts[i].api))
        .collect()
}

/// The facts keyed by a value the call names.
fn by_identifier(index: &Index, api: &str, args: &Map<String, Value>) -> Vec<usize> {
    let mut ids = Vec::new();
    for (key, value) in named_values(args) {
        if let Some(found) = index.by_value.get(&norm(&value)) {
            let weak = weak_identifier(&value);
            ids.extend(found.iter().filter(|&&i| {
                let fact = &index.facts[i];
                !weak
                    || (names_identifier(&key)
                        && (tool_of(&fact.api) == tool_of(api)
                            || squash(&fact.key) == squash(&key)))
            }));
        }
    }
    ids
}

/// The facts of the same tool whose record has a text field equal to a text the call passes (case,
/// `_` and `-` aside: `al_pacino` is "Al Pacino").
fn by_attribute(index: &Index, api: &str, args: &Map<String, Value>) -> Vec<usize> {
    let wanted: Vec<String> = named_values(args)
        .into_iter()
        .map(|(_, v)| loose(&v))
        .filter(|v| v.chars().count() >= 3 && v.chars().any(char::is_alphabetic))
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    (0..index.facts.len())
        .filter(|&i| {
            let fact = &index.facts[i];
            tool_of(&fact.api) == tool_of(api)
                && fact
                    .record
                    .values()
                    .any(|v| v.as_str().is_some_and(|s| wanted.contains(&loose(s))))
        })
        .collect()
}

/// Text compared loosely: lower case, `_` and `-` as spaces, spaces collapsed.
fn loose(s: &str) -> String {
    s.to_lowercase()
        .replace(['_', '-'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::store::Call;
    use serde_json::json;
    use sum2act_core::tools::ToolReply;

    fn remember(memory: &EntityMemory, api: &str, args: Value, reply: Value) {
        let mut parts = api.splitn(3, '/');
        let call = Call {
            category: parts.next().unwrap_or_default().into(),
            tool: parts.next().unwrap_or_default().into(),
            api: parts.next().unwrap_or_default().into(),
            arguments: args.to_string(),
        };
        let args = args.as_object().cloned().unwrap_or_default();
        memory.remember(&call, &args, &ToolReply::new(String::new(), reply, None));
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_call_naming_no_identifier_gets_the_facts_of_its_attribute_or_its_api() {
        // The reference world: quotes by `al_pacino`, then by "Al Pacino", then by `al_pachino`.
        let memory = EntityMemory::open(None);
        let quotes = "Movies/quotes/get_quotes_by_actor";
        remember(
            &memory,
            quotes,
            json!({"actor": "al_pacino"}),
            json!([{"id": 12, "quote": "Say hello to my little friend!", "actor": "Al Pacino"}]),
        );
        remember(
            &memory,
            "Movies/other/get_quotes_by_actor",
            json!({"actor": "al_pacino"}),
            json!([{"id": 99, "quote": "Hoo-ah!", "actor": "Al Pacino"}]),
        );
        let by_name = memory.recall(quotes, &args(json!({"actor": "Al Pacino"})));
        assert_eq!(by_name.len(), 1, "the same tool only: {by_name:?}");
        assert!(render_one(&by_name[0]).contains("little friend"));
        // A misspelled name matches nothing: the same API's facts are given.
        let misspelled = memory.recall(quotes, &args(json!({"actor": "al_pachino"})));
        assert_eq!(misspelled, by_name);
        // A list of everything in another API of the tool: the tool's facts; of another tool: none.
        assert_eq!(memory.recall("Movies/quotes/random", &Map::new()), by_name);
        assert!(memory.recall("Movies/films/list", &Map::new()).is_empty());
        // A call naming an identifier with facts gets those only.
        remember(
            &memory,
            quotes,
            json!({"actor": "marlon_brando"}),
            json!([{"id": "tt0068646", "title": "The Godfather", "year": 1972}]),
        );
        let named = memory.recall(quotes, &args(json!({"movie": "tt0068646"})));
        assert_eq!(named.len(), 1, "{named:?}");
        assert_eq!(named[0].value, "tt0068646");
    }
}
