//! Agreement of a simulated reply with a recorded real one for the same call: which key paths of the
//! real response the simulation has, whether their JSON types match, and whether the values are of the
//! same kind (a URL for a URL, a date for a date, a code for a code).

use std::collections::BTreeMap;

use serde_json::Value;

/// JSON type names, with integers and floats both `number` (APIs mix them freely).
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every key path (array items collapsed to `[]`) with the first value seen there.
pub fn paths(v: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    collect(v, String::new(), &mut out);
    out
}

fn collect(v: &Value, path: String, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{path}.{k}");
                out.entry(p.clone()).or_insert_with(|| x.clone());
                collect(x, p, out);
            }
        }
        Value::Array(a) => {
            for x in a.iter().take(10) {
                collect(x, format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}

/// The kind of a value as a reader sees it.
pub fn value_kind(v: &Value) -> &'static str {
    let s = match v {
        Value::String(s) => s.trim(),
        Value::Number(n) if n.is_i64() || n.is_u64() => return "integer",
        Value::Number(_) => return "decimal",
        other => return type_name(other),
    };
    if s.is_empty() {
        return "empty";
    }
    if s.starts_with("http://") || s.starts_with("https://") {
        return "url";
    }
    if s.contains('@') && s.contains('.') && !s.contains(' ') {
        return "email";
    }
    if super::rules::parse_date(s).is_some()
        && s.len() >= 8
        && s.chars().filter(char::is_ascii_digit).count() >= 6
        && !s.contains(' ')
        || s.len() >= 8
            && s.len() <= 30
            && s.contains(':')
            && s.contains('-')
            && s.chars().next().is_some_and(|c| c.is_ascii_digit())
    {
        return "date";
    }
    if s.parse::<f64>().is_ok() {
        return "numeric text";
    }
    if s.len() <= 4 && s.chars().all(|c| c.is_ascii_uppercase()) {
        return "code";
    }
    if s.len() >= 16 && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return "hex";
    }
    if s.split_whitespace().count() >= 8 {
        return "prose";
    }
    "short text"
}

/// Counts for one pair of replies.
#[derive(Debug, Default, Clone, Copy)]
pub struct Agreement {
    pub real_keys: usize,
    pub shared_keys: usize,
    pub same_type: usize,
    pub real_leaves: usize,
    pub same_kind: usize,
}

impl std::ops::AddAssign for Agreement {
    fn add_assign(&mut self, o: Self) {
        self.real_keys += o.real_keys;
        self.shared_keys += o.shared_keys;
        self.same_type += o.same_type;
        self.real_leaves += o.real_leaves;
        self.same_kind += o.same_kind;
    }
}

pub fn compare(real: &Value, simulated: &Value) -> Agreement {
    let r = paths(real);
    let s = paths(simulated);
    let mut a = Agreement {
        real_keys: r.len(),
        ..Agreement::default()
    };
    for (p, rv) in &r {
        let leaf = !matches!(rv, Value::Object(_) | Value::Array(_) | Value::Null);
        a.real_leaves += usize::from(leaf);
        let Some(sv) = s.get(p) else { continue };
        a.shared_keys += 1;
        if type_name(rv) == type_name(sv) || rv.is_null() {
            a.same_type += 1;
        }
        if leaf && value_kind(rv) == value_kind(sv) {
            a.same_kind += 1;
        }
    }
    a
}
