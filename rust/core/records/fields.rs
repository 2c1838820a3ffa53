//! The fields of one record that the contract reads, found in its JSON text: in one pass for
//! flat records (the common kind), through `serde_json` for any other.

use std::borrow::Cow;
use std::collections::HashSet;

use serde::de::{self, DeserializeSeed, Deserializer as _, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::core::records::json_values::depth;

/// Each read field's value as checked JSON text (the last one, when a key repeats, as in
/// Python's reader), and how deeply the record's values nest.
#[derive(Debug, Default, Clone, Copy)]
pub struct Fields<'a> {
    pub fragment_id: Option<&'a str>,
    pub token_count: Option<&'a str>,
    pub relevance_score: Option<&'a str>,
    pub required: Option<&'a str>,
    pub group: Option<&'a str>,
    pub variant_of: Option<&'a str>,
    pub content: Option<&'a str>,
    pub deepest: usize,
}

impl<'a> Fields<'a> {
    fn set(&mut self, key: &[u8], value: &'a str) {
        let slot = match key {
            b"fragment_id" => &mut self.fragment_id,
            b"token_count" => &mut self.token_count,
            b"relevance_score" => &mut self.relevance_score,
            b"required" => &mut self.required,
            b"group" => &mut self.group,
            b"variant_of" => &mut self.variant_of,
            b"content" => &mut self.content,
            _ => return,
        };
        *slot = Some(value);
    }
}

/// The keys of an object's checked JSON text, as [`Key`] gives them, in the order they first
/// come, each once (as in the `dict` Python's reader makes).
pub fn keys_of(object: &str) -> Vec<Cow<'_, [u8]>> {
    let mut reader = serde_json::Deserializer::from_str(object);
    // The text was checked already: reading it again cannot fail.
    reader.deserialize_map(KeysOf).unwrap_or_default()
}

/// The value starting at `text[at]` (no white space first) as checked JSON text, or `None`
/// when it is not JSON.
pub fn value_at(text: &str, at: usize) -> Option<&str> {
    let mut reader = serde_json::Deserializer::from_str(&text[at..]);
    <&RawValue>::deserialize(&mut reader)
        .ok()
        .map(RawValue::get)
}

/// The fields of an object's checked JSON text.
pub fn fields_of(object: &str) -> Fields<'_> {
    let mut reader = serde_json::Deserializer::from_str(object);
    // The text was checked already: reading it again cannot fail.
    reader.deserialize_map(FieldsOf).unwrap_or_default()
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

/// Where the JSON white space from `at` on ends.
pub fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && is_space(bytes[at]) {
        at += 1;
    }
    at
}

/// The end of a string whose opening quote is at `at - 1`, when nothing in it is escaped.
fn plain_string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'"' => return Some(at + 1),
            b'\\' | 0..=0x1f => return None,
            _ => at += 1,
        }
    }
    None
}

fn digits_end(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    at
}

/// The end of the number at `at`, by JSON's grammar.
fn number_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    match bytes.get(at)? {
        b'0' => at += 1,
        b'1'..=b'9' => at = digits_end(bytes, at),
        _ => return None,
    }
    if bytes.get(at) == Some(&b'.') {
        let end = digits_end(bytes, at + 1);
        if end == at + 1 {
            return None;
        }
        at = end;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let end = digits_end(bytes, at);
        if end == at {
            return None;
        }
        at = end;
    }
    Some(at)
}

/// The end of a flat value at `at`: a string with nothing escaped, a number, or a literal.
fn flat_value_end(bytes: &[u8], at: usize) -> Option<usize> {
    let literal = |word: &[u8]| bytes[at..].starts_with(word).then_some(at + word.len());
    match bytes.get(at)? {
        b'"' => plain_string_end(bytes, at + 1),
        b'-' | b'0'..=b'9' => number_end(bytes, at),
        b't' => literal(b"true"),
        b'f' => literal(b"false"),
        b'n' => literal(b"null"),
        _ => None,
    }
}

/// A flat record at `text[at]`: an object whose keys and strings escape nothing and whose
/// values are strings, numbers, booleans or null. Its fields and where it ends; `None` for
/// any other text, JSON or not, which [`value_at`] and [`fields_of`] read instead.
pub fn flat_record(text: &str, at: usize) -> Option<(Fields<'_>, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    let mut fields = Fields::default();
    let mut at = skip_space(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return Some((fields, at + 1));
    }
    loop {
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let key_end = plain_string_end(bytes, at + 1)?;
        let key = &bytes[at + 1..key_end - 1];
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let value_start = skip_space(bytes, at + 1);
        let value_end = flat_value_end(bytes, value_start)?;
        fields.set(key, &text[value_start..value_end]);
        at = skip_space(bytes, value_end);
        match bytes.get(at)? {
            b',' => at = skip_space(bytes, at + 1),
            b'}' => return Some((fields, at + 1)),
            _ => return None,
        }
    }
}

struct FieldsOf;

impl<'de> Visitor<'de> for FieldsOf {
    type Value = Fields<'de>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a record")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Fields::default();
        while let Some(key) = map.next_key_seed(Key)? {
            let value = map.next_value::<&'de RawValue>()?.get();
            fields.deepest = fields.deepest.max(depth(value));
            fields.set(&key, value);
        }
        Ok(fields)
    }
}

struct KeysOf;

impl<'de> Visitor<'de> for KeysOf {
    type Value = Vec<Cow<'de, [u8]>>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a record")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut keys = Vec::new();
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key_seed(Key)? {
            map.next_value::<&'de RawValue>()?;
            if seen.insert(key.clone()) {
                keys.push(key);
            }
        }
        Ok(keys)
    }
}

/// A key's code points, as [`crate::core::records::json_values::string_bytes`] gives a string's.
pub struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, [u8]>;

    fn deserialize<D: de::Deserializer<'de>>(self, reader: D) -> Result<Self::Value, D::Error> {
        reader.deserialize_bytes(KeyBytes)
    }
}

struct KeyBytes;

impl<'de> Visitor<'de> for KeyBytes {
    type Value = Cow<'de, [u8]>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a key")
    }

    fn visit_borrowed_bytes<E: de::Error>(self, bytes: &'de [u8]) -> Result<Self::Value, E> {
        // Read as bytes, a key is not checked for control characters, which JSON allows only
        // escaped; a key borrowed from the text has no escapes, so any such byte is raw.
        if bytes.iter().any(|&byte| byte < 0x20) {
            return Err(E::custom("control character in a key"));
        }
        Ok(Cow::Borrowed(bytes))
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
        Ok(Cow::Owned(bytes.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(text: &str) -> Option<(Fields<'_>, usize)> {
        flat_record(text, 0)
    }

    #[test]
    fn flat_records_are_read_in_one_pass() {
        let text = r#"{ "fragment_id" : "a b", "token_count":12,"relevance_score": -0.5e-3 ,
            "required": true, "group": null, "x": false, "fragment_id": "c",
            "variant_of": "f"} tail"#;
        let (fields, end) = flat(text).unwrap();
        assert_eq!(&text[end..], " tail");
        assert_eq!(fields.fragment_id, Some("\"c\""));
        assert_eq!(fields.token_count, Some("12"));
        assert_eq!(fields.relevance_score, Some("-0.5e-3"));
        assert_eq!(fields.required, Some("true"));
        assert_eq!(fields.group, Some("null"));
        assert_eq!(fields.variant_of, Some("\"f\""));
        assert_eq!(flat("{}").map(|(_, end)| end), Some(2));
        assert_eq!(flat("{ }x").map(|(_, end)| end), Some(3));
    }

    #[test]
    fn anything_else_is_left_to_serde() {
        for text in [
            r#"{"a": "\n"}"#,
            r#"{"a\u0041": 1}"#,
            r#"{"a": [1]}"#,
            r#"{"a": {}}"#,
            "{\"a\": \"\t\"}",
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": 1e}"#,
            r#"{"a": -}"#,
            r#"{"a": .5}"#,
            r#"{"a": tru}"#,
            r#"{"a": NaN}"#,
            r#"{"a": 1,}"#,
            r#"{"a" 1}"#,
            r#"{"a": 1"#,
            r#"{"a": 1 "b": 2}"#,
            r#"{a: 1}"#,
            "[1]",
            "",
        ] {
            assert!(flat(text).is_none(), "{text}");
        }
    }

    #[test]
    fn numbers_follow_the_json_grammar() {
        for number in ["0", "-0", "12", "-3.25", "1e5", "1E+5", "2.5e-10", "0.0"] {
            let text = format!(r#"{{"a": {number}}}"#);
            assert_eq!(flat(&text).unwrap().0.deepest, 0, "{number}");
            assert!(value_at(&text, 0).is_some());
        }
    }

    #[test]
    fn other_records_through_serde() {
        let text = r#"{"fragment_id": "\u0041", "x": [[1], {"y": []}], "group": "g",
            "variant_of": "v\n"} rest"#;
        let raw = value_at(text, 0).unwrap();
        assert_eq!(&text[raw.len()..], " rest");
        let fields = fields_of(raw);
        assert_eq!(fields.fragment_id, Some(r#""\u0041""#));
        assert_eq!(fields.group, Some(r#""g""#));
        assert_eq!(fields.variant_of, Some(r#""v\n""#));
        assert_eq!(fields.deepest, 3);
        assert!(value_at("[1, 2", 0).is_none());
    }

    #[test]
    fn keys_in_the_order_they_first_come() {
        let keys = keys_of(r#"{"tokens": 3, "b\u0041": [{"c": 1}], "tokens": 4, "\ud800": 0}"#);
        let keys: Vec<&[u8]> = keys.iter().map(AsRef::as_ref).collect();
        assert_eq!(keys, [&b"tokens"[..], b"bA", b"\xed\xa0\x80"]);
        assert!(keys_of("{}").is_empty());
    }
}
