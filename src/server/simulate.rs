//! Schema-driven simulation of an API's answer: the shape of its `template_response` (types, nested
//! objects, list lengths) filled with values that are plausible for each field's name, echo the call's
//! arguments where a field obviously refers to one, and are a pure function of (API, arguments) so
//! reruns are identical. No template → a generic answer built from the API's name and arguments.

use serde_json::{Map, Number, Value};

use crate::toolbench::ApiDoc;
use crate::toolbench::naming::standardize;
use crate::tools::args::canonical_json;

/// Lists are generated at their template length up to this many items (observations are cut at 1,024
/// characters anyway; 250-item lists would only cost time).
const MAX_LIST: usize = 20;
/// Upper bound on generated leaves per response, so a pathological template stays fast.
const MAX_NODES: usize = 4000;

/// A small, stable PRNG (SplitMix64): the sequence must not change when a dependency is upgraded, or
/// recorded runs stop being reproducible.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as i64
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        if items.is_empty() {
            return "";
        }
        items[(self.next_u64() % items.len() as u64) as usize]
    }
}

/// FNV-1a: a stable hash for seeds (std's hasher is randomised per process).
pub fn stable_hash(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0x1f)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

const FIRST: &[&str] = &[
    "James", "Maria", "Liam", "Sofia", "Noah", "Emma", "Lucas", "Aisha", "Mateo", "Yuki", "Elena",
    "Omar", "Chloe", "Ravi", "Hannah", "Diego", "Nora", "Kenji", "Isabel", "Samuel",
];
const LAST: &[&str] = &[
    "Smith", "Garcia", "Johnson", "Rossi", "Nguyen", "Kim", "Silva", "Brown", "Martin", "Lopez",
    "Wilson", "Patel", "Tanaka", "Novak", "Dubois", "Andersen", "Costa", "Murphy", "Schmidt",
    "Ali",
];
const CITIES: &[&str] = &[
    "New York",
    "London",
    "Paris",
    "Tokyo",
    "Berlin",
    "Madrid",
    "Toronto",
    "Sydney",
    "Sao Paulo",
    "Mumbai",
    "Chicago",
    "Amsterdam",
    "Seoul",
    "Lisbon",
    "Dubai",
    "Singapore",
    "Mexico City",
    "Cairo",
    "Istanbul",
    "Rome",
];
const COUNTRIES: &[(&str, &str)] = &[
    ("United States", "US"),
    ("United Kingdom", "GB"),
    ("France", "FR"),
    ("Germany", "DE"),
    ("Japan", "JP"),
    ("Spain", "ES"),
    ("Canada", "CA"),
    ("Australia", "AU"),
    ("Brazil", "BR"),
    ("India", "IN"),
    ("Italy", "IT"),
    ("Netherlands", "NL"),
    ("South Korea", "KR"),
    ("Mexico", "MX"),
];
const REGIONS: &[&str] = &[
    "California",
    "Ontario",
    "Bavaria",
    "Catalonia",
    "Queensland",
    "Texas",
    "Lombardy",
    "Kyoto",
    "Scotland",
    "New South Wales",
];
const STREETS: &[&str] = &[
    "Main St",
    "Oak Avenue",
    "Maple Road",
    "Park Lane",
    "River Street",
    "Hill Road",
    "King Street",
    "Station Road",
    "Elm Street",
    "Market Street",
];
const ADJ: &[&str] = &[
    "Blue", "Silent", "Golden", "Urban", "Wild", "Bright", "Hidden", "Modern", "Classic",
    "Northern", "Rapid", "Little", "Grand", "Open", "Smart",
];
const NOUN: &[&str] = &[
    "River", "Garden", "Harbor", "Summit", "Echo", "Market", "Studio", "Journey", "Signal",
    "Horizon", "Bridge", "Forest", "Atlas", "Pulse", "Canvas",
];
const ORG_SUFFIX: &[&str] = &[
    "Labs",
    "Group",
    "Inc.",
    "Systems",
    "Partners",
    "Media",
    "Technologies",
    "Co.",
];
const KINDS: &[&str] = &[
    "standard", "premium", "basic", "featured", "public", "official", "general", "custom",
];
const GENRES: &[&str] = &[
    "pop", "rock", "jazz", "drama", "comedy", "news", "sports", "travel", "science", "food",
];
const STATUS: &[&str] = &["active", "success", "completed", "available", "ok"];
const COLORS: &[&str] = &[
    "red", "blue", "green", "black", "white", "orange", "purple", "yellow",
];
const CURRENCIES: &[&str] = &["USD", "EUR", "GBP", "JPY", "CAD", "AUD"];
const LANGS: &[&str] = &["en", "es", "fr", "de", "pt", "ja"];
const SENTENCES: &[&str] = &[
    "{s} is one of the most popular results in its category, with consistently good reviews.",
    "Here is the latest information about {s}, updated within the last 24 hours.",
    "{s} offers a {a} selection of {n} and detailed records for each entry.",
    "This entry matches the request for {s} and includes the main details available.",
    "Data for {s} was collected from public sources and verified by the provider.",
    "{s} has grown steadily over recent years and remains a reference for {n}.",
];

/// The tokens of a field name: `venueName`, `venue_name` and `venue-name` all give `[venue, name]`.
fn tokens(key: &str) -> Vec<String> {
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

fn norm(key: &str) -> String {
    let s: String = key
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    // `is_id` is ToolBench's rename of `id`.
    match s.strip_prefix("is") {
        Some(rest) if key.starts_with("is_") && !rest.is_empty() => rest.to_string(),
        _ => s,
    }
}

fn has(toks: &[String], words: &[&str]) -> bool {
    toks.iter().any(|t| words.contains(&t.as_str()))
}

const QUERYISH: &[&str] = &[
    "query",
    "q",
    "keyword",
    "keywords",
    "search",
    "term",
    "searchterm",
    "text",
    "name",
    "title",
];

/// Per-response generation state.
struct Gen<'a> {
    rng: Rng,
    args: Vec<(String, &'a Value)>,
    /// The argument that reads as "what the user asked about", for names, titles and sentences.
    subject: Option<String>,
    host: String,
    nodes: usize,
}

impl<'a> Gen<'a> {
    fn new(seed: u64, tool: &str, args: &'a Map<String, Value>) -> Self {
        let args: Vec<(String, &Value)> = args
            .iter()
            .filter(|(_, v)| !v.is_null() && !v.is_object() && !v.is_array())
            .map(|(k, v)| (norm(k), v))
            .collect();
        let subject = args
            .iter()
            .find(|(k, _)| QUERYISH.contains(&k.as_str()))
            .or_else(|| args.iter().find(|(_, v)| v.is_string()))
            .map(|(_, v)| scalar_text(v))
            .filter(|s| !s.trim().is_empty());
        let slug: String = standardize(tool).replace('_', "");
        let host = if slug.is_empty() {
            "www.example.com".to_string()
        } else {
            format!("www.{}.com", &slug[..slug.len().min(24)])
        };
        Gen {
            rng: Rng::new(seed),
            args,
            subject,
            host,
            nodes: 0,
        }
    }

    /// The argument a field refers to, if it obviously does: same name, or a close synonym.
    fn echo(&self, key: &str, first: bool) -> Option<&'a Value> {
        let k = norm(key);
        if k.is_empty() {
            return None;
        }
        if let Some((_, v)) = self.args.iter().find(|(a, _)| *a == k) {
            return Some(v);
        }
        let groups: &[&[&str]] = &[
            &[
                "query",
                "q",
                "keyword",
                "keywords",
                "search",
                "term",
                "searchterm",
            ],
            &["symbol", "ticker", "stock"],
            &["city", "location", "town"],
            &["country", "countrycode"],
            &["lang", "language", "locale"],
            &["username", "user", "handle", "screenname"],
        ];
        for g in groups {
            if g.contains(&k.as_str())
                && let Some((_, v)) = self.args.iter().find(|(a, _)| g.contains(&a.as_str()))
            {
                return Some(v);
            }
        }
        // Only the first item of a result list is "the" thing searched for; the others vary.
        if first
            && matches!(k.as_str(), "name" | "title")
            && let Some((_, v)) = self
                .args
                .iter()
                .find(|(a, _)| QUERYISH.contains(&a.as_str()))
        {
            return Some(v);
        }
        None
    }

    fn value(&mut self, key: &str, parent: &[String], template: &Value, first: bool) -> Value {
        self.nodes += 1;
        match template {
            Value::Object(map) => self.object(key, map, first),
            Value::Array(items) => self.array(key, items),
            Value::String(t) => self.leaf(key, parent, t, first),
            other => other.clone(),
        }
    }

    fn object(&mut self, key: &str, map: &Map<String, Value>, first: bool) -> Value {
        let parent = tokens(key);
        let mut out = Map::new();
        for (k, v) in map {
            if k == "_list_length" {
                continue;
            }
            let item = self.value(k, &parent, v, first);
            out.insert(k.clone(), item);
        }
        Value::Object(out)
    }

    fn array(&mut self, key: &str, items: &[Value]) -> Value {
        let parent = tokens(key);
        let Some(head) = items.first() else {
            return Value::Array(Vec::new());
        };
        let (count, element) = match head {
            Value::String(s) => match parse_list_of(s) {
                Some((kind, n)) => (n, Value::String(kind.to_string())),
                None => (items.len(), head.clone()),
            },
            Value::Object(m) => (
                m.get("_list_length")
                    .and_then(Value::as_u64)
                    .map_or(1, |n| n as usize),
                head.clone(),
            ),
            _ => (items.len(), head.clone()),
        };
        let count = count.min(MAX_LIST);
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            if self.nodes > MAX_NODES {
                break;
            }
            let element = if i < items.len() && !matches!(head, Value::Object(_)) && items.len() > 1
            {
                &items[i]
            } else {
                &element
            };
            out.push(self.value(key, &parent, element, i == 0));
        }
        Value::Array(out)
    }

    fn leaf(&mut self, key: &str, parent: &[String], kind: &str, first: bool) -> Value {
        match kind {
            "str" => {
                if let Some(v) = self.echo(key, first) {
                    return Value::String(scalar_text(v));
                }
                Value::String(self.string(key, parent))
            }
            "int" => {
                if let Some(n) = self.echo(key, first).and_then(as_i64) {
                    return Value::from(n);
                }
                Value::from(self.int(key))
            }
            "float" => {
                if let Some(x) = self.echo(key, first).and_then(as_f64) {
                    return number(x);
                }
                number(self.float(key))
            }
            "bool" => Value::Bool(self.rng.next_u64().is_multiple_of(2)),
            "NoneType" => Value::Null,
            "empty list" => Value::Array(Vec::new()),
            "list" => Value::Array(Vec::new()),
            "dict" => Value::Object(Map::new()),
            // A literal in the template (a recorded constant): keep it.
            other => Value::String(other.to_string()),
        }
    }

    fn person(&mut self) -> String {
        format!("{} {}", self.rng.pick(FIRST), self.rng.pick(LAST))
    }

    fn title(&mut self) -> String {
        format!("{} {}", self.rng.pick(ADJ), self.rng.pick(NOUN))
    }

    fn date(&mut self) -> (i64, i64, i64) {
        (
            self.rng.range(2019, 2024),
            self.rng.range(1, 12),
            self.rng.range(1, 28),
        )
    }

    fn sentence(&mut self) -> String {
        let subject = self.subject.clone().unwrap_or_else(|| self.title());
        let a = self.rng.pick(ADJ).to_lowercase();
        let noun = self.rng.pick(NOUN).to_lowercase();
        let n = if noun.ends_with('s') {
            format!("{noun}es")
        } else {
            format!("{noun}s")
        };
        self.rng
            .pick(SENTENCES)
            .replace("{s}", &subject)
            .replace("{a}", &a)
            .replace("{n}", &n)
    }

    fn hex(&mut self, len: usize) -> String {
        let mut s = String::with_capacity(len);
        while s.len() < len {
            s.push_str(&format!("{:016x}", self.rng.next_u64()));
        }
        s.truncate(len);
        s
    }

    fn string(&mut self, key: &str, parent: &[String]) -> String {
        let t = tokens(key);
        // An `error` field inside a successful answer is empty, as real APIs send it.
        if t.len() == 1 && has(&t, &["error", "errors", "warning", "warnings"]) {
            return String::new();
        }
        if matches!(key, "message" | "msg") {
            return "Request processed successfully.".to_string();
        }
        if has(
            &t,
            &[
                "url",
                "link",
                "href",
                "website",
                "uri",
                "homepage",
                "permalink",
                "src",
                "web",
            ],
        ) {
            if has(
                &t,
                &[
                    "image",
                    "img",
                    "thumbnail",
                    "avatar",
                    "logo",
                    "picture",
                    "photo",
                    "icon",
                    "poster",
                    "cover",
                ],
            ) {
                let h = self.hex(10);
                return format!("https://{}/images/{h}.jpg", self.host);
            }
            return format!(
                "https://{}/{}/{}",
                self.host,
                t.first().map_or("item", |s| s.as_str()),
                self.rng.range(1000, 99999)
            );
        }
        if has(
            &t,
            &[
                "image",
                "img",
                "thumbnail",
                "avatar",
                "logo",
                "picture",
                "photo",
                "icon",
                "poster",
                "cover",
                "banner",
            ],
        ) {
            let h = self.hex(10);
            return format!("https://{}/images/{h}.jpg", self.host);
        }
        if has(&t, &["email", "mail"]) {
            let (f, l) = (
                self.rng.pick(FIRST).to_lowercase(),
                self.rng.pick(LAST).to_lowercase(),
            );
            return format!("{f}.{l}@{}", self.host.trim_start_matches("www."));
        }
        if has(&t, &["phone", "mobile", "tel", "telephone", "fax"]) {
            return format!(
                "+1 555-{:03}-{:04}",
                self.rng.range(100, 999),
                self.rng.range(0, 9999)
            );
        }
        if has(&t, &["uuid", "guid"]) {
            let h = self.hex(32);
            return format!(
                "{}-{}-4{}-a{}-{}",
                &h[..8],
                &h[8..12],
                &h[13..16],
                &h[17..20],
                &h[20..32]
            );
        }
        if has(
            &t,
            &[
                "hash",
                "token",
                "checksum",
                "md5",
                "sha",
                "signature",
                "secret",
            ],
        ) {
            return self.hex(32);
        }
        if has(
            &t,
            &[
                "id",
                "ids",
                "key",
                "code",
                "sku",
                "isbn",
                "ref",
                "reference",
                "number",
                "no",
            ],
        ) && !has(
            &t,
            &[
                "country", "currency", "language", "lang", "zip", "postal", "postcode", "area",
                "color",
            ],
        ) {
            if has(&t, &["code"]) {
                return format!("{}{}", self.hex(3).to_uppercase(), self.rng.range(100, 999));
            }
            return self.rng.range(100_000, 99_999_999).to_string();
        }
        if has(&t, &["slug", "permalink"]) {
            return format!(
                "{}-{}",
                self.rng.pick(ADJ).to_lowercase(),
                self.rng.pick(NOUN).to_lowercase()
            );
        }
        if has(
            &t,
            &[
                "timestamp",
                "datetime",
                "created",
                "updated",
                "modified",
                "published",
                "at",
                "since",
                "until",
                "expires",
                "expiry",
            ],
        ) {
            let (y, m, d) = self.date();
            let (h, mi) = (self.rng.range(0, 23), self.rng.range(0, 59));
            return format!("{y}-{m:02}-{d:02}T{h:02}:{mi:02}:00Z");
        }
        if has(
            &t,
            &[
                "date", "day", "birthday", "dob", "released", "release", "start", "end", "birth",
                "born",
            ],
        ) {
            let (y, m, d) = self.date();
            return format!("{y}-{m:02}-{d:02}");
        }
        if has(&t, &["time", "hour", "opens", "closes", "open", "close"]) {
            return format!(
                "{:02}:{:02}",
                self.rng.range(0, 23),
                self.rng.range(0, 11) * 5
            );
        }
        if has(&t, &["duration", "length", "runtime"]) {
            return format!("{}:{:02}", self.rng.range(1, 9), self.rng.range(0, 59));
        }
        if has(&t, &["country", "nationality"]) {
            let (name, code) = COUNTRIES[self.rng.range(0, COUNTRIES.len() as i64 - 1) as usize];
            return if has(&t, &["code", "iso", "alpha2"]) {
                code
            } else {
                name
            }
            .to_string();
        }
        if has(&t, &["city", "town", "municipality", "birthplace"]) {
            return self.rng.pick(CITIES).to_string();
        }
        if has(&t, &["region", "province", "county"])
            || (has(&t, &["state"]) && has(parent, &["location", "address", "place", "venue"]))
        {
            return self.rng.pick(REGIONS).to_string();
        }
        if has(&t, &["address", "street", "addr"]) {
            return format!("{} {}", self.rng.range(1, 999), self.rng.pick(STREETS));
        }
        if has(&t, &["zip", "postal", "postcode", "zipcode"]) {
            return format!("{:05}", self.rng.range(10000, 99999));
        }
        if has(&t, &["lat", "latitude"]) {
            return format!("{:.6}", -60.0 + self.rng.unit() * 130.0);
        }
        if has(&t, &["lng", "lon", "long", "longitude"]) {
            return format!("{:.6}", -180.0 + self.rng.unit() * 360.0);
        }
        if has(&t, &["currency"]) {
            return self.rng.pick(CURRENCIES).to_string();
        }
        if has(&t, &["language", "lang", "locale"]) {
            return self.rng.pick(LANGS).to_string();
        }
        if has(
            &t,
            &[
                "price", "amount", "cost", "balance", "salary", "fee", "total", "value", "revenue",
                "budget",
            ],
        ) {
            return format!("${:.2}", 1.0 + self.rng.unit() * 499.0);
        }
        if has(&t, &["rating", "score", "stars"]) {
            return format!("{:.1}", 1.0 + self.rng.unit() * 4.0);
        }
        if has(&t, &["year", "season"]) {
            return self.rng.range(1995, 2024).to_string();
        }
        if has(&t, &["version"]) {
            return format!(
                "{}.{}.{}",
                self.rng.range(1, 5),
                self.rng.range(0, 12),
                self.rng.range(0, 20)
            );
        }
        if has(&t, &["status", "state"]) {
            return self.rng.pick(STATUS).to_string();
        }
        if has(&t, &["gender", "sex"]) {
            return self.rng.pick(&["male", "female"]).to_string();
        }
        if has(&t, &["color", "colour"]) {
            return self.rng.pick(COLORS).to_string();
        }
        if has(
            &t,
            &[
                "genre",
                "topic",
                "tag",
                "tags",
                "category",
                "categories",
                "section",
                "subject",
            ],
        ) {
            return self.rng.pick(GENRES).to_string();
        }
        if has(
            &t,
            &[
                "type", "kind", "format", "class", "level", "plan", "tier", "mode",
            ],
        ) {
            return self.rng.pick(KINDS).to_string();
        }
        if has(&t, &["size"]) {
            return format!("{:.1} MB", 0.1 + self.rng.unit() * 20.0);
        }
        if has(
            &t,
            &[
                "description",
                "summary",
                "bio",
                "about",
                "text",
                "content",
                "comment",
                "review",
                "body",
                "overview",
                "details",
                "snippet",
                "caption",
                "note",
                "notes",
                "excerpt",
                "biography",
                "message",
                "msg",
                "info",
            ],
        ) {
            return self.sentence();
        }
        if has(&t, &["username", "handle", "login", "screen", "nickname"]) {
            return format!(
                "{}_{}",
                self.rng.pick(FIRST).to_lowercase(),
                self.rng.range(10, 999)
            );
        }
        if has(&t, &["first", "firstname", "given"]) {
            return self.rng.pick(FIRST).to_string();
        }
        if has(&t, &["last", "lastname", "surname", "family"]) {
            return self.rng.pick(LAST).to_string();
        }
        let personish = [
            "author", "artist", "player", "user", "owner", "creator", "person", "people", "member",
            "actor", "cast", "driver", "director", "manager", "coach", "writer", "singer", "host",
            "contact", "customer", "employee", "staff", "lineup", "up", "fullname",
        ];
        if has(&t, &personish) || (has(&t, &["name"]) && has(parent, &personish)) {
            return self.person();
        }
        let orgish = [
            "company",
            "brand",
            "team",
            "club",
            "organization",
            "organisation",
            "publisher",
            "label",
            "store",
            "shop",
            "merchant",
            "provider",
            "agency",
            "channel",
            "network",
            "vendor",
            "manufacturer",
        ];
        if has(&t, &orgish) || (has(&t, &["name"]) && has(parent, &orgish)) {
            return format!("{} {}", self.rng.pick(NOUN), self.rng.pick(ORG_SUFFIX));
        }
        if has(
            &t,
            &[
                "venue",
                "place",
                "location",
                "destination",
                "airport",
                "station",
                "stadium",
                "hotel",
            ],
        ) || (has(&t, &["name"]) && has(parent, &["venue", "place", "location", "hotel"]))
        {
            return format!("{} {}", self.rng.pick(CITIES), self.rng.pick(NOUN));
        }
        if has(
            &t,
            &[
                "name", "title", "headline", "label", "album", "song", "track", "movie", "show",
                "product", "item", "event",
            ],
        ) {
            return self.title();
        }
        self.title()
    }

    fn int(&mut self, key: &str) -> i64 {
        let t = tokens(key);
        let r = &mut self.rng;
        if has(
            &t,
            &[
                "timestamp",
                "created",
                "updated",
                "modified",
                "published",
                "at",
                "time",
                "date",
                "epoch",
                "expires",
            ],
        ) {
            return r.range(1_577_836_800, 1_719_792_000);
        }
        if has(&t, &["year", "season"]) {
            return r.range(1995, 2024);
        }
        if has(&t, &["id", "ids", "uid", "pk"]) {
            return r.range(100_000, 99_999_999);
        }
        if has(&t, &["age"]) {
            return r.range(18, 80);
        }
        if has(&t, &["page", "pages", "offset"]) {
            return r.range(1, 10);
        }
        if has(&t, &["rank", "position", "order", "index", "pos", "place"]) {
            return r.range(1, 100);
        }
        if has(&t, &["status", "code", "statuscode"]) {
            return 200;
        }
        if has(&t, &["width", "height", "w", "h"]) {
            return r.range(10, 192) * 10;
        }
        if has(&t, &["duration", "length", "seconds", "runtime", "minutes"]) {
            return r.range(30, 600);
        }
        if has(&t, &["rating", "score", "percent", "percentage"]) {
            return r.range(1, 100);
        }
        if has(&t, &["price", "amount", "cost", "fee", "salary"]) {
            return r.range(1, 1000);
        }
        if has(
            &t,
            &[
                "count",
                "total",
                "num",
                "number",
                "quantity",
                "followers",
                "likes",
                "views",
                "fans",
                "subscribers",
                "downloads",
                "members",
                "size",
                "population",
                "votes",
                "reviews",
                "plays",
            ],
        ) {
            let scale = [10, 100, 1000, 10_000, 100_000][r.range(0, 4) as usize];
            return r.range(1, scale);
        }
        r.range(0, 1000)
    }

    fn float(&mut self, key: &str) -> f64 {
        let t = tokens(key);
        let r = &mut self.rng;
        let round = |x: f64, d: i32| (x * 10f64.powi(d)).round() / 10f64.powi(d);
        if has(&t, &["lat", "latitude"]) {
            return round(-60.0 + r.unit() * 130.0, 6);
        }
        if has(&t, &["lng", "lon", "long", "longitude"]) {
            return round(-180.0 + r.unit() * 360.0, 6);
        }
        if has(&t, &["rating", "stars", "score"]) {
            return round(1.0 + r.unit() * 4.0, 1);
        }
        if has(
            &t,
            &[
                "percent",
                "percentage",
                "change",
                "ratio",
                "rate",
                "pct",
                "growth",
            ],
        ) {
            return round(-10.0 + r.unit() * 20.0, 2);
        }
        if has(&t, &["temp", "temperature", "celsius"]) {
            return round(-10.0 + r.unit() * 45.0, 1);
        }
        round(r.unit() * 1000.0, 2)
    }
}

fn number(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn as_i64(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `"list of str with length 3"` → `("str", 3)`.
fn parse_list_of(s: &str) -> Option<(&str, usize)> {
    let rest = s.strip_prefix("list of ")?;
    let (kind, n) = rest.split_once(" with length ")?;
    Some((kind, n.trim().parse().ok()?))
}

/// The seed of a call: the API's identity and the canonical arguments.
pub fn seed(doc: &ApiDoc, args: &Map<String, Value>) -> u64 {
    let canonical = canonical_json(&Value::Object(args.clone()));
    stable_hash(&[
        &doc.category_name,
        &standardize(&doc.tool_name),
        &standardize(&doc.api_name),
        &canonical,
    ])
}

/// Simulates one call. `template` is the API's parsed template (see [`parse_template`]).
pub fn simulate(doc: &ApiDoc, template: Option<&Value>, args: &Map<String, Value>) -> Value {
    let mut g = Gen::new(seed(doc, args), &doc.tool_name, args);
    match template {
        Some(t @ (Value::Object(_) | Value::Array(_))) if !is_empty_template(t) => {
            g.value("", &[], t, true)
        }
        Some(Value::String(kind)) if matches!(kind.as_str(), "str" | "int" | "float" | "bool") => {
            g.leaf(&doc.api_name, &[], kind, true)
        }
        _ => generic(&mut g, doc, args),
    }
}

fn is_empty_template(t: &Value) -> bool {
    match t {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => true,
    }
}

/// An answer for an API without a template: a result list for search-like APIs, else one record, both
/// echoing the arguments.
fn generic(g: &mut Gen<'_>, doc: &ApiDoc, args: &Map<String, Value>) -> Value {
    let api = tokens(&doc.api_name);
    let listy = has(
        &api,
        &[
            "search",
            "list",
            "all",
            "find",
            "top",
            "recent",
            "popular",
            "trending",
            "latest",
            "results",
            "lookup",
            "suggest",
            "autocomplete",
            "feed",
        ],
    );
    let noun = api
        .iter()
        .rev()
        .find(|t| {
            !matches!(
                t.as_str(),
                "get"
                    | "by"
                    | "for"
                    | "of"
                    | "the"
                    | "v1"
                    | "v2"
                    | "v3"
                    | "api"
                    | "list"
                    | "all"
                    | "search"
                    | "info"
                    | "details"
            )
        })
        .cloned()
        .unwrap_or_else(|| "item".to_string());
    let record = |g: &mut Gen<'_>, first: bool| {
        let mut m = Map::new();
        m.insert("id".into(), Value::from(g.int("id")));
        let title = match g.echo("name", first) {
            Some(v) => scalar_text(v),
            None => g.string("name", std::slice::from_ref(&noun)),
        };
        m.insert("name".into(), Value::String(title));
        m.insert("description".into(), Value::String(g.sentence()));
        m.insert(
            "url".into(),
            Value::String(g.string(&format!("{noun}_url"), &[])),
        );
        m.insert(
            "updated_at".into(),
            Value::String(g.string("updated_at", &[])),
        );
        for (k, v) in args {
            if !m.contains_key(k) {
                m.insert(k.clone(), v.clone());
            }
        }
        Value::Object(m)
    };
    if listy {
        let n = g.rng.range(3, 5) as usize;
        let items: Vec<Value> = (0..n).map(|i| record(g, i == 0)).collect();
        let mut out = Map::new();
        out.insert("status".into(), Value::String("success".into()));
        out.insert("total".into(), Value::from(n as i64 + g.rng.range(0, 40)));
        out.insert("results".into(), Value::Array(items));
        Value::Object(out)
    } else {
        let mut out = Map::new();
        out.insert("status".into(), Value::String("success".into()));
        out.insert("data".into(), record(g, true));
        Value::Object(out)
    }
}

/// The template of an API as a value. ToolBench stores some templates as JSON text cut off mid-way;
/// those are repaired by keeping every complete value and closing what was open.
pub fn parse_template(doc: &ApiDoc) -> Option<Value> {
    match &doc.template_response {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v) => Some(v),
            Err(_) => parse_partial_json(s),
        },
        Some(v) => Some(v.clone()),
        None => None,
    }
}

/// Parses the longest sensible prefix of truncated JSON (objects and arrays closed at the cut).
pub fn parse_partial_json(text: &str) -> Option<Value> {
    let mut p = Partial {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.value()
}

struct Partial<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Partial<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn value(&mut self) -> Option<Value> {
        if self.depth > 64 {
            return None;
        }
        match self.peek()? {
            b'{' => {
                self.i += 1;
                self.depth += 1;
                let mut m = Map::new();
                loop {
                    match self.peek() {
                        Some(b'}') => {
                            self.i += 1;
                            break;
                        }
                        Some(b',') => {
                            self.i += 1;
                            continue;
                        }
                        Some(b'"') => {}
                        _ => break,
                    }
                    let Some(key) = self.string() else { break };
                    if self.peek() != Some(b':') {
                        break;
                    }
                    self.i += 1;
                    match self.value() {
                        Some(v) => {
                            m.insert(key, v);
                        }
                        None => break,
                    }
                }
                self.depth -= 1;
                Some(Value::Object(m))
            }
            b'[' => {
                self.i += 1;
                self.depth += 1;
                let mut a = Vec::new();
                loop {
                    match self.peek() {
                        Some(b']') => {
                            self.i += 1;
                            break;
                        }
                        Some(b',') => {
                            self.i += 1;
                            continue;
                        }
                        None => break,
                        _ => {}
                    }
                    match self.value() {
                        Some(v) => a.push(v),
                        None => break,
                    }
                }
                self.depth -= 1;
                Some(Value::Array(a))
            }
            b'"' => self.string().map(Value::String),
            _ => {
                let start = self.i;
                while self.i < self.s.len()
                    && !matches!(self.s[self.i], b',' | b'}' | b']')
                    && !self.s[self.i].is_ascii_whitespace()
                {
                    self.i += 1;
                }
                // A scalar cut at the end of the text is incomplete: drop it.
                if self.i >= self.s.len() {
                    return None;
                }
                let tok = std::str::from_utf8(&self.s[start..self.i]).ok()?;
                serde_json::from_str(tok).ok()
            }
        }
    }

    /// A complete string literal, or `None` when the text ends inside it.
    fn string(&mut self) -> Option<String> {
        self.ws();
        let start = self.i;
        if self.s.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    let lit = std::str::from_utf8(&self.s[start..self.i]).ok()?;
                    return serde_json::from_str(lit).ok();
                }
                _ => self.i += 1,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(template: Option<Value>) -> ApiDoc {
        ApiDoc {
            category_name: "Data".into(),
            tool_name: "TheClique".into(),
            api_name: "Songkick artist".into(),
            api_description: Some("Artist info".into()),
            required_parameters: Some(vec![]),
            optional_parameters: Some(vec![]),
            method: None,
            template_response: template,
        }
    }

    fn args(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn follows_template_shape_and_is_deterministic() {
        let t = json!({"name": "str", "fans_num": "int", "lat": "float", "on_tour": "bool", "x": "NoneType",
            "posters": ["list of str with length 3"],
            "events": [{"date_start": "str", "location": {"city": "str"}, "_list_length": 4}], "none": "empty list"});
        let d = doc(Some(t.clone()));
        let a = args(json!({"artist_id": "520117-arctic-monkeys"}));
        let v = simulate(&d, Some(&t), &a);
        assert!(v["name"].is_string());
        assert!(v["fans_num"].is_i64());
        assert!(v["lat"].is_f64());
        assert!(v["on_tour"].is_boolean());
        assert!(v["x"].is_null());
        assert_eq!(v["posters"].as_array().map(Vec::len), Some(3));
        assert_eq!(v["events"].as_array().map(Vec::len), Some(4));
        assert!(v["events"][0]["location"]["city"].is_string());
        assert!(v["events"][0].get("_list_length").is_none());
        assert_eq!(v["none"], json!([]));
        let date = v["events"][1]["date_start"].as_str().unwrap_or_default();
        assert_eq!(date.len(), 10, "{date}");
        assert_eq!(v, simulate(&d, Some(&t), &a));
        assert_ne!(
            v,
            simulate(&d, Some(&t), &args(json!({"artist_id": "other"})))
        );
    }

    #[test]
    fn echoes_arguments() {
        let t = json!({"results": [{"name": "str", "symbol": "str", "_list_length": 3}], "query": "str", "page": "int"});
        let d = doc(Some(t.clone()));
        let v = simulate(
            &d,
            Some(&t),
            &args(json!({"q": "Lionel Messi", "ticker": "AAPL", "page": "2"})),
        );
        assert_eq!(v["query"], "Lionel Messi");
        assert_eq!(v["page"], 2);
        assert_eq!(v["results"][0]["name"], "Lionel Messi");
        assert_eq!(v["results"][0]["symbol"], "AAPL");
    }

    #[test]
    fn generic_without_template() {
        let d = doc(None);
        let v = simulate(&d, None, &args(json!({"artist_id": "x1"})));
        assert_eq!(v["status"], "success");
        assert_eq!(v["data"]["artist_id"], "x1");
    }

    #[test]
    fn repairs_cut_templates() {
        let v = parse_partial_json(
            r#"{"a": "str", "b": [{"c": "int", "_list_length": 2}], "d": {"e": "st"#,
        );
        assert_eq!(
            v,
            Some(json!({"a": "str", "b": [{"c": "int", "_list_length": 2}], "d": {}}))
        );
        assert_eq!(parse_partial_json(r#"{"a": 12"#), Some(json!({})));
    }

    #[test]
    fn field_tokens() {
        assert_eq!(tokens("venueName"), vec!["venue", "name"]);
        assert_eq!(tokens("image_url"), vec!["image", "url"]);
        assert_eq!(norm("is_id"), "id");
    }
}
