//! Credentials in URLs: `user:password@` and key-like query parameters (`api-key`, `key`, `token`,
//! …). Every URL a client is built from is shown through [`url`] (the clients keep the real one for
//! their requests only), manifests go through [`text`], and the log writer passes every line through
//! [`text`] too, so a URL that reaches a message some other way (a library's error text) is caught
//! before it is printed.

use std::sync::LazyLock;

use regex::Regex;

/// What a hidden value is shown as.
pub(crate) const MASK: &str = "***";

/// Query parameter names (lower case, `-` and `_` dropped) that hold a secret, or contain one of these.
const SECRET_PARAMS: [&str; 8] = [
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "auth",
    "signature",
    "credential",
];

/// Whether a query parameter's value is a secret.
fn secret_param(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect();
    folded == "sig" || SECRET_PARAMS.iter().any(|s| folded.contains(s))
}

/// `url` with its user information and the values of key-like query parameters replaced by `***`;
/// text that is not a URL is returned as it is.
pub fn url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let host = match authority.rfind('@') {
        Some(at) => format!("{MASK}@{}", &authority[at + 1..]),
        None => authority.to_string(),
    };
    format!("{scheme}://{host}{}", redact_query(tail))
}

/// The path, query and fragment of a URL with secret query values masked.
fn redact_query(tail: &str) -> String {
    let Some((path, query)) = tail.split_once('?') else {
        return tail.to_string();
    };
    let (query, fragment) = match query.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (query, None),
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if secret_param(name) => format!("{name}={MASK}"),
            _ => pair.to_string(),
        })
        .collect();
    let mut out = format!("{path}?{}", pairs.join("&"));
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// A URL inside free text: a scheme, `://`, then anything up to white space, a quote or a bracket.
static URL_IN_TEXT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\x00-\x1f\x7f"'<>()\[\]{}`]+"#).ok()
});

/// `text` with every URL in it passed through [`url`].
pub(crate) fn text(text: &str) -> String {
    let Some(re) = URL_IN_TEXT.as_ref() else {
        return text.to_string();
    };
    if !text.contains("://") {
        return text.to_string();
    }
    re.replace_all(text, |c: &regex::Captures<'_>| {
        // Punctuation that ends a sentence or a clause is the text's, not the URL's.
        let found = &c[0];
        let end = found.trim_end_matches(['.', ',', ':', ';', '!', '?']).len();
        format!("{}{}", url(&found[..end]), &found[end..])
    })
    .into_owned()
}

/// A writer that redacts what passes through it, line by line as the log formatter writes them.
pub struct Redacting<W>(pub W);

impl<W: std::io::Write> std::io::Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let shown = text(&String::from_utf8_lossy(buf));
        self.0.write_all(shown.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_information_and_key_parameters_are_masked() {
        assert_eq!(
            url("http://u:KEY@host:8/v1?api-key=KEY&api-version=2024&x=1#f"),
            "http://***@host:8/v1?api-key=***&api-version=2024&x=1#f"
        );
        assert_eq!(
            url("https://h/v?key=K&access_token=T&sig=S&Password=P&q=ok"),
            "https://h/v?key=***&access_token=***&sig=***&Password=***&q=ok"
        );
        assert_eq!(url("http://h/x@y"), "http://h/x@y");
        assert_eq!(url("http://h:1"), "http://h:1");
        assert_eq!(url("not a url"), "not a url");
    }

    #[test]
    fn urls_inside_text_are_masked_and_the_rest_is_kept() {
        let line =
            "cannot reach http://u:K@h:1/v1?token=K: (url (http://h:1/v1?token=K/chat)) done";
        assert_eq!(
            text(line),
            "cannot reach http://***@h:1/v1?token=***: (url (http://h:1/v1?token=***)) done"
        );
        assert_eq!(text("no urls here"), "no urls here");
    }

    #[test]
    fn the_writer_redacts_what_it_writes() {
        use std::io::Write;
        let mut out = Redacting(Vec::new());
        out.write_all(b"GET http://a:b@h/?key=1 ok\n").unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.0),
            "GET http://***@h/?key=*** ok\n"
        );
    }
}
