//! The kind of a leaf: what a field holds, read from its name, its parent's name and the API's domain.
//! One rule table, first match wins; `name`/`title` fields take their kind from the parent or domain.

use super::purpose::Domain;
use super::words::has;

/// What a leaf holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Url,
    ImageUrl,
    Email,
    Phone,
    Uuid,
    Hash,
    Id,
    Slug,
    /// A date and time; the role orders dates within a record.
    DateTime(DateRole),
    Date(DateRole),
    Time,
    Duration,
    Year,
    Country,
    CountryCode,
    City,
    Region,
    Address,
    Zip,
    Lat,
    Lon,
    Timezone,
    CurrencyCode,
    CurrencyName,
    LanguageCode,
    Language,
    Price,
    Percent,
    Change,
    Rating,
    Temperature,
    Humidity,
    Pressure,
    Wind,
    ExchangeRate,
    Volume,
    Age,
    Count,
    Page,
    Limit,
    Rank,
    Score,
    Person,
    FirstName,
    LastName,
    Username,
    Team,
    League,
    Company,
    Ticker,
    Airport,
    Airline,
    /// A name or title of the domain's items.
    Title,
    /// The title of a post, article or video.
    Headline,
    /// A fraction in 0–1.
    Ratio,
    /// A web domain (`example.com`).
    Host,
    /// Easy / Medium / Hard.
    Level,
    /// An IPv4 address.
    Ip,
    /// Decimal betting odds.
    Odds,
    /// Food energy in kcal.
    Calories,
    /// A nutrient amount in grams.
    Grams,
    /// A job or role (`Data Analyst`, `Director`).
    JobTitle,
    /// A player's position on the field.
    Position,
    Description,
    Status,
    Message,
    /// An error field inside a successful answer: empty.
    ErrorText,
    Gender,
    Color,
    Genre,
    Type,
    Version,
    Weight,
    Height,
    Weather,
    Ingredient,
    Quote,
    Word,
}

/// Which date of a record a date field is; their ranges keep `created <= updated <= expires` and
/// `start <= end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateRole {
    Birth,
    Created,
    Updated,
    Start,
    End,
    Expires,
    Plain,
}

struct Rule {
    any: &'static [&'static str],
    /// When not empty, one of these must be there too (`country` + `code`).
    with: &'static [&'static str],
    unless: &'static [&'static str],
    kind: Kind,
}

const fn r(any: &'static [&'static str], unless: &'static [&'static str], kind: Kind) -> Rule {
    Rule {
        any,
        with: &[],
        unless,
        kind,
    }
}

const fn r2(any: &'static [&'static str], with: &'static [&'static str], kind: Kind) -> Rule {
    Rule {
        any,
        with,
        unless: &[],
        kind,
    }
}

#[rustfmt::skip]
const IMAGE: &[&str] = &[
    "image", "img", "thumbnail", "thumb", "avatar", "logo", "picture", "photo", "icon", "poster", "cover",
    "banner", "flag", "artwork", "pic",
];

/// Field-name rules, most specific first.
#[rustfmt::skip]
const RULES: &[Rule] = &[
    r(&["error", "errors", "warning", "warnings"], &["code", "count", "rate"], Kind::ErrorText),
    r(IMAGE, &["count", "width", "height", "size", "type", "id"], Kind::ImageUrl),
    r(&["url", "link", "href", "website", "uri", "homepage", "permalink", "web", "src", "canonical"], &["type", "count", "text"], Kind::Url),
    r(&["email", "mail"], &["verified", "count", "valid", "status", "is"], Kind::Email),
    r(&["uuid", "guid"], &[], Kind::Uuid),
    r2(&["day", "year", "week", "month", "fifty", "52"], &["low", "high", "open", "close", "range"], Kind::Price),
    r(&["petrol", "diesel", "gasoline", "lpg", "cng", "fuel"], &["id", "type", "count"], Kind::Price),
    r(&["hash", "token", "checksum", "commit", "gitcommit", "md5", "sha", "sha256", "signature", "secret", "etag", "nonce", "cursor", "continuation", "after", "before"], &["count", "type"], Kind::Hash),
    r(&["domain", "hostname", "host", "server", "servers", "nameserver", "nameservers"], &["name", "id", "count", "type", "time"], Kind::Host),
    r(&["ip", "ipv4", "ipaddress", "ips"], &["count", "type", "version"], Kind::Ip),
    r(&["kcal", "calories", "calorie", "energy"], &["id", "count", "type", "unit"], Kind::Calories),
    r(&["protein", "carbohydrate", "carbohydrates", "carbs", "sugar", "sugars", "fiber", "fibre", "fat", "fats", "sodium", "cholesterol"], &["id", "type", "unit"], Kind::Grams),
    r(&["odd", "odds", "decimal"], &["id", "count", "type", "format"], Kind::Odds),
    r(&["job", "occupation", "profession", "role", "jobtitle", "position"], &["id", "count", "url", "type", "x", "y", "lat", "lon"], Kind::JobTitle),
    r(&["difficulty", "level", "skill"], &["id", "count", "sea", "water", "noise"], Kind::Level),
    r(&["ratio"], &["percent"], Kind::Ratio),
    r(&["popularity"], &[], Kind::Percent),
    r(&["step", "steps", "directions", "instruction", "instructions", "method"], &["id", "count", "type", "name"], Kind::Description),
    r(&["phone", "mobile", "tel", "telephone", "fax", "whatsapp"], &["verified", "count", "type"], Kind::Phone),
    r(&["alpha2", "iso2", "alpha3", "iso3", "countrycode", "cc"], &[], Kind::CountryCode),
    r2(&["country", "nationality"], &["code", "iso", "alpha", "abbr", "short"], Kind::CountryCode),
    r2(&["currency"], &["code", "iso", "abbr"], Kind::CurrencyCode),
    r2(&["language", "lang"], &["code", "iso"], Kind::LanguageCode),
    r(&["currencycode"], &[], Kind::CurrencyCode),
    r(&["symbol", "ticker", "tickers"], &["currency", "name"], Kind::Ticker),
    r(&["iata", "icao"], &[], Kind::Airport),
    r2(&["time", "timeout", "delay", "interval", "wait"], &["limit", "cpu", "wall", "extra", "max", "out", "seconds", "ms"], Kind::Duration),
    r(&["lat", "latitude"], &["delta"], Kind::Lat),
    r(&["lng", "lon", "long", "longitude"], &["delta", "name", "description", "text"], Kind::Lon),
    r(&["timezone", "tz", "zone"], &["offset"], Kind::Timezone),
    r(&["zip", "postal", "postcode", "zipcode", "cep"], &[], Kind::Zip),
    r(&["humidity"], &[], Kind::Humidity),
    r(&["temp", "temperature", "celsius", "fahrenheit", "feels", "dew", "kelvin", "tempc", "tempf", "heat"], &["unit", "units"], Kind::Temperature),
    r(&["pressure"], &[], Kind::Pressure),
    r(&["wind", "gust"], &["direction", "dir", "deg"], Kind::Wind),
    r(&["percent", "percentage", "pct", "probability", "cloudiness", "clouds", "share"], &["change", "changes"], Kind::Percent),
    r(&["change", "changes", "diff", "delta", "growth"], &[], Kind::Change),
    r(&["year", "season"], &["count", "years", "growth", "change", "est", "per", "ago"], Kind::Year),
    r2(&["birth", "born", "death", "died"], &["place", "city", "town", "location"], Kind::City),
    r2(&["first"], &["seen", "indexed", "crawled"], Kind::DateTime(DateRole::Created)),
    r(&["source", "site", "outlet"], &["id", "url", "link", "code", "language", "lang", "currency", "type"], Kind::Company),
    r(&["confidence", "similarity", "relevance"], &[], Kind::Ratio),
    r(&["birthday", "dob", "birth", "born", "birthdate"], &["place", "city", "country"], Kind::Date(DateRole::Birth)),
    r(&["created", "creation", "joined", "registered", "issued", "added", "published", "posted", "release", "released", "uploaded"], &["by", "count"], Kind::DateTime(DateRole::Created)),
    r(&["updated", "modified", "edited", "last", "refreshed", "observed", "fetched", "now"], &["name", "price", "count", "by", "days", "day", "up", "down", "hours", "weeks"], Kind::DateTime(DateRole::Updated)),
    r(&["expires", "expiry", "expiration", "expire", "valid", "deadline", "due"], &["is", "count"], Kind::DateTime(DateRole::Expires)),
    r(&["start", "begin", "departure", "depart", "checkin", "kickoff", "since", "opens"], &["name", "price", "count", "city", "airport", "station"], Kind::DateTime(DateRole::Start)),
    r(&["end", "finish", "arrival", "arrive", "checkout", "until", "closes"], &["name", "price", "count", "city", "airport", "station", "point"], Kind::DateTime(DateRole::End)),
    r(&["timestamp", "datetime", "date", "at", "day", "dt", "time", "epoch"], &["count", "zone", "format", "days", "type"], Kind::DateTime(DateRole::Plain)),
    r(&["duration", "runtime", "length", "minutes", "seconds", "secs", "ms", "hours"], &["count", "unit"], Kind::Duration),
    r(&["nationality", "country"], &["count", "id"], Kind::Country),
    r(&["city", "town", "municipality", "birthplace", "hometown", "locality", "location"], &["count", "id", "type", "code"], Kind::City),
    r(&["region", "province", "county", "state", "district"], &["count", "id", "code"], Kind::Region),
    r(&["boundingbox", "bbox"], &[], Kind::Lat),
    r(&["suburb", "neighbourhood", "neighborhood", "borough"], &["id"], Kind::Region),
    r2(&["formatted"], &["address", "location"], Kind::Address),
    r(&["address", "street", "addr", "road", "display"], &["email", "ip", "count", "id"], Kind::Address),
    r(&["currency", "currencies"], &["name", "symbol"], Kind::CurrencyCode),
    r(&["language", "lang", "locale", "languages"], &["count", "name"], Kind::LanguageCode),
    r(&["price", "cost", "fee", "salary", "amount", "balance", "revenue", "budget", "total", "subtotal", "open", "close", "high", "low", "bid", "ask", "nav", "value", "worth", "earnings", "income"], &["count", "change", "percent", "pages", "results", "items", "records", "number", "time", "hours", "date", "type", "name"], Kind::Price),
    r(&["rate", "rates", "conversion", "converted", "result"], &["count", "limit", "interest", "heart", "success"], Kind::ExchangeRate),
    r(&["volume", "cap", "capitalization", "marketcap", "supply"], &[], Kind::Volume),
    r(&["rating", "ratings", "stars", "score", "rank", "grade"], &["count", "votes", "num", "total"], Kind::Rating),
    r(&["age"], &[], Kind::Age),
    r(&["page", "pages", "offset", "current", "next", "prev", "previous"], &["url", "link", "token", "cursor"], Kind::Page),
    r(&["limit", "per", "pagesize", "perpage"], &[], Kind::Limit),
    r(&["position", "pos", "order", "index", "place", "ranking", "standing"], &["name", "id", "type"], Kind::Rank),
    r(&["goals", "points", "pts", "wins", "losses", "draws", "won", "lost", "drawn", "played", "assists"], &[], Kind::Score),
    r(&["count", "num", "number", "quantity", "followers", "following", "likes", "views", "fans", "subscribers", "downloads", "members", "population", "votes", "reviews", "plays", "analysts", "analyst", "servings", "portions", "serves", "rooms", "beds", "bedrooms", "bathrooms", "baths", "guests", "comments", "shares", "stock", "total", "size", "items", "results"], &["id", "phone", "tax", "vat", "account", "card", "flight", "order", "invoice", "tracking"], Kind::Count),
    r(&["fmt", "longfmt", "formatted"], &["date", "time"], Kind::Price),
    r(&["id", "ids", "key", "code", "sku", "isbn", "isin", "cusip", "asin", "ref", "reference", "number", "no", "uid", "pk", "imdbid", "tracking"], &["country", "currency", "language", "lang", "zip", "postal", "area", "color", "status", "error", "response"], Kind::Id),
    r(&["slug"], &[], Kind::Slug),
    r(&["time", "hour", "opens", "closes", "open", "close"], &[], Kind::Time),
    r(&["version", "ver"], &[], Kind::Version),
    r(&["status", "state", "condition"], &["code", "message", "text"], Kind::Status),
    r(&["message", "msg"], &[], Kind::Message),
    r(&["gender", "sex"], &[], Kind::Gender),
    r(&["color", "colour"], &[], Kind::Color),
    r(&["genre", "genres", "topic", "tag", "tags", "category", "categories", "section", "subject", "keywords", "sector", "industry"], &["id", "count", "url"], Kind::Genre),
    r(&["type", "kind", "format", "class", "level", "plan", "tier", "mode", "method", "unit", "units", "sport", "typename"], &["id", "count"], Kind::Type),
    r(&["weight", "mass", "kg"], &[], Kind::Weight),
    r(&["height", "width", "elevation", "altitude", "distance", "depth"], &[], Kind::Height),
    r(&["weather", "conditions", "forecast"], &["id", "url"], Kind::Weather),
    r(&["description", "bio", "about", "text", "content", "comment", "review", "body", "overview", "details", "snippet", "caption", "note", "notes", "excerpt", "biography", "abstract", "instructions", "definition", "answer", "plot", "synopsis", "summary", "lyrics", "explanation", "comment"], &["id", "count", "url", "length"], Kind::Description),
    r(&["ingredient", "ingredients"], &[], Kind::Ingredient),
    r(&["quote", "joke", "fact", "facts", "quotes", "jokes", "punchline", "setup", "riddle"], &["id", "count"], Kind::Quote),
    r(&["username", "handle", "login", "screen", "nickname", "screenname", "user"], &["id", "count", "name"], Kind::Username),
    r(&["first", "firstname", "given", "forename"], &[], Kind::FirstName),
    r(&["last", "lastname", "surname", "family"], &[], Kind::LastName),
    r(&["author", "authors", "artist", "artists", "writers", "directors", "actors", "players", "character", "characters", "player", "owner", "creator", "person", "member", "actor", "director", "manager", "coach", "writer", "singer", "host", "contact", "customer", "employee", "driver", "fullname", "referee", "uploader", "seller", "agent", "candidate", "composer"], &["id", "count", "url"], Kind::Person),
    r(&["team", "club", "home", "away", "opponent", "squad"], &["id", "count", "score", "goals", "url"], Kind::Team),
    r(&["league", "competition", "tournament"], &["id", "count"], Kind::League),
    r(&["company", "brand", "publisher", "label", "merchant", "provider", "agency", "vendor", "manufacturer", "organization", "organisation", "employer", "exchange", "registrar", "bookmaker", "carrier", "studio", "network", "store", "shop"], &["id", "count", "url", "code"], Kind::Company),
    r(&["airport"], &[], Kind::Airport),
    r(&["airline"], &[], Kind::Airline),
    r(&["word", "synonym", "synonyms", "antonym", "term"], &["count"], Kind::Word),
];

/// Tokens of the field's parent that make its `name` a person, team, and so on.
#[rustfmt::skip]
const PARENT_RULES: &[(&[&str], Kind)] = &[
    (&["author", "artist", "artists", "player", "players", "owner", "creator", "user", "person", "people", "member", "members", "actor", "actors", "cast", "director", "coach", "driver", "profile", "lineup", "up", "referee", "channel", "uploader", "seller", "manager"], Kind::Person),
    (&["team", "teams", "club", "home", "away", "competitor", "competitors", "opponent", "participants"], Kind::Team),
    (&["league", "competition", "tournament", "unique"], Kind::League),
    (&["company", "companies", "brand", "publisher", "merchant", "organization", "employer", "store", "provider"], Kind::Company),
    (&["country", "countries", "nationality"], Kind::Country),
    (&["city", "cities", "location", "locality", "venue", "place", "address"], Kind::City),
    (&["currency", "currencies"], Kind::CurrencyName),
    (&["language", "languages"], Kind::Language),
    (&["airport", "origin", "destination", "departure", "arrival"], Kind::Airport),
    (&["airline", "carrier"], Kind::Airline),
    (&["category", "categories", "genre", "genres", "tag", "tags"], Kind::Genre),
];

/// Words that make a field a name or title of something.
const NAME_WORDS: &[&str] = &["name", "title", "label", "headline", "fullname"];

/// Word endings that glue onto other words in field names (`imageurl`, `imdbrating`, `releasedate`).
#[rustfmt::skip]
const SUFFIXES: &[&str] = &[
    "url", "domain", "name", "date", "time", "rating", "count", "code", "image", "price", "type", "title",
    "link",
];

/// A one-word name made of two known words is read as both (`imageurl` → `image`, `url`).
fn split_compound(key: &[String]) -> Option<Vec<String>> {
    let [word] = key else { return None };
    if let Some(stem) = word.strip_suffix("id").filter(|s| s.len() >= 4) {
        return Some(vec![stem.to_string(), "id".to_string()]);
    }
    let suffix = SUFFIXES
        .iter()
        .find(|s| word.len() >= s.len() + 3 && word.ends_with(*s))?;
    Some(vec![
        word[..word.len() - suffix.len()].to_string(),
        suffix.to_string(),
    ])
}

/// Classifies a leaf by its own name, its parent's name and the API's domain.
pub fn classify(key: &[String], parent: &[String], domain: Domain) -> Kind {
    if key.is_empty() {
        return Kind::Title;
    }
    if is_rate_table_entry(key, parent, domain) {
        return Kind::ExchangeRate;
    }
    if has(key, NAME_WORDS) && key.len() <= 2 {
        return name_kind(key, parent, domain);
    }
    if has(key, &["first"]) && has(key, &["name"]) {
        return Kind::FirstName;
    }
    for rule in RULES {
        if has(key, rule.any)
            && (rule.with.is_empty() || has(key, rule.with))
            && !has(key, rule.unless)
        {
            return domain_adjust(rule.kind, key, domain);
        }
    }
    match split_compound(key) {
        Some(split) => classify(&split, parent, domain),
        None => Kind::Title,
    }
}

/// `{"rates": {"EUR": 0.92, "GBP": 0.79}}`: a currency code keyed under a table of rates is that
/// currency's rate, not a count or a name.
fn is_rate_table_entry(key: &[String], parent: &[String], domain: Domain) -> bool {
    matches!(domain, Domain::Currency | Domain::Crypto)
        && key.len() == 1
        && key[0].len() == 3
        && super::vocab::per_usd(&key[0]).is_some()
        && has(parent, &["rate", "rates", "quotes", "conversion", "prices"])
}

/// A `name`/`title` field: the kind named with it (`team_name`), its parent's kind, or the domain's.
fn name_kind(key: &[String], parent: &[String], domain: Domain) -> Kind {
    let others: Vec<String> = key
        .iter()
        .filter(|t| !NAME_WORDS.contains(&t.as_str()) && t.as_str() != "full")
        .cloned()
        .collect();
    if !others.is_empty() {
        if has(&others, &["first", "given"]) {
            return Kind::FirstName;
        }
        if has(&others, &["last", "family"]) {
            return Kind::LastName;
        }
        let k = classify(&others, parent, domain);
        if !matches!(k, Kind::Id | Kind::Title | Kind::Description | Kind::Type) {
            return match k {
                Kind::CurrencyCode => Kind::CurrencyName,
                Kind::LanguageCode => Kind::Language,
                Kind::Username => Kind::Person,
                other => other,
            };
        }
    }
    if has(
        parent,
        &[
            "post", "posts", "tweet", "tweets", "article", "articles", "story", "stories", "video",
            "videos", "news",
        ],
    ) && matches!(domain, Domain::Social | Domain::News | Domain::Generic)
    {
        return Kind::Headline;
    }
    for (words, kind) in PARENT_RULES {
        if has(parent, words) {
            return *kind;
        }
    }
    if has(key, &["headline"]) {
        return Kind::Title;
    }
    Kind::Title
}

/// The same field name means different things in different domains.
fn domain_adjust(kind: Kind, key: &[String], domain: Domain) -> Kind {
    match (kind, domain) {
        (Kind::ExchangeRate, d) if d != Domain::Currency && d != Domain::Crypto => {
            if has(key, &["result", "converted", "conversion"]) {
                Kind::Price
            } else {
                Kind::Percent
            }
        }
        (Kind::Rating, Domain::Football | Domain::Sports) if has(key, &["score"]) => Kind::Score,
        (Kind::Team, d)
            if d != Domain::Football && d != Domain::Sports && has(key, &["home", "away"]) =>
        {
            Kind::Title
        }
        (Kind::Company, Domain::Stocks) if has(key, &["exchange"]) => Kind::Company,
        (Kind::Price, Domain::Stocks | Domain::Crypto) if has(key, &["volume"]) => Kind::Volume,
        (Kind::Title, Domain::Stocks)
            if has(
                key,
                &[
                    "estimate", "avg", "average", "eps", "sales", "revenue", "target", "ebitda",
                    "income",
                ],
            ) =>
        {
            Kind::Price
        }
        (Kind::Address, d) if d != Domain::Geo && has(key, &["display"]) => Kind::Title,
        (Kind::Id, Domain::Currency) if key.len() == 1 && key[0] == "code" => Kind::CurrencyCode,
        (Kind::Rank | Kind::JobTitle, Domain::Football | Domain::Sports)
            if has(key, &["position", "pos"]) =>
        {
            Kind::Position
        }
        (Kind::JobTitle, _) if has(key, &["position"]) => Kind::Rank,
        (Kind::Title | Kind::Count, Domain::Stocks | Domain::Crypto)
            if key.len() == 1 && matches!(key[0].as_str(), "max" | "min" | "raw") =>
        {
            Kind::Price
        }
        (Kind::Price, d)
            if d != Domain::Stocks
                && d != Domain::Crypto
                && has(key, &["open", "close", "opens", "closes"]) =>
        {
            Kind::Time
        }
        (other, _) => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::words::tokens;

    fn k(key: &str, parent: &str, d: Domain) -> Kind {
        classify(&tokens(key), &tokens(parent), d)
    }

    #[test]
    fn types_fields_by_name_parent_and_domain() {
        assert_eq!(k("alpha2", "country", Domain::Geo), Kind::CountryCode);
        assert_eq!(k("countryCode", "", Domain::Generic), Kind::CountryCode);
        assert_eq!(k("name", "country", Domain::Generic), Kind::Country);
        assert_eq!(k("name", "homeTeam", Domain::Football), Kind::Team);
        assert_eq!(k("name", "author", Domain::Books), Kind::Person);
        assert_eq!(k("team_name", "", Domain::Sports), Kind::Team);
        assert_eq!(k("image_url", "", Domain::Generic), Kind::ImageUrl);
        assert_eq!(k("humidity", "main", Domain::Weather), Kind::Humidity);
        assert_eq!(k("feels_like", "main", Domain::Weather), Kind::Temperature);
        assert_eq!(k("rate", "", Domain::Currency), Kind::ExchangeRate);
        assert_eq!(k("rate", "", Domain::Generic), Kind::Percent);
        assert_eq!(
            k("created_at", "", Domain::Generic),
            Kind::DateTime(DateRole::Created)
        );
        assert_eq!(
            k("expiry_date", "", Domain::Generic),
            Kind::DateTime(DateRole::Expires)
        );
        assert_eq!(k("currency_name", "", Domain::Currency), Kind::CurrencyName);
        assert_eq!(k("symbol", "", Domain::Stocks), Kind::Ticker);
        assert_eq!(k("lat", "coord", Domain::Weather), Kind::Lat);
        assert_eq!(k("followers_count", "", Domain::Social), Kind::Count);
        assert_eq!(k("error", "", Domain::Generic), Kind::ErrorText);
        assert_eq!(k("first_name", "", Domain::Generic), Kind::FirstName);
    }
}
