//! The kind table: which text each [`Kind`] gets, in six groups (web, when, place, market, people,
//! prose); kinds in none of them are numbers ([`Ctx::number`]).

use super::context::Ctx;
use super::kind::Kind;
use super::purpose::{Domain, Sport};
use super::text::{format_number, iso_date, mimic};
use super::vocab::*;
use super::words::has;

impl Ctx<'_> {
    /// The text for a kind: each group of kinds has its own table below.
    pub fn text(&mut self, kind: Kind, key: &[String]) -> String {
        if let Some(t) = self.web_text(kind, key) {
            return t;
        }
        if let Some(t) = self.when_text(kind, key) {
            return t;
        }
        if let Some(t) = self.place_text(kind, key) {
            return t;
        }
        if let Some(t) = self.market_text(kind, key) {
            return t;
        }
        if let Some(t) = self.people_text(kind, key) {
            return t;
        }
        if let Some(t) = self.prose_text(kind, key) {
            return t;
        }
        match self.number(kind, key) {
            Some(x) => format_number(x.value, x.decimals),
            None => self.title(),
        }
    }

    /// Web addresses, contacts and identifiers.
    fn web_text(&mut self, kind: Kind, key: &[String]) -> Option<String> {
        let place = self.place;
        Some(match kind {
            Kind::Url => self.url(key),
            Kind::ImageUrl => format!("https://{}/images/{}.jpg", self.host, self.rng.hex(12)),
            Kind::Email if self.email_arg().is_some() => self.email_arg().unwrap_or_default(),
            Kind::Email => format!(
                "{}.{}@{}",
                self.pick(FIRST).to_lowercase(),
                self.pick(LAST).to_lowercase(),
                self.pick(EMAIL_DOMAINS)
            ),
            Kind::Phone if has(key, &["code", "prefix", "dial"]) => {
                dial_code(place.alpha2).to_string()
            }
            Kind::Phone => format!(
                "+1 {}-{:03}-{:04}",
                self.rng.range(201, 989),
                self.rng.range(200, 999),
                self.rng.range(0, 9999)
            ),
            Kind::Uuid => {
                let h = self.rng.hex(32);
                format!(
                    "{}-{}-4{}-a{}-{}",
                    &h[..8],
                    &h[8..12],
                    &h[13..16],
                    &h[17..20],
                    &h[20..32]
                )
            }
            Kind::Hash => self.rng.hex(32),
            Kind::Id if has(key, &["isin"]) => {
                format!("{}{}", place.alpha2, mimic("0378331005", &mut self.rng))
            }
            Kind::Id => self.id_like(),
            Kind::Slug => format!("{}-{}", self.pick(WORDS), self.purpose.noun),
            Kind::Host if self.item > 0 => self.random_host(),
            Kind::Host => self.host_arg().unwrap_or_else(|| self.host.clone()),
            Kind::Ip => format!(
                "{}.{}.{}.{}",
                self.rng.range(23, 212),
                self.rng.range(0, 255),
                self.rng.range(0, 255),
                self.rng.range(1, 254)
            ),
            Kind::Version => format!(
                "{}.{}.{}",
                self.rng.range(1, 5),
                self.rng.range(0, 12),
                self.rng.range(0, 20)
            ),
            _ => return None,
        })
    }

    /// Dates, times and durations.
    fn when_text(&mut self, kind: Kind, key: &[String]) -> Option<String> {
        Some(match kind {
            Kind::DateTime(role)
                if has(key, &["date", "day", "birthday", "dob"])
                    && !has(key, &["time", "at", "timestamp", "datetime"]) =>
            {
                let day = self.day(role);
                iso_date(day)
            }
            Kind::DateTime(role) => {
                let day = self.day(role);
                format!(
                    "{}T{:02}:{:02}:00Z",
                    iso_date(day),
                    self.rng.range(6, 21),
                    self.rng.range(0, 11) * 5
                )
            }
            Kind::Date(role) => {
                let day = self.day(role);
                iso_date(day)
            }
            Kind::Time => format!(
                "{:02}:{:02}",
                self.rng.range(6, 22),
                self.rng.range(0, 3) * 15
            ),
            Kind::Duration => format!("{}:{:02}", self.rng.range(2, 5), self.rng.range(0, 59)),
            _ => return None,
        })
    }

    /// Places and travel: the record's country, city and address, airports and airlines.
    fn place_text(&mut self, kind: Kind, key: &[String]) -> Option<String> {
        let place = self.place;
        Some(match kind {
            Kind::Country => place.country.to_string(),
            Kind::CountryCode => {
                if has(key, &["alpha3", "iso3"]) {
                    self.country_row().2.to_string()
                } else {
                    place.alpha2.to_string()
                }
            }
            Kind::City => self
                .city_name
                .clone()
                .unwrap_or_else(|| place.city.to_string()),
            Kind::Region => place.region.to_string(),
            Kind::Address => {
                let city = self
                    .city_name
                    .clone()
                    .unwrap_or_else(|| place.city.to_string());
                format!("{} {}, {city}", self.rng.range(1, 250), self.pick(STREETS))
            }
            Kind::Zip => format!("{:05}", self.rng.range(10_000, 99_999)),
            Kind::Timezone => place.timezone.to_string(),
            Kind::LanguageCode => self
                .arg_text(&["lang"])
                .unwrap_or_else(|| self.country_row().4.to_string()),
            Kind::Language => {
                let code = self.country_row().4;
                LANGUAGES
                    .iter()
                    .find(|l| l.0 == code)
                    .map_or("English", |l| l.1)
                    .to_string()
            }
            Kind::Airport => {
                let a = AIRPORTS[if has(key, &["arrival", "destination", "to"]) {
                    (self.airport + 3) % AIRPORTS.len()
                } else {
                    self.airport
                }];
                if has(key, &["iata", "code", "icao"]) {
                    a.0.to_string()
                } else {
                    a.1.to_string()
                }
            }
            Kind::Airline => AIRLINES[self.rng.index(AIRLINES.len())].1.to_string(),
            _ => return None,
        })
    }

    /// Money and companies: currencies, tickers and company names.
    fn market_text(&mut self, kind: Kind, key: &[String]) -> Option<String> {
        Some(match kind {
            Kind::CurrencyCode => match self.purpose.domain {
                Domain::Currency if self.purpose.action == super::purpose::Action::Search => {
                    CURRENCIES[self.record_currency].0.to_string()
                }
                Domain::Currency => self.currency_pair().1,
                Domain::Stocks | Domain::Crypto | Domain::Shopping | Domain::Jobs => {
                    "USD".to_string()
                }
                _ => self.country_row().3.to_string(),
            },
            Kind::CurrencyName if self.purpose.domain == Domain::Currency => {
                CURRENCIES[self.record_currency].1.to_string()
            }
            Kind::CurrencyName => {
                let code = self.country_row().3;
                CURRENCIES
                    .iter()
                    .find(|c| c.0 == code)
                    .map_or("US Dollar", |c| c.1)
                    .to_string()
            }
            Kind::Company
                if self.purpose.domain == Domain::News
                    || has(key, &["source", "site", "outlet"]) =>
            {
                self.pick(NEWS_SOURCES).to_string()
            }
            Kind::Company
                if self.purpose.domain == Domain::Shopping
                    || has(key, &["brand", "manufacturer"]) =>
            {
                self.pick(BRANDS).to_string()
            }
            Kind::Company => {
                if self.purpose.domain == Domain::Stocks && has(key, &["exchange"]) {
                    COMPANIES[self.company.unwrap_or(0)].2.to_string()
                } else {
                    self.company_name()
                }
            }
            Kind::Ticker if self.purpose.domain == Domain::Currency => {
                CURRENCIES[self.record_currency].2.to_string()
            }
            Kind::Ticker => self.ticker(),
            _ => return None,
        })
    }

    /// People and teams.
    fn people_text(&mut self, kind: Kind, key: &[String]) -> Option<String> {
        Some(match kind {
            Kind::Person
                if self.purpose.domain == Domain::Music
                    && has(key, &["artist", "artists", "singer", "band"]) =>
            {
                self.pick(ARTISTS).to_string()
            }
            Kind::Person => self.person(),
            Kind::FirstName => self.pick(FIRST).to_string(),
            Kind::LastName => self.pick(LAST).to_string(),
            Kind::Username => format!(
                "{}_{}",
                self.pick(FIRST).to_lowercase(),
                self.rng.range(10, 999)
            ),
            Kind::Team => self.team(),
            Kind::League => match (self.purpose.domain, self.purpose.sport) {
                (Domain::Football, _) | (_, Sport::Clubs) => {
                    FOOTBALL[self.rng.index(FOOTBALL.len())].2.to_string()
                }
                (_, Sport::Basketball) => "NBA".to_string(),
                (_, Sport::Individual) => self.purpose.tour.to_string(),
            },
            Kind::Gender => self.pick(&["male", "female"]).to_string(),
            Kind::Position => self.pick(POSITIONS).to_string(),
            Kind::JobTitle if self.purpose.domain == Domain::Movies => {
                self.pick(MOVIE_JOBS).to_string()
            }
            Kind::JobTitle => self.pick(JOBS).to_string(),
            _ => return None,
        })
    }

    /// Titles, sentences and labels of the domain's items.
    fn prose_text(&mut self, kind: Kind, key: &[String]) -> Option<String> {
        Some(match kind {
            Kind::Title if key.len() == 1 && matches!(key[0].as_str(), "name" | "title") => {
                self.title()
            }
            Kind::Title => self.domain_title(),
            Kind::Description
                if self.purpose.domain == Domain::Social
                    && has(
                        key,
                        &[
                            "text", "caption", "content", "full", "tweet", "body", "message",
                        ],
                    ) =>
            {
                self.pick(POSTS).to_string()
            }
            Kind::Description => self.sentence(None),
            Kind::Status => self.status(),
            Kind::Message => "OK".to_string(),
            Kind::ErrorText => String::new(),
            Kind::Color => self.pick(COLORS).to_string(),
            Kind::Genre => match self.purpose.domain {
                Domain::Music => self.pick(MUSIC_GENRES).to_string(),
                Domain::Movies | Domain::Books => self.pick(MOVIE_GENRES).to_string(),
                Domain::Shopping => self.pick(PRODUCT_CATEGORIES).to_string(),
                Domain::News => self.pick(NEWS_TOPICS).to_string(),
                Domain::Stocks => COMPANIES[self.company.unwrap_or(self.record_company)]
                    .3
                    .to_string(),
                _ => self.pick(CATEGORIES).to_string(),
            },
            Kind::Headline => self.pick(HEADLINES).to_string(),
            Kind::Level => self.pick(LEVELS).to_string(),
            Kind::Type => self
                .arg_text(&["type"])
                .unwrap_or_else(|| self.purpose.noun.clone()),
            Kind::Weather => self.pick(WEATHER).to_string(),
            Kind::Ingredient => self.pick(INGREDIENTS).to_string(),
            Kind::Quote if has(key, &["fact", "facts"]) || self.purpose.noun == "fact" => {
                self.pick(FACTS).to_string()
            }
            Kind::Quote
                if has(key, &["joke", "punchline", "setup"]) || self.purpose.noun == "joke" =>
            {
                self.pick(JOKES).to_string()
            }
            Kind::Quote => self.pick(QUOTES).to_string(),
            Kind::Word => self
                .subject
                .clone()
                .unwrap_or_else(|| self.pick(WORDS).to_string()),
            _ => return None,
        })
    }
}
