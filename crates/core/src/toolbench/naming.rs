//! ToolBench's naming rules. Function names must match what ToolBench/StableToolBench produce byte for
//! byte, or answer files and server caches from those projects stop lining up with ours.

/// Words that ToolBench prefixes with `is_` because they clash with Python keywords or common fields.
const RESERVED: [&str; 7] = ["from", "class", "return", "false", "true", "id", "and"];

/// Longest function name OpenAI accepts; ToolBench keeps the *last* 64 characters.
pub const MAX_FUNCTION_NAME: usize = 64;

/// Longest function/parameter description kept in a schema.
pub(crate) const MAX_DESCRIPTION: usize = 256;

fn kept(c: char) -> bool {
    // CJK unified ideographs U+4E00..=U+9FA5 survive, as does `^` (a quirk of the original regex).
    c.is_ascii_alphanumeric() || c == '_' || c == '^' || ('\u{4e00}'..='\u{9fa5}').contains(&c)
}

/// `standardize`: non-word characters become `_`, runs collapse, lower-case, trimmed, and a leading
/// digit gets a `get_` prefix.
pub fn standardize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let c = if kept(c) { c } else { '_' };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    let out = out.to_lowercase();
    let out = out.trim_matches('_');
    match out.chars().next() {
        Some(c) if c.is_ascii_digit() => format!("get_{out}"),
        _ => out.to_string(),
    }
}

/// `change_name`: reserved words get an `is_` prefix (applied to API and parameter names).
pub(crate) fn change_name(s: &str) -> String {
    if RESERVED.contains(&s) {
        format!("is_{s}")
    } else {
        s.to_string()
    }
}

/// The standardised API name used in function names and in the `/virtual` protocol.
pub fn pure_api_name(api_name: &str) -> String {
    change_name(&standardize(api_name))
}

/// The standardised parameter name exposed to the model.
pub fn param_name(name: &str) -> String {
    change_name(&standardize(name))
}

/// The function name the model sees: `{api}_for_{tool}`, keeping only the last 64 characters.
pub fn function_name(api_name: &str, standard_tool_name: &str) -> String {
    let full = format!("{}_for_{}", pure_api_name(api_name), standard_tool_name);
    last_chars(&full, MAX_FUNCTION_NAME).to_string()
}

/// The server-side category folder name: spaces, commas and slashes become `_`.
pub fn standard_category(category: &str) -> String {
    let mut s = category.replace([' ', ',', '/'], "_");
    while s.contains(' ') || s.contains(',') {
        s = s.replace([' ', ','], "_");
    }
    s.replacen("__", "_", 1)
}

/// The last `n` characters of `s` (by `char`, as Python slicing does).
pub fn last_chars(s: &str, n: usize) -> &str {
    let count = s.chars().count();
    if count <= n {
        return s;
    }
    let skip = count - n;
    match s.char_indices().nth(skip) {
        Some((i, _)) => &s[i..],
        None => s,
    }
}

/// The first `n` characters of `s` (by `char`).
pub(crate) fn first_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A field name squashed to lower-case alphanumerics (`request_id`, `requestId` and `Request-ID` all
/// read `requestid`), for matching names whatever their style.
pub fn squash(key: &str) -> String {
    key.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The lower-case tokens of a field or API name, split at non-alphanumerics and camelCase humps:
/// `venueName`, `venue_name` and `venue-name` all read `[venue, name]`.
pub fn tokens(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A name that carries a credential (`api_key`, `client_secret`, `--token`): its value is never
/// echoed back (simulated replies) or shown (MCP server command lines).
pub fn is_secret(name: &str) -> bool {
    const SECRET: &[&str] = &[
        "key",
        "apikey",
        "accesskey",
        "secretkey",
        "token",
        "accesstoken",
        "secret",
        "password",
        "passwd",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "signature",
    ];
    tokens(name).iter().any(|t| SECRET.contains(&t.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standardize_basic_rules() {
        assert_eq!(standardize("Transfermarkt search"), "transfermarkt_search");
        assert_eq!(standardize("  --Hello,  World!! "), "hello_world");
        assert_eq!(standardize("TheClique"), "theclique");
        assert_eq!(standardize("a^b"), "a^b");
        assert_eq!(standardize(""), "");
        assert_eq!(standardize("___"), "");
    }

    #[test]
    fn squash_ignores_the_naming_style() {
        for name in ["request_id", "requestId", "Request-ID", "REQUEST ID"] {
            assert_eq!(squash(name), "requestid", "{name}");
        }
        assert_eq!(squash("Café_2"), "café2");
    }

    #[test]
    fn standardize_leading_digit_gets_prefix() {
        assert_eq!(
            standardize("4D Dream Dictionary"),
            "get_4d_dream_dictionary"
        );
        assert_eq!(standardize("  100% Success"), "get_100_success");
    }

    #[test]
    fn standardize_unicode() {
        // Emoji and accented letters are not word characters for ToolBench; CJK ideographs are.
        assert_eq!(standardize("👋 Demo Project"), "demo_project");
        assert_eq!(standardize("Café Finder"), "caf_finder");
        assert_eq!(standardize("天气 API"), "天气_api");
    }

    #[test]
    fn reserved_words_get_prefix() {
        assert_eq!(change_name("id"), "is_id");
        assert_eq!(change_name("from"), "is_from");
        assert_eq!(change_name("identity"), "identity");
        assert_eq!(param_name("ID"), "is_id");
    }

    #[test]
    fn function_name_keeps_last_64_chars() {
        let name = function_name(
            "Get all the matches of a very long competition name here",
            "some_extremely_long_tool_name_v2",
        );
        assert_eq!(name.chars().count(), 64);
        assert!(name.ends_with("_for_some_extremely_long_tool_name_v2"));
        assert_eq!(
            function_name("Transfermarkt search", "theclique"),
            "transfermarkt_search_for_theclique"
        );
    }

    #[test]
    fn category_folder_names() {
        assert_eq!(
            standard_category("Health and Fitness"),
            "Health_and_Fitness"
        );
        assert_eq!(standard_category("News, Media"), "News_Media");
        assert_eq!(standard_category("Video/Images"), "Video_Images");
    }

    #[test]
    fn char_slicing_is_unicode_safe() {
        assert_eq!(last_chars("héllo", 3), "llo");
        assert_eq!(first_chars("héllo", 2), "hé");
        assert_eq!(first_chars("hi", 5), "hi");
    }
}
