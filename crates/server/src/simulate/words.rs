//! Field and API names as words: `venueName`, `venue_name` and `venue-name` all read `[venue, name]`.

use sum2act_core::toolbench::naming::squash;
pub use sum2act_core::toolbench::naming::tokens;

/// A name squashed to lower-case alphanumerics; ToolBench's `is_id` rename of `id` is undone.
pub fn norm(key: &str) -> String {
    let s = squash(key);
    match s.strip_prefix("is") {
        Some(rest) if key.starts_with("is_") && !rest.is_empty() => rest.to_string(),
        _ => s,
    }
}

pub use sum2act_core::toolbench::naming::is_secret;

/// Any token is one of `words`.
pub fn has(toks: &[String], words: &[&str]) -> bool {
    toks.iter().any(|t| words.contains(&t.as_str()))
}

/// The text of a scalar JSON value (strings without quotes).
pub fn scalar_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Singular of a plural English noun, roughly (`cities` → `city`, `matches` → `match`).
pub fn singular(word: &str) -> String {
    const SAME: &[&str] = &[
        "news", "series", "species", "analysis", "data", "media", "stats", "sms", "gps", "lyrics",
        "details", "odds", "bus", "is", "this", "has", "was",
    ];
    if SAME.contains(&word) {
        return word.to_string();
    }
    if let Some(s) = word.strip_suffix("ies") {
        return format!("{s}y");
    }
    for end in ["ches", "shes", "xes", "sses"] {
        if word.ends_with(end) {
            return word[..word.len() - 2].to_string();
        }
    }
    match word.strip_suffix('s') {
        Some(s) if !word.ends_with("ss") && !word.ends_with("us") && s.len() > 2 => s.to_string(),
        _ => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_names() {
        assert_eq!(tokens("venueName"), vec!["venue", "name"]);
        assert_eq!(tokens("image_url"), vec!["image", "url"]);
        assert_eq!(norm("is_id"), "id");
        assert_eq!(singular("cities"), "city");
        assert_eq!(singular("matches"), "match");
        assert_eq!(singular("news"), "news");
        assert_eq!(singular("status"), "status");
    }
}
