//! Checks on a simulated reply that do not depend on how the simulator works: is it filler, and do its
//! values break the kind and range rules a reader applies (codes look like codes, percentages stay in
//! 0–100, coordinates on Earth, dates parse and are ordered, arguments come back as they were sent).

use serde_json::{Map, Value};

use sum2act_core::toolbench::naming::{squash, tokens};

/// Why a reply carries no information.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filler {
    /// `null`, `{}`, `[]`, `""`.
    Empty,
    /// Only status/message/meta fields, or data containers that are empty or null.
    StatusOnly,
    /// The old catch-all record (`id, name, description, url, updated_at`).
    Generic,
}

const STATUS_KEYS: &[&str] = &[
    "status",
    "message",
    "msg",
    "success",
    "code",
    "error",
    "errors",
    "meta",
    "statuscode",
    "ok",
    "detail",
    "info",
    "warning",
    "warnings",
    "timestamp",
    "requestid",
    "request",
];

fn has(t: &[String], words: &[&str]) -> bool {
    t.iter().any(|x| words.contains(&x.as_str()))
}

/// Non-empty leaves outside status fields.
fn data_leaves(v: &Value, top: bool) -> usize {
    match v {
        Value::Null => 0,
        Value::String(s) => usize::from(!s.trim().is_empty()),
        Value::Bool(_) | Value::Number(_) => 1,
        Value::Array(a) => a.iter().map(|x| data_leaves(x, false)).sum(),
        Value::Object(m) => m
            .iter()
            .filter(|(k, _)| !(top && STATUS_KEYS.contains(&squash(k).as_str())))
            .map(|(_, x)| data_leaves(x, false))
            .sum(),
    }
}

fn is_generic_record(m: &Map<String, Value>) -> bool {
    ["id", "name", "description", "url", "updated_at"]
        .iter()
        .all(|k| m.contains_key(*k))
}

fn has_generic(v: &Value) -> bool {
    match v {
        Value::Object(m) => is_generic_record(m) || m.values().any(has_generic),
        Value::Array(a) => a.iter().any(has_generic),
        _ => false,
    }
}

pub fn filler(reply: &Value) -> Option<Filler> {
    let empty = match reply {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    };
    if empty {
        return Some(Filler::Empty);
    }
    if data_leaves(reply, true) == 0 {
        return Some(Filler::StatusOnly);
    }
    if has_generic(reply) {
        return Some(Filler::Generic);
    }
    None
}

/// Checked fields and the violations found (each a short `path: why`).
#[derive(Debug, Default)]
pub struct RuleReport {
    pub checked: usize,
    pub violations: Vec<String>,
}

impl RuleReport {
    fn check(&mut self, ok: bool, path: &str, why: impl FnOnce() -> String) {
        self.checked += 1;
        if !ok {
            self.violations.push(format!("{path}: {}", why()));
        }
    }
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s
            .trim()
            .trim_end_matches('%')
            .trim_start_matches('$')
            .replace(',', "")
            .parse()
            .ok(),
        _ => None,
    }
}

/// What the API is about, for the rules that depend on it (units, currency pairs).
pub struct Context<'a> {
    pub args: &'a Map<String, Value>,
    /// Lower-case tool name, API name and description.
    pub purpose: String,
}

impl Context<'_> {
    fn arg(&self, names: &[&str]) -> Option<String> {
        self.args
            .iter()
            .find(|(k, _)| names.contains(&squash(k).as_str()))
            .map(|(_, v)| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
    }

    fn unit(&self) -> Option<&'static str> {
        let u = self
            .arg(&["units", "unit", "temperatureunit", "tempunit"])?
            .to_lowercase();
        if u.starts_with('f') || u == "imperial" || u == "us" {
            Some("F")
        } else if u.starts_with('k') || u == "standard" {
            Some("K")
        } else if u.starts_with('c') || u == "metric" || u == "m" {
            Some("C")
        } else {
            None
        }
    }
}

/// Walks every leaf and applies the rules that its name calls for.
pub fn check(reply: &Value, ctx: &Context<'_>) -> RuleReport {
    let mut r = RuleReport::default();
    walk(reply, "", "", ctx, &mut r);
    check_list_size(reply, ctx, &mut r);
    r
}

fn walk(v: &Value, key: &str, path: &str, ctx: &Context<'_>, r: &mut RuleReport) {
    match v {
        Value::Object(m) => {
            check_order(m, path, r);
            for (k, x) in m {
                walk(x, k, &format!("{path}.{k}"), ctx, r);
            }
        }
        Value::Array(a) => {
            for x in a.iter().take(5) {
                walk(x, key, &format!("{path}[]"), ctx, r);
            }
        }
        Value::Null => {}
        leaf => leaf_rules(leaf, key, path, ctx, r),
    }
}

fn in_range(v: &Value, lo: f64, hi: f64) -> bool {
    num(v).is_none_or(|x| (lo..=hi).contains(&x))
}

fn leaf_rules(v: &Value, key: &str, path: &str, ctx: &Context<'_>, r: &mut RuleReport) {
    let t = tokens(key);
    let applied = measure_rule(v, &t, path, ctx, r)
        || code_rule(v, &t, path, r)
        || quantity_rule(v, &t, path, r)
        || label_rule(v, &t, path, r);
    if applied {
        return;
    }
    if is_rate_field(&t, ctx) {
        rate_rule(v, path, ctx, r);
    }
    echo_rule(v, key, path, ctx, r);
}

/// Percentages, temperatures (in the unit asked for) and coordinates. True when a rule applied.
fn measure_rule(
    v: &Value,
    t: &[String],
    path: &str,
    ctx: &Context<'_>,
    r: &mut RuleReport,
) -> bool {
    let show = || v.to_string();
    if has(
        t,
        &[
            "humidity",
            "percent",
            "percentage",
            "pct",
            "cloudiness",
            "probability",
        ],
    ) && !has(t, &["change", "diff", "growth"])
    {
        r.check(in_range(v, 0.0, 100.0), path, || {
            format!("{} not in 0-100", show())
        });
        return true;
    }
    if has(
        t,
        &[
            "temp",
            "temperature",
            "celsius",
            "fahrenheit",
            "feels",
            "dew",
        ],
    ) && !has(t, &["unit", "units"])
        && num(v).is_some()
    {
        let (lo, hi) = match ctx.unit() {
            Some("F") => (-130.0, 140.0),
            Some("K") => (180.0, 335.0),
            Some(_) => (-90.0, 60.0),
            None => (-130.0, 335.0),
        };
        let kelvin_gap = ctx.unit().is_none() && num(v).is_some_and(|x| x > 140.0 && x < 180.0);
        r.check(in_range(v, lo, hi) && !kelvin_gap, path, || {
            format!("temperature {}", show())
        });
        return true;
    }
    if has(t, &["lat", "latitude"]) && !has(t, &["delta"]) {
        r.check(in_range(v, -90.0, 90.0), path, || {
            format!("latitude {}", show())
        });
        return true;
    }
    if has(t, &["lng", "lon", "longitude"]) && !has(t, &["delta"]) {
        r.check(in_range(v, -180.0, 180.0), path, || {
            format!("longitude {}", show())
        });
        return true;
    }
    false
}

/// Country and currency codes, emails and URLs. True when a rule applied.
fn code_rule(v: &Value, t: &[String], path: &str, r: &mut RuleReport) -> bool {
    let text = v.as_str().unwrap_or("");
    let show = || v.to_string();
    if (has(t, &["alpha2", "iso2"]) || (has(t, &["country"]) && has(t, &["code", "iso"])))
        && !has(t, &["phone", "dial", "calling"])
    {
        let ok = text.len() == 2 && text.chars().all(|c| c.is_ascii_alphabetic())
            || text.len() == 3 && text.chars().all(|c| c.is_ascii_uppercase());
        r.check(ok || !v.is_string(), path, || {
            format!("country code {}", show())
        });
        return true;
    }
    if has(t, &["currency"]) && has(t, &["code", "iso"]) {
        let ok = text.len() == 3 && text.chars().all(|c| c.is_ascii_alphabetic());
        r.check(ok || !v.is_string(), path, || {
            format!("currency code {}", show())
        });
        return true;
    }
    if has(t, &["email"]) && v.is_string() && !has(t, &["verified", "count"]) {
        r.check(text.contains('@') || text.is_empty(), path, || {
            format!("email {}", show())
        });
        return true;
    }
    if has(t, &["url", "href", "link", "website"])
        && v.is_string()
        && !has(t, &["type", "text", "count", "title"])
    {
        let ok = text.is_empty()
            || text.starts_with("http")
            || text.starts_with('/')
            || text.starts_with("www.");
        r.check(ok, path, || format!("url {}", show()));
        return true;
    }
    false
}

/// Years, ages, ratings and prices. True when a rule applied.
fn quantity_rule(v: &Value, t: &[String], path: &str, r: &mut RuleReport) -> bool {
    let show = || v.to_string();
    if has(t, &["year"])
        && !has(t, &["years", "per", "change", "return", "yield"])
        && num(v).is_some()
    {
        r.check(in_range(v, 1000.0, 2100.0), path, || {
            format!("year {}", show())
        });
        return true;
    }
    if t.iter().any(|x| x == "age") && num(v).is_some() {
        r.check(in_range(v, 0.0, 130.0), path, || format!("age {}", show()));
        return true;
    }
    if has(t, &["rating", "stars"])
        && num(v).is_some()
        && !has(t, &["count", "votes", "num", "total"])
    {
        r.check(in_range(v, 0.0, 100.0), path, || {
            format!("rating {}", show())
        });
        return true;
    }
    if has(t, &["price", "cost", "fee", "salary"])
        && !has(t, &["change", "diff"])
        && num(v).is_some()
    {
        r.check(in_range(v, 0.0, 1e12), path, || format!("price {}", show()));
        return true;
    }
    false
}

/// Dates, genders and tickers. True when a rule applied.
fn label_rule(v: &Value, t: &[String], path: &str, r: &mut RuleReport) -> bool {
    let text = v.as_str().unwrap_or("");
    let show = || v.to_string();
    if has(
        t,
        &["date", "created", "updated", "published", "birthday", "dob"],
    ) && v.is_string()
        && !text.is_empty()
    {
        r.check(parse_date(text).is_some(), path, || {
            format!("date {}", show())
        });
        return true;
    }
    if has(t, &["gender", "sex"]) && v.is_string() {
        let l = text.to_lowercase();
        let ok = [
            "m",
            "f",
            "male",
            "female",
            "men",
            "women",
            "other",
            "unknown",
            "non-binary",
            "nonbinary",
            "x",
            "",
        ]
        .contains(&l.as_str());
        r.check(ok, path, || format!("gender {}", show()));
        return true;
    }
    if has(t, &["symbol", "ticker"]) && v.is_string() && !has(t, &["currency", "name"]) {
        let ok = text.len() <= 12 && !text.contains(' ');
        r.check(ok, path, || format!("ticker {}", show()));
        return true;
    }
    false
}

/// A date or datetime: `YYYY-MM-DD…`, `YYYY/MM/DD`, `DD-MM-YYYY`, a month name with a year, or epoch.
pub fn parse_date(s: &str) -> Option<(i64, i64, i64)> {
    let digits: Vec<i64> = s
        .split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .filter_map(|p| p.parse().ok())
        .collect();
    let months = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let l = s.to_lowercase();
    if let Some(m) = months.iter().position(|m| l.contains(m)) {
        let y = digits.iter().copied().find(|d| (1000..=2100).contains(d))?;
        return Some((y, m as i64 + 1, 1));
    }
    match digits.as_slice() {
        [y, m, d, ..]
            if (1000..=2100).contains(y) && (1..=12).contains(m) && (1..=31).contains(d) =>
        {
            Some((*y, *m, *d))
        }
        [d, m, y, ..]
            if (1000..=2100).contains(y) && (1..=12).contains(m) && (1..=31).contains(d) =>
        {
            Some((*y, *m, *d))
        }
        [m, d, y, ..]
            if (1000..=2100).contains(y) && (1..=12).contains(m) && (1..=31).contains(d) =>
        {
            Some((*y, *m, *d))
        }
        [e] if (946_684_800..4_102_444_800).contains(e)
            || (946_684_800_000..4_102_444_800_000).contains(e) =>
        {
            Some((2000, 1, 1))
        }
        [y] if (1000..=2100).contains(y) => Some((*y, 1, 1)),
        [y, m] if (1000..=2100).contains(y) && (1..=12).contains(m) => Some((*y, *m, 1)),
        _ => None,
    }
}

/// Within one object, creation precedes update and expiry, and a start precedes its end.
fn check_order(m: &Map<String, Value>, path: &str, r: &mut RuleReport) {
    let find = |words: &[&str]| {
        m.iter().find_map(|(k, v)| {
            let t = tokens(k);
            (has(&t, words) && !has(&t, &["by", "count"]))
                .then(|| v.as_str().and_then(parse_date))
                .flatten()
        })
    };
    let pairs: [(&[&str], &[&str]); 3] = [
        (&["created", "creation"], &["updated", "modified"]),
        (
            &["created", "issued", "creation"],
            &["expires", "expiry", "expiration"],
        ),
        (
            &["start", "begin", "from", "departure"],
            &["end", "finish", "until", "arrival"],
        ),
    ];
    for (a, b) in pairs {
        if let (Some(x), Some(y)) = (find(a), find(b)) {
            r.check(x <= y, path, || format!("{a:?} {x:?} after {b:?} {y:?}"));
        }
    }
}

/// A field named like an argument carries the argument's value (ids, symbols, cities, queries).
fn echo_rule(v: &Value, key: &str, path: &str, ctx: &Context<'_>, r: &mut RuleReport) {
    let k = squash(key);
    const ECHO: &[&str] = &[
        "symbol", "ticker", "city", "query", "q", "keyword", "username", "isbn", "imdbid", "ip",
    ];
    if !ECHO.contains(&k.as_str()) || path.contains("[]") {
        return;
    }
    let Some(arg) = ctx.arg(&[k.as_str()]) else {
        return;
    };
    if arg.trim().is_empty() {
        return;
    }
    let got = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    r.check(
        got.to_lowercase().contains(&arg.to_lowercase())
            || arg.to_lowercase().contains(&got.to_lowercase()),
        path,
        || format!("{key} {got:?} but the call asked for {arg:?}"),
    );
}

fn is_rate_field(t: &[String], ctx: &Context<'_>) -> bool {
    let fx = ["currency", "exchange", "forex", "fx"]
        .iter()
        .any(|w| ctx.purpose.contains(w));
    fx && has(t, &["rate", "rates", "result", "converted", "conversion"])
        || (fx && t.len() == 1 && t[0].len() == 3 && t[0].chars().all(|c| c.is_ascii_alphabetic()))
}

/// Rough units of a currency per US dollar, to check that exchange rates have the right magnitude.
const PER_USD: &[(&str, f64)] = &[
    ("USD", 1.0),
    ("EUR", 0.92),
    ("GBP", 0.79),
    ("JPY", 150.0),
    ("CAD", 1.36),
    ("AUD", 1.52),
    ("CHF", 0.88),
    ("CNY", 7.2),
    ("INR", 83.0),
    ("BRL", 5.0),
    ("MXN", 17.0),
    ("KRW", 1330.0),
    ("RUB", 92.0),
    ("ZAR", 18.5),
    ("SEK", 10.5),
    ("NOK", 10.6),
    ("NZD", 1.64),
    ("SGD", 1.34),
    ("HKD", 7.8),
    ("TRY", 32.0),
    ("BTC", 0.000016),
];

fn per_usd(code: &str) -> Option<f64> {
    let c = code.trim().to_uppercase();
    PER_USD.iter().find(|(k, _)| *k == c).map(|(_, v)| *v)
}

fn rate_rule(v: &Value, path: &str, ctx: &Context<'_>, r: &mut RuleReport) {
    let Some(x) = num(v) else { return };
    let from = ctx.arg(&["from", "fromcurrency", "base", "source", "have", "fromcode"]);
    let to = ctx.arg(&["to", "tocurrency", "target", "want", "symbols", "tocode"]);
    let amount = ctx
        .arg(&["amount", "value", "quantity"])
        .and_then(|a| a.trim().parse::<f64>().ok())
        .unwrap_or(1.0);
    let leaf = path.rsplit('.').next().unwrap_or("");
    let to = if leaf.len() == 3 && per_usd(leaf).is_some() {
        Some(leaf.to_string())
    } else {
        to
    };
    let (Some(f), Some(t)) = (
        from.as_deref().and_then(per_usd),
        to.as_deref().and_then(per_usd),
    ) else {
        return;
    };
    let expected = t / f;
    let ok = [expected, expected * amount]
        .iter()
        .any(|e| x > 0.0 && x / e < 3.0 && e / x < 3.0);
    r.check(ok, path, || {
        format!("rate {x} for {from:?}->{to:?}, expected about {expected:.4}")
    });
}

/// A call that asks for N items gets at most N.
fn check_list_size(reply: &Value, ctx: &Context<'_>, r: &mut RuleReport) {
    let Some(n) = ctx
        .arg(&[
            "limit",
            "count",
            "perpage",
            "pagesize",
            "maxresults",
            "num",
            "size",
            "results",
        ])
        .and_then(|s| s.trim().parse::<usize>().ok())
        .filter(|n| (1..=50).contains(n))
    else {
        return;
    };
    let longest = longest_list(reply);
    if longest > 0 {
        r.check(longest <= n, "(list)", || {
            format!("{longest} items for limit {n}")
        });
    }
}

fn longest_list(v: &Value) -> usize {
    match v {
        Value::Array(a) => {
            let own = if a.iter().all(Value::is_object) {
                a.len()
            } else {
                0
            };
            own.max(a.iter().map(longest_list).max().unwrap_or(0))
        }
        Value::Object(m) => m.values().map(longest_list).max().unwrap_or(0),
        _ => 0,
    }
}
