//! The answer-writing habits that once raised false "values found in no API result" hints (issue 41):
//! values the agent reformatted or worked out from what the tools returned, and the answer's own
//! headings.

use super::*;

/// The claims of `answer` that no observation of `reply` supports, as written.
fn unsupported(answer: &str, reply: &str) -> Vec<String> {
    let evidence = [
        Evidence::new(SourceKind::Request, "request", "what did the API say?"),
        Evidence::new(SourceKind::Observation, "step 1 f", reply),
    ];
    check_claims(answer, &evidence)
        .into_iter()
        .filter(|c| !c.supported() && (c.claim.kind.is_value() || c.specific()))
        .map(|c| c.claim.text)
        .collect()
}

#[test]
fn a_date_assembled_from_day_month_and_year_fields_is_found() {
    let reply = r#"{"error": "", "response": {"event": {"day": 5, "month": 3, "year": 2024, "title": "Expo"}}}"#;
    for answer in [
        "The expo is on 2024-03-05.",
        "The expo is on March 5, 2024.",
        "The expo is on 05/03/2024.",
    ] {
        assert_eq!(unsupported(answer, reply), Vec::<String>::new(), "{answer}");
    }
    let named = r#"{"error": "", "response": {"d": "05", "m": "March", "y": "2024", "dayOfMonth": 5, "monthName": "March", "yearNumber": 2024}}"#;
    assert_eq!(
        unsupported("It opens on 5 March 2024.", named),
        Vec::<String>::new()
    );
    // Another day is still not found.
    assert_eq!(
        unsupported("The expo is on 2024-03-07.", reply),
        vec!["2024-03-07"]
    );
}

#[test]
fn a_reformatted_date_is_found() {
    let reply = r#"{"error": "", "response": {"released": "2024-03-05"}}"#;
    for answer in [
        "Released March 5, 2024.",
        "Released 05/03/2024.",
        "Released 5 Mar 2024.",
    ] {
        assert_eq!(unsupported(answer, reply), Vec::<String>::new(), "{answer}");
    }
}

#[test]
fn a_sum_or_difference_of_two_returned_numbers_is_found() {
    let hours =
        r#"{"error": "", "response": {"monday": {"hours": 7.5}, "tuesday": {"hours": 8.25}}}"#;
    assert_eq!(
        unsupported("You worked 15.75 hours in all.", hours),
        Vec::<String>::new()
    );
    let temps =
        r#"{"error": "", "response": {"paris": {"temp_c": 21.4}, "oslo": {"temp_c": 12.9}}}"#;
    assert_eq!(
        unsupported("Paris is 8.5 °C warmer than Oslo.", temps),
        Vec::<String>::new()
    );
    assert_eq!(
        unsupported("Paris is 17.3 °C warmer.", temps),
        vec!["17.3 °C"]
    );
}

#[test]
fn a_hex_amount_decoded_is_found() {
    let reply = r#"{"error": "", "response": {"result": "0x1bc16d674ec80000", "nonce": "0x2a"}}"#;
    assert_eq!(
        unsupported("The balance is 2000000000000000000 wei (nonce 42).", reply),
        Vec::<String>::new()
    );
    let decimal = r#"{"error": "", "response": {"block": 19000000}}"#;
    assert_eq!(
        unsupported("Block 0x121eac0.", decimal),
        Vec::<String>::new()
    );
}

#[test]
fn a_url_built_from_a_returned_id_is_found() {
    let reply =
        r#"{"error": "", "response": {"items": [{"slug": "bohemian-rhapsody", "id": "abc12"}]}}"#;
    assert_eq!(
        unsupported(
            "Listen at https://music.example.com/track/bohemian-rhapsody",
            reply
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        unsupported("See https://example.com/item?id=abc12", reply),
        Vec::<String>::new()
    );
    assert_eq!(
        unsupported("See https://example.com/item/zzz999", reply),
        vec!["https://example.com/item/zzz999"]
    );
}

#[test]
fn a_name_with_its_code_from_two_fields_is_found() {
    let reply = r#"{"error": "", "response": [{"name": "Afghanistan", "iso2": "AF"}, {"name": "Albania", "iso2": "AL"}]}"#;
    assert_eq!(
        unsupported("Countries: Afghanistan (AF), Albania (AL).", reply),
        Vec::<String>::new()
    );
    assert_eq!(
        unsupported("The first is Afghanistan (AF).", reply),
        Vec::<String>::new()
    );
}

#[test]
fn the_answers_own_headings_are_not_claims() {
    let reply = r#"{"error": "", "response": {"city": "Paris", "temp": 21}}"#;
    let answer = "## Weather Report For Paris\n**Current Conditions Overview:**\n- Temperature: 21\n\nDetailed Weather Figures:\n- Humidity: low";
    assert_eq!(unsupported(answer, reply), Vec::<String>::new());
}
