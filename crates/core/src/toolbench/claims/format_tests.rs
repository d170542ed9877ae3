//! Values written in another format than the evidence's: every case of issue 34 and its neighbours.
//! Each case is one answer and one observation; the claim must be found (or, for the negative
//! neighbours, must not be).

use super::*;

/// How the claim written `text` in `answer` was matched against the observation `obs`, if at all.
fn matched(answer: &str, obs: &str, text: &str) -> Option<MatchKind> {
    let evidence = [Evidence::new(SourceKind::Observation, "step 1 f", obs)];
    let checks = check_claims(answer, &evidence);
    checks
        .iter()
        .find(|c| c.claim.text == text)
        .unwrap_or_else(|| panic!("no claim {text:?} in {answer:?}: {checks:?}"))
        .support
        .as_ref()
        .map(|s| s.matched)
}

fn found(answer: &str, obs: &str, text: &str) -> bool {
    matched(answer, obs, text).is_some()
}

#[test]
fn dates_in_any_common_form() {
    let iso = r#"{"release_date": "2008-11-07"}"#;
    for (answer, text) in [
        ("It came out on 7 Nov 2008.", "7 Nov 2008"),
        ("It came out on November 7th, 2008.", "November 7th, 2008"),
        ("It came out on Nov 7 2008.", "Nov 7 2008"),
        ("It came out on 07-Nov-2008.", "07-Nov-2008"),
        ("It came out on 7. November 2008.", "7. November 2008"),
        (
            "It came out on the 7th of November, 2008.",
            "7th of November, 2008",
        ),
        ("It came out on 07/11/2008.", "07/11/2008"),
        ("It came out on 11/07/2008.", "11/07/2008"),
        ("It came out on 2008/11/07.", "2008/11/07"),
        ("It came out in November 2008.", "November 2008"),
    ] {
        assert!(found(answer, iso, text), "{answer}");
    }
    for obs in [
        r#"{"date": "2008-11-07T20:15:00.000Z"}"#,
        r#"{"date": "Fri, Nov 7, 2008"}"#,
        r#"{"date": "20081107"}"#,
        r#"{"timestamp": 1226016000}"#,
        r#"{"timestamp": 1226059200000}"#,
    ] {
        assert!(found("Released 7 Nov 2008.", obs, "7 Nov 2008"), "{obs}");
    }
    assert!(!found("Released 8 Nov 2008.", iso, "8 Nov 2008"));
    assert!(!found("Released in December 2008.", iso, "December 2008"));
}

#[test]
fn numbers_with_separators_scale_words_and_rounding() {
    let revenue = r#"{"totalRevenue": 274515000000, "price": 66412.3712}"#;
    for (answer, text) in [
        ("Revenue: 274,515,000,000 USD.", "274,515,000,000 USD"),
        (
            "Revenue: 274\u{a0}515\u{a0}000\u{a0}000.",
            "274\u{a0}515\u{a0}000\u{a0}000",
        ),
        ("Revenue was $274.5 billion.", "$274.5 billion"),
        ("Revenue was $274.5B.", "$274.5B"),
        ("Revenue was $274.5 bn.", "$274.5 bn"),
        ("Revenue was $275 billion.", "$275 billion"),
        (
            "Revenue was 274,515 million dollars.",
            "274,515 million dollars",
        ),
        ("The price is 66,412.37.", "66,412.37"),
        ("The price is about 66,400.", "66,400"),
        ("The price is about 66,000.", "66,000"),
    ] {
        assert_eq!(
            matched(answer, revenue, text),
            Some(MatchKind::Exact),
            "{answer}"
        );
    }
    // A scale said once for many values ("in billions"): the bare value is the scaled one.
    assert_eq!(
        matched(
            "Revenue (in billions): $274.5, up from $260.2.",
            revenue,
            "$274.5"
        ),
        Some(MatchKind::Converted)
    );
    assert!(
        !found("Revenue was $274.5.", revenue, "$274.5"),
        "no scale named anywhere: 274.5 is not 274515000000"
    );
    assert!(!found(
        "Revenue was $280.5 billion.",
        revenue,
        "$280.5 billion"
    ));
    assert!(!found("The price is about 66,300.", revenue, "66,300"));
    // Evidence may carry the scale word instead of the answer.
    assert!(found(
        "Revenue: 274,500,000,000.",
        r#"{"revenue": "274.5 billion"}"#,
        "274,500,000,000"
    ));
}

#[test]
fn units_convert_within_their_dimension() {
    let gas = r#"{"gasPrice": "5000000000"}"#;
    assert_eq!(
        matched("The gas price is 5 Gwei.", gas, "5 Gwei"),
        Some(MatchKind::Converted)
    );
    assert!(found(
        "The gas price is 5000000000 wei.",
        r#"{"gas": "5 gwei"}"#,
        "5000000000 wei"
    ));
    assert!(!found("The gas price is 7 Gwei.", gas, "7 Gwei"));
    let runtime = r#"{"runtime": "101 min"}"#;
    assert!(found("Runtime: 101", runtime, "101"));
    assert!(found("It runs 101 minutes.", runtime, "101 minutes"));
    assert!(found(
        "It runs 101min.",
        r#"{"duration": "PT1H41M"}"#,
        "101min"
    ));
    assert!(found(
        "It runs 101 minutes.",
        r#"{"runtime": "1h 41min"}"#,
        "101 minutes"
    ));
    assert!(found("It runs 6060 seconds.", runtime, "6060 seconds"));
    assert!(found("It runs 1.7 hours.", runtime, "1.7 hours"));
    assert!(!found("It runs 111 minutes.", runtime, "111 minutes"));
    let weather = r#"{"temp": 294.55, "wind_speed": 5.0}"#;
    assert!(found("It is 21.4 °C.", weather, "21.4 °C"));
    assert!(found("It is 70.5°F.", weather, "70.5°F"));
    assert!(found("Wind at 18 km/h.", weather, "18 km/h"));
    assert!(!found("It is 25.4 °C.", weather, "25.4 °C"));
    assert!(found(
        "The file is 2 GB.",
        r#"{"size": 2147483648}"#,
        "2 GB"
    ));
}

#[test]
fn case_punctuation_and_phone_numbers() {
    assert_eq!(
        matched(
            "Order ORD2291 shipped.",
            r#"{"order": "ORD-2291"}"#,
            "ORD2291"
        ),
        Some(MatchKind::Loose)
    );
    assert!(found(
        "Flight tp1350 left.",
        r#"{"flight": "TP1350"}"#,
        "tp1350"
    ));
    assert!(found(
        "We ate at McDonalds Downtown.",
        r#"{"name": "McDonald's Downtown"}"#,
        "McDonalds Downtown"
    ));
    assert!(found(
        "It is in NEW YORK.",
        r#"{"city": "New York"}"#,
        "NEW YORK"
    ));
    let wa = r#"{"phone": "34605112233", "status": "not registered"}"#;
    assert!(found(
        "+34 605 11 22 33 is not on WhatsApp.",
        wa,
        "+34 605 11 22 33"
    ));
    assert!(found(
        "Call (555) 123-4567.",
        r#"{"tel": "+1 555-123-4567"}"#,
        "(555) 123-4567"
    ));
    assert!(!found(
        "+34 699 99 99 99 is not on WhatsApp.",
        wa,
        "+34 699 99 99 99"
    ));
    let claims = extract_claims("Scores were 12 15 18 21 and 2024-06-14.");
    assert!(
        claims.iter().all(|c| c.kind != ClaimKind::Phone),
        "{claims:?}"
    );
}
