//! Repair of templates that ToolBench stores as JSON text cut off mid-way: every complete value is
//! kept and what was open is closed.

use serde_json::{Map, Value};

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
}
