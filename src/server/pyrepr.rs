//! Reads Python literal reprs (`{'name': 'Lionel Messi', 'n': 3, 'ok': True}`) as JSON values:
//! StableToolBench keys its response cache with `str(dict)`.

use serde_json::{Map, Number, Value};

/// Parses one Python literal (dict, list, tuple, str, int, float, True/False/None) into JSON.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text at byte {}", p.i));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at byte {}", c as char, self.i))
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.ws();
        self.depth += 1;
        if self.depth > 128 {
            return Err("nesting too deep".to_string());
        }
        let v = match self.s.get(self.i).copied() {
            Some(b'{') => self.dict(),
            Some(b'[') => self.seq(b'[', b']'),
            Some(b'(') => self.seq(b'(', b')'),
            Some(b'\'' | b'"') => self.string().map(Value::String),
            Some(_) => self.word(),
            None => Err("unexpected end".to_string()),
        };
        self.depth -= 1;
        v
    }

    fn dict(&mut self) -> Result<Value, String> {
        self.expect(b'{')?;
        let mut m = Map::new();
        loop {
            self.ws();
            if self.s.get(self.i) == Some(&b'}') {
                self.i += 1;
                return Ok(Value::Object(m));
            }
            let key = match self.value()? {
                Value::String(s) => s,
                other => other.to_string(),
            };
            self.expect(b':')?;
            let v = self.value()?;
            m.insert(key, v);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                _ => return Err(format!("expected `,` or `}}` at byte {}", self.i)),
            }
        }
    }

    fn seq(&mut self, open: u8, close: u8) -> Result<Value, String> {
        self.expect(open)?;
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.s.get(self.i) == Some(&close) {
                self.i += 1;
                return Ok(Value::Array(items));
            }
            items.push(self.value()?);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(c) if *c == close => {}
                _ => {
                    return Err(format!(
                        "expected `,` or `{}` at byte {}",
                        close as char, self.i
                    ));
                }
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let quote = self.s[self.i];
        self.i += 1;
        let mut out = String::new();
        let mut start = self.i;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            if c == quote {
                out.push_str(&self.text[start..self.i]);
                self.i += 1;
                return Ok(out);
            }
            if c == b'\\' {
                out.push_str(&self.text[start..self.i]);
                self.i += 1;
                let e = *self.s.get(self.i).ok_or("unterminated escape")?;
                self.i += 1;
                match e {
                    b'n' => out.push('\n'),
                    b't' => out.push('\t'),
                    b'r' => out.push('\r'),
                    b'0' => out.push('\0'),
                    b'\\' => out.push('\\'),
                    b'\'' => out.push('\''),
                    b'"' => out.push('"'),
                    b'x' => out.push(self.hex_char(2)?),
                    b'u' => out.push(self.hex_char(4)?),
                    b'U' => out.push(self.hex_char(8)?),
                    _ => {
                        // Not an escape Python knows: the backslash stays, and the character after
                        // it is taken whole (it may be several bytes long).
                        out.push('\\');
                        let rest = self.text.get(self.i - 1..).unwrap_or_default();
                        if let Some(ch) = rest.chars().next() {
                            out.push(ch);
                            self.i += ch.len_utf8() - 1;
                        }
                    }
                }
                start = self.i;
                continue;
            }
            self.i += 1;
        }
        Err("unterminated string".to_string())
    }

    fn hex_char(&mut self, n: usize) -> Result<char, String> {
        let digits = self.text.get(self.i..self.i + n).ok_or("short escape")?;
        self.i += n;
        let code = u32::from_str_radix(digits, 16).map_err(|_| format!("bad escape `{digits}`"))?;
        Ok(char::from_u32(code).unwrap_or('\u{fffd}'))
    }

    fn word(&mut self) -> Result<Value, String> {
        let start = self.i;
        while self.i < self.s.len()
            && !matches!(self.s[self.i], b',' | b':' | b'}' | b']' | b')')
            && !self.s[self.i].is_ascii_whitespace()
        {
            self.i += 1;
        }
        let w = &self.text[start..self.i];
        match w {
            "True" => Ok(Value::Bool(true)),
            "False" => Ok(Value::Bool(false)),
            "None" => Ok(Value::Null),
            _ => {
                if let Ok(n) = w.parse::<i64>() {
                    return Ok(Value::from(n));
                }
                w.parse::<f64>()
                    .ok()
                    .and_then(Number::from_f64)
                    .map(Value::Number)
                    .ok_or_else(|| format!("not a Python literal: `{w}`"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_unknown_escape_before_a_multibyte_character_is_kept() {
        assert_eq!(parse("'a\\\u{1739}b'").unwrap(), json!("a\\\u{1739}b"));
        assert_eq!(parse("'\\é'").unwrap(), json!("\\é"));
    }

    #[test]
    fn parses_python_reprs() {
        assert_eq!(
            parse("{'name': 'Lionel Messi', 'n': -3, 'f': 1.5, 'ok': True, 'no': None, 'l': [1, (2, 3)]}").unwrap(),
            json!({"name": "Lionel Messi", "n": -3, "f": 1.5, "ok": true, "no": null, "l": [1, [2, 3]]})
        );
        assert_eq!(
            parse(r#"{"it's": 'a\'b\n\xe9'}"#).unwrap(),
            json!({"it's": "a'b\né"})
        );
        assert_eq!(parse("{}").unwrap(), json!({}));
        assert!(parse("{'a': }").is_err());
        assert!(parse("not a dict").is_err());
    }
}
