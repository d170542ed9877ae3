//! Text values of the right kind: names from kind vocabularies, codes that look like codes, dates in
//! ISO form, URLs on the tool's host, and sentences that say something about the record.

use super::context::{Ctx, civil};
use super::purpose::{Domain, Sport};
use super::vocab::*;

pub(super) fn iso_date(day: i64) -> String {
    let (y, m, d) = civil(day);
    format!("{y:04}-{m:02}-{d:02}")
}

impl Ctx<'_> {
    pub(super) fn pick(&mut self, items: &[&'static str]) -> &'static str {
        self.rng.pick(items)
    }

    pub fn person(&mut self) -> String {
        format!("{} {}", self.pick(FIRST), self.pick(LAST))
    }

    pub(super) fn country_row(
        &mut self,
    ) -> (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    ) {
        let code = self.place.alpha2;
        COUNTRIES
            .iter()
            .copied()
            .find(|c| c.1 == code)
            .unwrap_or(COUNTRIES[0])
    }

    /// The name of the API's item: what its noun names (`players` → a person), else the domain's.
    pub fn title(&mut self) -> String {
        let noun = self.purpose.noun.clone();
        if matches!(noun.as_str(), "feed" | "post" | "tweet" | "reel" | "story") {
            return self.pick(POSTS).to_string();
        }
        match self.noun_title(&noun) {
            Some(t) => t,
            None => self.domain_title(),
        }
    }

    /// A title of the domain's items (a song for music, a product for shopping, ...).
    pub fn domain_title(&mut self) -> String {
        let noun = self.purpose.noun.clone();
        match self.purpose.domain {
            Domain::Music => self.pick(SONGS).to_string(),
            Domain::Movies => self.pick(MOVIES).to_string(),
            Domain::Books => self.pick(BOOKS).to_string(),
            Domain::News => self.pick(HEADLINES).to_string(),
            Domain::Shopping => self.pick(PRODUCTS).to_string(),
            Domain::Logistics => self
                .pick(&[
                    "DHL Express",
                    "FedEx",
                    "UPS",
                    "USPS",
                    "Royal Mail",
                    "YunExpress",
                    "China Post",
                ])
                .to_string(),
            Domain::Food => self.pick(RECIPES).to_string(),
            Domain::Jobs => self.pick(JOBS).to_string(),
            Domain::Football => self.pick_football(),
            Domain::Sports if self.purpose.sport == Sport::Individual => {
                self.pick(EVENTS).to_string()
            }
            Domain::Sports => self.team(),
            Domain::Stocks => self.company_name(),
            Domain::Crypto => CRYPTO[self.crypto.unwrap_or(self.record_crypto)]
                .0
                .to_string(),
            Domain::Currency => CURRENCIES[self.record_currency].1.to_string(),
            Domain::Travel => {
                let city = self.place.city;
                format!(
                    "{city} {}",
                    self.pick(&[
                        "Grand Hotel",
                        "Central Suites",
                        "Old Town Inn",
                        "Riverside Apartments",
                        "Park Residence"
                    ])
                )
            }
            Domain::Flights => AIRPORTS[self.airport].1.to_string(),
            Domain::Geo => self.place.city.to_string(),
            Domain::Social => self.person(),
            Domain::Quotes => self.pick(QUOTES).to_string(),
            Domain::Weather => self.place.city.to_string(),
            Domain::Email | Domain::Text | Domain::Generic => {
                let word = self.pick(WORDS);
                format!("{} {}", capitalise(word), capitalise(&noun))
            }
        }
    }

    /// Names of things the API's noun says it lists, whatever the domain.
    fn noun_title(&mut self, noun: &str) -> Option<String> {
        Some(match noun {
            "brand" | "company" | "manufacturer" | "merchant" | "store" => {
                self.pick(BRANDS).to_string()
            }
            "author" | "artist" | "actor" | "player" | "user" | "character" | "employee"
            | "person" | "member" | "driver" | "fighter" => self.person(),
            "city" | "location" | "place" => self.place.city.to_string(),
            "country" | "region" => self.place.country.to_string(),
            "team" | "club" => self.team(),
            "event" | "festival" | "conference" | "concert" => self.pick(EVENTS).to_string(),
            "animal" | "dog" | "cat" | "pet" | "breed" | "bird" => self.pick(ANIMALS).to_string(),
            "joke" => self.pick(JOKES).to_string(),
            "password" | "passphrase" => mimic("Xk7#pQ2!vL9m", &mut self.rng),
            "username" | "nickname" => format!(
                "{}_{}",
                self.pick(FIRST).to_lowercase(),
                self.rng.range(10, 999)
            ),
            "source" | "publisher" | "newspaper" | "outlet" => self.pick(NEWS_SOURCES).to_string(),
            "language" => LANGUAGES[self.rng.index(LANGUAGES.len())].1.to_string(),
            "version" | "release" => format!(
                "{}.{}.{}",
                self.rng.range(1, 5),
                self.rng.range(0, 12),
                self.rng.range(0, 20)
            ),
            "image" | "photo" | "picture" | "gif" => {
                format!("{}_{}.jpg", self.pick(WORDS), self.rng.range(100, 9999))
            }
            "file" | "document" | "report" => {
                format!("{}_{}.pdf", self.pick(WORDS), self.rng.range(100, 9999))
            }
            "domain" | "refdomain" | "website" | "site" => self.random_host(),
            _ => return None,
        })
    }

    pub(super) fn random_host(&mut self) -> String {
        format!(
            "{}{}.{}",
            self.pick(WORDS),
            self.pick(&["hub", "news", "labs", "media", "shop", "blog"]),
            self.pick(&["com", "net", "org", "io"])
        )
    }

    pub(super) fn team(&mut self) -> String {
        match (self.purpose.domain, self.purpose.sport) {
            (Domain::Football, _) | (_, Sport::Clubs) => self.pick_football(),
            (_, Sport::Basketball) => self.pick(NBA).to_string(),
            (_, Sport::Individual) => self.person(),
        }
    }

    fn pick_football(&mut self) -> String {
        FOOTBALL[self.rng.index(FOOTBALL.len())].0.to_string()
    }

    pub(super) fn company_name(&mut self) -> String {
        COMPANIES[self.company.unwrap_or(self.record_company)]
            .0
            .to_string()
    }

    pub(super) fn ticker(&mut self) -> String {
        if self.purpose.domain == Domain::Crypto {
            return CRYPTO[self.crypto.unwrap_or(self.record_crypto)]
                .1
                .to_string();
        }
        COMPANIES[self.company.unwrap_or(self.record_company)]
            .1
            .to_string()
    }

    /// A sentence about the record: what it is, in the domain's terms.
    pub fn sentence(&mut self, title: Option<&str>) -> String {
        let subject = title
            .map(str::to_string)
            .or_else(|| self.subject.clone())
            .unwrap_or_else(|| self.title());
        let place = self.place.city;
        match self.purpose.domain {
            Domain::Music => format!(
                "{subject} is a {} track from the album {}.",
                self.pick(MUSIC_GENRES).to_lowercase(),
                self.pick(SONGS)
            ),
            Domain::Movies => format!(
                "In {place}, a {} story follows {} as {subject} unfolds.",
                self.pick(MOVIE_GENRES).to_lowercase(),
                self.person()
            ),
            Domain::News => format!(
                "{subject}: {} reports from {place} on the latest developments.",
                self.pick(NEWS_SOURCES)
            ),
            Domain::Shopping => {
                format!("{subject} with a 1-year warranty; ships in 2-3 business days.")
            }
            Domain::Food => format!(
                "A {} {subject} ready in {} minutes.",
                self.pick(&["quick", "classic", "family-style", "light"]),
                self.rng.range(15, 70)
            ),
            Domain::Weather => self.pick(WEATHER).to_string(),
            Domain::Logistics => self
                .pick(&[
                    "Shipment information received",
                    "Departed from sorting center",
                    "Arrived at destination country",
                    "Out for delivery",
                    "Delivered",
                ])
                .to_string(),
            Domain::Jobs => format!(
                "{subject} position based in {place}; {} years of experience required.",
                self.rng.range(1, 8)
            ),
            Domain::Books => format!(
                "{subject} by {} follows a family across three generations.",
                self.person()
            ),
            Domain::Quotes => self.pick(QUOTES).to_string(),
            Domain::Travel => format!(
                "{subject}, {} km from the centre of {place}.",
                self.rng.range(1, 9)
            ),
            Domain::Social => {
                let job = self.pick(JOBS);
                format!(
                    "{job} based in {place}. {} lover, opinions my own.",
                    self.pick(&["Coffee", "Travel", "Music", "Football", "Book"])
                )
            }
            _ => self.pick(SENTENCES).to_string(),
        }
    }

    pub(super) fn url(&mut self, key: &[String]) -> String {
        let path = key
            .iter()
            .find(|t| !matches!(t.as_str(), "url" | "link" | "href" | "uri"))
            .map_or(self.purpose.noun.as_str(), |s| s.as_str())
            .to_string();
        format!(
            "https://{}/{}/{}",
            self.host,
            path,
            self.rng.range(1000, 99_999)
        )
    }

    pub(super) fn id_like(&mut self) -> String {
        if let Some(sample) = self
            .arg_text(&["id"])
            .filter(|s| s.len() >= 4 && s.len() <= 40)
        {
            return mimic(&sample, &mut self.rng);
        }
        self.rng.range(100_000, 99_999_999).to_string()
    }

    pub(super) fn status(&mut self) -> String {
        let noun = self.purpose.noun.as_str();
        if noun.contains("health") || matches!(noun, "ping" | "heartbeat" | "status") {
            return "ok".to_string();
        }
        if matches!(
            noun,
            "order" | "shipment" | "package" | "parcel" | "tracking"
        ) {
            return self
                .pick(&["processing", "shipped", "in_transit", "delivered"])
                .to_string();
        }
        match self.purpose.action {
            super::purpose::Action::Create => "created",
            super::purpose::Action::Check => "valid",
            _ => "active",
        }
        .to_string()
    }
}

/// A number as text, with its decimals.
pub fn format_number(x: f64, decimals: i32) -> String {
    if decimals <= 0 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.*}", decimals as usize)
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

/// A value in the format of `sample`: digits for digits, letters for letters, the rest kept
/// (`B094NVF2V1` → `B07XQ2LM8K`-like), so list items carry ids of the API's own form.
pub fn mimic(sample: &str, rng: &mut super::rng::Rng) -> String {
    const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
    sample
        .chars()
        .map(|c| {
            if c.is_ascii_digit() {
                char::from(b'0' + rng.index(10) as u8)
            } else if c.is_ascii_uppercase() {
                char::from(UPPER[rng.index(26)])
            } else if c.is_ascii_lowercase() {
                char::from(LOWER[rng.index(26)])
            } else {
                c
            }
        })
        .collect()
}
