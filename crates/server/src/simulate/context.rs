//! Per-response generation state: the seeded PRNG, the call's arguments (for echoes), the entities the
//! arguments name (a city, a company, a currency pair) and the response's reference date, so values
//! agree with the call and with each other.

use serde_json::{Map, Value};

use super::purpose::Purpose;
use super::rng::Rng;
use super::vocab::{self, AIRPORTS, COMPANIES, CRYPTO, PLACES, Place};
use super::words::{is_secret, norm, scalar_text};

/// The simulated "today" (2024-06-14) as days since 1970-01-01; dates are placed around it.
const TODAY: i64 = 19_888;

/// Argument names that say the same thing (a field echoes any argument of its group).
#[rustfmt::skip]
const SYNONYMS: &[&[&str]] = &[
    &["query", "q", "keyword", "keywords", "search", "term", "searchterm", "text", "querystring"],
    &["symbol", "ticker", "stock", "symbols", "tickers", "stocksymbol"],
    &["city", "location", "town", "cityname", "place"],
    &["country", "countrycode", "countryname"],
    &["lang", "language", "locale", "languagecode"],
    &["username", "user", "handle", "screenname"],
    &["email", "emailaddress", "mail"],
    &["from", "fromcurrency", "base", "source", "have", "fromcode", "basecurrency"],
    &["to", "tocurrency", "target", "want", "tocode", "targetcurrency"],
    &["amount", "value", "quantity"],
    &["domain", "website", "site"],
    &["date", "day"],
];

pub struct Ctx<'a> {
    pub rng: Rng,
    pub purpose: &'a Purpose,
    args: Vec<(String, &'a Value)>,
    /// The arguments' names as the call wrote them (same order as `args`).
    names: Vec<String>,
    /// The argument that reads as "what the user asked about".
    pub subject: Option<String>,
    /// The place of the current record (from the arguments, else chosen per record).
    pub place: Place,
    place_fixed: bool,
    pub company: Option<usize>,
    /// The company, coin and currency of the current record when the arguments name none.
    pub record_company: usize,
    pub record_crypto: usize,
    pub record_currency: usize,
    /// A city the call names that is not among the known places (its name is kept in answers).
    pub city_name: Option<String>,
    /// Position of the current record in its list (0 outside lists).
    pub item: usize,
    /// The price level of the current record, so open/high/low/close agree.
    pub price_base: Option<f64>,
    /// The airport of the current record (in the place's country when there is one).
    pub airport: usize,
    /// A query-like argument (`q`, `query`, `keyword`, `name`), for titles of search results.
    pub query: Option<String>,
    pub crypto: Option<usize>,
    /// Reference day of the response (days since 1970-01-01): an argument's date, else TODAY.
    pub today: i64,
    pub host: String,
    pub nodes: usize,
}

/// The place the arguments name (a known city or country, else the nearest to given coordinates)
/// and, where none is known in a place-centred domain, the city argument as written.
fn locate(
    args: &[(String, &Value)],
    texts: &[String],
    domain: super::purpose::Domain,
) -> (Option<usize>, Option<String>) {
    let found = PLACES
        .iter()
        .position(|p| texts.iter().any(|t| t.contains(&p.city.to_lowercase())))
        .or_else(|| {
            PLACES.iter().position(|p| {
                texts
                    .iter()
                    .any(|t| t == &p.country.to_lowercase() || t.eq_ignore_ascii_case(p.alpha2))
            })
        });
    let found = found.or_else(|| nearest_place(args));
    let city_name = if found.is_none()
        && matches!(
            domain,
            super::purpose::Domain::Geo
                | super::purpose::Domain::Weather
                | super::purpose::Domain::Travel
        ) {
        args.iter()
            .find(|(k, _)| {
                matches!(
                    k.as_str(),
                    "city" | "address" | "location" | "q" | "query" | "place" | "cityname"
                )
            })
            .map(|(_, v)| scalar_text(v))
            .filter(|c| c.len() > 1 && c.parse::<f64>().is_err())
    } else {
        None
    };
    (found, city_name)
}

/// The tool's web host: its name's letters and digits (24 at most) under `.com`.
fn host_of(tool: &str) -> String {
    let slug: String = tool
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .flat_map(char::to_lowercase)
        .take(24)
        .collect();
    if slug.is_empty() {
        "example.com".into()
    } else {
        format!("{slug}.com")
    }
}

impl<'a> Ctx<'a> {
    pub fn new(seed: u64, purpose: &'a Purpose, tool: &str, args: &'a Map<String, Value>) -> Self {
        let given: Vec<(&String, &Value)> = args
            .iter()
            .filter(|(_, v)| !v.is_null() && !v.is_object() && !v.is_array())
            .filter(|(_, v)| !scalar_text(v).trim().is_empty())
            .filter(|(k, _)| !is_secret(k))
            .collect();
        let names: Vec<String> = given.iter().map(|(k, _)| k.to_string()).collect();
        let args: Vec<(String, &Value)> = given.into_iter().map(|(k, v)| (norm(k), v)).collect();
        let mut rng = Rng::new(seed);
        let texts: Vec<String> = args
            .iter()
            .map(|(_, v)| scalar_text(v).to_lowercase())
            .collect();
        let (found, city_name) = locate(&args, &texts, purpose.domain);
        let place = PLACES[found.unwrap_or_else(|| rng.index(PLACES.len()))];
        let company = COMPANIES
            .iter()
            .position(|c| texts.iter().any(|t| t.eq_ignore_ascii_case(c.1)));
        let crypto = CRYPTO.iter().position(|c| {
            texts
                .iter()
                .any(|t| t.eq_ignore_ascii_case(c.1) || t.eq_ignore_ascii_case(c.0))
        });
        let today = args
            .iter()
            .filter(|(k, _)| k.contains("date") || k == "day" || k == "from" || k == "start")
            .find_map(|(_, v)| parse_day(&scalar_text(v)))
            .unwrap_or(TODAY);
        let subject = pick_subject(&args);
        let query = args
            .iter()
            .find(|(k, _)| QUERYISH.contains(&k.as_str()))
            .map(|(_, v)| scalar_text(v));
        let mut ctx = Ctx {
            rng,
            purpose,
            args,
            names,
            subject,
            place,
            place_fixed: found.is_some(),
            company,
            airport: 0,
            price_base: None,
            item: 0,
            city_name,
            record_company: 0,
            record_crypto: 0,
            record_currency: 0,
            query,
            crypto,
            today,
            host: host_of(tool),
            nodes: 0,
        };
        ctx.pick_record();
        ctx
    }

    /// A new record in a list: a new place unless the arguments fixed one, and a new airport.
    pub fn next_record(&mut self) {
        if !self.place_fixed {
            self.place = PLACES[self.rng.index(PLACES.len())];
        }
        self.price_base = None;
        self.pick_record();
    }

    /// Picks what each record is about (a company, a coin, a currency, an airport).
    fn pick_record(&mut self) {
        self.record_company = self.rng.index(COMPANIES.len());
        self.record_crypto = self.rng.index(CRYPTO.len());
        self.record_currency = self.rng.index(vocab::CURRENCIES.len());
        self.pick_airport();
    }

    fn pick_airport(&mut self) {
        let local: Vec<usize> = (0..AIRPORTS.len())
            .filter(|&i| AIRPORTS[i].3 == self.place.alpha2)
            .collect();
        self.airport = if self.place_fixed && !local.is_empty() {
            local[self.rng.index(local.len())]
        } else {
            self.rng.index(AIRPORTS.len())
        };
    }

    /// The argument a field named `key` refers to: same name, or a synonym.
    pub fn echo(&self, key: &str) -> Option<&'a Value> {
        let k = norm(key);
        if k.is_empty() || k.len() > 40 {
            return None;
        }
        if let Some((_, v)) = self.args.iter().find(|(a, _)| *a == k) {
            return Some(v);
        }
        let group = SYNONYMS.iter().find(|g| g.contains(&k.as_str()))?;
        self.args
            .iter()
            .find(|(a, _)| group.contains(&a.as_str()))
            .map(|(_, v)| *v)
    }

    /// An argument that holds an email address.
    pub fn email_arg(&self) -> Option<String> {
        self.args
            .iter()
            .map(|(_, v)| scalar_text(v))
            .find(|t| t.contains('@') && t.contains('.') && !t.contains(' '))
    }

    /// The web domain the call is about: an email's or URL's host, or a `domain` argument.
    pub fn host_arg(&self) -> Option<String> {
        if let Some(e) = self.email_arg() {
            return e.rsplit('@').next().map(str::to_string);
        }
        self.args.iter().map(|(_, v)| scalar_text(v)).find_map(|t| {
            let rest = t
                .strip_prefix("https://")
                .or_else(|| t.strip_prefix("http://"))
                .unwrap_or(&t);
            let host = rest
                .split('/')
                .next()
                .unwrap_or("")
                .trim_start_matches("www.");
            (host.contains('.') && !host.contains(' ') && host.len() > 3).then(|| host.to_string())
        })
    }

    /// The text of the first argument among `names` (or their synonyms).
    pub fn arg_text(&self, names: &[&str]) -> Option<String> {
        names.iter().find_map(|n| self.echo(n)).map(scalar_text)
    }

    /// A number requested by the arguments (`limit`, `count`, ...), when sensible.
    pub fn arg_number(&self, names: &[&str]) -> Option<i64> {
        let v = self
            .args
            .iter()
            .find(|(a, _)| names.contains(&a.as_str()))?
            .1;
        let n = match v {
            Value::Number(n) => n.as_f64()?,
            other => scalar_text(other).trim().parse().ok()?,
        };
        Some(n as i64)
    }

    /// The names of the call's arguments as written, for shapes that echo their inputs.
    pub fn arg_names(&self) -> &[String] {
        &self.names
    }

    pub fn currency_pair(&self) -> (String, String) {
        let from = self
            .arg_text(&["from"])
            .filter(|c| vocab::per_usd(c).is_some());
        let to = self
            .arg_text(&["to"])
            .filter(|c| vocab::per_usd(c).is_some());
        (
            from.map_or("USD".to_string(), |c| c.to_uppercase()),
            to.map_or("EUR".to_string(), |c| c.to_uppercase()),
        )
    }
}

/// The known place nearest to coordinates given as arguments (`lat`/`lon`, `latitude`/`longitude`).
fn nearest_place(args: &[(String, &Value)]) -> Option<usize> {
    let num = |names: &[&str]| {
        args.iter()
            .find(|(k, _)| names.contains(&k.as_str()))
            .and_then(|(_, v)| scalar_text(v).trim().parse::<f64>().ok())
    };
    let lat = num(&["lat", "latitude", "lat1"])?;
    let lon = num(&["lon", "lng", "long", "longitude", "lon1", "lng1"])?;
    if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lon) {
        return None;
    }
    let d = |p: &Place| (p.lat - lat).powi(2) + ((p.lon - lon) * (lat.to_radians().cos())).powi(2);
    (0..PLACES.len()).min_by(|&a, &b| d(&PLACES[a]).total_cmp(&d(&PLACES[b])))
}

#[rustfmt::skip]
const QUERYISH: &[&str] = &[
    "query", "q", "keyword", "keywords", "search", "term", "searchterm", "name", "title", "searchquery",
];

fn pick_subject(args: &[(String, &Value)]) -> Option<String> {
    args.iter()
        .find(|(k, _)| QUERYISH.contains(&k.as_str()))
        .or_else(|| {
            args.iter().find(|(k, v)| {
                v.is_string() && !k.contains("id") && scalar_text(v).parse::<f64>().is_err()
            })
        })
        .map(|(_, v)| scalar_text(v))
}

/// `YYYY-MM-DD...` → days since 1970-01-01.
pub fn parse_day(s: &str) -> Option<i64> {
    let mut it = s.trim().splitn(4, |c: char| !c.is_ascii_digit());
    let y: i64 = it.next()?.parse().ok()?;
    let m: i64 = it.next()?.parse().ok()?;
    let d: i64 = it.next()?.get(..2.min(s.len()))?.trim().parse().ok()?;
    ((1900..=2100).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d))
        .then(|| days_from_civil(y, m, d))
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day number.
pub fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_round_trips() {
        assert_eq!(days_from_civil(2024, 6, 14), TODAY);
        assert_eq!(civil(TODAY), (2024, 6, 14));
        assert_eq!(
            parse_day("2023-01-31T10:00:00Z").map(civil),
            Some((2023, 1, 31))
        );
        assert_eq!(parse_day("hello"), None);
    }
}
