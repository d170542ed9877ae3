//! What an API is for, read from its tool name, API name, description and category: the domain its
//! values come from and the action it performs (which decides the shape of an answer without template).

use super::words::{has, singular, tokens};
use sum2act_core::toolbench::ApiDoc;

/// The subject area an API's values are drawn from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Domain {
    Weather,
    Stocks,
    Crypto,
    Currency,
    Football,
    Sports,
    Music,
    Movies,
    Books,
    News,
    Shopping,
    Logistics,
    Food,
    Travel,
    Flights,
    Jobs,
    Social,
    Email,
    Geo,
    Text,
    Quotes,
    Generic,
}

/// What a call does, from the API's verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// search/list/find/top: a list of domain items.
    Search,
    /// get/details/info: one record carrying the requested id.
    Get,
    /// create/post/send/add/generate: the created object with an id and status.
    Create,
    /// check/validate/verify: a verdict with details.
    Check,
    /// convert/translate/calculate: the computed result with its inputs.
    Convert,
}

/// Least weighted hits for a domain: one word in the API or tool name, or several in the description.
const MIN_SCORE: usize = 3;

/// Words that point to a domain; the domain with most weighted hits wins.
#[rustfmt::skip]
const DOMAIN_WORDS: &[(Domain, &[&str])] = &[
    (Domain::Weather, &["weather", "forecast", "temperature", "climate", "rain", "humidity", "meteo", "wind", "uv"]),
    (Domain::Crypto, &["crypto", "cryptocurrency", "bitcoin", "btc", "coin", "coins", "blockchain", "nft", "ethereum", "binance", "defi"]),
    (Domain::Currency, &["currency", "currencies", "exchange", "forex", "fx", "money", "fiat"]),
    (Domain::Stocks, &["stock", "stocks", "ticker", "shares", "share", "equity", "market", "finance", "financial", "trading", "dividend", "nasdaq", "nyse", "fmp", "fund", "etf", "investing", "ohlc", "iex", "earnings", "financials"]),
    (Domain::Football, &["football", "soccer", "premier", "laliga", "fifa", "uefa", "transfermarkt", "club", "clubs", "bundesliga", "seriea"]),
    (Domain::Sports, &["sport", "sports", "nba", "nfl", "mlb", "nhl", "basketball", "baseball", "tennis", "cricket", "golf", "f1", "formula", "motorsport", "odds", "match", "matches", "league", "team", "teams", "player", "players", "tournament", "fixtures", "standings", "ufc", "mma"]),
    (Domain::Logistics, &["tracking", "track", "parcel", "parcels", "package", "packages", "shipment", "shipments", "courier", "carrier", "carriers", "delivery", "logistics", "shipping", "awb", "freight"]),
    (Domain::Music, &["music", "song", "songs", "track", "tracks", "artist", "artists", "album", "albums", "spotify", "lyrics", "playlist", "shazam", "deezer", "billboard", "songkick", "concert", "concerts", "radio"]),
    (Domain::Movies, &["movie", "movies", "film", "films", "imdb", "tv", "series", "show", "shows", "netflix", "anime", "animes", "tvshow", "tvshows", "manga", "streaming", "episode", "episodes", "cinema", "actor", "ott"]),
    (Domain::Books, &["book", "books", "isbn", "author", "library", "novel", "reading", "quran", "bible", "manga"]),
    (Domain::News, &["news", "article", "articles", "headline", "headlines", "blog", "press", "journal"]),
    (Domain::Shopping, &["product", "products", "amazon", "shop", "shopping", "store", "ecommerce", "deal", "deals", "cart", "order", "aliexpress", "ebay", "walmart", "sku", "catalog", "item", "items", "review", "reviews"]),
    (Domain::Food, &["food", "recipe", "recipes", "cocktail", "cocktails", "drink", "meal", "restaurant", "restaurants", "nutrition", "ingredient", "ingredients", "pizza", "cooking", "diet", "calories"]),
    (Domain::Flights, &["flight", "flights", "airline", "airlines", "airport", "airports", "iata", "aviation"]),
    (Domain::Travel, &["hotel", "hotels", "travel", "booking", "trip", "tourism", "places", "place", "attraction", "attractions", "property", "properties", "rental", "airbnb", "vacation"]),
    (Domain::Jobs, &["job", "jobs", "career", "careers", "salary", "hiring", "employment", "linkedin", "resume", "vacancy"]),
    (Domain::Social, &["twitter", "tweet", "tweets", "instagram", "tiktok", "facebook", "reddit", "social", "followers", "hashtag", "influencer", "kick", "twitch", "telegram"]),
    (Domain::Email, &["email", "emails", "mail", "inbox", "smtp", "mx", "disposable"]),
    (Domain::Geo, &["ip", "geolocation", "geocode", "geocoding", "location", "address", "zip", "zipcode", "postal", "postcode", "city", "cities", "country", "countries", "timezone", "map", "maps", "coordinates", "distance", "cep"]),
    (Domain::Text, &["translate", "translation", "dictionary", "word", "words", "synonym", "synonyms", "definition", "grammar", "language", "text", "sentiment", "spell", "paraphrase", "summarize"]),
    (Domain::Quotes, &["quote", "quotes", "joke", "jokes", "jokeapi", "fact", "facts", "riddle", "trivia", "motivational", "inspirational", "pickup", "chuck"]),
];

#[rustfmt::skip]
const SEARCH: &[&str] = &[
    "search", "list", "all", "find", "top", "recent", "popular", "trending", "latest", "results", "lookup",
    "suggest", "suggestions", "autocomplete", "feed", "browse", "query", "history", "upcoming", "fixtures",
    "standings", "ranking", "rankings",
];
#[rustfmt::skip]
const GET: &[&str] = &[
    "get", "details", "detail", "info", "information", "by", "id", "profile", "fetch", "retrieve", "view",
    "show", "overview", "single", "one",
];
#[rustfmt::skip]
const CREATE: &[&str] = &[
    "create", "post", "send", "add", "new", "generate", "upload", "submit", "register", "book", "publish",
    "update", "delete", "remove", "set", "save", "shorten", "subscribe", "cancel", "put",
];
#[rustfmt::skip]
const CHECK: &[&str] = &[
    "check", "validate", "validation", "verify", "verification", "validator", "verifier", "detect", "is",
    "test", "status", "health", "ping", "exists", "availability",
];
#[rustfmt::skip]
const CONVERT: &[&str] = &[
    "convert", "conversion", "converter", "translate", "calculate", "calculator", "compute", "calc", "bmi",
    "estimate", "sum", "parse", "encode", "decode", "format", "transform", "exchange",
];

/// The domain, the action and the item noun of one API.
#[derive(Debug, Clone)]
pub struct Purpose {
    pub domain: Domain,
    pub action: Action,
    /// What one item is called, from the API name (`get_airports_by_country` → `airport`).
    pub noun: String,
    pub sport: Sport,
    /// The tour or league of an individual sport (`UFC`, `PGA Tour`).
    pub tour: &'static str,
    /// The words of the API and tool names, for what a few APIs compute (`bmi`).
    pub words: Vec<String>,
}

/// Which kind of sport a sports API is about: who the competitors are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sport {
    Clubs,
    Basketball,
    /// Golf, tennis, racing, combat sports: people, not teams.
    Individual,
}

fn tour(words: &[&Vec<String>]) -> &'static str {
    let any = |w: &[&str]| words.iter().any(|t| has(t, w));
    if any(&["mma", "ufc", "mmaapi", "boxing"]) {
        "UFC"
    } else if any(&["tennis", "atp", "wta"]) {
        "ATP Tour"
    } else if any(&["formula", "f1", "motorsport", "motorsportapi", "racing"]) {
        "Formula 1"
    } else {
        "PGA Tour"
    }
}

fn sport(words: &[&Vec<String>]) -> Sport {
    let any = |w: &[&str]| words.iter().any(|t| has(t, w));
    if any(&[
        "nba",
        "basketball",
        "wnba",
        "ncaa",
        "nfl",
        "mlb",
        "nhl",
        "baseball",
        "hockey",
    ]) {
        Sport::Basketball
    } else if any(&[
        "golf",
        "tennis",
        "formula",
        "f1",
        "motorsport",
        "motorsportapi",
        "mma",
        "ufc",
        "boxing",
        "racing",
        "cycling",
        "pga",
        "atp",
        "wta",
        "mmaapi",
    ]) {
        Sport::Individual
    } else {
        Sport::Clubs
    }
}

impl Purpose {
    pub fn of(doc: &ApiDoc) -> Self {
        let api = tokens(&doc.api_name);
        let tool = tokens(&doc.tool_name);
        let desc = tokens(doc.description());
        let category = tokens(&doc.category_name);
        let noun_word: Vec<String> = noun(&api).into_iter().collect();
        let domain = domain(&[
            (&api, 4),
            (&tool, 3),
            (&desc, 1),
            (&category, 1),
            (&noun_word, 3),
        ]);
        Purpose {
            domain,
            action: action(&api, &desc),
            noun: if has(&api, &["qr", "qrcode"]) || has(&tool, &["qr", "qrcode"]) {
                "qrcode".to_string()
            } else {
                noun(&api).unwrap_or_else(|| default_noun(domain).to_string())
            },
            sport: sport(&[&api, &tool, &desc]),
            tour: tour(&[&api, &tool, &desc]),
            words: api.iter().chain(tool.iter()).cloned().collect(),
        }
    }
}

fn domain(sources: &[(&Vec<String>, usize)]) -> Domain {
    let mut best = (Domain::Generic, 0);
    for (d, words) in DOMAIN_WORDS {
        let score: usize = sources
            .iter()
            .map(|(toks, w)| toks.iter().filter(|t| words.contains(&t.as_str())).count() * w)
            .sum();
        if score > best.1 && score >= MIN_SCORE {
            best = (*d, score);
        }
    }
    best.0
}

fn action(api: &[String], desc: &[String]) -> Action {
    let first = |words: &[&str]| api.first().is_some_and(|t| words.contains(&t.as_str()));
    if first(CONVERT)
        || has(
            api,
            &[
                "convert",
                "converter",
                "calculate",
                "calculator",
                "translate",
                "bmi",
            ],
        )
    {
        return Action::Convert;
    }
    if first(CHECK)
        || has(
            api,
            &[
                "validate",
                "verify",
                "validator",
                "verifier",
                "check",
                "checker",
                "validation",
            ],
        )
    {
        return Action::Check;
    }
    if first(CREATE)
        || has(
            api,
            &["generator", "gen", "generate", "shorten", "shortener", "qr"],
        )
    {
        return Action::Create;
    }
    let plural_noun = noun_token(api).is_some_and(|t| t.len() > 3 && singular(t) != *t);
    let mass_plural = noun_token(api)
        .is_some_and(|t| matches!(t.as_str(), "news" | "data" | "media" | "lyrics" | "odds"));
    if has(api, SEARCH)
        || (plural_noun || mass_plural) && !has(api, &["details", "detail", "info", "information"])
    {
        return Action::Search;
    }
    if has(api, GET) || desc.is_empty() {
        return Action::Get;
    }
    if has(
        desc,
        &[
            "calculate",
            "calculates",
            "calculator",
            "converts",
            "compute",
            "computes",
        ],
    ) {
        return Action::Convert;
    }
    if has(desc, &["list", "search", "returns a list", "all"]) {
        return Action::Search;
    }
    Action::Get
}

#[rustfmt::skip]
const NOT_NOUNS: &[&str] = &[
    "get", "by", "for", "of", "the", "a", "an", "v1", "v2", "v3", "v4", "api", "list", "all", "search",
    "info", "details", "detail", "data", "id", "ids", "name", "and", "from", "to", "with", "in", "on",
    "single", "random", "new", "latest", "top", "recent", "popular", "trending", "endpoint", "fetch",
    "retrieve", "find", "lookup", "check", "create", "send", "post", "add", "update", "delete", "validate",
    "generation", "generator", "generate", "gen", "bulk",
    "verify", "convert", "calculate", "query", "using", "via", "specific", "information", "basic", "free",
    "ultra",
];

fn noun(api: &[String]) -> Option<String> {
    let n = singular(noun_token(api)?);
    if n == "address" && has(api, &["email", "mail"]) {
        return Some("email".to_string());
    }
    let n = n
        .strip_suffix("list")
        .filter(|s| s.len() > 2)
        .map_or(n.clone(), str::to_string);
    Some(if matches!(n.as_str(), "lang" | "languages") {
        "language".to_string()
    } else {
        n
    })
}

/// The noun before `by`/`for` is the item (`airports_by_country`); else the last content word.
fn noun_token(api: &[String]) -> Option<&String> {
    let cut = api
        .iter()
        .position(|t| matches!(t.as_str(), "by" | "for" | "from" | "about" | "of" | "in"))
        .unwrap_or(api.len());
    api[..cut]
        .iter()
        .rev()
        .chain(api[cut..].iter().rev())
        .find(|t| {
            !NOT_NOUNS.contains(&t.as_str())
                && t.len() > 1
                && !t.ends_with("ly")
                && !t.chars().all(|c| c.is_ascii_digit())
        })
}

fn default_noun(d: Domain) -> &'static str {
    match d {
        Domain::Weather => "forecast",
        Domain::Stocks => "quote",
        Domain::Crypto => "coin",
        Domain::Currency => "rate",
        Domain::Football | Domain::Sports => "match",
        Domain::Music => "track",
        Domain::Movies => "title",
        Domain::Books => "book",
        Domain::News => "article",
        Domain::Shopping => "product",
        Domain::Logistics => "shipment",
        Domain::Food => "recipe",
        Domain::Travel => "place",
        Domain::Flights => "flight",
        Domain::Jobs => "job",
        Domain::Social => "user",
        Domain::Email => "email",
        Domain::Geo => "location",
        Domain::Text => "word",
        Domain::Quotes => "quote",
        Domain::Generic => "item",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(tool: &str, api: &str, desc: &str) -> ApiDoc {
        ApiDoc {
            category_name: "Data".into(),
            tool_name: tool.into(),
            api_name: api.into(),
            api_description: Some(desc.into()),
            required_parameters: Some(vec![]),
            optional_parameters: Some(vec![]),
            method: None,
            template_response: None,
        }
    }

    #[test]
    fn reads_domain_action_and_noun() {
        let p = Purpose::of(&doc(
            "Airports Finder",
            "Get Airports By Country",
            "Retrieve a list of airports",
        ));
        assert_eq!(
            (p.domain, p.action, p.noun.as_str()),
            (Domain::Flights, Action::Search, "airport")
        );
        let p = Purpose::of(&doc(
            "Currency Converter",
            "convert",
            "Convert an amount between currencies",
        ));
        assert_eq!((p.domain, p.action), (Domain::Currency, Action::Convert));
        let p = Purpose::of(&doc(
            "Email Verifier",
            "verify_email",
            "Checks if emails are deliverable",
        ));
        assert_eq!((p.domain, p.action), (Domain::Email, Action::Check));
        let p = Purpose::of(&doc(
            "Open Weather",
            "current weather data",
            "current weather for a city",
        ));
        assert_eq!(p.domain, Domain::Weather);
        let p = Purpose::of(&doc(
            "Amazon Data",
            "get_product_details",
            "details of a product by ASIN",
        ));
        assert_eq!(
            (p.domain, p.action, p.noun.as_str()),
            (Domain::Shopping, Action::Get, "product")
        );
        let p = Purpose::of(&doc("Bitly", "create_bitlink", "Shorten a long URL"));
        assert_eq!(p.action, Action::Create);
    }
}
