//! The shape of an answer when the API has no template, or its template is only a status message:
//! inferred from the API's action and domain, written in ToolBench's template notation (`"str"`,
//! `"int"`, `_list_length`) so the same filler gives it values.

use serde_json::{Map, Value, json};

use super::context::Ctx;
use super::purpose::{Action, Domain, Purpose, Sport};
use sum2act_core::toolbench::naming::squash;

/// Template keys that only report on the request, not on the data.
#[rustfmt::skip]
const STATUS_KEYS: &[&str] = &[
    "status", "message", "msg", "messages", "success", "code", "error", "errors", "meta", "metadata",
    "statuscode", "ok", "detail", "details", "info", "warning", "warnings", "timestamp", "requestid",
    "request", "fault", "type", "title", "instance", "stack", "statustxt", "statusmessage", "errormessage",
    "mensaje",
];

/// Whether a template carries data (anything beyond status fields, empty containers and nulls).
pub fn carries_data(template: &Value) -> bool {
    data_leaves(template, true) > 0
}

fn data_leaves(v: &Value, top: bool) -> usize {
    match v {
        Value::String(s) => {
            let kind = s
                .strip_prefix("list of ")
                .and_then(|r| r.split(' ').next())
                .unwrap_or(s);
            usize::from(!matches!(
                kind,
                "NoneType" | "empty" | "empty list" | "dict" | "list" | ""
            ))
        }
        Value::Bool(_) | Value::Number(_) => 1,
        Value::Null => 0,
        Value::Array(a) => a.iter().map(|x| data_leaves(x, false)).sum(),
        Value::Object(m) => m
            .iter()
            .filter(|(k, _)| k.as_str() != "_list_length")
            .filter(|(k, _)| !(top && is_status_key(k)))
            .map(|(_, x)| data_leaves(x, false))
            .sum(),
    }
}

fn is_status_key(k: &str) -> bool {
    let n = squash(k);
    STATUS_KEYS.contains(&n.as_str()) || n.chars().all(|c| c.is_ascii_digit())
}

/// Items named by their noun whatever the domain (`get_airports_by_country` lists airports).
fn noun_item(noun: &str) -> Option<Value> {
    Some(match noun {
        "airport" => {
            json!({"iata_code": "str", "name": "str", "city": "str", "country_code": "str", "latitude": "float", "longitude": "float", "timezone": "str"})
        }
        "country" => {
            json!({"name": "str", "alpha2_code": "str", "alpha3_code": "str", "capital_city": "str", "currency_code": "str", "language_code": "str", "timezone": "str"})
        }
        "city" => {
            json!({"name": "str", "region": "str", "country": "str", "country_code": "str", "latitude": "float", "longitude": "float", "population": "int", "timezone": "str"})
        }
        "currency" => json!({"code": "str", "currency_name": "str", "symbol": "str"}),
        "language" => json!({"code": "str", "language_name": "str"}),
        "player" => {
            json!({"player_id": "int", "name": "str", "team": "str", "position": "str", "nationality": "str", "age": "int", "goals": "int"})
        }
        "team" => {
            json!({"team_id": "int", "name": "str", "league": "str", "country": "str", "founded_year": "int", "stadium_city": "str"})
        }
        "category" | "genre" | "tag" | "topic" => {
            json!({"id": "int", "category_name": "str", "items_count": "int"})
        }
        "user" | "profile" | "account" | "follower" => item(Domain::Social, noun, Sport::Clubs),
        "actor" | "cast" | "director" | "character" | "star" => {
            json!({"id": "str", "name": "str", "birth_year": "int", "birth_place": "str", "known_for_titles": ["list of str with length 3"]})
        }
        "hashtag" => json!({"hashtag": "str", "posts_count": "int", "views_count": "int"}),
        "order" => {
            json!({"order_id": "str", "status": "str", "total_amount": "float", "currency": "str", "items_count": "int", "created_at": "str"})
        }
        "checkhealth" | "health" | "healthcheck" | "ping" | "heartbeat" => {
            json!({"status": "str", "version": "str", "uptime_seconds": "int", "checked_at": "str"})
        }
        "statement" | "income" | "balance" | "financial" | "earning" | "fundamental"
        | "cashflow" => json!({"date": "str", "symbol": "str",
            "currency": "str", "revenue": "int", "net_income": "int", "operating_cash_flow": "int", "free_cash_flow": "int", "eps": "float"}),
        "time" | "servertime" | "datetime" | "clock" => {
            json!({"datetime": "str", "timezone": "str", "unix_timestamp": "int"})
        }
        "leaderboard" | "standing" | "ranking" | "table" => {
            json!({"position": "int", "name": "str", "played": "int", "points": "int", "score": "int"})
        }
        "feed" | "post" | "tweet" | "video" | "reel" | "story" | "media" => {
            json!({"id": "str", "author_username": "str", "caption": "str",
            "created_at": "str", "likes_count": "int", "comments_count": "int", "shares_count": "int", "url": "str"})
        }
        "sentence" | "paragraph" | "text" => json!({"text": "str", "word_count": "int"}),
        "fact" => json!({"id": "int", "fact": "str", "category": "str"}),
        "qrcode" => {
            json!({"qr_code_image_url": "str", "format": "str", "width": "int", "height": "int"})
        }
        "dns" | "record" => json!({"type": "str", "host": "str", "ip": "str", "ttl": "int"}),
        "author" | "writer" | "artist" | "singer" | "poet" => {
            json!({"id": "str", "name": "str", "nationality": "str", "birth_year": "int", "works_count": "int"})
        }
        "joke" => json!({"id": "int", "joke": "str", "category": "str"}),
        "contact" => json!({"name": "str", "email": "str", "phone": "str", "role": "str"}),
        "status" => json!({"status": "str", "message": "str", "updated_at": "str"}),
        "downloader" | "download" => json!({"title": "str", "thumbnail": "str", "duration": "str",
            "formats": [{"quality": "str", "format": "str", "url": "str", "size_mb": "float", "_list_length": 3}]}),
        "review" | "comment" => {
            json!({"review_id": "str", "author": "str", "rating": "int", "title": "str", "text": "str", "created_at": "str"})
        }
        _ => return None,
    })
}

/// One item of the domain, as a template. Long because it is a rule table: one template per domain.
fn item(domain: Domain, noun: &str, sport: Sport) -> Value {
    if domain != Domain::Social
        && let Some(v) = noun_item(noun)
    {
        return v;
    }
    match domain {
        Domain::Weather => {
            json!({"location": {"name": "str", "region": "str", "country": "str", "lat": "float", "lon": "float", "timezone": "str"},
            "temperature": "float", "feels_like": "float", "humidity": "int", "pressure": "int", "wind_speed": "float",
            "description": "str", "observed_at": "str"})
        }
        Domain::Stocks
            if matches!(
                noun,
                "profile" | "company" | "overview" | "info" | "summary"
            ) =>
        {
            json!({"symbol": "str", "company_name": "str",
            "exchange": "str", "sector": "str", "industry": "str", "ceo": "str", "website": "str", "country": "str", "employees_count": "int", "description": "str"})
        }
        Domain::Stocks => {
            json!({"symbol": "str", "name": "str", "exchange": "str", "currency": "str", "price": "float",
            "change": "float", "change_percent": "float", "open": "float", "high": "float", "low": "float", "volume": "int", "updated_at": "str"})
        }
        Domain::Crypto => {
            json!({"symbol": "str", "name": "str", "price_usd": "float", "change_24h_percent": "float",
            "market_cap_usd": "int", "volume_24h_usd": "int", "rank": "int", "last_updated": "str"})
        }
        Domain::Currency => {
            json!({"code": "str", "currency_name": "str", "rate": "float", "date": "str"})
        }
        Domain::Football => {
            json!({"match_id": "int", "league": "str", "home_team": "str", "away_team": "str", "home_goals": "int",
            "away_goals": "int", "venue_city": "str", "kickoff_at": "str", "status": "str"})
        }
        Domain::Sports if sport == Sport::Individual => {
            json!({"event_id": "int", "event_name": "str", "tour": "str", "venue_city": "str",
            "country": "str", "start_date": "str", "end_date": "str", "status": "str", "leader": "str", "winner_score": "int"})
        }
        Domain::Sports => {
            json!({"game_id": "int", "league": "str", "home_team": "str", "away_team": "str", "home_points": "int",
            "away_points": "int", "start_time": "str", "status": "str"})
        }
        Domain::Music => {
            json!({"track_id": "str", "title": "str", "artist": "str", "album": "str", "genre": "str",
            "duration_ms": "int", "release_date": "str", "popularity": "int", "url": "str"})
        }
        Domain::Movies => {
            json!({"id": "str", "title": "str", "year": "int", "genres": ["list of str with length 2"], "rating": "float",
            "runtime_minutes": "int", "director": "str", "overview": "str", "poster_url": "str"})
        }
        Domain::Books => {
            json!({"id": "str", "title": "str", "author": "str", "published_year": "int", "isbn": "str",
            "publisher": "str", "rating": "float", "description": "str"})
        }
        Domain::News => {
            json!({"title": "str", "source": "str", "author": "str", "published_at": "str", "url": "str",
            "summary": "str", "category": "str", "image_url": "str"})
        }
        Domain::Shopping => {
            json!({"product_id": "str", "title": "str", "brand": "str", "price": "float", "currency": "str",
            "rating": "float", "reviews_count": "int", "in_stock": "bool", "url": "str", "image_url": "str"})
        }
        Domain::Logistics => {
            json!({"tracking_number": "str", "carrier": "str", "status": "str", "origin_country": "str",
            "destination_country": "str", "last_update": "str", "estimated_delivery_date": "str",
            "events": [{"date": "str", "location": "str", "description": "str", "_list_length": 3}]})
        }
        Domain::Food => {
            json!({"id": "int", "title": "str", "ingredients": ["list of str with length 5"], "servings": "int",
            "ready_in_minutes": "int", "calories": "int", "instructions": "str", "image_url": "str"})
        }
        Domain::Travel => {
            json!({"id": "int", "name": "str", "address": "str", "city": "str", "country": "str", "latitude": "float",
            "longitude": "float", "rating": "float", "price_per_night": "float", "currency": "str", "url": "str"})
        }
        Domain::Flights => {
            json!({"flight_number": "str", "airline": "str", "departure_airport": "str", "arrival_airport": "str",
            "departure_time": "str", "arrival_time": "str", "duration": "str", "stops": "int", "price": "float", "currency": "str"})
        }
        Domain::Jobs => {
            json!({"job_id": "str", "title": "str", "company": "str", "location": "str", "employment_type": "str",
            "salary_min": "int", "salary_max": "int", "posted_at": "str", "url": "str"})
        }
        Domain::Social => {
            json!({"user_id": "str", "username": "str", "full_name": "str", "followers_count": "int",
            "following_count": "int", "posts_count": "int", "bio": "str", "verified": "bool", "profile_url": "str", "created_at": "str"})
        }
        Domain::Email => {
            json!({"email": "str", "domain": "str", "valid_format": "bool", "mx_found": "bool", "smtp_check": "bool",
            "disposable": "bool", "free_provider": "bool", "score": "float"})
        }
        Domain::Geo => {
            json!({"city": "str", "region": "str", "country": "str", "country_code": "str", "postal_code": "str",
            "latitude": "float", "longitude": "float", "timezone": "str"})
        }
        Domain::Text => {
            json!({"word": "str", "part_of_speech": "str", "definition": "str", "synonyms": ["list of str with length 3"],
            "language": "str"})
        }
        Domain::Quotes => json!({"id": "int", "quote": "str", "author": "str", "category": "str"}),
        Domain::Generic => generic_item(noun),
    }
}

/// An item of no known domain: an id, its own value (or a name), a date and a link.
fn generic_item(noun: &str) -> Value {
    let mut m = Map::new();
    m.insert(format!("{noun}_id"), json!("str"));
    // The item's own value is named after it when the noun says what it holds (`password`,
    // `thumbnail`, `username`); else it is a `name`.
    let kind = super::kind::classify(&[noun.to_string()], &[], Domain::Generic);
    let own = !matches!(
        kind,
        super::kind::Kind::Title | super::kind::Kind::Id | super::kind::Kind::Description
    );
    m.insert(
        if own {
            noun.to_string()
        } else {
            "name".to_string()
        },
        json!("str"),
    );
    m.insert("created_at".into(), json!("str"));
    m.insert("url".into(), json!("str"));
    Value::Object(m)
}

/// A template whose only content is an empty result list (`{"results": "empty list", "meta": ...}`)
/// keeps its keys, with the first empty list holding domain items.
pub fn fill_empty_list(template: &Value, purpose: &Purpose) -> Option<Value> {
    let Value::Object(m) = template else {
        return None;
    };
    let key = m
        .iter()
        .find(|(_, v)| v.as_str() == Some("empty list") || v.as_array().is_some_and(Vec::is_empty))?
        .0
        .clone();
    let mut element = item(purpose.domain, &purpose.noun, purpose.sport);
    if let Value::Object(e) = &mut element {
        e.insert("_list_length".into(), json!(5));
    }
    let mut out = m.clone();
    out.insert(key, Value::Array(vec![element]));
    Some(Value::Object(out))
}

/// Domain items for an empty result list of a template that otherwise has data.
pub fn result_items(purpose: &Purpose) -> Value {
    let mut element = item(purpose.domain, &purpose.noun, purpose.sport);
    if let Value::Object(e) = &mut element {
        e.insert("_list_length".into(), json!(5));
    }
    Value::Array(vec![element])
}

/// The inferred template of an API without a usable one.
pub fn infer(purpose: &Purpose, ctx: &Ctx<'_>) -> Value {
    let item = item(purpose.domain, &purpose.noun, purpose.sport);
    let mut out = Map::new();
    match purpose.action {
        Action::Search => {
            for k in ctx.arg_names().iter().filter(|k| is_query_arg(k)) {
                out.insert(k.clone(), json!("str"));
            }
            out.insert("total_results".into(), json!("int"));
            out.insert("page".into(), json!("int"));
            let mut element = item;
            if let Value::Object(m) = &mut element {
                m.insert("_list_length".into(), json!(5));
            }
            out.insert(plural(&purpose.noun), Value::Array(vec![element]));
        }
        Action::Get => return with_args(item, ctx),
        Action::Create if purpose.noun == "qrcode" => {
            return with_args(noun_item("qrcode").unwrap_or_default(), ctx);
        }
        Action::Create => {
            out.insert(format!("{}_id", purpose.noun), json!("str"));
            // What was made, when the noun says what it is (`password`, `guid`, `token`, `url`).
            let kind =
                super::kind::classify(std::slice::from_ref(&purpose.noun), &[], Domain::Generic);
            if !matches!(
                kind,
                super::kind::Kind::Title | super::kind::Kind::Id | super::kind::Kind::Description
            ) {
                out.insert(purpose.noun.clone(), json!("str"));
            }
            out.insert("status".into(), json!("str"));
            out.insert("created_at".into(), json!("str"));
            return with_args(Value::Object(out), ctx);
        }
        Action::Check => {
            out.insert("valid".into(), json!("bool"));
            out.insert("status".into(), json!("str"));
            out.insert("checked_at".into(), json!("str"));
            if matches!(purpose.domain, Domain::Email | Domain::Geo) {
                out.insert("details".into(), item);
            }
            return with_args(Value::Object(out), ctx);
        }
        Action::Convert => {
            out.insert(
                "input".into(),
                Value::Object(
                    ctx.arg_names()
                        .iter()
                        .map(|k| (k.clone(), json!("str")))
                        .collect(),
                ),
            );
            out.insert("result".into(), json!("float"));
            if purpose.domain == Domain::Currency {
                out.insert("rate".into(), json!("float"));
                out.insert("date".into(), json!("str"));
            }
        }
    }
    Value::Object(out)
}

fn is_query_arg(k: &str) -> bool {
    matches!(
        super::words::norm(k).as_str(),
        "query" | "q" | "keyword" | "keywords" | "search" | "term" | "searchterm"
    )
}

/// Adds each argument the record lacks as a field (it then echoes the argument).
fn with_args(mut v: Value, ctx: &Ctx<'_>) -> Value {
    if let Value::Object(m) = &mut v {
        for k in ctx.arg_names() {
            if !m.contains_key(k) && k.len() <= 30 {
                m.insert(k.clone(), json!("str"));
            }
        }
    }
    v
}

fn plural(noun: &str) -> String {
    if matches!(
        noun,
        "news" | "data" | "lyrics" | "odds" | "series" | "media" | "details"
    ) {
        noun.to_string()
    } else if noun.ends_with('s') || noun.ends_with("ch") || noun.ends_with('x') {
        format!("{noun}es")
    } else if let Some(stem) = noun
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'o', 'u']))
    {
        format!("{stem}ies")
    } else {
        format!("{noun}s")
    }
}
