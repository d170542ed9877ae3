//! Which values identify an entity, and which argument and field names name one.

use serde_json::Value;

use super::WEAK_ID_CHARS;
use sum2act_core::toolbench::naming::{squash, tokens};

/// A value too short to identify anything on its own: a number of up to five digits, or up to three
/// characters.
pub fn weak_identifier(value: &str) -> bool {
    let v = value.trim();
    let n = v.chars().count();
    n <= 3 || (n <= WEAK_ID_CHARS && v.chars().all(|c| c.is_ascii_digit()))
}

/// An argument that names an entity: under an identifier's name, or an identifier-like value.
pub fn identifier_argument(k: &str, v: &Value) -> bool {
    names_identifier(k) || identifier(k, v).is_some()
}

/// An argument or field name that names an identifier (`id`, `playerid`, `id_talent`, `orderId`).
pub(super) fn names_identifier(k: &str) -> bool {
    id_field(k)
        || tokens(k).iter().any(|t| ID_WORDS.contains(&t.as_str()))
        || squash(k).ends_with("id")
}

/// The last word of a field name (`imdb_id`, `trackingNumber`, `tconst` → `id`, `number`, `tconst`).
pub(super) fn last_word(k: &str) -> String {
    tokens(k).pop().unwrap_or_default()
}

/// Last words of a field name that hold an identifier whatever its value looks like.
const ID_WORDS: &[&str] = &[
    "id",
    "ids",
    "code",
    "number",
    "no",
    "symbol",
    "ticker",
    "slug",
    "isbn",
    "uuid",
    "guid",
    "sku",
    "ref",
    "reference",
    "tconst",
    "asin",
    "iata",
    "icao",
];

/// Field names that hold an identifier whatever its value looks like.
pub fn id_field(k: &str) -> bool {
    ID_WORDS.contains(&last_word(k).as_str())
        || matches!(
            squash(k).as_str(),
            "imdbid" | "trackingnumber" | "orderid" | "transactionid"
        )
}

/// A reply's status or structure rather than an entity's identifier: `status_code: 200`, `errorCode`,
/// `code: 404`, `schema_id: "WFProductSearchResults"`.
fn status_field(k: &str, text: &str) -> bool {
    let words = tokens(k);
    let status = words.iter().any(|w| {
        matches!(
            w.as_str(),
            "status" | "http" | "response" | "error" | "err" | "schema"
        )
    });
    let http = text.parse::<u16>().is_ok_and(|n| (100..600).contains(&n));
    // A code of one to three digits is a status or error code (`code: 1`), not a row's identifier.
    let small = text.len() <= 3 && text.chars().all(|c| c.is_ascii_digit());
    let code = matches!(squash(k).as_str(), "code" | "cod");
    status || (code && (http || small))
}

/// A value many unrelated replies share, so it names no entity (issue 42: a torrent's `1080p`, a QR
/// code's `300x300`, a client's `axios/0.27.2`, an error's `Code: "error"` were recalled as entities):
/// a size, a resolution, a version or a path, or a status word.
pub(super) fn generic_value(text: &str) -> bool {
    let t = text.trim().to_ascii_lowercase();
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let size = t
        .split_once(['x', '*'])
        .is_some_and(|(w, h)| digits(w.trim()) && digits(h.trim()));
    let resolution = t
        .strip_suffix(['p', 'i', 'k'])
        .is_some_and(|n| digits(n) && n.len() <= 4);
    let bare = t.strip_prefix('v').unwrap_or(&t);
    let version = |s: &str| s.contains('.') && s.split('.').all(digits);
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c == '-');
    // A client and its version (`axios/0.27.2`) or a media type (`image/png`), not a page's path.
    let product = t
        .split_once('/')
        .is_some_and(|(name, rest)| word(name) && (version(rest) || word(rest)));
    size || resolution || version(bare) || product || STATUS_WORDS.contains(&t.as_str())
}

/// Words a reply uses for its outcome, never an entity's name.
const STATUS_WORDS: &[&str] = &[
    "error", "errors", "success", "ok", "fail", "failed", "failure", "true", "false", "null",
    "none", "pending", "unknown", "invalid", "default",
];

/// The value as an identifier, when the field or the value says it is one: a value under an id-like
/// field, or a token of letters and digits (`tt2937898`, `RB413450335SG`). Dates, URLs and prose are not.
pub fn identifier(k: &str, v: &Value) -> Option<String> {
    let text = match v {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        _ => return None,
    };
    let n = text.chars().count();
    // One digit under an id's name is an id too (order `5` of a shop's list and its detail).
    let one_digit = n == 1 && id_field(k) && text.chars().all(|c| c.is_ascii_digit());
    if !(one_digit || (2..=64).contains(&n))
        || text.contains(char::is_whitespace)
        || text.contains("://")
    {
        return None;
    }
    let digits = text.chars().filter(char::is_ascii_digit).count();
    let letters = text.chars().filter(|c| c.is_alphabetic()).count();
    let date_like = text.len() >= 8
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | '/' | '.' | 'T' | 'Z' | '+'));
    if date_like && !id_field(k) {
        return None;
    }
    if status_field(k, &text) || generic_value(&text) {
        return None;
    }
    let token = n >= 5 && digits >= 2 && letters >= 1;
    let keyed = id_field(k) && (n >= 3 || digits == n);
    (token || keyed).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_versions_and_status_words_are_generic() {
        // Issue 42's readers: `1080p`, `300x300`, `axios/0.27.2`, `error` were recalled as entities.
        for v in [
            "1080p",
            "2160p",
            "300x300",
            "4k",
            "axios/0.27.2",
            "v1.2.3",
            "image/png",
            "error",
        ] {
            assert!(generic_value(v), "{v}");
            assert_eq!(identifier("code", &json!(v)), None, "{v}");
        }
        for v in [
            "tt0111161",
            "RB413450335SG",
            "/lionel-messi/profil/spieler/28003",
            "GHI789",
        ] {
            assert!(!generic_value(v), "{v}");
        }
        assert_eq!(identifier("code", &json!(1)), None);
        assert_eq!(identifier("id", &json!(1)), Some("1".into()));
    }
}
