//! JSON Schema → GBNF, llama.cpp's grammar format, for structured output of the embedded model.
//!
//! Our own converter rather than llama.cpp's `common` library: that library is most of llama.cpp's build
//! time, and its converter orders object keys as the schema text lists them, which serde_json sorts, so
//! a model had to write `arguments` before choosing the tool `name`. Here required keys come in the order
//! of the schema's `required` array (our action schema: `thought`, `name`, `arguments`), then the optional
//! ones. Covered: `type` (one or several), `properties`/`required`, `enum`, `const`, `oneOf`/`anyOf`,
//! `items` with `minItems`/`maxItems`, `minLength`/`maxLength`, local `$ref`s (`#/$defs/…`,
//! `#/definitions/…`). Keywords that only narrow values (`pattern`, `format`, `minimum`, …) are not
//! enforced; `allOf`, `not` and `if` are refused with an error naming them.

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::{Map, Value};

/// Why a schema has no grammar.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("JSON schema at {path}: {reason}")]
pub struct SchemaError {
    /// Where in the schema (a JSON pointer).
    pub path: String,
    pub reason: String,
}

/// Longest repetition the grammar spells out; longer bounds become unbounded.
const MAX_BOUND: u64 = 4096;

/// The grammar for `schema`, with `root` as its start rule.
pub fn grammar(schema: &Value) -> Result<String, SchemaError> {
    let mut b = Builder {
        root: schema,
        rules: Vec::new(),
        by_body: HashMap::new(),
        refs: HashMap::new(),
    };
    let body = b.value(schema, "")?;
    let mut out = format!("root ::= {body}\n");
    for (name, body) in &b.rules {
        let _ = writeln!(out, "{name} ::= {body}");
    }
    Ok(out)
}

struct Builder<'a> {
    root: &'a Value,
    /// Named rules in the order they were made.
    rules: Vec<(String, String)>,
    /// Rule name by body, so identical sub-schemas share one rule.
    by_body: HashMap<String, String>,
    /// Rule names of `$ref` targets (made before their body, so recursive schemas work).
    refs: HashMap<String, String>,
}

/// Rules every grammar may use, by name.
const PRIMITIVES: &[(&str, &str)] = &[
    ("ws", r#"[ \t\n]{0,8}"#),
    (
        "char",
        r#"[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})"#,
    ),
    ("integer", r#""-"? ("0" | [1-9] [0-9]{0,18})"#),
    (
        "number",
        r#""-"? ("0" | [1-9] [0-9]{0,18}) ("." [0-9]{1,18})? ([eE] [-+]? [0-9]{1,3})?"#,
    ),
    ("boolean", r#""true" | "false""#),
    ("null", r#""null""#),
    ("string", r#""\"" char{0,600} "\"""#),
    (
        "object",
        r#""{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* )? ws "}""#,
    ),
    ("array", r#""[" ws ( value ( ws "," ws value )* )? ws "]""#),
    (
        "value",
        r#"object | array | string | number | integer | boolean | null"#,
    ),
];

impl<'a> Builder<'a> {
    /// Makes sure a primitive rule (and what it uses) is defined; returns its name.
    fn primitive(&mut self, name: &str) -> String {
        if self.rules.iter().any(|(n, _)| n == name) {
            return name.to_string();
        }
        let deps: &[&str] = match name {
            "string" => &["char"],
            "object" => &["ws", "string", "value"],
            "array" => &["ws", "value"],
            "value" => &[
                "object", "array", "string", "number", "integer", "boolean", "null",
            ],
            _ => &[],
        };
        if let Some((_, body)) = PRIMITIVES.iter().find(|(n, _)| *n == name) {
            self.rules.push((name.to_string(), body.to_string()));
        }
        for d in deps {
            self.primitive(d);
        }
        name.to_string()
    }

    /// A named rule for `body` (shared when an identical body exists).
    fn rule(&mut self, hint: &str, body: String) -> String {
        if let Some(n) = self.by_body.get(&body) {
            return n.clone();
        }
        let base: String = hint
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect::<String>()
            .split('-')
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("-")
            .to_lowercase();
        let base = if base.is_empty() { "r".into() } else { base };
        let mut name = base.clone();
        let mut i = 1;
        while self.rules.iter().any(|(n, _)| *n == name)
            || PRIMITIVES.iter().any(|(n, _)| *n == name)
        {
            i += 1;
            name = format!("{base}-{i}");
        }
        self.rules.push((name.clone(), body.clone()));
        self.by_body.insert(body, name.clone());
        name
    }

    /// The grammar expression for a value matching `schema` at JSON pointer `path`.
    fn value(&mut self, schema: &Value, path: &str) -> Result<String, SchemaError> {
        let err = |reason: String| SchemaError {
            path: if path.is_empty() {
                "/".into()
            } else {
                path.into()
            },
            reason,
        };
        let obj = match schema {
            Value::Bool(true) => return Ok(self.primitive("value")),
            Value::Bool(false) => return Err(err("`false` allows no value".into())),
            Value::Object(o) => o,
            _ => return Err(err("a schema must be an object".into())),
        };
        for k in ["allOf", "not", "if"] {
            if obj.contains_key(k) {
                return Err(err(format!("`{k}` is not supported")));
            }
        }
        if let Some(r) = obj.get("$ref") {
            return self.reference(r, path);
        }
        if let Some(c) = obj.get("const") {
            return Ok(literal(&c.to_string()));
        }
        if let Some(e) = obj.get("enum") {
            let values = e
                .as_array()
                .filter(|a| !a.is_empty())
                .ok_or_else(|| err("`enum` must be a non-empty array".into()))?;
            let alts: Vec<String> = values.iter().map(|v| literal(&v.to_string())).collect();
            return Ok(format!("({})", alts.join(" | ")));
        }
        for k in ["oneOf", "anyOf"] {
            if let Some(alts) = obj.get(k) {
                let alts = alts
                    .as_array()
                    .filter(|a| !a.is_empty())
                    .ok_or_else(|| err(format!("`{k}` must be a non-empty array")))?;
                let mut out = Vec::new();
                for (i, a) in alts.iter().enumerate() {
                    let p = format!("{path}/{k}/{i}");
                    let body = self.value(a, &p)?;
                    out.push(self.rule(&branch_hint(a, &p), body));
                }
                return Ok(format!("({})", out.join(" | ")));
            }
        }
        match obj.get("type") {
            None => Ok(self.primitive("value")),
            Some(Value::String(t)) => self.typed(t, obj, path),
            Some(Value::Array(types)) => {
                let mut out = Vec::new();
                for t in types {
                    let t = t
                        .as_str()
                        .ok_or_else(|| err("`type` entries must be strings".into()))?;
                    out.push(self.typed(t, obj, path)?);
                }
                if out.is_empty() {
                    return Err(err("`type` is an empty array".into()));
                }
                Ok(format!("({})", out.join(" | ")))
            }
            Some(_) => Err(err("`type` must be a string or an array".into())),
        }
    }

    fn typed(
        &mut self,
        t: &str,
        obj: &Map<String, Value>,
        path: &str,
    ) -> Result<String, SchemaError> {
        match t {
            "string" => Ok(self.string(obj)),
            "integer" | "number" | "boolean" | "null" => Ok(self.primitive(t)),
            "object" => self.object(obj, path),
            "array" => self.array(obj, path),
            other => Err(SchemaError {
                path: format!("{path}/type"),
                reason: format!("unknown type `{other}`"),
            }),
        }
    }

    fn string(&mut self, obj: &Map<String, Value>) -> String {
        let min = obj.get("minLength").and_then(Value::as_u64).unwrap_or(0);
        let max = obj.get("maxLength").and_then(Value::as_u64);
        self.primitive("char");
        let body = format!(r#""\"" {} "\"""#, repeat("char", min, max));
        self.rule(
            &format!("string-{min}-{}", max.map_or("n".into(), |m| m.to_string())),
            body,
        )
    }

    fn object(&mut self, obj: &Map<String, Value>, path: &str) -> Result<String, SchemaError> {
        let Some(props) = obj
            .get("properties")
            .and_then(Value::as_object)
            .filter(|p| !p.is_empty())
        else {
            return Ok(self.primitive("object"));
        };
        self.primitive("ws");
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .filter(|n| props.contains_key(*n))
                    .collect()
            })
            .unwrap_or_default();
        let mut pairs: Vec<(bool, String)> = Vec::new();
        let names = required.iter().copied().chain(
            props
                .keys()
                .map(String::as_str)
                .filter(|k| !required.contains(k)),
        );
        for name in names {
            let p = format!("{path}/properties/{}", pointer_escape(name));
            let value = self.value(&props[name], &p)?;
            let body = format!(
                "{} ws \":\" ws {value}",
                literal(&Value::from(name).to_string())
            );
            let kv = self.rule(&format!("{}-kv", hint_of(path, name)), body);
            pairs.push((required.contains(&name), kv));
        }
        let (req, opt): (Vec<_>, Vec<_>) = pairs.into_iter().partition(|(r, _)| *r);
        let req: Vec<String> = req.into_iter().map(|(_, kv)| kv).collect();
        let opt: Vec<String> = opt.into_iter().map(|(_, kv)| kv).collect();
        // Optional keys may each be left out, in their fixed order.
        let tail = |from: usize| -> String {
            opt[from..]
                .iter()
                .map(|kv| format!(r#"( ws "," ws {kv} )?"#))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let inner = if !req.is_empty() {
            let mut s = req.join(r#" ws "," ws "#);
            let t = tail(0);
            if !t.is_empty() {
                s = format!("{s} {t}");
            }
            s
        } else {
            let alts: Vec<String> = (0..opt.len())
                .map(|i| format!("{} {}", opt[i], tail(i + 1)).trim().to_string())
                .collect();
            format!("( {} )?", alts.join(" | "))
        };
        Ok(format!(r#""{{" ws {inner} ws "}}""#))
    }

    fn array(&mut self, obj: &Map<String, Value>, path: &str) -> Result<String, SchemaError> {
        self.primitive("ws");
        let item = match obj.get("items") {
            Some(items) if items.is_object() || items.is_boolean() => {
                let p = format!("{path}/items");
                let body = self.value(items, &p)?;
                self.rule(&format!("{}-item", hint_of(path, "")), body)
            }
            _ => self.primitive("value"),
        };
        let min = obj.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        let max = obj.get("maxItems").and_then(Value::as_u64);
        if max == Some(0) {
            return Ok(r#""[" ws "]""#.into());
        }
        let more = repeat(
            &format!(r#"( ws "," ws {item} )"#),
            min.saturating_sub(1),
            max.map(|m| m - 1),
        );
        let list = format!("{item} {more}");
        let list = if min == 0 {
            format!("( {list} )?")
        } else {
            list
        };
        Ok(format!(r#""[" ws {list} ws "]""#))
    }

    fn reference(&mut self, r: &Value, path: &str) -> Result<String, SchemaError> {
        let err = |reason: String| SchemaError {
            path: format!("{path}/$ref"),
            reason,
        };
        let r = r
            .as_str()
            .ok_or_else(|| err("`$ref` must be a string".into()))?;
        if let Some(name) = self.refs.get(r) {
            return Ok(name.clone());
        }
        let pointer = r
            .strip_prefix('#')
            .ok_or_else(|| err(format!("only local references are supported, not `{r}`")))?;
        let target = self
            .root
            .pointer(pointer)
            .ok_or_else(|| err(format!("`{r}` points at nothing")))?;
        // Reserve the name first so a recursive reference refers to the rule being made.
        let name = self.rule(&format!("ref-{pointer}"), format!("__pending {r}"));
        self.refs.insert(r.to_string(), name.clone());
        let body = self.value(target, pointer)?;
        if let Some(slot) = self.rules.iter_mut().find(|(n, _)| *n == name) {
            slot.1 = body;
        }
        Ok(name)
    }
}

/// `unit` repeated between `min` and `max` times (unbounded without `max`).
fn repeat(unit: &str, min: u64, max: Option<u64>) -> String {
    match max {
        Some(max) if max <= MAX_BOUND => format!("{unit}{{{min},{}}}", max.max(min)),
        _ if min == 0 => format!("{unit}*"),
        _ => format!("{unit}{{{min},}}"),
    }
}

/// A GBNF literal matching `text` exactly.
fn literal(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn pointer_escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

fn hint_of(path: &str, name: &str) -> String {
    let last = path
        .rsplit('/')
        .find(|s| !s.is_empty() && *s != "properties");
    match last {
        Some(l) if !name.is_empty() => format!("{l}-{name}"),
        Some(l) => l.to_string(),
        None if name.is_empty() => "root".into(),
        None => name.to_string(),
    }
}

/// A readable rule name for a `oneOf` branch: its `name` constant when it has one (a tool).
fn branch_hint(schema: &Value, path: &str) -> String {
    schema["properties"]["name"]["const"]
        .as_str()
        .map(|n| format!("call-{n}"))
        .unwrap_or_else(|| hint_of(path, "branch"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(g: &str) -> HashMap<String, String> {
        g.lines()
            .filter_map(|l| l.split_once(" ::= "))
            .map(|(n, b)| (n.to_string(), b.to_string()))
            .collect()
    }

    /// Every rule a grammar uses is defined, and no placeholder is left.
    fn well_formed(g: &str) {
        let r = rules(g);
        assert!(r.contains_key("root"), "{g}");
        assert!(!g.contains("__pending"), "{g}");
        for body in r.values() {
            // Strip literals and character classes, then every bare word must be a rule.
            let mut bare = String::new();
            let (mut in_lit, mut in_class, mut esc) = (false, false, false);
            for c in body.chars() {
                if esc {
                    esc = false;
                    continue;
                }
                match c {
                    '\\' if in_lit || in_class => esc = true,
                    '"' if !in_class => in_lit = !in_lit,
                    '[' if !in_lit => in_class = true,
                    ']' if in_class => in_class = false,
                    c if !in_lit && !in_class => bare.push(c),
                    _ => {}
                }
            }
            for word in bare.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                if word.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
                    assert!(r.contains_key(word), "rule `{word}` undefined in\n{g}");
                }
            }
        }
    }

    #[test]
    fn required_keys_follow_the_required_array_then_optional_ones() {
        let s = json!({
            "type": "object",
            "properties": {
                "arguments": {"type": "object"},
                "name": {"const": "get_weather"},
                "thought": {"type": "string", "maxLength": 300},
                "extra": {"type": "integer"}
            },
            "required": ["thought", "name", "arguments"]
        });
        let g = grammar(&s).unwrap_or_else(|e| panic!("{e}"));
        well_formed(&g);
        let root = &rules(&g)["root"];
        let t = root.find("thought").unwrap_or(usize::MAX);
        let n = root.find("name").unwrap_or(usize::MAX);
        let a = root.find("arguments").unwrap_or(usize::MAX);
        let e = root.find("extra").unwrap_or(usize::MAX);
        assert!(t < n && n < a && a < e, "{root}");
        assert!(root.contains(r#"( ws "," ws "#), "optional key: {root}");
        assert!(g.contains(r#""\"get_weather\"""#), "{g}");
        assert!(g.contains("char{0,300}"), "{g}");
    }

    #[test]
    fn one_of_branches_are_named_after_their_tool() {
        let branch = |n: &str| {
            json!({"type": "object", "properties": {"name": {"const": n}, "arguments": {
                "type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Lisbon"]}},
                "required": ["city"]}}, "required": ["name", "arguments"]})
        };
        let g = grammar(&json!({"oneOf": [branch("a_for_x"), branch("b_for_x")]}))
            .unwrap_or_else(|e| panic!("{e}"));
        well_formed(&g);
        let r = rules(&g);
        assert!(
            r.contains_key("call-a-for-x") && r.contains_key("call-b-for-x"),
            "{g}"
        );
        assert!(r["root"].contains("call-a-for-x | call-b-for-x"), "{g}");
        assert!(g.contains(r#"("\"Paris\"" | "\"Lisbon\"")"#), "{g}");
    }

    #[test]
    fn arrays_types_and_objects_without_properties() {
        let s = json!({
            "type": "object",
            "properties": {
                "facts": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                "ids": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
                "maybe": {"type": ["number", "null"]},
                "free": {"type": "object"},
                "anything": {}
            },
            "required": ["facts", "ids", "maybe", "free", "anything"]
        });
        let g = grammar(&s).unwrap_or_else(|e| panic!("{e}"));
        well_formed(&g);
        assert!(g.contains(r#"( ws "," ws facts-item ){0,2}"#), "{g}");
        assert!(g.contains(r#"( ws "," ws ids-item )*"#), "{g}");
        assert!(!g.contains(r#""[" ws ( ids-item"#), "minItems 1: {g}");
        assert!(g.contains("(number | null)"), "{g}");
        assert!(rules(&g).contains_key("value"), "{g}");
    }

    #[test]
    fn an_object_with_only_optional_keys_may_be_empty() {
        let s = json!({"type": "object", "properties": {"a": {"type": "boolean"}, "b": {"type": "null"}}});
        let g = grammar(&s).unwrap_or_else(|e| panic!("{e}"));
        well_formed(&g);
        let root = &rules(&g)["root"];
        assert!(root.ends_with(r#")? ws "}""#), "{root}");
        assert!(root.contains(" | "), "{root}");
    }

    #[test]
    fn local_refs_resolve_including_recursion() {
        let s = json!({
            "$defs": {"node": {"type": "object", "properties": {
                "label": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
            }, "required": ["label"]}},
            "$ref": "#/$defs/node"
        });
        let g = grammar(&s).unwrap_or_else(|e| panic!("{e}"));
        well_formed(&g);
        assert!(g.contains("ref-defs-node"), "{g}");
    }

    #[test]
    fn unsupported_and_malformed_schemas_name_the_place() {
        let e = grammar(&json!({"type": "object", "properties": {"x": {"allOf": []}}}))
            .err()
            .unwrap_or_else(|| panic!("allOf accepted"));
        assert_eq!(e.path, "/properties/x");
        assert!(e.reason.contains("allOf"));
        let e = grammar(&json!({"type": "strange"}))
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert!(e.reason.contains("strange"));
        let e = grammar(&json!({"$ref": "http://example.com/s.json"}))
            .err()
            .unwrap_or_else(|| panic!("accepted"));
        assert!(e.reason.contains("local"));
        assert!(grammar(&json!({"enum": []})).is_err());
    }

    #[test]
    fn literals_escape_quotes_and_backslashes() {
        assert_eq!(literal(r#""a\b""#), r#""\"a\\b\"""#);
        let g = grammar(&json!({"const": "say \"hi\"\n"})).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rules(&g)["root"], r#""\"say \\\"hi\\\"\\n\"""#);
    }
}
