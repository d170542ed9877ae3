use super::*;

fn kinds(answer: &str) -> Vec<(ClaimKind, String)> {
    extract_claims(answer)
        .into_iter()
        .map(|c| (c.kind, c.text))
        .collect()
}

fn has(answer: &str, kind: ClaimKind, text: &str) -> bool {
    kinds(answer).iter().any(|(k, t)| *k == kind && t == text)
}

#[test]
fn numbers_with_units_and_separators() {
    let claims =
        extract_claims("Bitcoin trades at $66,412.37 and it is 21.4 °C with 58% humidity.");
    let nums: Vec<(&str, f64)> = claims
        .iter()
        .filter(|c| c.kind == ClaimKind::Number)
        .map(|c| (c.text.as_str(), c.value.unwrap_or(f64::NAN)))
        .collect();
    assert_eq!(nums.len(), 3, "{claims:?}");
    assert_eq!(nums[0], ("$66,412.37", 66412.37));
    assert!(nums[1].0.starts_with("21.4") && nums[1].1 == 21.4);
    assert_eq!(nums[2], ("58%", 58.0));
    let scaled = extract_claims("a population of 1.2 million people");
    assert_eq!(scaled[0].value, Some(1.2e6));
}

#[test]
fn small_counts_are_not_claims_but_small_values_with_units_are() {
    assert!(kinds("Here are 3 recipes.").is_empty());
    assert!(has("Wind 5 km/h, rain 2%.", ClaimKind::Number, "2%"));
}

#[test]
fn dates_in_several_formats_are_one_claim_each() {
    for (text, reading) in [
        ("on 2024-06-14 at noon", (2024, 6, 14)),
        ("on June 14, 2024.", (2024, 6, 14)),
        ("on 14 June 2024.", (2024, 6, 14)),
        ("on 14th of Jun 2024.", (2024, 6, 14)),
        ("on 2024/06/14.", (2024, 6, 14)),
        ("released March 2021", (2021, 3, 0)),
    ] {
        let claims = extract_claims(text);
        assert_eq!(claims.len(), 1, "{text}: {claims:?}");
        assert_eq!(claims[0].kind, ClaimKind::Date, "{text}");
        assert!(
            claims[0].dates.contains(&reading),
            "{text}: {:?}",
            claims[0].dates
        );
    }
    let ambiguous = extract_claims("due 03/04/2024");
    assert_eq!(ambiguous[0].dates, vec![(2024, 4, 3), (2024, 3, 4)]);
}

#[test]
fn ids_urls_emails() {
    let a = "Flight TP1350 (order ORD-2291) see https://example.com/a/b. Mail ops@example.org, 21st place, 10km.";
    assert!(has(a, ClaimKind::Id, "TP1350"));
    assert!(has(a, ClaimKind::Id, "ORD-2291"));
    assert!(has(a, ClaimKind::Url, "https://example.com/a/b"));
    assert!(has(a, ClaimKind::Email, "ops@example.org"));
    assert_eq!(
        kinds(a).iter().filter(|(k, _)| *k == ClaimKind::Id).count(),
        2,
        "{:?}",
        kinds(a)
    );
    assert!(has(a, ClaimKind::Number, "10km"));
}

#[test]
fn names_quotes_and_lists() {
    let a = "The following recipes use chickpeas: Smoky chickpea and spinach stew, Crispy oven-roasted chickpeas, and Classic hummus with tahini.";
    for item in [
        "Smoky chickpea and spinach stew",
        "Crispy oven-roasted chickpeas",
        "Classic hummus with tahini",
    ] {
        assert!(has(a, ClaimKind::ListItem, item), "{item}: {:?}", kinds(a));
    }
    let b = "Top teams:\n- Manchester City: 91 points\n- Arsenal - 89 points\nThe airport is Humberto Delgado Airport, called \"Portela\".";
    assert!(
        has(b, ClaimKind::ListItem, "Manchester City"),
        "{:?}",
        kinds(b)
    );
    assert!(has(b, ClaimKind::ListItem, "Arsenal"));
    assert!(
        has(b, ClaimKind::Name, "Humberto Delgado Airport"),
        "{:?}",
        kinds(b)
    );
    assert!(has(b, ClaimKind::Quoted, "Portela"));
    // A lone capitalised word at a sentence start is not a name; inside a sentence it is.
    assert!(has(
        "It is in Lisbon, Portugal. The airport is busy.",
        ClaimKind::Name,
        "Portugal"
    ));
    let c = "Sunny today. It is warm in Lisbon";
    assert!(!has(c, ClaimKind::Name, "Sunny"));
    assert!(has(c, ClaimKind::Name, "Lisbon"));
}

fn evidence() -> Vec<Evidence> {
    vec![
        Evidence::new(
            SourceKind::Request,
            "request",
            "Convert 250 EUR to JPY on 2024-06-14, flight TP1350",
        ),
        Evidence::new(
            SourceKind::Observation,
            "step 1 rates",
            r#"{"error": "", "response": {"rates": {"JPY": 161.2345, "USD": 1.0712}, "date": "2024-06-14T09:00:00Z", "url": "https:\/\/fx.example.com\/eur", "teams": ["Manchester City", "Humberto Delgado Airport"], "humidity": 0.58, "price": 66412.3712}}"#,
        ),
        Evidence::new(SourceKind::Arguments, "step 1 rates", r#"{"base": "EUR"}"#),
    ]
}

fn check(answer: &str) -> Vec<ClaimCheck> {
    check_claims(answer, &evidence())
}

fn support_of<'a>(checks: &'a [ClaimCheck], text: &str) -> Option<&'a Support> {
    checks
        .iter()
        .find(|c| c.claim.text == text)
        .unwrap_or_else(|| panic!("no claim {text}: {checks:?}"))
        .support
        .as_ref()
}

#[test]
fn numbers_match_after_rounding_to_the_written_precision() {
    let c = check("The rate is 161.23, price 66,412.37 USD, humidity 58%, and 999.9 kg.");
    assert_eq!(
        support_of(&c, "161.23").map(|s| s.kind),
        Some(SourceKind::Observation)
    );
    assert!(support_of(&c, "66,412.37 USD").is_some());
    assert!(
        support_of(&c, "58%").is_some(),
        "fraction 0.58 supports 58%"
    );
    assert!(support_of(&c, "999.9 kg").is_none());
    // 161.3 is not 161.2345 at one decimal.
    assert!(support_of(&check("about 161.3 yen"), "161.3 yen").is_none());
}

#[test]
fn derived_numbers_are_products_of_evidence_numbers() {
    // 250 × 161.2345 = 40308.6
    let c = check("250 EUR is 40,308.63 JPY.");
    let s = support_of(&c, "40,308.63 JPY").expect("derived");
    assert_eq!(s.matched, MatchKind::Derived);
    assert!(s.excerpt.contains("250") && s.excerpt.contains("161.2345"));
    assert!(support_of(&check("250 EUR is 13.23 JPY."), "13.23 JPY").is_none());
}

#[test]
fn dates_match_across_formats_and_ids_urls_names_by_words() {
    let c = check(
        "On June 14, 2024 flight TP1350 left; see https://fx.example.com/eur. Teams: Manchester City and Real Madrid. It landed at Humberto Delgado.",
    );
    assert_eq!(
        support_of(&c, "June 14, 2024").map(|s| s.kind),
        Some(SourceKind::Observation)
    );
    assert_eq!(
        support_of(&c, "TP1350").map(|s| s.kind),
        Some(SourceKind::Request)
    );
    assert!(support_of(&c, "https://fx.example.com/eur").is_some());
    assert!(support_of(&c, "Manchester City").is_some());
    assert!(support_of(&c, "Real Madrid").is_none());
    assert_eq!(
        support_of(&c, "Humberto Delgado").map(|s| s.matched),
        Some(MatchKind::Exact)
    );
    assert!(support_of(&check("It was on 15 June 2024."), "15 June 2024").is_none());
}

#[test]
fn supporting_excerpt_shows_the_observation() {
    let c = check("The rate is 161.23.");
    let s = support_of(&c, "161.23").expect("supported");
    assert_eq!(s.label, "step 1 rates");
    assert!(s.excerpt.contains("161.2345"), "{}", s.excerpt);
}
