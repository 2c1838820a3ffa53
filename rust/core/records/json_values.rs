//! Single JSON values, as the raw text `serde_json` has checked: their type in JSON's words,
//! their strings as Python holds them, their integers exactly, and how deeply they nest.

use std::borrow::Cow;

use serde::de::{Deserializer as _, Visitor};

/// A JSON value's type, named as JSON names it (not as Python or Rust would).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    Null,
    Boolean,
    Number,
    String,
    Array,
    Object,
}

named!(JsonType {
    Null => "null",
    Boolean => "boolean",
    Number => "number",
    String => "string",
    Array => "array",
    Object => "object",
});

impl JsonType {
    /// The type of a checked value's text, from its first byte.
    pub fn of(raw: &str) -> JsonType {
        match raw.as_bytes().first() {
            Some(b'n') => JsonType::Null,
            Some(b't' | b'f') => JsonType::Boolean,
            Some(b'"') => JsonType::String,
            Some(b'[') => JsonType::Array,
            Some(b'{') => JsonType::Object,
            _ => JsonType::Number,
        }
    }
}

/// A string's code points as bytes: UTF-8, except that a surrogate no pair completes is
/// written as the three bytes of its code point, as Python's `surrogatepass` writes it (JSON
/// may escape one, and Python reads it into a `str`). Borrowed when nothing is escaped.
pub fn string_bytes(text: &str) -> Cow<'_, [u8]> {
    let inner = &text.as_bytes()[1..text.len() - 1];
    if !inner.contains(&b'\\') {
        return Cow::Borrowed(inner);
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    reader
        .deserialize_bytes(BytesOf)
        .unwrap_or(Cow::Borrowed(inner))
}

struct BytesOf;

impl<'de> Visitor<'de> for BytesOf {
    type Value = Cow<'de, [u8]>;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a string")
    }

    // Only strings with escapes come here, and their bytes are always decoded anew.
    fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Self::Value, E> {
        Ok(Cow::Owned(bytes.to_vec()))
    }
}

/// A JSON number's text, when it is an integer (no fraction, no exponent), as Python's JSON
/// reader reads it: an `int`.
pub fn is_integer(number: &str) -> bool {
    !number
        .bytes()
        .any(|byte| matches!(byte, b'.' | b'e' | b'E'))
}

/// What an integer's text is worth, when it fits `u64` and is not negative; `-0` is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Integer {
    Fits(u64),
    Negative,
    TooLarge,
}

pub fn integer(number: &str) -> Integer {
    if let Some(magnitude) = number.strip_prefix('-') {
        return if magnitude == "0" {
            Integer::Fits(0)
        } else {
            Integer::Negative
        };
    }
    number.parse().map_or(Integer::TooLarge, Integer::Fits)
}

/// A JSON number's value as a float, rounded as Python's `float()` rounds it; an integer's
/// `-0` is 0 (Python reads it as the int 0).
pub fn float(number: &str) -> f64 {
    // `serde_json` checked the grammar, which Rust's float syntax includes.
    let value: f64 = number.parse().unwrap_or(f64::NAN);
    if is_integer(number) {
        value + 0.0
    } else {
        value
    }
}

/// How deeply a checked value nests arrays and objects: 0 for a string, number, boolean or
/// null; 1 for `[]` or `{"a": 1}`; 2 for `[[]]`.
pub fn depth(raw: &str) -> usize {
    let bytes = raw.as_bytes();
    if !matches!(bytes.first(), Some(b'[' | b'{')) {
        return 0;
    }
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &byte in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth -= 1,
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> &str {
        let checked: &serde_json::value::RawValue = serde_json::from_str(text).unwrap();
        checked.get()
    }

    #[test]
    fn types_are_named_as_json_names_them() {
        let names: Vec<_> = ["null", "true", "false", "-1", "2.5", "\"s\"", "[]", "{}"]
            .iter()
            .map(|text| JsonType::of(raw(text)).name())
            .collect();
        assert_eq!(
            names,
            ["null", "boolean", "boolean", "number", "number", "string", "array", "object"]
        );
    }

    #[test]
    fn strings_decode_escapes_and_keep_lone_surrogates() {
        assert_eq!(&*string_bytes(raw(r#""plain""#)), b"plain");
        assert!(matches!(string_bytes(raw(r#""plain""#)), Cow::Borrowed(_)));
        assert_eq!(
            &*string_bytes(raw(r#""a\n\u00e9\"""#)),
            "a\n\u{e9}\"".as_bytes()
        );
        assert_eq!(
            &*string_bytes(raw(r#""\ud83d\ude00""#)),
            "\u{1f600}".as_bytes()
        );
        assert_eq!(&*string_bytes(raw(r#""\ud800x""#)), b"\xed\xa0\x80x");
        assert_eq!(&*string_bytes(raw(r#""\udc00""#)), b"\xed\xb0\x80");
    }

    #[test]
    fn integers_are_exact() {
        assert!(is_integer("12") && is_integer("-0"));
        assert!(!is_integer("1.0") && !is_integer("1e3") && !is_integer("1E3"));
        assert_eq!(integer("0"), Integer::Fits(0));
        assert_eq!(integer("-0"), Integer::Fits(0));
        assert_eq!(integer("-3"), Integer::Negative);
        assert_eq!(integer("18446744073709551615"), Integer::Fits(u64::MAX));
        assert_eq!(integer("18446744073709551616"), Integer::TooLarge);
        assert_eq!(integer(&"9".repeat(5000)), Integer::TooLarge);
    }

    #[test]
    fn floats_round_as_python_does() {
        assert_eq!(float("0.1"), 0.1);
        assert_eq!(float("1e400"), f64::INFINITY);
        assert!(float("-0").is_sign_positive());
        assert!(float("-0.0").is_sign_negative());
    }

    #[test]
    fn depth_counts_arrays_and_objects_outside_strings() {
        assert_eq!(depth(raw("1")), 0);
        assert_eq!(depth(raw("\"[[[\"")), 0);
        assert_eq!(depth(raw("[]")), 1);
        assert_eq!(depth(raw(r#"{"a": [1, {"b": "]]]\"[["}], "c": []}"#)), 3);
        assert_eq!(depth(raw(r#"["[[[[", "{{", 1]"#)), 1);
        assert_eq!(depth(raw(&("[".repeat(300) + &"]".repeat(300)))), 300);
    }
}
