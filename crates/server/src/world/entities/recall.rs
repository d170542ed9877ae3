//! Which facts a later call is given: only facts about what the call names (issue 42: language ids
//! given to a stopwords call, country codes to a site analysis, were the facts of other APIs of the
//! tool). First the facts about the identifiers among its arguments (not generic values such as
//! `1080p` or `300x300`), a short number only where the fact is of the same kind of entity (a
//! language `1` is not a status `1`). A call that names no identifier with facts (a list by actor, by
//! equipment) gets the facts whose record holds one of its argument texts in the same tool
//! (`actor = al_pacino`: the quotes whose `actor` is "Al Pacino"); a call that names nothing at all (a
//! list of everything, a page of it) gets what earlier replies of the same API fixed. The reference
//! world's contradictions were of that kind: three quote lists of one actor gave quote 12 three texts.

use serde_json::{Map, Value};

use super::ident::generic_value;
use super::{EntityMemory, Fact, Index, named_values, names_identifier, norm, render_one, tool_of};
use super::{MAX_FACTS_CHARS, MAX_FACTS_SHOWN, identifier, weak_identifier};
use crate::world::pair_rules::collection_words;
use sum2act_core::toolbench::naming::squash;

impl EntityMemory {
    /// The facts about the values a call of `api` (`category/tool/api`) names (see the module doc),
    /// most recent first, within the prompt's bounds.
    pub fn recall(&self, api: &str, args: &Map<String, Value>) -> Vec<Fact> {
        self.refresh();
        let Ok(index) = self.index.lock() else {
            return Vec::new();
        };
        let mut ids = by_identifier(&index, api, args);
        if ids.is_empty() {
            ids = by_attribute(&index, api, args);
        }
        if ids.is_empty() && names_nothing(args) {
            ids = (0..index.facts.len())
                .filter(|&i| index.facts[i].api == api)
                .collect();
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

/// A call with no argument text that could name something (none, or numbers and generic values
/// only: a page of a list of everything).
fn names_nothing(args: &Map<String, Value>) -> bool {
    named_values(args).iter().all(|(_, v)| {
        generic_value(v)
            || v.chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
    })
}

/// The facts keyed by a value the call names as an identifier. A short value (`12`, `1`) names
/// different things in different places: it matches a fact of the same tool about the same kind of
/// entity, or one under the same named identifier (`holeId`) in another tool (a hole `12` is not the
/// `itemsperpage` 12 of a shop, nor a language `1` the status `1` of the same tool).
fn by_identifier(index: &Index, api: &str, args: &Map<String, Value>) -> Vec<usize> {
    let mut ids = Vec::new();
    for (key, value) in named_values(args) {
        let names_one =
            names_identifier(&key) || identifier(&key, &Value::String(value.clone())).is_some();
        if generic_value(&value) || !names_one {
            continue;
        }
        let Some(found) = index.by_value.get(&norm(&value)) else {
            continue;
        };
        let weak = weak_identifier(&value);
        ids.extend(found.iter().filter(|&&i| {
            let fact = &index.facts[i];
            !weak || (names_identifier(&key) && same_kind(fact, api, &key))
        }));
    }
    ids
}

/// Whether `fact` is about the kind of entity a call of `api` names under `key`: in the same tool, the
/// API, record path or field names share a word (`get_languages` and `get_a_language`; `stations` and
/// `station_id`); in another tool, the same named identifier (`holeId`, not a bare `id`).
fn same_kind(fact: &Fact, api: &str, key: &str) -> bool {
    let key_kind = collection_words(key);
    if tool_of(&fact.api) != tool_of(api) {
        return !key_kind.is_empty() && squash(&fact.key) == squash(key);
    }
    let api_name = |a: &str| a.rsplit('/').next().unwrap_or(a).to_string();
    let segment = fact
        .path
        .rsplit('.')
        .next()
        .unwrap_or("")
        .trim_end_matches("[]");
    let mut theirs = collection_words(&api_name(&fact.api));
    theirs.extend(collection_words(segment));
    theirs.extend(collection_words(&fact.key));
    let mut ours = collection_words(&api_name(api));
    ours.extend(key_kind);
    ours.iter().any(|w| theirs.contains(w))
}

/// The facts of the same tool whose record has a text field equal to a text the call passes (case,
/// `_` and `-` aside: `al_pacino` is "Al Pacino").
fn by_attribute(index: &Index, api: &str, args: &Map<String, Value>) -> Vec<usize> {
    let wanted: Vec<String> = named_values(args)
        .into_iter()
        .filter(|(_, v)| !generic_value(v))
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
    use crate::world::entities::render;
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
        // A misspelled name names an entity with no facts: none (issue 42: only facts about what the
        // call names).
        let misspelled = memory.recall(quotes, &args(json!({"actor": "al_pachino"})));
        assert!(misspelled.is_empty(), "{misspelled:?}");
        // A list of everything of the same API gets its facts; another API of the tool names none of
        // them (issue 42: language ids given to a stopwords call), nor does another tool.
        assert_eq!(memory.recall(quotes, &Map::new()), by_name);
        assert!(
            memory
                .recall("Movies/quotes/random", &Map::new())
                .is_empty()
        );
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

    #[test]
    fn only_the_entities_a_call_names_and_of_their_kind_are_recalled() {
        // Issue 42: a judge0 "Get a Language" call for id 1 was given status 1; a stopwords call got
        // the tool's language ids; a torrent call's `1080p` and a QR call's `300x300` were entities.
        let memory = EntityMemory::open(None);
        let judge = "Tools/judge0_ce";
        remember(
            &memory,
            &format!("{judge}/get_statuses"),
            json!({}),
            json!([{"id": 1, "description": "In Queue"}, {"id": 2, "description": "Processing"}]),
        );
        remember(
            &memory,
            &format!("{judge}/get_languages"),
            json!({}),
            json!([{"id": 1, "name": "Assembly (NASM 2.14.02)"}]),
        );
        let language = memory.recall(&format!("{judge}/get_a_language"), &args(json!({"id": 1})));
        assert_eq!(language.len(), 1, "{language:?}");
        assert!(render_one(&language[0]).contains("Assembly"));
        let status = memory.recall(&format!("{judge}/get_a_status"), &args(json!({"id": "1"})));
        assert!(render_one(&status[0]).contains("In Queue"), "{status:?}");
        assert!(
            memory
                .recall(&format!("{judge}/stopwords"), &args(json!({"langs": "en"})))
                .is_empty()
        );
        remember(
            &memory,
            "Tools/torrent/get_from_yts",
            json!({"searchtopic": "Coco"}),
            json!([{"Name": "Coco", "Quality": "1080p", "Size": "1.77 GB", "hash": "5E7A9C1B3D"}]),
        );
        let other = args(json!({"searchtopic": "Encanto", "quality": "1080p"}));
        assert!(
            memory
                .recall("Tools/torrent/get_from_yts", &other)
                .is_empty()
        );
    }

    #[test]
    fn a_title_s_fields_are_given_when_another_api_names_it() {
        // Issue 42: a title's rating, genres and release date differed between `titles_id` and
        // `titles_x_titles_by_ids`.
        let memory = EntityMemory::open(None);
        let tool = "Movies/moviesdatabase";
        remember(
            &memory,
            &format!("{tool}/titles_id"),
            json!({"is_id": "tt0111161"}),
            json!({"results": {"id": "tt0111161", "titleText": {"text": "The Shawshank Redemption"},
                "ratingsSummary": {"aggregateRating": 9.3, "voteCount": 2800000},
                "genres": {"genres": [{"id": "Drama", "text": "Drama"}]},
                "releaseDate": {"day": 14, "month": 10, "year": 1994}}}),
        );
        let found = memory.recall(
            &format!("{tool}/titles_x_titles_by_ids"),
            &args(json!({"idslist": "tt0111161,tt0068646"})),
        );
        let text = render(&found);
        for field in ["9.3", "Drama", "1994", "Shawshank"] {
            assert!(text.contains(field), "{field} missing: {text}");
        }
        assert!(text.contains("`results.is_id`"), "{text}");
    }
}
