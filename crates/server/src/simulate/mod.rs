//! Schema-driven simulation of an API's answer, a pure function of (API, arguments) so reruns are
//! identical. The template's shape (or, without a usable template, a shape inferred from what the API
//! does) is filled leaf by leaf with values of the kind each field's name and the API's domain call for,
//! echoing the call's arguments where a field refers to one.

mod compute;
mod context;
mod error_shape;
mod kind;
mod number;
mod partial_json;
mod purpose;
mod rng;
mod shape;
mod text;
mod text_kind;
mod vocab;
mod words;

use serde_json::{Map, Number, Value};

use context::Ctx;
pub use error_shape::{TemplateClass, reply_is_error, template_is_error, template_is_placeholder};
use kind::{Kind, classify};
pub use partial_json::parse_partial_json;
use purpose::{Action, Purpose};
pub use rng::{Rng, stable_hash};
pub use shape::carries_data;
use sum2act_core::toolbench::ApiDoc;
use sum2act_core::toolbench::naming::standardize;
use sum2act_core::tools::args::canonical_json;
use words::{has, scalar_text, tokens};

/// Lists are generated at their template length up to this many items (observations are cut at 1,024
/// characters anyway).
const MAX_LIST: usize = 20;
/// Upper bound on generated nodes per response, so a pathological template stays fast.
const MAX_NODES: usize = 4000;

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

/// Whether a template gives the success reply's shape: it carries data and is not a recorded error or
/// one generic field (see `error_shape`). Without one the shape is unknown and inferred.
pub fn gives_shape(template: &Value) -> bool {
    carries_data(template) && !template_is_error(template) && !template_is_placeholder(template)
}

/// Simulates one call. `template` is the API's parsed template (see [`parse_template`]); an error
/// reply recorded as the template is not copied, the shape is inferred instead.
pub fn simulate(doc: &ApiDoc, template: Option<&Value>, args: &Map<String, Value>) -> Value {
    let template = template.filter(|t| !template_is_error(t));
    let purpose = Purpose::of(doc);
    let mut ctx = Ctx::new(seed(doc, args), &purpose, &doc.tool_name, args);
    let mut fill = Fill {
        ctx: &mut ctx,
        main_list: true,
    };
    match template {
        Some(t @ (Value::Object(_) | Value::Array(_))) if gives_shape(t) => {
            fill.value("", &[], t, 0)
        }
        Some(Value::String(kind)) if matches!(kind.as_str(), "str" | "int" | "float" | "bool") => {
            fill.leaf(&doc.api_name, &[], kind, 0)
        }
        _ => {
            let inferred = template
                .and_then(|t| shape::fill_empty_list(t, &purpose))
                .unwrap_or_else(|| shape::infer(&purpose, fill.ctx));
            fill.value("", &[], &inferred, 0)
        }
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

/// Walks a template and fills it.
struct Fill<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    /// The first list of records met is the answer's result list: `limit`/`count` size it.
    main_list: bool,
}

impl Fill<'_, '_> {
    /// `index` is the position of the enclosing list item (0 outside lists).
    fn value(&mut self, key: &str, parent: &[String], template: &Value, index: usize) -> Value {
        self.ctx.nodes += 1;
        match template {
            Value::Object(map) => self.object(key, map, index),
            Value::Array(items) => self.array(key, items),
            Value::String(t) => self.leaf(key, parent, t, index),
            other => other.clone(),
        }
    }

    fn object(&mut self, key: &str, map: &Map<String, Value>, index: usize) -> Value {
        let parent = tokens(key);
        let mut out = Map::new();
        for (k, v) in map {
            if k == "_list_length" {
                continue;
            }
            let item = self.value(k, &parent, v, index);
            out.insert(k.clone(), item);
        }
        Value::Object(out)
    }

    fn list_size(&mut self, template_len: usize, of_records: bool) -> usize {
        let asked = (of_records && self.main_list)
            .then(|| {
                self.ctx.arg_number(&[
                    "limit",
                    "count",
                    "perpage",
                    "pagesize",
                    "maxresults",
                    "num",
                    "size",
                    "results",
                    "top",
                    "n",
                ])
            })
            .flatten()
            .filter(|n| (1..=100).contains(n));
        if of_records {
            self.main_list = false;
        }
        match asked {
            Some(n) => n as usize,
            None if of_records && template_len == 0 => 3,
            None => template_len,
        }
        .min(MAX_LIST)
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
            Value::Object(m) => {
                let n = m
                    .get("_list_length")
                    .and_then(Value::as_u64)
                    .map_or(1, |n| n as usize);
                (self.list_size(n, true), head.clone())
            }
            _ => (items.len(), head.clone()),
        };
        let count = count.min(MAX_LIST);
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            if self.ctx.nodes > MAX_NODES {
                break;
            }
            if head.is_object() && i > 0 {
                self.ctx.next_record();
            }
            self.ctx.item = i;
            let element = if i < items.len() && !head.is_object() && items.len() > 1 {
                &items[i]
            } else {
                &element
            };
            let mut v = self.value(key, &parent, element, i);
            // A list of names or codes does not repeat itself: draw again (a few times) on a repeat.
            for _ in 0..3 {
                if !(v.is_string() && out.contains(&v)) {
                    break;
                }
                v = self.value(key, &parent, element, i + 1);
            }
            out.push(v);
        }
        Value::Array(out)
    }

    fn leaf(&mut self, key: &str, parent: &[String], kind: &str, index: usize) -> Value {
        let want = match kind {
            "str" => Want::Str,
            "int" => Want::Int,
            "float" => Want::Float,
            "bool" => return Value::Bool(self.boolean(key)),
            "NoneType" => return Value::Null,
            "empty list" | "list" => return self.empty_list(key),
            "dict" => return Value::Object(Map::new()),
            // A literal in the template (a recorded constant): keep it.
            other => return Value::String(other.to_string()),
        };
        let toks = tokens(key);
        let kind = self.leaf_kind(&toks, parent);
        if let Some(v) = self.echo(key, kind, index) {
            return convert(v, want);
        }
        let plain_name = toks.len() == 1 && matches!(toks[0].as_str(), "name" | "title");
        let named = matches!(
            kind,
            Kind::Title | Kind::City | Kind::Country | Kind::Person | Kind::Company | Kind::Team
        );
        if named
            && plain_name
            && let Some(t) = self.search_title(index)
        {
            return Value::String(t);
        }
        let special = if want == Want::Str {
            self.text_rule(key, parent, &toks)
        } else {
            self.number_rule(kind, want, &toks)
        };
        if let Some(v) = special {
            return v;
        }
        self.fresh(kind, want, &toks)
    }

    /// What a leaf's name says it holds, in the API's domain (a team is a person in individual sports).
    fn leaf_kind(&self, toks: &[String], parent: &[String]) -> Kind {
        let kind = classify(toks, parent, self.ctx.purpose.domain);
        if kind == Kind::Team
            && self.ctx.purpose.sport == purpose::Sport::Individual
            && self.ctx.purpose.domain == purpose::Domain::Sports
        {
            return Kind::Person;
        }
        kind
    }

    /// Text leaves the arguments or the name decide: a top-level status, a yes/no question, a
    /// transformed input, a generator's N characters.
    fn text_rule(&mut self, key: &str, parent: &[String], toks: &[String]) -> Option<Value> {
        if parent.is_empty()
            && toks.len() == 1
            && toks[0] == "status"
            && self.ctx.purpose.action != Action::Create
        {
            return Some(Value::String("success".into()));
        }
        if toks.len() > 1 && matches!(toks[0].as_str(), "is" | "has" | "can") {
            return Some(Value::String(self.boolean(key).to_string()));
        }
        if has(
            toks,
            &[
                "result",
                "output",
                "converted",
                "cleaned",
                "normalized",
                "translated",
            ],
        ) && let Some(text) = self
            .ctx
            .arg_text(&["text", "string", "input", "content", "sentence", "message"])
        {
            return Some(Value::String(text));
        }
        if has(toks, &["result", "output", "string", "password", "random"])
            && let Some(n) = self
                .ctx
                .arg_number(&["length", "len", "size", "chars", "characters"])
        {
            // A generator asked for N characters gives N characters.
            let sample = "aB3dE5gH7jK9mN1pQ2sT4vW6yZ8";
            let cycle: String = sample
                .chars()
                .cycle()
                .take(n.clamp(1, 64) as usize)
                .collect();
            return Some(Value::String(text::mimic(&cycle, &mut self.ctx.rng)));
        }
        None
    }

    /// Number leaves the arguments or the name decide: a computed result, an HTTP status, a year.
    fn number_rule(&mut self, kind: Kind, want: Want, toks: &[String]) -> Option<Value> {
        if has(toks, &["result", "bmi", "value", "index"])
            && let Some(x) = self.ctx.computed()
        {
            return Some(number(x));
        }
        if want == Want::Int && is_status_code(toks) {
            return Some(Value::from(200));
        }
        if want == Want::Int
            && matches!(kind, Kind::DateTime(_) | Kind::Date(_))
            && has(toks, &["release", "released", "founded"])
        {
            return Some(Value::from(self.ctx.rng.range(1995, 2023)));
        }
        None
    }

    /// An empty list in the template: the API's result list gets domain items, anything else stays empty.
    fn empty_list(&mut self, key: &str) -> Value {
        let toks = tokens(key);
        let noun = &self.ctx.purpose.noun;
        let is_results = toks.len() == 1
            && (words::singular(&toks[0]) == *noun
                || matches!(
                    toks[0].as_str(),
                    "results" | "items" | "data" | "list" | "records" | "hits"
                ));
        if !is_results || !self.main_list {
            return Value::Array(Vec::new());
        }
        let items = shape::result_items(self.ctx.purpose);
        self.value(key, &[], &items, 0)
    }

    /// The argument this field reports, if any: an item of a result list only echoes the first time,
    /// except for arguments that filter the whole list (a city, a country, a language).
    fn echo(&self, key: &str, kind: Kind, index: usize) -> Option<&Value> {
        let v = self.ctx.echo(key)?;
        let max_len = match kind {
            Kind::CountryCode | Kind::CurrencyCode => 3,
            Kind::LanguageCode => 5,
            Kind::Ticker => 12,
            _ => usize::MAX,
        };
        if scalar_text(v).len() > max_len {
            return None;
        }
        let per_item = matches!(
            kind,
            Kind::Id
                | Kind::Title
                | Kind::Person
                | Kind::Ticker
                | Kind::Description
                | Kind::Url
                | Kind::Genre
                | Kind::Headline
        );
        (index == 0 || !per_item).then_some(v)
    }

    /// Titles of search results relate to the query (`Macbook Air`, `Macbook Air Pro`, ...).
    fn search_title(&mut self, index: usize) -> Option<String> {
        let q = self.ctx.query.clone()?;
        if self.ctx.purpose.action != Action::Search
            || q.parse::<f64>().is_ok()
            || q.len() > 60
            || q.len() < 2
        {
            return None;
        }
        let q = q.replace('+', " ");
        if index == 0 {
            return Some(q);
        }
        if self.ctx.purpose.domain == purpose::Domain::Generic {
            return None;
        }
        let variants = [
            "Pro",
            "2024 Edition",
            "Collection",
            "Live",
            "Guide",
            "Deluxe",
            "Mini",
            "Classic",
            "Plus",
            "Review",
        ];
        Some(format!("{q} {}", variants[(index - 1) % variants.len()]))
    }

    fn boolean(&mut self, key: &str) -> bool {
        let t = tokens(key);
        if has(
            &t,
            &[
                "error",
                "errors",
                "deleted",
                "blocked",
                "banned",
                "private",
                "nsfw",
                "explicit",
                "disposable",
                "spam",
                "locked",
                "archived",
                "maintenance",
            ],
        ) {
            return self.ctx.rng.chance(0.1);
        }
        if has(
            &t,
            &[
                "success",
                "valid",
                "available",
                "active",
                "verified",
                "ok",
                "enabled",
                "found",
                "exists",
                "deliverable",
            ],
        ) {
            return self.ctx.rng.chance(0.9);
        }
        self.ctx.rng.chance(0.5)
    }

    fn fresh(&mut self, kind: Kind, want: Want, toks: &[String]) -> Value {
        match want {
            Want::Str => Value::String(self.ctx.text(kind, toks)),
            Want::Int | Want::Float => {
                let num = self
                    .ctx
                    .number(kind, toks)
                    .or_else(|| self.ctx.number(Kind::Count, toks));
                let Some(x) = num else { return Value::Null };
                if want == Want::Int {
                    Value::from(x.value.round() as i64)
                } else {
                    number(x.value)
                }
            }
        }
    }
}

/// `code`, `status`, `status_code`: an HTTP status in a successful answer.
fn is_status_code(toks: &[String]) -> bool {
    matches!(toks, [t] if t == "code" || t == "status" || t == "statuscode")
        || has(toks, &["status"]) && has(toks, &["code"])
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Str,
    Int,
    Float,
}

/// An echoed argument in the template's type.
fn convert(v: &Value, want: Want) -> Value {
    match want {
        Want::Str => Value::String(scalar_text(v)),
        Want::Int => match as_f64(v) {
            Some(x) => Value::from(x.round() as i64),
            None => Value::String(scalar_text(v)),
        },
        Want::Float => as_f64(v).map_or_else(|| Value::String(scalar_text(v)), number),
    }
}

fn number(x: f64) -> Value {
    Number::from_f64(x).map_or(Value::Null, Value::Number)
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

#[cfg(test)]
mod tests;
