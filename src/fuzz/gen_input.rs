//! Inputs for the fuzz targets: text built from tokens that matter to our parsers (JSON punctuation,
//! escapes, lone surrogates, ReAct keywords, control characters), random JSON values, and mutations
//! of valid examples (cuts, duplications, insertions, byte flips).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value, json};

/// A seeded input generator; it remembers the input of the current case for crash reports.
pub struct Gen {
    rng: StdRng,
    input: String,
}

/// Fragments our parsers react to.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "\\",
    "\\\"",
    "\\n",
    "\\u",
    "\\ud800",
    "\\udc00",
    "\\ud83d\\ude00",
    "\\u00e9",
    "\\x",
    "'",
    "(",
    ")",
    " ",
    "\n",
    "\r",
    "\t",
    "\u{0}",
    "\u{1b}[2J",
    "\u{7f}",
    "é",
    "😀",
    "\u{202e}",
    "null",
    "true",
    "false",
    "None",
    "True",
    "0",
    "-1",
    "1e999",
    "1.5",
    "12345678901234567890",
    "\"name\"",
    "\"arguments\"",
    "\"thought\"",
    "\"Finish\"",
    "\"return_type\"",
    "\"give_answer\"",
    "\"final_answer\"",
    "\"give_up_and_restart\"",
    "Thought:",
    "Action:",
    "Action Input:",
    "```json",
    "```",
    "name",
    "arguments",
    "{}",
    "[]",
    "\"\"",
    "{\"a\":",
    "get_weather_for_weather",
    "_for_",
    "category",
    "tool_name",
    "api_name",
    "tool_input",
    "strip",
    "$ref",
    "#/$defs/a",
    "type",
    "object",
    "string",
    "properties",
];

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen {
            rng: StdRng::seed_from_u64(seed),
            input: String::new(),
        }
    }

    /// The input recorded for this case.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// Records `text` as (part of) this case's input, for the crash report.
    pub fn record(&mut self, text: &str) {
        if !self.input.is_empty() {
            self.input.push_str("\n---\n");
        }
        self.input.push_str(text);
    }

    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { self.rng.gen_range(0..n) }
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.rng.gen_bool(p.clamp(0.0, 1.0))
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Random text of up to `max` pieces: tokens, random characters, long runs.
    pub fn text(&mut self, max: usize) -> String {
        let n = self.below(max + 1);
        let mut out = String::new();
        for _ in 0..n {
            match self.below(10) {
                0..=5 => out.push_str(self.pick::<&str>(TOKENS)),
                6 => out.push(self.rng.gen_range(' '..='~')),
                7 => out.push(char::from_u32(self.rng.gen_range(0..0x3000)).unwrap_or('?')),
                8 => {
                    let c = *self.pick(&['{', '[', '"', 'a', '\\', '}']);
                    let k = self.below(200);
                    out.extend(std::iter::repeat_n(c, k));
                }
                _ => out.push_str(&self.word()),
            }
        }
        out
    }

    /// A short identifier-like word.
    pub fn word(&mut self) -> String {
        let n = 1 + self.below(12);
        (0..n)
            .map(|_| *self.pick(&['a', 'b', 'x', '_', 'Z', '1', '-', ' ', '.']))
            .collect()
    }

    /// A random JSON value of at most `depth` levels.
    pub fn json(&mut self, depth: usize) -> Value {
        let top = if depth == 0 { 5 } else { 7 };
        match self.below(top) {
            0 => Value::Null,
            1 => Value::Bool(self.chance(0.5)),
            2 => json!(self.rng.gen_range(-1_000_000i64..1_000_000)),
            3 => json!(self.rng.gen_range(-1e6..1e6)),
            4 => Value::String(self.text(6)),
            5 => Value::Array((0..self.below(5)).map(|_| self.json(depth - 1)).collect()),
            _ => {
                let mut m = Map::new();
                for _ in 0..self.below(5) {
                    let key = if self.chance(0.5) {
                        self.word()
                    } else {
                        self.text(3)
                    };
                    let v = self.json(depth - 1);
                    m.insert(key, v);
                }
                Value::Object(m)
            }
        }
    }

    /// `s` after a few random edits, each at a character boundary.
    pub fn mutate(&mut self, s: &str) -> String {
        let mut out = s.to_string();
        for _ in 0..1 + self.below(4) {
            let len = out.len();
            let at = boundary(&out, self.below(len + 1));
            match self.below(6) {
                0 => out.truncate(at),
                1 => {
                    let end = boundary(&out, (at + 1 + self.below(16)).min(len));
                    out.replace_range(at..end, "");
                }
                2 => {
                    let t = self.pick(TOKENS).to_string();
                    out.insert_str(at, &t);
                }
                3 => {
                    let end = boundary(&out, (at + self.below(64)).min(len));
                    let piece = out[at..end].to_string();
                    out.insert_str(end, &piece);
                }
                4 => {
                    let t = self.text(3);
                    out.insert_str(at, &t);
                }
                _ => {
                    let end = boundary(&out, (at + 1).min(len));
                    let c = self.pick(&["\"", "}", "{", "\\", "\u{0}", "9"]).to_string();
                    out.replace_range(at..end, &c);
                }
            }
        }
        out
    }

    /// A JSON-Schema-like value: the keywords the GBNF converter knows, nested, sometimes broken.
    pub fn schema(&mut self, depth: usize) -> Value {
        if depth == 0 || self.chance(0.25) {
            return match self.below(9) {
                0 => {
                    json!({"type": "string", "maxLength": self.below(700), "minLength": self.below(5)})
                }
                1 => json!({"type": "integer"}),
                2 => json!({"type": "number"}),
                3 => json!({"type": "boolean"}),
                4 => json!({"enum": [self.text(2), 1, null, self.word()]}),
                5 => json!({"const": self.json(1)}),
                6 => json!({"type": ["string", "null"]}),
                7 => {
                    json!({"$ref": *self.pick(&["#/$defs/a", "#/definitions/b", "#/$defs/missing", "http://x", "#"])})
                }
                _ => self.json(1),
            };
        }
        match self.below(6) {
            0 | 1 => {
                let mut props = Map::new();
                let mut required = Vec::new();
                for _ in 0..self.below(5) {
                    let name = self.text(2);
                    if self.chance(0.5) {
                        required.push(json!(name));
                    }
                    let s = self.schema(depth - 1);
                    props.insert(name, s);
                }
                if self.chance(0.1) {
                    required.push(json!("not-a-property"));
                }
                let mut o = json!({"type": "object", "properties": props, "required": required});
                if self.chance(0.3) {
                    o["$defs"] = json!({"a": self.schema(depth - 1), "b": {"$ref": "#/$defs/a"}});
                    o["definitions"] = json!({"b": self.schema(depth - 1)});
                }
                o
            }
            2 => json!({"type": "array", "items": self.schema(depth - 1),
                "minItems": self.below(3), "maxItems": *self.pick(&[0usize, 2, 5, 5000, usize::MAX / 2])}),
            3 => {
                let key = *self.pick(&["oneOf", "anyOf", "allOf"]);
                let branches: Vec<Value> =
                    (0..self.below(4)).map(|_| self.schema(depth - 1)).collect();
                json!({ key: branches })
            }
            4 => {
                let mut s = self.schema(depth - 1);
                let json_s = s.to_string();
                if self.chance(0.5) {
                    let broken = self.mutate(&json_s);
                    s = serde_json::from_str(&broken).unwrap_or(s);
                }
                s
            }
            _ => {
                json!({"type": *self.pick(&["object", "array", "string", "nonsense", ""]), "properties": self.json(2)})
            }
        }
    }
}

/// The nearest character boundary at or before `i`.
fn boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
