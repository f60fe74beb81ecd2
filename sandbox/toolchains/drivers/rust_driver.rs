// The harness's driver (appended after the program): reads the job's token and one JSON
// argument list a line on descriptor 3, calls the function under test once per line, and
// writes "<token> <index> <result>" on descriptor 4 in the canonical form
// (sandbox/worker/values.py), then "<token> end". It holds no expected value.
#[allow(dead_code, unused_imports, non_snake_case, non_camel_case_types, unused_mut, unused_variables, unused_assignments)]
mod __harness {
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
    use std::hash::Hash;
    use std::io::{Read, Write};
    use std::os::unix::io::FromRawFd;

    #[derive(Clone, Debug)]
    pub enum Json { Null, Bool(bool), Int(i128), Float(f64), Str(String), Arr(Vec<Json>), Obj(Vec<(String, Json)>) }

    struct Parser<'a> { s: &'a [u8], i: usize }

    impl<'a> Parser<'a> {
        fn ws(&mut self) { while self.i < self.s.len() && (self.s[self.i] as char).is_ascii_whitespace() { self.i += 1; } }
        fn eat(&mut self, word: &str) -> bool {
            if self.s[self.i..].starts_with(word.as_bytes()) { self.i += word.len(); true } else { false }
        }
        fn value(&mut self, depth: usize) -> Result<Json, String> {
            if depth > 200 { return Err("nested too deeply".into()); }
            self.ws();
            if self.i >= self.s.len() { return Err("unexpected end".into()); }
            for (word, value) in [("null", Json::Null), ("true", Json::Bool(true)), ("false", Json::Bool(false)),
                                  ("NaN", Json::Float(f64::NAN)), ("Infinity", Json::Float(f64::INFINITY))] {
                if self.eat(word) { return Ok(value); }
            }
            let first = self.s[self.i];
            match first {
                b'"' => Ok(Json::Str(self.string()?)),
                b'[' => {
                    self.i += 1;
                    let mut items = Vec::new();
                    self.ws();
                    if self.i < self.s.len() && self.s[self.i] == b']' { self.i += 1; return Ok(Json::Arr(items)); }
                    loop {
                        items.push(self.value(depth + 1)?);
                        self.ws();
                        if self.i >= self.s.len() { return Err("unexpected end".into()); }
                        match self.s[self.i] { b',' => self.i += 1, b']' => { self.i += 1; return Ok(Json::Arr(items)); } _ => return Err("expected , or ]".into()) }
                    }
                }
                b'{' => {
                    self.i += 1;
                    let mut items = Vec::new();
                    self.ws();
                    if self.i < self.s.len() && self.s[self.i] == b'}' { self.i += 1; return Ok(Json::Obj(items)); }
                    loop {
                        self.ws();
                        let key = self.string()?;
                        self.ws();
                        if !self.eat(":") { return Err("expected :".into()); }
                        items.push((key, self.value(depth + 1)?));
                        self.ws();
                        if self.i >= self.s.len() { return Err("unexpected end".into()); }
                        match self.s[self.i] { b',' => self.i += 1, b'}' => { self.i += 1; return Ok(Json::Obj(items)); } _ => return Err("expected , or }".into()) }
                    }
                }
                _ => self.number(),
            }
        }
        fn number(&mut self) -> Result<Json, String> {
            if self.eat("-Infinity") { return Ok(Json::Float(f64::NEG_INFINITY)); }
            let start = self.i;
            while self.i < self.s.len() && b"+-0123456789.eE".contains(&self.s[self.i]) { self.i += 1; }
            let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?;
            if text.is_empty() { return Err("unexpected character".into()); }
            if !text.contains(|c| c == '.' || c == 'e' || c == 'E') {
                if let Ok(n) = text.parse::<i128>() { return Ok(Json::Int(n)); }
            }
            text.parse::<f64>().map(Json::Float).map_err(|_| format!("not a number: {}", text))
        }
        fn string(&mut self) -> Result<String, String> {
            if !self.eat("\"") { return Err("expected a string".into()); }
            let mut out: Vec<u16> = Vec::new();
            let mut bytes: Vec<u8> = Vec::new();
            loop {
                if self.i >= self.s.len() { return Err("unterminated string".into()); }
                let c = self.s[self.i];
                self.i += 1;
                match c {
                    b'"' => break,
                    b'\\' => {
                        let e = *self.s.get(self.i).ok_or("bad escape")?;
                        self.i += 1;
                        match e {
                            b'n' => bytes.push(b'\n'), b't' => bytes.push(b'\t'), b'r' => bytes.push(b'\r'),
                            b'b' => bytes.push(8), b'f' => bytes.push(12), b'/' => bytes.push(b'/'),
                            b'\\' => bytes.push(b'\\'), b'"' => bytes.push(b'"'),
                            b'u' => {
                                let hex = std::str::from_utf8(self.s.get(self.i..self.i + 4).ok_or("bad escape")?).map_err(|e| e.to_string())?;
                                let unit = u16::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
                                self.i += 4;
                                out.clear();
                                out.push(unit);
                                if (0xD800..0xDC00).contains(&unit) && self.s[self.i..].starts_with(b"\\u") {
                                    let hex = std::str::from_utf8(self.s.get(self.i + 2..self.i + 6).ok_or("bad escape")?).map_err(|e| e.to_string())?;
                                    out.push(u16::from_str_radix(hex, 16).map_err(|e| e.to_string())?);
                                    self.i += 6;
                                }
                                bytes.extend(String::from_utf16(&out).map_err(|e| e.to_string())?.as_bytes());
                            }
                            _ => return Err("bad escape".into()),
                        }
                    }
                    _ => bytes.push(c),
                }
            }
            String::from_utf8(bytes).map_err(|e| e.to_string())
        }
    }

    pub fn parse(text: &str) -> Result<Json, String> {
        let mut p = Parser { s: text.as_bytes(), i: 0 };
        let v = p.value(0)?;
        p.ws();
        if p.i != p.s.len() { return Err("trailing characters".into()); }
        Ok(v)
    }

    pub trait FromJson: Sized { fn from_json(v: &Json) -> Result<Self, String>; }

    macro_rules! ints { ($($t:ty),*) => { $(impl FromJson for $t {
        fn from_json(v: &Json) -> Result<Self, String> {
            match v { Json::Int(n) => <$t>::try_from(*n).map_err(|_| format!("{} does not fit {}", n, stringify!($t))),
                      _ => Err(format!("expected an integer, got {:?}", v)) }
        } })* } }
    ints!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
    impl FromJson for f64 { fn from_json(v: &Json) -> Result<Self, String> {
        match v { Json::Int(n) => Ok(*n as f64), Json::Float(f) => Ok(*f), _ => Err(format!("expected a number, got {:?}", v)) } } }
    impl FromJson for f32 { fn from_json(v: &Json) -> Result<Self, String> { f64::from_json(v).map(|f| f as f32) } }
    impl FromJson for bool { fn from_json(v: &Json) -> Result<Self, String> {
        match v { Json::Bool(b) => Ok(*b), _ => Err(format!("expected a boolean, got {:?}", v)) } } }
    impl FromJson for String { fn from_json(v: &Json) -> Result<Self, String> {
        match v { Json::Str(s) => Ok(s.clone()), _ => Err(format!("expected a string, got {:?}", v)) } } }
    impl FromJson for char { fn from_json(v: &Json) -> Result<Self, String> {
        let s = String::from_json(v)?;
        let mut chars = s.chars();
        match (chars.next(), chars.next()) { (Some(c), None) => Ok(c), _ => Err(format!("expected one character, got {:?}", s)) } } }
    impl FromJson for &'static str { fn from_json(v: &Json) -> Result<Self, String> { Ok(Box::leak(String::from_json(v)?.into_boxed_str())) } }
    impl FromJson for () { fn from_json(_v: &Json) -> Result<Self, String> { Ok(()) } }
    impl<T: FromJson> FromJson for Vec<T> { fn from_json(v: &Json) -> Result<Self, String> {
        match v { Json::Arr(items) => items.iter().map(T::from_json).collect(), _ => Err(format!("expected an array, got {:?}", v)) } } }
    impl<T: FromJson> FromJson for &'static [T] { fn from_json(v: &Json) -> Result<Self, String> { Ok(Box::leak(Vec::<T>::from_json(v)?.into_boxed_slice())) } }
    impl<T: FromJson> FromJson for &'static Vec<T> { fn from_json(v: &Json) -> Result<Self, String> { Ok(Box::leak(Box::new(Vec::<T>::from_json(v)?))) } }
    impl<T: FromJson> FromJson for &'static mut Vec<T> { fn from_json(v: &Json) -> Result<Self, String> { Ok(Box::leak(Box::new(Vec::<T>::from_json(v)?))) } }
    impl<T: FromJson> FromJson for VecDeque<T> { fn from_json(v: &Json) -> Result<Self, String> { Ok(Vec::<T>::from_json(v)?.into()) } }
    impl<T: FromJson> FromJson for Box<T> { fn from_json(v: &Json) -> Result<Self, String> { T::from_json(v).map(Box::new) } }
    impl<T: FromJson> FromJson for Option<T> { fn from_json(v: &Json) -> Result<Self, String> {
        match v { Json::Null => Ok(None), _ => T::from_json(v).map(Some) } } }
    impl<T: FromJson + Eq + Hash> FromJson for HashSet<T> { fn from_json(v: &Json) -> Result<Self, String> { Ok(Vec::<T>::from_json(v)?.into_iter().collect()) } }
    impl<T: FromJson + Ord> FromJson for BTreeSet<T> { fn from_json(v: &Json) -> Result<Self, String> { Ok(Vec::<T>::from_json(v)?.into_iter().collect()) } }
    fn key<K: FromJson>(k: &str) -> Result<K, String> {
        K::from_json(&Json::Str(k.to_string())).or_else(|_| K::from_json(&parse(k)?))
    }
    impl<K: FromJson + Eq + Hash, V: FromJson> FromJson for HashMap<K, V> { fn from_json(v: &Json) -> Result<Self, String> {
        match v { Json::Obj(items) => items.iter().map(|(k, x)| Ok((key(k)?, V::from_json(x)?))).collect(), _ => Err(format!("expected an object, got {:?}", v)) } } }
    impl<K: FromJson + Ord, V: FromJson> FromJson for BTreeMap<K, V> { fn from_json(v: &Json) -> Result<Self, String> {
        match v { Json::Obj(items) => items.iter().map(|(k, x)| Ok((key(k)?, V::from_json(x)?))).collect(), _ => Err(format!("expected an object, got {:?}", v)) } } }
    macro_rules! tuples { ($($n:expr; $($T:ident $i:tt),*);*) => { $(impl<$($T: FromJson),*> FromJson for ($($T,)*) {
        fn from_json(v: &Json) -> Result<Self, String> {
            match v { Json::Arr(a) if a.len() == $n => Ok(($($T::from_json(&a[$i])?,)*)), _ => Err(format!("expected an array of {}, got {:?}", $n, v)) }
        } })* } }
    tuples!(1; A 0; 2; A 0, B 1; 3; A 0, B 1, C 2; 4; A 0, B 1, C 2, D 3; 5; A 0, B 1, C 2, D 3, E 4; 6; A 0, B 1, C 2, D 3, E 4, F 5);

    pub trait ToJson { fn to_json(&self, out: &mut String); }
    macro_rules! int_out { ($($t:ty),*) => { $(impl ToJson for $t { fn to_json(&self, out: &mut String) { out.push_str(&self.to_string()); } })* } }
    int_out!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
    fn float_out(text: String, out: &mut String) {
        match text.as_str() { "inf" => out.push_str("Infinity"), "-inf" => out.push_str("-Infinity"), "NaN" => out.push_str("NaN"), _ => out.push_str(&text) }
    }
    impl ToJson for f64 { fn to_json(&self, out: &mut String) { float_out(format!("{:?}", self), out) } }
    impl ToJson for f32 { fn to_json(&self, out: &mut String) { float_out(format!("{:?}", self), out) } }
    impl ToJson for bool { fn to_json(&self, out: &mut String) { out.push_str(if *self { "true" } else { "false" }) } }
    impl ToJson for () { fn to_json(&self, out: &mut String) { out.push_str("null") } }
    impl ToJson for str { fn to_json(&self, out: &mut String) {
        out.push('"');
        for c in self.chars() {
            match c { '"' => out.push_str("\\\""), '\\' => out.push_str("\\\\"), '\n' => out.push_str("\\n"), '\r' => out.push_str("\\r"), '\t' => out.push_str("\\t"),
                      c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\u{:04x}", c as u32)), c => out.push(c) }
        }
        out.push('"');
    } }
    impl ToJson for String { fn to_json(&self, out: &mut String) { self.as_str().to_json(out) } }
    impl ToJson for char { fn to_json(&self, out: &mut String) { self.to_string().to_json(out) } }
    impl<T: ToJson + ?Sized> ToJson for &T { fn to_json(&self, out: &mut String) { (**self).to_json(out) } }
    impl<T: ToJson + ?Sized> ToJson for &mut T { fn to_json(&self, out: &mut String) { (**self).to_json(out) } }
    impl<T: ToJson + ?Sized> ToJson for Box<T> { fn to_json(&self, out: &mut String) { (**self).to_json(out) } }
    fn seq<'a, T: ToJson + 'a>(items: impl Iterator<Item = &'a T>, out: &mut String) {
        out.push('[');
        for (i, item) in items.enumerate() { if i > 0 { out.push(','); } item.to_json(out); }
        out.push(']');
    }
    impl<T: ToJson> ToJson for [T] { fn to_json(&self, out: &mut String) { seq(self.iter(), out) } }
    impl<T: ToJson, const N: usize> ToJson for [T; N] { fn to_json(&self, out: &mut String) { seq(self.iter(), out) } }
    impl<T: ToJson> ToJson for Vec<T> { fn to_json(&self, out: &mut String) { seq(self.iter(), out) } }
    impl<T: ToJson> ToJson for VecDeque<T> { fn to_json(&self, out: &mut String) { seq(self.iter(), out) } }
    impl<T: ToJson> ToJson for Option<T> { fn to_json(&self, out: &mut String) { match self { None => out.push_str("null"), Some(v) => v.to_json(out) } } }
    fn sorted_seq<'a, T: ToJson + 'a>(items: impl Iterator<Item = &'a T>, out: &mut String) {
        let mut texts: Vec<String> = items.map(|item| { let mut s = String::new(); item.to_json(&mut s); s }).collect();
        texts.sort();
        out.push('['); out.push_str(&texts.join(",")); out.push(']');
    }
    impl<T: ToJson> ToJson for HashSet<T> { fn to_json(&self, out: &mut String) { sorted_seq(self.iter(), out) } }
    impl<T: ToJson> ToJson for BTreeSet<T> { fn to_json(&self, out: &mut String) { sorted_seq(self.iter(), out) } }
    fn map_out<'a, K: ToJson + 'a, V: ToJson + 'a>(items: impl Iterator<Item = (&'a K, &'a V)>, out: &mut String) {
        let mut pairs: Vec<(String, String)> = items.map(|(k, v)| {
            let mut key = String::new(); k.to_json(&mut key);
            if !key.starts_with('"') { let mut quoted = String::new(); key.as_str().to_json(&mut quoted); key = quoted; }
            let mut value = String::new(); v.to_json(&mut value); (key, value) }).collect();
        pairs.sort();
        out.push('{');
        for (i, (k, v)) in pairs.iter().enumerate() { if i > 0 { out.push(','); } out.push_str(k); out.push(':'); out.push_str(v); }
        out.push('}');
    }
    impl<K: ToJson, V: ToJson> ToJson for HashMap<K, V> { fn to_json(&self, out: &mut String) { map_out(self.iter(), out) } }
    impl<K: ToJson, V: ToJson> ToJson for BTreeMap<K, V> { fn to_json(&self, out: &mut String) { map_out(self.iter(), out) } }
    macro_rules! tuple_out { ($($($T:ident $i:tt),*);*) => { $(impl<$($T: ToJson),*> ToJson for ($($T,)*) {
        fn to_json(&self, out: &mut String) { out.push('['); let mut first = true; $( if !first { out.push(','); } first = false; self.$i.to_json(out); )* out.push(']'); }
    })* } }
    tuple_out!(A 0; A 0, B 1; A 0, B 1, C 2; A 0, B 1, C 2, D 3; A 0, B 1, C 2, D 3, E 4; A 0, B 1, C 2, D 3, E 4, F 5);

    pub trait Callable<Args> { fn call_json(&self, args: &[Json]) -> Result<String, String>; }
    macro_rules! callable { ($($n:expr; $($T:ident $i:tt),*);*) => { $(impl<Func, R: ToJson, $($T: FromJson),*> Callable<($($T,)*)> for Func where Func: Fn($($T),*) -> R {
        fn call_json(&self, a: &[Json]) -> Result<String, String> {
            if a.len() != $n { return Err(format!("{} arguments given, the function takes {}", a.len(), $n)); }
            let result = (self)($($T::from_json(&a[$i]).map_err(|e| format!("argument {}: {}", $i + 1, e))?),*);
            let mut out = String::new();
            result.to_json(&mut out);
            Ok(out)
        } })* } }
    callable!(0; ; 1; A 0; 2; A 0, B 1; 3; A 0, B 1, C 2; 4; A 0, B 1, C 2, D 3; 5; A 0, B 1, C 2, D 3, E 4;
              6; A 0, B 1, C 2, D 3, E 4, F 5; 7; A 0, B 1, C 2, D 3, E 4, F 5, G 6; 8; A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

    pub fn run<Args, F: Callable<Args>>(f: F) {
        let mut input = String::new();
        let _ = unsafe { std::fs::File::from_raw_fd(3) }.read_to_string(&mut input);
        let mut results = unsafe { std::fs::File::from_raw_fd(4) };
        let mut lines = input.split('\n');
        let token = lines.next().unwrap_or("").to_string();
        for (index, line) in lines.filter(|line| !line.is_empty()).enumerate() {
            let args = match parse(line) {
                Ok(Json::Arr(args)) => args,
                _ => { eprintln!("harness driver: call {} is not a list of arguments", index + 1); std::process::exit(3); }
            };
            match f.call_json(&args) {
                Ok(text) => { let _ = results.write_all(format!("{} {} {}\n", token, index, text).as_bytes()); }
                Err(why) => { eprintln!("harness driver: call {}: {}", index + 1, why); std::process::exit(3); }
            }
        }
        let _ = results.write_all(format!("{} end\n", token).as_bytes());
    }
}

fn main() { __harness::run(__ENTRY__); }
