use super::*;

fn parts(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn parts_are_kept_in_any_language_when_made_of_the_request() {
    let query = "Ich plane eine Reise nach Lyon. Wie wird das Wetter dort morgen, und welche Hotels gibt es in der Nähe des Bahnhofs?";
    let kept = check_parts(
        query,
        &parts(&[
            "1. Wie wird das Wetter in Lyon morgen",
            "- welche Hotels gibt es in der Nähe des Bahnhofs",
        ]),
    );
    assert_eq!(
        kept,
        vec![
            "Wie wird das Wetter in Lyon morgen",
            "welche Hotels gibt es in der Nähe des Bahnhofs"
        ]
    );
}

#[test]
fn an_invented_part_a_repeat_and_a_part_inside_another_are_dropped() {
    let query = "Give me the weather in Paris tomorrow and the exchange rate of EUR to USD.";
    let kept = check_parts(
        query,
        &parts(&[
            "the weather in Paris",
            "the weather in Paris tomorrow",
            "book a table at a restaurant downtown",
            "the exchange rate of EUR to USD",
            "The exchange rate of EUR to USD",
        ]),
    );
    assert_eq!(
        kept,
        vec![
            "the weather in Paris tomorrow",
            "the exchange rate of EUR to USD"
        ]
    );
}

#[test]
fn with_no_usable_part_the_whole_request_is_the_one_part_and_overflow_joins_the_last() {
    let query = "Quels sont les horaires du musée?";
    assert_eq!(check_parts(query, &[]), vec![query.to_string()]);
    assert_eq!(
        check_parts(query, &parts(&["", "   "])),
        vec![query.to_string()]
    );
    let query = "a1 b2 c3 d4 e5 f6 g7 h8";
    let many: Vec<String> = words(query).iter().map(|w| w.to_string()).collect();
    let kept = check_parts(query, &many);
    assert_eq!(kept.len(), MAX_PARTS);
    assert_eq!(kept[MAX_PARTS - 1], "f6; g7; h8");
}

#[test]
fn a_part_is_answered_by_its_facts_and_open_without_them() {
    let mut r = Request::new(
        "Find the capital of Peru and the population of Chile, as a table.",
        &parts(&["the capital of Peru", "the population of Chile"]),
        &parts(&["as a table", "in a poem for my aunt", "the capital of Peru"]),
    );
    // A form made of the request's words is kept; an invented one and a repeated part are not.
    assert_eq!(r.form, vec!["as a table"]);
    assert_eq!(r.open(), vec![0, 1]);
    assert_eq!(r.add_fact(1, "The capital of Peru is Lima.", 1), Some(1));
    assert_eq!(
        r.add_fact(1, "The capital of Peru is Lima.", 2),
        None,
        "a repeat"
    );
    assert_eq!(r.add_fact(3, "no such part", 2), None);
    assert_eq!(r.add_fact(0, "no such part", 2), None);
    assert!(r.not_found(2, "the census API returned an error"));
    assert_eq!(r.status(0), Status::Answered(vec![1]));
    assert!(r.open().is_empty());
    let shown = r.render_parts();
    assert!(
        shown.contains("1. the capital of Peru — answered by F1"),
        "{shown}"
    );
    assert!(shown.contains("2. the population of Chile — not found: the census API"));
    // A fact found later answers a part given up on.
    r.add_fact(2, "Chile has 19.6 million people.", 3);
    assert_eq!(r.status(1), Status::Answered(vec![2]));
    assert!(
        r.render_facts()
            .contains("F2 (part 2, call 3): Chile has 19.6 million people.")
    );
}
