//! Issue 33 item 13: the tool listing in the agents' prompts never cuts a value mid-way: an example
//! value is shown whole or not at all (a model copies a cut `…` value into its call, which no cache
//! has), and a long description ends at a sentence or word, not inside one.

use crate::common;

use common::{Model, Test};
use serde_json::{Value, json};

const URL: &str = "https://stations.example.org/v2/observations/lisbon-portela?format=json";

/// A copy of the sample whose weather API has a long example URL, a huge example value and a long
/// description.
fn sample_with_long_values() -> tempfile::TempDir {
    let dir = common::sample_copy(&["queries", "tools"]);
    let description = format!(
        "Current weather conditions for a city. {} Ends here.",
        "Temperature, humidity and wind for the station nearest to the city centre. ".repeat(3)
    );
    let extra = [
        json!({"name": "station_url", "type": "STRING", "description": "Station feed", "default": URL}),
        json!({"name": "profile", "type": "STRING", "description": "Profile", "default": "p".repeat(300)}),
    ];
    // The catalogue's API and the query's own copy of it (the query's is what the task offers).
    let tools = dir.path().join("tools/Weather/skycast_weather.json");
    let mut tool: Value = serde_json::from_str(&std::fs::read_to_string(&tools).unwrap()).unwrap();
    let api = &mut tool["api_list"][0];
    api["description"] = json!(description);
    api["optional_parameters"]
        .as_array_mut()
        .unwrap()
        .extend(extra.clone());
    std::fs::write(&tools, tool.to_string()).unwrap();
    let queries = dir.path().join("queries/G1_instruction.json");
    let mut all: Value = serde_json::from_str(&std::fs::read_to_string(&queries).unwrap()).unwrap();
    for q in all.as_array_mut().unwrap() {
        for api in q["api_list"].as_array_mut().unwrap() {
            if api["api_name"] == "Current weather" {
                api["api_description"] = json!(description);
                api["optional_parameters"]
                    .as_array_mut()
                    .unwrap()
                    .extend(extra.clone());
            }
        }
    }
    std::fs::write(&queries, all.to_string()).unwrap();
    dir
}

#[test]
fn example_values_are_whole_or_absent_and_descriptions_end_at_a_word() {
    let data = sample_with_long_values();
    let model = Model::start(0);
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("record");
    Test::new()
        .env("OPENAI_BASE_URL", &model.url)
        .arg("--data")
        .arg(data.path())
        .run_query("101", "G1_instruction")
        .arg("--record")
        .arg(&record)
        .arg("--out")
        .arg(out.path())
        .run()
        .success();
    let mut prompts = String::new();
    for entry in std::fs::read_dir(&record).unwrap().flatten() {
        prompts.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
    }
    let listing = prompts
        .split("- current_weather_for_skycast_weather:")
        .nth(1)
        .expect("the tool listing");
    let line = listing.split("\\n").next().unwrap();
    assert!(line.contains(URL), "the example URL is not whole: {line}");
    assert!(!line.contains("ppp"), "a cut example value: {line}");
    // The description keeps the sentences that fit, not a word cut at the character limit.
    assert!(!line.contains('…'), "{line}");
    assert!(
        line.contains("nearest to the city centre.. Arguments:"),
        "{line}"
    );
}
