//! Ranking tests over small hand-made catalogues.

use super::*;
use serde_json::json;
use sum2act_core::toolbench::{Catalog, Tool, ToolFile};

fn tool(category: &str, name: &str, apis: serde_json::Value) -> Tool {
    let file: ToolFile =
        serde_json::from_value(json!({"tool_name": name, "api_list": apis})).unwrap();
    Tool {
        category: category.into(),
        standard_name: sum2act_core::toolbench::naming::standardize(name),
        file,
    }
}

fn api(name: &str, desc: &str, param: &str, default: &str) -> serde_json::Value {
    json!({"name": name, "description": desc, "required_parameters": [
        {"name": param, "type": "STRING", "description": "", "default": default}]})
}

fn catalog() -> Catalog {
    Catalog::from_tools([
        tool(
            "Data",
            "TheClique",
            json!([
                api("Transfermarkt search", "Search by name", "name", "messi"),
                api("Songkick concert", "Concert info", "id_conc", "lumineers"),
            ]),
        ),
        tool(
            "Email",
            "Temp Mail",
            json!([
                api("Read Inbox", "Read inbox messages", "email", "a@b.c"),
                api("Create Mailbox", "New temporary mailbox", "domain", "x.com"),
            ]),
        ),
        tool(
            "Email",
            "Email Validator",
            json!([api("validateEmail", "Check an email address", "email", "")]),
        ),
        tool(
            "Email",
            "Mail Checker",
            json!([api("check mail", "Validate email address", "email", "")]),
        ),
        tool(
            "Weather",
            "WeatherNow",
            json!([api(
                "currentForecast",
                "Weather forecast for a city",
                "city",
                "Paris"
            )]),
        ),
        // The same tool under a second category, as in ToolBench.
        tool(
            "Other",
            "WeatherNow",
            json!([api(
                "currentForecast",
                "Weather forecast for a city",
                "city",
                "Paris"
            )]),
        ),
    ])
}

/// The dense half finds an API the words miss ("gig" never appears in the catalogue), while
/// the lexical match stays first.
#[test]
fn dense_relevance_lifts_a_paraphrase_the_words_miss() {
    let concert = "TheClique: Songkick concert. Concert info";
    let encoder = dense::tests::Fixed::new(
        2,
        &[
            (concert, vec![1.0, 0.0]),
            ("Temp Mail: Read Inbox. Read inbox messages", vec![0.0, 1.0]),
            (
                "Temp Mail: Create Mailbox. New temporary mailbox",
                vec![0.0, 1.0],
            ),
            (
                "Email Validator: validateEmail. Check an email address",
                vec![0.0, 1.0],
            ),
            (
                "Mail Checker: check mail. Validate email address",
                vec![0.0, 1.0],
            ),
            ("which gig is on tonight and check my mail", vec![0.8, 0.6]),
            // Its two intents.
            ("which gig is on tonight", vec![1.0, 0.0]),
            ("check my mail", vec![0.0, 1.0]),
        ],
    );
    let query = "which gig is on tonight and check my mail";
    let lexical = Retriever::build(&catalog(), &RetrieveOptions::default()).unwrap();
    let hits = names(&lexical.search(query, 5).unwrap());
    assert!(
        !hits.contains(&pair("TheClique", "Songkick concert")),
        "{hits:?}"
    );
    let options = RetrieveOptions {
        encoder: Some(std::sync::Arc::new(encoder)),
        ..RetrieveOptions::default()
    };
    let hybrid = Retriever::build(&catalog(), &options).unwrap();
    assert_eq!(
        intent::split_intents(query).len(),
        2,
        "the test encoder covers both intents"
    );
    let hits = names(&hybrid.search(query, 5).unwrap());
    assert!(
        hits.contains(&pair("TheClique", "Songkick concert")),
        "{hits:?}"
    );
    assert_eq!(hits[0], pair("Mail Checker", "check mail"), "{hits:?}");
}

#[test]
fn example_requests_bring_a_request_s_words_to_its_api() {
    let catalog = catalog();
    let query = "which gig is on tonight";
    let plain = Retriever::build(&catalog, &RetrieveOptions::default()).unwrap();
    let hits = names(&plain.search(query, 1).unwrap());
    assert_ne!(hits.first(), Some(&pair("TheClique", "Songkick concert")));
    let tool = catalog.tool("Data", "TheClique").unwrap();
    let line = examples::ExampleLine {
        tool: "TheClique".into(),
        api: "Songkick concert".into(),
        key: examples::api_key(tool, &tool.file.api_list[1]),
        requests: vec!["Is there a gig on tonight I could go to?".into()],
        model: "test".into(),
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("examples.jsonl");
    std::fs::write(&path, serde_json::to_string(&line).unwrap()).unwrap();
    let loaded = examples::ExampleRequests::load(&path).unwrap();
    assert_ne!(
        fingerprint(&catalog, Some(&loaded)),
        fingerprint(&catalog, None)
    );
    let options = RetrieveOptions {
        examples: Some(std::sync::Arc::new(loaded)),
        ..RetrieveOptions::default()
    };
    let expanded = Retriever::build(&catalog, &options).unwrap();
    let hits = names(&expanded.search(query, 1).unwrap());
    assert_eq!(hits, [pair("TheClique", "Songkick concert")]);
}

fn names(hits: &[Hit]) -> Vec<(String, String)> {
    hits.iter()
        .map(|h| (h.tool_name.clone(), h.api_name.clone()))
        .collect()
}

fn pair(t: &str, a: &str) -> (String, String) {
    (t.to_string(), a.to_string())
}

#[test]
fn camel_case_api_names_and_defaults_match() {
    let r = Retriever::build(&catalog(), &RetrieveOptions::default()).unwrap();
    let hits = r
        .search("What is the current forecast in Paris?", 3)
        .unwrap();
    assert_eq!(names(&hits)[0], pair("WeatherNow", "currentForecast"));
    let hits = r.search("Search transfermarkt for messi", 3).unwrap();
    assert_eq!(names(&hits)[0], pair("TheClique", "Transfermarkt search"));
}

#[test]
fn duplicate_apis_across_categories_are_returned_once() {
    let r = Retriever::build(&catalog(), &RetrieveOptions::default()).unwrap();
    let hits = r.search("weather forecast", 10).unwrap();
    let n = names(&hits)
        .iter()
        .filter(|p| **p == pair("WeatherNow", "currentForecast"))
        .count();
    assert_eq!(n, 1);
}

#[test]
fn every_intent_of_a_two_part_request_reaches_the_top() {
    let r = Retriever::build(&catalog(), &RetrieveOptions::default()).unwrap();
    let hits = r
        .search(
            "Validate the email address of my friend. Also read inbox messages of my temp mail.",
            3,
        )
        .unwrap();
    let top = names(&hits);
    assert!(top.contains(&pair("Temp Mail", "Read Inbox")), "{top:?}");
    assert!(
        top.contains(&pair("Email Validator", "validateEmail"))
            || top.contains(&pair("Mail Checker", "check mail")),
        "{top:?}"
    );
}

#[test]
fn scores_are_non_increasing_and_k_is_respected() {
    let r = Retriever::build(&catalog(), &RetrieveOptions::default()).unwrap();
    let hits = r.search("email mail inbox validate weather", 4).unwrap();
    assert_eq!(hits.len(), 4);
    assert!(
        hits.windows(2).all(|w| w[0].score >= w[1].score),
        "{hits:?}"
    );
    assert!(r.search("email", 0).unwrap().is_empty());
    assert!(r.search("zzzz qqqq", 5).unwrap().is_empty());
}

#[test]
fn cached_index_is_reused_and_rebuilt_when_the_catalogue_changes() {
    let dir = tempfile::tempdir().unwrap();
    let options = RetrieveOptions {
        index_dir: Some(dir.path().to_path_buf()),
        write: true,
        ..RetrieveOptions::default()
    };
    let first = Retriever::build(&catalog(), &options).unwrap();
    assert_eq!(first.source(), IndexSource::Built);
    let again = Retriever::build(&catalog(), &options).unwrap();
    assert_eq!(again.source(), IndexSource::Cached);
    let q = "read inbox messages";
    assert_eq!(
        names(&first.search(q, 5).unwrap()),
        names(&again.search(q, 5).unwrap())
    );
    let mut tools = catalog().tools().to_vec();
    tools.truncate(2);
    let smaller = Catalog::from_tools(tools);
    let other = Retriever::build(&smaller, &options).unwrap();
    assert_eq!(other.source(), IndexSource::Built);
    assert_eq!(other.api_count(), 4);
}

#[test]
fn baseline_ranks_by_plain_bm25() {
    let b = Bm25Baseline::build(&catalog()).unwrap();
    let hits = b.search("read inbox", 2).unwrap();
    assert_eq!(names(&hits)[0], pair("Temp Mail", "Read Inbox"));
}

fn with(weights: Weights) -> RetrieveOptions {
    RetrieveOptions {
        weights,
        ..RetrieveOptions::default()
    }
}

#[test]
fn a_rare_word_in_one_field_beats_a_common_word_repeated_across_fields() {
    let location = |name: &str| {
        json!({"name": name, "description": "Location time zone for a location",
            "required_parameters": [{"name": "location", "type": "STRING",
                "description": "location name", "default": ""}],
            "template_response": {"location": "str", "current": "str"}})
    };
    let mut tools = catalog().tools().to_vec();
    tools.push(tool(
        "Location",
        "World Time",
        json!([
            location("Timezone for Location"),
            location("Current time by location")
        ]),
    ));
    // "location" is a common word of the catalogue, "ISS" a rare one.
    for name in ["Geo Lookup", "Place Finder", "Maps Plus", "Address Book"] {
        tools.push(tool("Location", name, json!([location("Location search")])));
    }
    tools.push(tool(
        "Science",
        "ISS Tracker",
        json!([{"name": "get", "description": "gets you the data"}]),
    ));
    let catalog = Catalog::from_tools(tools);
    let q = "location of the ISS";
    let r = Retriever::build(&catalog, &RetrieveOptions::default()).unwrap();
    assert_eq!(
        names(&r.search(q, 3).unwrap())[0],
        pair("ISS Tracker", "get")
    );
    // Summing every field instead lets the repeated common word win.
    let summed = Weights {
        field_tie: 1.0,
        ..Weights::default()
    };
    let r = Retriever::build(&catalog, &with(summed)).unwrap();
    assert_ne!(
        names(&r.search(q, 3).unwrap())[0],
        pair("ISS Tracker", "get")
    );
}

/// A tool with many APIs matching one intent strongly, and a weak match for the other intent.
fn crowded_catalog() -> Catalog {
    let forecast = |name: &str| api(name, "Weather forecast for a city", "city", "Paris");
    let mut tools = catalog().tools().to_vec();
    tools.push(tool(
        "Weather",
        "Forecast Hub",
        json!([
            forecast("Hourly forecast"),
            forecast("Daily forecast"),
            forecast("Weekly forecast"),
            forecast("Forecast alerts"),
        ]),
    ));
    tools.push(tool(
        "Music",
        "Tune Box",
        json!([api("Playlist songs", "Songs of a playlist", "id", "")]),
    ));
    Catalog::from_tools(tools)
}

#[test]
fn each_intent_gets_its_best_api_into_the_top() {
    let q = "I need the hourly, daily and weekly weather forecast for Paris and any weather \
             alerts. Additionally, show the songs of my playlist.";
    let r = Retriever::build(&crowded_catalog(), &RetrieveOptions::default()).unwrap();
    let top = names(&r.search(q, 3).unwrap());
    assert!(top.contains(&pair("Tune Box", "Playlist songs")), "{top:?}");
    assert!(top[0].0 == "Forecast Hub", "{top:?}");
    // Without the per-intent term the strong tool's siblings fill the list.
    let whole_only = Weights {
        intent_weight: 0.0,
        ..Weights::default()
    };
    let r = Retriever::build(&crowded_catalog(), &with(whole_only)).unwrap();
    let top = names(&r.search(q, 3).unwrap());
    assert!(
        !top.contains(&pair("Tune Box", "Playlist songs")),
        "{top:?}"
    );
}

#[test]
fn a_second_pick_from_the_first_picks_category_is_preferred() {
    // Two identical inbox readers for the second intent; only the later one shares the
    // category of the first pick.
    let reader = |category: &str, name: &str| {
        tool(
            category,
            name,
            json!([api("Read Inbox", "Read inbox messages", "box", "")]),
        )
    };
    let catalog = Catalog::from_tools([
        tool(
            "Tools",
            "Email Validator",
            json!([api("validateEmail", "Check an email address", "email", "")]),
        ),
        reader("Misc", "Inbox Reader"),
        reader("Tools", "Inbox Viewer"),
    ]);
    let q = "Validate the email address. Also read inbox messages.";
    let order = |weights: Weights| {
        let r = Retriever::build(&catalog, &with(weights)).unwrap();
        names(&r.search(q, 3).unwrap())
    };
    let plain = order(Weights {
        category_bonus: 0.0,
        ..Weights::default()
    });
    assert_eq!(plain[0], pair("Email Validator", "validateEmail"));
    assert_eq!(plain[1], pair("Inbox Reader", "Read Inbox"));
    let coherent = order(Weights::default());
    assert_eq!(
        coherent[1],
        pair("Inbox Viewer", "Read Inbox"),
        "{coherent:?}"
    );
}
