//! Numbers of the right magnitude for their kind: temperatures by unit and latitude, percentages in
//! 0–100, exchange rates near the real rate of the pair, prices by domain, coordinates of the record's
//! place, epochs around the response's reference date.

use super::context::Ctx;
use super::kind::{DateRole, Kind};
use super::purpose::Domain;
use super::rng::round;
use super::vocab::{self, CRYPTO};
use super::words::has;

/// A number and how many decimals it is shown with.
pub struct Num {
    pub value: f64,
    pub decimals: i32,
}

fn n(value: f64, decimals: i32) -> Option<Num> {
    Some(Num {
        value: round(value, decimals),
        decimals,
    })
}

/// Temperature unit of the call: an explicit field name or argument, else Celsius.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    C,
    F,
    K,
}

fn unit(ctx: &Ctx<'_>, key: &[String]) -> Unit {
    if has(key, &["f", "fahrenheit", "tempf"]) {
        return Unit::F;
    }
    if has(key, &["k", "kelvin"]) {
        return Unit::K;
    }
    if has(key, &["c", "celsius", "tempc"]) {
        return Unit::C;
    }
    let arg = ctx
        .arg_text(&[
            "units",
            "unit",
            "temperatureunit",
            "tempunit",
            "temperature",
        ])
        .unwrap_or_default()
        .to_lowercase();
    match arg.as_str() {
        a if a.starts_with('f') || a == "imperial" || a == "us" || a == "e" => Unit::F,
        a if a.starts_with('k') || a == "standard" => Unit::K,
        _ => Unit::C,
    }
}

/// A count of the size its name suggests: audiences are large, items in one record are few.
fn count(key: &[String], r: &mut super::rng::Rng) -> i64 {
    if has(
        key,
        &[
            "followers",
            "views",
            "likes",
            "subscribers",
            "plays",
            "downloads",
            "fans",
            "listeners",
            "streams",
        ],
    ) {
        r.range(1_000, 2_500_000)
    } else if has(
        key,
        &[
            "servings",
            "portions",
            "serves",
            "portion",
            "stops",
            "rooms",
            "beds",
            "bedrooms",
            "bathrooms",
            "baths",
            "adults",
            "children",
            "guests",
        ],
    ) {
        r.range(1, 6)
    } else if has(key, &["population"]) {
        r.range(50_000, 9_000_000)
    } else if has(
        key,
        &[
            "following",
            "comments",
            "shares",
            "reviews",
            "votes",
            "posts",
            "members",
            "retweets",
            "replies",
        ],
    ) {
        r.range(3, 4_000)
    } else if has(key, &["total", "results", "hits", "found"]) {
        r.range(20, 900)
    } else {
        r.range(1, 60)
    }
}

impl Ctx<'_> {
    /// The number for a numeric kind, `None` for kinds that are not numbers. Long because it is a
    /// rule table: one arm per numeric kind.
    pub fn number(&mut self, kind: Kind, key: &[String]) -> Option<Num> {
        let place = self.place;
        let r = &mut self.rng;
        match kind {
            Kind::Temperature => {
                let c = 27.0 - place.lat.abs() * 0.3 + r.float(-6.0, 6.0, 1);
                match unit(self, key) {
                    Unit::C => n(c, 1),
                    Unit::F => n(c * 9.0 / 5.0 + 32.0, 1),
                    Unit::K => n(c + 273.15, 2),
                }
            }
            Kind::Humidity => n(r.range(35, 92) as f64, 0),
            Kind::Pressure => n(r.range(995, 1030) as f64, 0),
            Kind::Wind => n(r.float(0.5, 12.0, 1), 1),
            Kind::Percent => n(r.float(0.0, 100.0, 1), 1),
            Kind::Ratio => n(r.float(0.05, 0.99, 2), 2),
            Kind::Odds => n(r.float(1.15, 6.5, 2), 2),
            Kind::Calories => n(r.range(40, 650) as f64, 0),
            Kind::Grams => n(r.float(0.1, 35.0, 1), 1),
            Kind::Change => n(r.float(-4.5, 4.5, 2), 2),
            Kind::Lat => n(place.lat + r.float(-0.05, 0.05, 4), 4),
            Kind::Lon => n(place.lon + r.float(-0.05, 0.05, 4), 4),
            Kind::Rating => self.rating(key),
            Kind::Price => self.price(key),
            Kind::ExchangeRate => self.rate(key),
            Kind::Volume => n(r.range(100_000, 90_000_000) as f64, 0),
            Kind::Age if matches!(self.purpose.domain, Domain::Football | Domain::Sports) => {
                n(r.range(18, 36) as f64, 0)
            }
            Kind::Age => n(r.range(19, 67) as f64, 0),
            Kind::Year if has(key, &["birth", "born"]) => n(r.range(1950, 2000) as f64, 0),
            Kind::Year if has(key, &["founded", "established", "built"]) => {
                n(r.range(1890, 2015) as f64, 0)
            }
            Kind::Year => n(r.range(2005, 2024) as f64, 0),
            Kind::Count => n(count(key, r) as f64, 0),
            Kind::Page => n(
                self.arg_number(&["page", "pagenumber", "pageno", "p"])
                    .unwrap_or(1)
                    .max(0) as f64,
                0,
            ),
            Kind::Limit => n(
                self.arg_number(&["limit", "count", "perpage", "pagesize", "size"])
                    .unwrap_or(10) as f64,
                0,
            ),
            Kind::Rank => n(r.range(1, 50) as f64, 0),
            Kind::Score
                if self.purpose.sport == super::purpose::Sport::Basketball
                    && self.purpose.domain == Domain::Sports =>
            {
                n(r.range(82, 128) as f64, 0)
            }
            Kind::Score => n(r.range(0, 4) as f64, 0),
            Kind::Duration => {
                if has(key, &["ms"]) {
                    n(r.range(150_000, 320_000) as f64, 0)
                } else if has(key, &["minutes", "runtime", "min"]) {
                    n(r.range(85, 150) as f64, 0)
                } else {
                    n(r.range(120, 420) as f64, 0)
                }
            }
            Kind::Weight => n(r.float(0.2, 90.0, 1), 1),
            Kind::Height => n(r.range(20, 1080) as f64, 0),
            Kind::Id => n(r.range(100_000, 99_999_999) as f64, 0),
            Kind::DateTime(role) | Kind::Date(role) => {
                let day = self.day(role);
                let secs = day * 86_400 + self.rng.range(6, 21) * 3600 + self.rng.range(0, 59) * 60;
                if has(key, &["ms", "millis", "milliseconds"]) {
                    n((secs * 1000) as f64, 0)
                } else {
                    n(secs as f64, 0)
                }
            }
            Kind::Status => n(200.0, 0),
            Kind::Version => n(r.range(1, 5) as f64, 0),
            _ => None,
        }
    }

    /// A day for a date of the given role, relative to the response's reference date.
    pub fn day(&mut self, role: DateRole) -> i64 {
        let t = self.today;
        let r = &mut self.rng;
        match role {
            DateRole::Birth => t - r.range(20 * 365, 60 * 365),
            DateRole::Created => t - r.range(200, 900),
            DateRole::Updated => t - r.range(0, 120),
            DateRole::Start => t + r.range(0, 10),
            DateRole::End => t + r.range(11, 25),
            DateRole::Expires => t + r.range(100, 400),
            DateRole::Plain => t - r.range(0, 60),
        }
    }

    fn rating(&mut self, key: &[String]) -> Option<Num> {
        let r = &mut self.rng;
        if has(key, &["imdb", "vote", "average", "tmdb"]) || self.purpose.domain == Domain::Movies {
            return n(r.float(5.5, 8.9, 1), 1);
        }
        if has(key, &["rank", "ranking"]) {
            return n(r.range(1, 100) as f64, 0);
        }
        if has(key, &["score"]) && !has(key, &["rating"]) {
            return n(r.range(55, 98) as f64, 0);
        }
        n(r.float(3.4, 4.9, 1), 1)
    }

    fn price(&mut self, key: &[String]) -> Option<Num> {
        if has(key, &["amount"])
            && let Some(a) = self.arg_number(&["amount", "value", "quantity"])
        {
            return n(a as f64, 2);
        }
        let base = match self.price_base {
            Some(b) => b,
            None => {
                let r = &mut self.rng;
                let typical = match self.purpose.domain {
                    Domain::Crypto => CRYPTO[self.crypto.unwrap_or(self.record_crypto)].2,
                    Domain::Stocks => {
                        super::vocab::COMPANIES[self.company.unwrap_or(self.record_company)].6
                    }
                    Domain::Travel | Domain::Flights => 180.0,
                    Domain::Jobs => 85_000.0,
                    Domain::Food => 14.0,
                    _ => 45.0,
                };
                let b = typical * r.float(0.6, 1.4, 3);
                self.price_base = Some(b);
                b
            }
        };
        let spread = if has(key, &["high", "max", "ask", "maximum"]) {
            1.0 + self.rng.float(0.005, 0.03, 3)
        } else if has(key, &["low", "min", "bid"]) {
            1.0 - self.rng.float(0.005, 0.03, 3)
        } else if has(key, &["open", "close", "previous", "prev"]) {
            1.0 + self.rng.float(-0.005, 0.005, 3)
        } else {
            1.0
        };
        let decimals = if base < 1.0 { 4 } else { 2 };
        n(base * spread, decimals)
    }

    /// An exchange rate for the pair the call names (or the field names, `"EUR": 0.92`).
    fn rate(&mut self, key: &[String]) -> Option<Num> {
        let (from, mut to) = self.currency_pair();
        if let Some(code) = key
            .iter()
            .find(|t| t.len() == 3 && vocab::per_usd(t).is_some())
        {
            to = code.to_uppercase();
        }
        let from_usd = vocab::per_usd(&from).unwrap_or(1.0);
        let to_usd = vocab::per_usd(&to).unwrap_or(1.0);
        let mut x = to_usd / from_usd * self.rng.float(0.99, 1.01, 4);
        if has(
            key,
            &["result", "converted", "conversion", "amount", "value"],
        ) {
            x *= self
                .arg_number(&["amount", "value", "quantity"])
                .unwrap_or(1) as f64;
        }
        let decimals = if x < 0.01 { 8 } else { 4 };
        n(x, decimals)
    }
}
