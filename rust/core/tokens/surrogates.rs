//! The text tiktoken counts when a Python `str` holds surrogate code points.
//!
//! Such a `str` has no UTF-8, and tiktoken's Python wrapper, on the `UnicodeEncodeError`,
//! counts `text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")` instead: a high
//! surrogate followed by a low one becomes the character the pair stands for, and every other
//! surrogate becomes U+FFFD. The bindings hand such a `str` over as Python's `surrogatepass`
//! UTF-8 writes it (each surrogate as the three bytes of its code point), and this module
//! makes tiktoken's text of it.

use std::borrow::Cow;

const REPLACEMENT: char = '\u{fffd}';

/// The surrogate (0xD800 to 0xDFFF) whose three `surrogatepass` bytes start `bytes`.
fn surrogate_at(bytes: &[u8]) -> Option<u32> {
    match *bytes {
        [0xED, second @ 0xA0..=0xBF, third @ 0x80..=0xBF, ..] => {
            // Added, not or-ed: the parts share no bit, and a sum has no equivalent mutant.
            Some(0xD000 + (u32::from(second & 0x3F) << 6) + u32::from(third & 0x3F))
        }
        _ => None,
    }
}

fn is_high(unit: u32) -> bool {
    (0xD800..0xDC00).contains(&unit)
}

fn is_low(unit: u32) -> bool {
    (0xDC00..0xE000).contains(&unit)
}

/// The text tiktoken's Python wrapper counts for the `str` whose `surrogatepass` UTF-8 is
/// `bytes`. Plain UTF-8 is borrowed as it is. Bytes that are neither (no Python `str` gives
/// them) become U+FFFD, a character per invalid sequence, so that no input can fail.
pub fn tiktoken_text(bytes: &[u8]) -> Cow<'_, str> {
    let mut valid_up_to = match std::str::from_utf8(bytes) {
        Ok(text) => return Cow::Borrowed(text),
        Err(error) => error.valid_up_to(),
    };
    let mut text = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        let (valid, invalid) = rest.split_at(valid_up_to);
        // `valid` is UTF-8 (checked up to here); nothing is dropped.
        text.push_str(std::str::from_utf8(valid).unwrap_or_default());
        if invalid.is_empty() {
            return Cow::Owned(text);
        }
        let consumed = match surrogate_at(invalid) {
            Some(high) if is_high(high) => match surrogate_at(&invalid[3..]) {
                Some(low) if is_low(low) => {
                    let scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    text.push(char::from_u32(scalar).unwrap_or(REPLACEMENT));
                    6
                }
                _ => {
                    text.push(REPLACEMENT);
                    3
                }
            },
            Some(_) => {
                text.push(REPLACEMENT);
                3
            }
            None => {
                text.push(REPLACEMENT);
                // The invalid sequence; at the end of the bytes, all that is left.
                match std::str::from_utf8(invalid) {
                    Err(error) => error.error_len().unwrap_or(invalid.len()),
                    Ok(_) => invalid.len(),
                }
            }
        };
        rest = &invalid[consumed..];
        valid_up_to = match std::str::from_utf8(rest) {
            Ok(_) => rest.len(),
            Err(error) => error.valid_up_to(),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python's `surrogatepass` UTF-8 of a string of UTF-16 code units.
    fn surrogatepass(units: &[u32]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for &unit in units {
            if (0xD800..0xE000).contains(&unit) {
                bytes.extend([
                    0xE0 | (unit >> 12) as u8,
                    0x80 | (unit >> 6 & 0x3F) as u8,
                    0x80 | (unit & 0x3F) as u8,
                ]);
            } else {
                let mut buffer = [0; 4];
                let character = char::from_u32(unit).expect("a scalar value");
                bytes.extend(character.encode_utf8(&mut buffer).as_bytes());
            }
        }
        bytes
    }

    fn repaired(units: &[u32]) -> String {
        tiktoken_text(&surrogatepass(units)).into_owned()
    }

    #[test]
    fn plain_utf8_is_borrowed() {
        for text in ["", "plain", "naïve 😀 \u{fffd}"] {
            assert!(matches!(tiktoken_text(text.as_bytes()), Cow::Borrowed(t) if t == text));
        }
    }

    // Each expectation is what CPython gives for
    // `s.encode("utf-16", "surrogatepass").decode("utf-16", "replace")`.
    #[test]
    fn pairs_join_and_lone_surrogates_become_replacement_characters() {
        let a = 'a' as u32;
        let b = 'b' as u32;
        assert_eq!(repaired(&[a, 0xD800, b]), "a\u{fffd}b");
        assert_eq!(repaired(&[a, 0xD800]), "a\u{fffd}");
        assert_eq!(repaired(&[0xDC00, 'x' as u32]), "\u{fffd}x");
        assert_eq!(repaired(&[0xD800, 0xD800, 0xDC00]), "\u{fffd}\u{10000}");
        assert_eq!(repaired(&[0xDC00, 0xD800]), "\u{fffd}\u{fffd}");
        assert_eq!(repaired(&[0xD83D, 0xDE00]), "😀");
        assert_eq!(repaired(&[0xDBFF, 0xDFFF, 0xDBFF]), "\u{10ffff}\u{fffd}");
        assert_eq!(repaired(&[0xD800, 0x10000]), "\u{fffd}\u{10000}");
        assert_eq!(
            repaired(&[0xFEFF, 0xD800, 0xFEFF]),
            "\u{feff}\u{fffd}\u{feff}"
        );
        assert_eq!(repaired(&[0xDFFF, 0xDFFF]), "\u{fffd}\u{fffd}");
    }

    #[test]
    fn surrogates_are_told_from_their_neighbours() {
        // The largest code point below the surrogates, and the smallest above them.
        assert_eq!(
            repaired(&[0xD7FF, 0xD800, 0xE000]),
            "\u{d7ff}\u{fffd}\u{e000}"
        );
        assert_eq!(surrogate_at(&[0xED, 0x9F, 0xBF]), None);
        assert_eq!(surrogate_at(&[0xED, 0xA0, 0x80]), Some(0xD800));
        assert_eq!(surrogate_at(&[0xED, 0xBF, 0xBF]), Some(0xDFFF));
        assert_eq!(surrogate_at(&[0xED, 0xA0, 0x7F]), None);
        assert_eq!(surrogate_at(&[0xED, 0xA0]), None);
        assert!(is_high(0xD800) && is_high(0xDBFF) && !is_high(0xDC00) && !is_high(0xD7FF));
        assert!(is_low(0xDC00) && is_low(0xDFFF) && !is_low(0xE000) && !is_low(0xDBFF));
    }

    #[test]
    fn other_invalid_bytes_cannot_fail() {
        assert_eq!(tiktoken_text(b"a\xffb"), "a\u{fffd}b");
        assert_eq!(tiktoken_text(b"a\xe2\x82"), "a\u{fffd}");
        assert_eq!(tiktoken_text(b"\xed\xa0"), "\u{fffd}\u{fffd}");
        assert_eq!(tiktoken_text(b"\x80\x80"), "\u{fffd}\u{fffd}");
    }
}
