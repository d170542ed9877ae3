//! The parts of a request: what it asks for, one by one, so a small judge answers one narrow question per
//! part. The judge splits each request once (cached per query and judge model in the judge log); when it
//! gives no usable split, a deterministic splitter does.

pub use sum2act_core::toolbench::request_parts::{
    MAX_PART_CHARS, MAX_PARTS, clean, split_fallback, validate_split,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_requests_in_one_sentence() {
        assert_eq!(
            split_fallback(
                "Tell me about the airport with IATA code LIS, and give me the status of flight TP1350 on 2024-06-14."
            ),
            vec![
                "Tell me about the airport with IATA code LIS",
                "give me the status of flight TP1350 on 2024-06-14"
            ]
        );
    }

    #[test]
    fn context_sentences_are_dropped_and_also_starts_a_part() {
        assert_eq!(
            split_fallback(
                "I'm planning a trip to Paris next month. Can you find hotels near the Eiffel Tower? Also, tell me the weather forecast for the week."
            ),
            vec![
                "Can you find hotels near the Eiffel Tower?",
                "tell me the weather forecast for the week"
            ]
        );
    }

    #[test]
    fn and_inside_a_request_does_not_split_it() {
        assert_eq!(
            split_fallback("Find recipes with chickpeas and spinach."),
            vec!["Find recipes with chickpeas and spinach"]
        );
        assert_eq!(
            split_fallback("Get the latest news; list the top 3 songs"),
            vec!["Get the latest news", "list the top 3 songs"]
        );
    }

    #[test]
    fn no_asking_sentence_keeps_everything_and_never_returns_nothing() {
        assert_eq!(
            split_fallback("Weather in Lisbon."),
            vec!["Weather in Lisbon"]
        );
        assert_eq!(split_fallback("   ").len(), 1);
    }

    #[test]
    fn model_splits_are_checked_against_the_request() {
        let q = "What is the price of BTC and ETH?";
        assert_eq!(
            validate_split(q, &["price of BTC".into(), "weather in Oslo".into()]),
            Some(vec!["price of BTC".to_string()])
        );
        assert_eq!(validate_split(q, &["unrelated".into()]), None);
        assert_eq!(
            validate_split(q, &["BTC".into()]),
            None,
            "one word is not a part"
        );
        // Answers instead of parts: a value the request lacks, or mostly new words.
        assert_eq!(
            validate_split(q, &["The price of BTC is $1.22.".into()]),
            None
        );
        assert_eq!(
            validate_split(
                "What is the weather in Lisbon now?",
                &["The weather in Lisbon is cloudy and warm".into()]
            ),
            None
        );
        assert_eq!(validate_split(q, &[]), None);
        assert_eq!(
            validate_split(q, &["price of BTC".into(), "Price of BTC.".into()]),
            Some(vec!["price of BTC".to_string()])
        );
    }
}
