//! Whether an API's template describes this call's reply. ToolBench recorded each template from one
//! call, usually with the documented default arguments; when a call changes a parameter that picks
//! what kind of thing the API returns (TheClique's `Transfermarkt details` with `type_s = spieler`, a
//! player page, where the template is the `verein` club page of the defaults; Spotify's search `type`),
//! the template is another kind of result. The LLM simulator then sees it as an example of the API's
//! style, not as the shape its reply must have (simulator requests 107 and 113 of the strong-model run).

use serde_json::{Map, Value};

use sum2act_core::toolbench::ApiDoc;
use sum2act_core::toolbench::naming::tokens;

/// Words of a parameter name that say its value selects the kind of result (about 40 of the shared
/// data's 2,490 APIs with a template have one with a documented default).
const SELECTOR_WORDS: &[&str] = &[
    "type", "kind", "mode", "entity", "resource", "endpoint", "section",
];

/// Longest default read as a selector word (longer ones are free text).
const MAX_SELECTOR_CHARS: usize = 30;

/// Why the template, recorded for the documented defaults, may not be this call's shape: `None` when
/// it is. `args` are under the API's declared names.
pub fn recorded_for_other_kind(doc: &ApiDoc, args: &Map<String, Value>) -> Option<String> {
    doc.required().iter().chain(doc.optional()).find_map(|p| {
        let default = p.default.as_str()?.trim();
        let word = !default.is_empty()
            && default.chars().count() <= MAX_SELECTOR_CHARS
            && default
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
        let selector = tokens(&p.name)
            .iter()
            .any(|t| SELECTOR_WORDS.contains(&t.as_str()));
        let value = match args.get(&p.name)? {
            Value::String(s) => s.trim().to_string(),
            Value::Number(n) => n.to_string(),
            _ => return None,
        };
        (word && selector && !value.is_empty() && !value.eq_ignore_ascii_case(default)).then(|| {
            format!(
                "recorded for {} = {default:?}; this call asks {} = {value:?}, which may return another kind of result",
                p.name, p.name
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sum2act_core::toolbench::Param;
    use sum2act_core::toolbench::fixture::api_doc;

    fn param(name: &str, default: &str) -> Param {
        Param {
            name: name.into(),
            kind: "STRING".into(),
            description: String::new(),
            default: json!(default),
        }
    }

    #[test]
    fn a_call_that_changes_a_selector_is_another_kind_of_result() {
        let doc = api_doc(
            "Data",
            "TheClique",
            "Transfermarkt details",
            vec![
                param("type_s", "verein"),
                param("other", "startseite"),
                param("id_talent", "583"),
                param("part_slug", "fc-paris-saint-germain"),
            ],
        );
        let args = |v: Value| v.as_object().cloned().unwrap_or_default();
        let player = args(
            json!({"type_s": "spieler", "other": "profil", "id_talent": "28003", "part_slug": "lionel-messi"}),
        );
        let why = recorded_for_other_kind(&doc, &player).unwrap_or_default();
        assert!(
            why.contains(r#"type_s = "verein""#) && why.contains("spieler"),
            "{why}"
        );
        // Another club: the same kind of page as the template's.
        let club =
            args(json!({"type_s": "Verein", "id_talent": "131", "part_slug": "fc-barcelona"}));
        assert_eq!(recorded_for_other_kind(&doc, &club), None);
        // Changed values of other parameters do not count.
        let doc = api_doc("Data", "t", "a", vec![param("query", "paris")]);
        assert_eq!(
            recorded_for_other_kind(&doc, &args(json!({"query": "rome"}))),
            None
        );
    }
}
