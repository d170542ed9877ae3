use super::*;
use serde_json::json;

fn doc(tool: &str, api: &str, desc: &str, template: Option<Value>) -> ApiDoc {
    ApiDoc {
        category_name: "Data".into(),
        tool_name: tool.into(),
        api_name: api.into(),
        api_description: Some(desc.into()),
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

fn sim(d: &ApiDoc, a: Value) -> Value {
    let t = parse_template(d);
    simulate(d, t.as_ref(), &args(a))
}

#[test]
fn follows_template_shape_and_is_deterministic() {
    let t = json!({"name": "str", "fans_num": "int", "lat": "float", "on_tour": "bool", "x": "NoneType",
        "posters": ["list of str with length 3"],
        "events": [{"date_start": "str", "location": {"city": "str"}, "_list_length": 4}], "none": "empty list"});
    let d = doc("TheClique", "Songkick artist", "Artist info", Some(t));
    let a = json!({"artist_id": "520117-arctic-monkeys"});
    let v = sim(&d, a.clone());
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
    assert_eq!(v, sim(&d, a));
    assert_ne!(v, sim(&d, json!({"artist_id": "other"})));
}

#[test]
fn echoes_arguments_and_sizes_lists_by_limit() {
    let t = json!({"results": [{"name": "str", "symbol": "str", "_list_length": 3}], "query": "str", "page": "int"});
    let d = doc("Finder", "search", "Search things", Some(t));
    let v = sim(
        &d,
        json!({"q": "Lionel Messi", "ticker": "AAPL", "page": "2", "limit": 7}),
    );
    assert_eq!(v["query"], "Lionel Messi");
    assert_eq!(v["page"], 2);
    assert_eq!(v["results"][0]["name"], "Lionel Messi");
    assert_eq!(v["results"][0]["symbol"], "AAPL");
    assert_eq!(v["results"].as_array().map(Vec::len), Some(7));
}

#[test]
fn codes_look_like_codes_and_agree_with_the_place() {
    let t = json!({"country": {"name": "str", "alpha2": "str", "alpha3": "str"}, "currency_code": "str",
        "city": "str", "lat": "float", "lon": "float", "timezone": "str"});
    let d = doc("Geo", "city info", "Information about a city", Some(t));
    let v = sim(&d, json!({"city": "Paris"}));
    assert_eq!(v["city"], "Paris");
    assert_eq!(v["country"]["name"], "France");
    assert_eq!(v["country"]["alpha2"], "FR");
    assert_eq!(v["country"]["alpha3"], "FRA");
    assert_eq!(v["currency_code"], "EUR");
    assert_eq!(v["timezone"], "Europe/Paris");
    let lat = v["lat"].as_f64().unwrap_or_default();
    assert!((lat - 48.85).abs() < 0.1, "{lat}");
}

#[test]
fn numbers_stay_in_range_and_follow_units() {
    let t = json!({"main": {"temp": "float", "humidity": "int", "feels_like": "float"}, "clouds": {"percent": "int"}});
    let d = doc(
        "Open Weather",
        "current weather",
        "Current weather for a city",
        Some(t),
    );
    for (units, lo, hi) in [
        ("metric", -30.0, 45.0),
        ("imperial", -20.0, 115.0),
        ("standard", 240.0, 320.0),
    ] {
        for city in ["London", "Dubai", "Stockholm", "Sydney"] {
            let v = sim(&d, json!({"q": city, "units": units}));
            let temp = v["main"]["temp"].as_f64().unwrap_or(f64::NAN);
            assert!((lo..=hi).contains(&temp), "{units} {city}: {temp}");
            let h = v["main"]["humidity"].as_i64().unwrap_or(-1);
            assert!((0..=100).contains(&h), "{h}");
            let p = v["clouds"]["percent"].as_i64().unwrap_or(-1);
            assert!((0..=100).contains(&p), "{p}");
        }
    }
}

#[test]
fn a_table_of_rates_keyed_by_currency_holds_each_pairs_rate() {
    let t = json!({"base": "str", "date": "str", "rates": {"EUR": "float", "GBP": "float", "JPY": "float"}});
    let d = doc(
        "fx rates",
        "Latest rates",
        "Latest exchange rates for a base currency",
        Some(t),
    );
    let v = sim(&d, json!({"base": "USD"}));
    let eur = v["rates"]["EUR"].as_f64().unwrap_or_default();
    assert!((0.8..1.0).contains(&eur), "{v}");
    let jpy = v["rates"]["JPY"].as_f64().unwrap_or_default();
    assert!((100.0..200.0).contains(&jpy), "{v}");
}

#[test]
fn exchange_rates_have_the_pair_magnitude() {
    let t = json!({"from": "str", "to": "str", "rate": "float", "result": "float"});
    let d = doc(
        "Currency Exchange",
        "exchange",
        "Convert between currencies",
        Some(t),
    );
    let v = sim(&d, json!({"from": "USD", "to": "JPY", "amount": "10"}));
    let rate = v["rate"].as_f64().unwrap_or_default();
    assert!((100.0..200.0).contains(&rate), "{rate}");
    let result = v["result"].as_f64().unwrap_or_default();
    assert!((1000.0..2000.0).contains(&result), "{result}");
    let v = sim(&d, json!({"from": "EUR", "to": "USD"}));
    let rate = v["rate"].as_f64().unwrap_or_default();
    assert!((0.9..1.3).contains(&rate), "{rate}");
}

#[test]
fn dates_of_a_record_are_ordered() {
    let t = json!({"items": [{"created_at": "str", "updated_at": "str", "expires_at": "str", "start_date": "str", "end_date": "str", "_list_length": 10}]});
    let d = doc("Accounts", "list accounts", "", Some(t));
    let v = sim(&d, json!({}));
    for item in v["items"].as_array().into_iter().flatten() {
        let s = |k: &str| item[k].as_str().unwrap_or_default()[..10].to_string();
        assert!(
            s("created_at") <= s("updated_at") && s("updated_at") <= s("expires_at"),
            "{item}"
        );
        assert!(s("start_date") <= s("end_date"), "{item}");
    }
}

#[test]
fn infers_shapes_without_a_template() {
    let search = sim(
        &doc(
            "Airports Finder",
            "Get Airports By Country",
            "list of airports in a country",
            None,
        ),
        json!({"country": "Japan"}),
    );
    let list = search["airports"].as_array().cloned().unwrap_or_default();
    assert_eq!(list.len(), 5, "{search}");
    assert_eq!(
        (list[0]["city"].as_str(), list[0]["country_code"].as_str()),
        (Some("Tokyo"), Some("JP")),
        "{search}"
    );
    assert_eq!(list[0]["iata_code"], "HND");
    let get = sim(
        &doc(
            "Amazon Data",
            "get_product_details",
            "Details of a product",
            None,
        ),
        json!({"product_id": "B094NVF2V1"}),
    );
    assert_eq!(get["product_id"], "B094NVF2V1");
    assert!(get["price"].as_f64().is_some_and(|p| p > 0.0), "{get}");
    let create = sim(
        &doc("Bitly", "create_bitlink", "Shorten a URL", None),
        json!({"long_url": "https://example.org/a"}),
    );
    assert_eq!(create["status"], "created");
    assert_eq!(create["long_url"], "https://example.org/a");
    assert!(create["bitlink_id"].is_string(), "{create}");
    let check = sim(
        &doc(
            "Email Verifier",
            "verify_email",
            "Checks if an email is deliverable",
            None,
        ),
        json!({"email": "a@b.com"}),
    );
    assert!(check["valid"].is_boolean(), "{check}");
    assert_eq!(check["email"], "a@b.com");
    let convert = sim(
        &doc("Currency Converter", "convert", "Convert an amount", None),
        json!({"from": "USD", "to": "EUR", "amount": 100}),
    );
    assert_eq!(convert["input"]["amount"], "100");
    let r = convert["result"].as_f64().unwrap_or_default();
    assert!((60.0..130.0).contains(&r), "{convert}");
}

#[test]
fn status_only_templates_get_a_data_shape() {
    let t = json!({"message": "str"});
    let d = doc(
        "Target",
        "product_search",
        "Returns the list of products based on keyword.",
        Some(t),
    );
    let v = sim(&d, json!({"keyword": "womens shoes", "count": "4"}));
    assert!(v.get("message").is_none(), "{v}");
    let items = v["products"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 4, "{v}");
    assert_eq!(items[0]["title"], "womens shoes");
    assert!(shape::carries_data(
        &json!({"data": [{"id": "int"}], "status": "str"})
    ));
    assert!(!shape::carries_data(
        &json!({"status": "str", "data": "empty list", "meta": {"msg": "str"}})
    ));
}

#[test]
fn cut_templates_still_simulate() {
    let d = doc(
        "T",
        "a",
        "",
        Some(json!("{\"a\": \"str\", \"b\": [{\"c\": \"int\"")),
    );
    let v = sim(&d, json!({}));
    assert!(v["a"].is_string(), "{v}");
}

#[test]
fn empty_result_lists_get_domain_items() {
    let t = json!({"page": "int", "results": "empty list", "tags": "empty list"});
    let d = doc("Jobs Board", "search_jobs", "Search job offers", Some(t));
    let v = sim(&d, json!({"query": "nurse", "page": "2"}));
    assert_eq!(v["page"], 2);
    let items = v["results"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 5, "{v}");
    assert!(
        items[0]["company"].is_string() && items[0]["salary_min"].is_i64(),
        "{v}"
    );
    assert_eq!(v["tags"], json!([]));
}

#[test]
fn credentials_are_never_echoed() {
    let d = doc("Dailycred", "create_user", "Create a user", None);
    let v = sim(
        &d,
        json!({"client_id": "abc", "client_secret": "s3cr3t", "api_key": "k3y", "email": "a@b.co"}),
    );
    let text = v.to_string();
    assert!(!text.contains("s3cr3t") && !text.contains("k3y"), "{text}");
    assert_eq!(v["email"], "a@b.co");
}

#[test]
fn calculators_compute_from_the_arguments() {
    let d = doc(
        "BMI Calculator",
        "bmi",
        "Calculates the body mass index",
        None,
    );
    let v = sim(&d, json!({"weight": "70", "height": "175"}));
    assert_eq!(v["result"], json!(22.9), "{v}");
    let generator = doc(
        "Random Utilities",
        "random_string",
        "Generate a random string",
        Some(json!({"result": "str"})),
    );
    let v = sim(&generator, json!({"length": "12"}));
    assert_eq!(v["result"].as_str().map(str::len), Some(12), "{v}");
}
