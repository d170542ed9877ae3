//! Reads and writes Python literal reprs (`{'name': 'Lionel Messi', 'n': 3, 'ok': True}`):
//! StableToolBench keys its response cache with `str(json.loads(tool_input))`, so a key depends on the
//! model's argument order and on Python's exact quoting, escaping and float spelling.

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

/// A recorded response as its JSON: recorded replies are often JSON text (sometimes encoded twice) or a
/// Python literal; anything else stays as it is.
pub fn decode_recorded(v: &Value) -> Value {
    let mut v = v.clone();
    for _ in 0..3 {
        let Value::String(s) = &v else { break };
        v = match serde_json::from_str::<Value>(s) {
            Ok(x) => x,
            Err(_) => match parse(s) {
                Ok(x) => x,
                Err(_) => break,
            },
        };
    }
    v
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
                if let Ok(n) = w.parse::<u64>() {
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

/// Python's `str()` of the value `json.loads` would give for `v`: single quotes unless the text holds
/// `'` and no `"`, `True`/`False`/`None`, `', '` and `': '` separators, insertion order kept, floats
/// spelled as Python's `repr` does (`1.0`, `1e-05`, `1e+16`). Non-printable characters are escaped as
/// Python does for the common cases (C0/C1 controls, format and separator characters, private use).
pub fn to_repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

fn write_repr(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (_, Some(u), _) => out.push_str(&u.to_string()),
            (_, _, Some(f)) => out.push_str(&float_repr(f)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str(out, k);
                out.push_str(": ");
                write_repr(out, item);
            }
            out.push('}');
        }
    }
}

fn write_str(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !printable(c) => {
                let n = c as u32;
                if n < 0x100 {
                    out.push_str(&format!("\\x{n:02x}"));
                } else if n < 0x10000 {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `str.isprintable` for the characters model arguments and API replies contain.
fn printable(c: char) -> bool {
    let n = c as u32;
    !(n < 0x20
        || (0x7f..=0xa0).contains(&n)
        || n == 0xad
        || (0x2000..=0x200f).contains(&n)
        || (0x2028..=0x202f).contains(&n)
        || (0x205f..=0x206f).contains(&n)
        || n == 0x3000
        || n == 0xfeff
        || (0xe000..=0xf8ff).contains(&n)
        || (0xfff9..=0xfffb).contains(&n))
}

/// `repr(float)`: the shortest digits that round-trip, positional for exponents -4..16, else `de±XX`.
fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let shortest = format!("{f:e}");
    // Among the shortest digit strings Python picks the correctly rounded one (ties to even), which
    // Rust's exact formatting gives; its shortest formatting may round a tie up.
    let digit_count = shortest
        .split('e')
        .next()
        .map_or(1, |m| m.chars().filter(char::is_ascii_digit).count());
    let rounded = format!("{f:.prec$e}", prec = digit_count.saturating_sub(1));
    let sci = if rounded.parse::<f64>() == Ok(f) {
        rounded
    } else {
        shortest
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exp) {
        let point = exp + 1;
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if (point as usize) >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            format!(
                "{}.{}",
                &digits[..point as usize],
                &digits[point as usize..]
            )
        };
        format!("{sign}{body}")
    } else {
        let rest = &digits[1..];
        let m = if rest.is_empty() {
            digits[..1].to_string()
        } else {
            format!("{}.{rest}", &digits[..1])
        };
        format!(
            "{sign}{m}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
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

    #[test]
    fn writes_what_python_str_writes() {
        // Expected texts are what CPython 3 prints for str(json.loads(...)) of the same JSON.
        let v = json!({"zeta": "Lionel Messi", "alpha": 1, "f": 0.5, "big": 1e16, "small": 0.00001,
            "whole": 2.0, "ok": true, "none": null, "list": [1, "a"], "nested": {"b": [], "a": {}}});
        assert_eq!(
            to_repr(&v),
            "{'zeta': 'Lionel Messi', 'alpha': 1, 'f': 0.5, 'big': 1e+16, 'small': 1e-05, 'whole': 2.0, 'ok': True, 'none': None, 'list': [1, 'a'], 'nested': {'b': [], 'a': {}}}"
        );
        assert_eq!(to_repr(&json!("it's")), r#""it's""#);
        assert_eq!(to_repr(&json!("it's \"x\"")), r#"'it\'s "x"'"#);
        assert_eq!(to_repr(&json!("a\\b\nc\u{7}")), r"'a\\b\nc\x07'");
        assert_eq!(to_repr(&json!("Zürich 東京 \u{a0}")), r"'Zürich 東京 \xa0'");
        assert_eq!(to_repr(&json!(123456789.125)), "123456789.125");
        assert_eq!(to_repr(&json!(-0.0001)), "-0.0001");
        assert_eq!(to_repr(&json!(1.5e-7)), "1.5e-07");
        // A tie at 17 digits: Python rounds to even.
        let tie = 229_052_849_008_685.0_f64 + 0.625;
        assert_eq!(to_repr(&json!(tie)), "229052849008685.62");
    }

    #[test]
    fn import_keys_round_trip_exactly() {
        for v in [
            json!({"q": "Zürich \u{1F600} 東京", "n": {"deep": [{"x": 1.25}, null]}, "t": "it's"}),
            json!({"b": 2, "a": "\t\\"}),
        ] {
            assert_eq!(parse(&to_repr(&v)).unwrap(), v);
        }
    }
}
