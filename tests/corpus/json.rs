//! The corpus's JSON: a small reader and writer, because strings must carry
//! UTF-16 code units (lone surrogates included, as JS strings do), which a
//! Rust `String` cannot, and one test file does not earn a dependency.
//! The writer is canonical (one spelling per value), so an observation can be
//! compared by its text; it escapes everything outside printable ASCII.

use std::fmt::Write as _;

/// A JSON value; strings and member names are UTF-16 code units.
#[derive(Clone, Debug)]
pub enum J {
    Null,
    Bool(bool),
    Num(f64),
    Str(Vec<u16>),
    Arr(Vec<J>),
    Obj(Vec<(Vec<u16>, J)>),
}

/// Bitwise for numbers (`-0` is not `0`), as the corpus compares.
impl PartialEq for J {
    fn eq(&self, other: &J) -> bool {
        write(self) == write(other)
    }
}

impl J {
    pub fn s(text: &str) -> J {
        J::Str(text.encode_utf16().collect())
    }

    pub fn obj(members: Vec<(&str, J)>) -> J {
        J::Obj(members.into_iter().map(|(k, v)| (k.encode_utf16().collect(), v)).collect())
    }

    /// Member `name` of an object.
    pub fn get(&self, name: &str) -> Option<&J> {
        let J::Obj(m) = self else { return None };
        let name: Vec<u16> = name.encode_utf16().collect();
        m.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    pub fn str(&self) -> Option<String> {
        match self {
            J::Str(u) => String::from_utf16(u).ok(),
            _ => None,
        }
    }

    pub fn num(&self) -> Option<f64> {
        match self {
            J::Num(x) => Some(*x),
            _ => None,
        }
    }
}

pub fn write(j: &J) -> String {
    let mut out = String::new();
    put(&mut out, j);
    out
}

fn put(out: &mut String, j: &J) {
    match j {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Num(x) => {
            assert!(x.is_finite(), "a non-finite number needs a tag");
            // Debug is the shortest round-trip spelling, and always valid JSON.
            let _ = write!(out, "{x:?}");
        }
        J::Str(u) => put_str(out, u),
        J::Arr(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                put(out, v);
            }
            out.push(']');
        }
        J::Obj(m) => {
            out.push('{');
            for (i, (k, v)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                put_str(out, k);
                out.push(':');
                put(out, v);
            }
            out.push('}');
        }
    }
}

fn put_str(out: &mut String, u: &[u16]) {
    out.push('"');
    for &c in u {
        match c {
            0x22 => out.push_str("\\\""),
            0x5C => out.push_str("\\\\"),
            0x20..=0x7E => out.push(c as u8 as char),
            _ => {
                let _ = write!(out, "\\u{c:04x}");
            }
        }
    }
    out.push('"');
}

pub fn parse(text: &str) -> Result<J, String> {
    let mut p = Parser { b: text.as_bytes(), i: 0 };
    let v = p.value()?;
    p.ws();
    if p.i != p.b.len() {
        return Err(format!("trailing text at {}", p.i));
    }
    Ok(v)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}' at {}", c as char, self.i))
        }
    }

    fn value(&mut self) -> Result<J, String> {
        self.ws();
        match self.b.get(self.i).copied() {
            Some(b'{') => {
                self.i += 1;
                let mut m = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(J::Obj(m));
                }
                loop {
                    self.ws();
                    let k = self.string()?;
                    self.eat(b':')?;
                    m.push((k, self.value()?));
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(J::Obj(m));
                        }
                        _ => return Err(format!("bad object at {}", self.i)),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(J::Arr(a));
                }
                loop {
                    a.push(self.value()?);
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(J::Arr(a));
                        }
                        _ => return Err(format!("bad array at {}", self.i)),
                    }
                }
            }
            Some(b'"') => Ok(J::Str(self.string()?)),
            Some(b't') => self.word("true", J::Bool(true)),
            Some(b'f') => self.word("false", J::Bool(false)),
            Some(b'n') => self.word("null", J::Null),
            _ => {
                let start = self.i;
                while self.i < self.b.len() && matches!(self.b[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.b[start..self.i]).map_err(|e| e.to_string())?;
                t.parse::<f64>().map(J::Num).map_err(|_| format!("bad number {t:?} at {start}"))
            }
        }
    }

    fn word(&mut self, w: &str, v: J) -> Result<J, String> {
        if self.b[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(format!("bad literal at {}", self.i))
        }
    }

    fn string(&mut self) -> Result<Vec<u16>, String> {
        if self.b.get(self.i) != Some(&b'"') {
            return Err(format!("expected a string at {}", self.i));
        }
        self.i += 1;
        let mut u = Vec::new();
        loop {
            let Some(&c) = self.b.get(self.i) else { return Err("unterminated string".into()) };
            self.i += 1;
            match c {
                b'"' => return Ok(u),
                b'\\' => {
                    let e = *self.b.get(self.i).ok_or("bad escape")?;
                    self.i += 1;
                    u.push(match e {
                        b'"' => 0x22,
                        b'\\' => 0x5C,
                        b'/' => 0x2F,
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => 10,
                        b'r' => 13,
                        b't' => 9,
                        b'u' => {
                            let h = self.b.get(self.i..self.i + 4).ok_or("short \\u escape")?;
                            self.i += 4;
                            u16::from_str_radix(std::str::from_utf8(h).map_err(|e| e.to_string())?, 16)
                                .map_err(|e| e.to_string())?
                        }
                        _ => return Err(format!("bad escape at {}", self.i)),
                    });
                }
                _ => {
                    // A UTF-8 sequence: decode the whole character.
                    let start = self.i - 1;
                    let len = match c {
                        0x00..=0x7F => 1,
                        0xC0..=0xDF => 2,
                        0xE0..=0xEF => 3,
                        _ => 4,
                    };
                    let ch = std::str::from_utf8(self.b.get(start..start + len).ok_or("bad UTF-8")?)
                        .map_err(|e| e.to_string())?;
                    self.i = start + len;
                    u.extend(ch.encode_utf16());
                }
            }
        }
    }
}
