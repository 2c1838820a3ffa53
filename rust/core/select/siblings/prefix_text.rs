//! The text a prefix key digests: the shared fragments' `[fragment_id, token_count,
//! content]` as compact JSON with every character past ASCII escaped, byte for byte what
//! Python's `json.dumps(..., ensure_ascii=True, separators=(",", ":"))` writes, so that both
//! backends give one key.

/// `[[id,tokens,content],...]` for `fragments`, each string given as its UTF-8, lone
/// surrogates encoded as three bytes each (`surrogatepass`).
pub fn prefix_text<'a>(fragments: impl IntoIterator<Item = (&'a [u8], u64, &'a [u8])>) -> Vec<u8> {
    let mut text = vec![b'['];
    for (at, (id, tokens, content)) in fragments.into_iter().enumerate() {
        if at > 0 {
            text.push(b',');
        }
        text.push(b'[');
        quoted(&mut text, id);
        text.push(b',');
        text.extend_from_slice(tokens.to_string().as_bytes());
        text.push(b',');
        quoted(&mut text, content);
        text.push(b']');
    }
    text.push(b']');
    text
}

/// The bytes JSON writes as they are: printable ASCII but the quote and the backslash.
const PLAIN: [bool; 256] = {
    let mut plain = [false; 256];
    let mut byte = 0x20;
    while byte <= 0x7e {
        plain[byte] = byte != b'"' as usize && byte != b'\\' as usize;
        byte += 1;
    }
    plain
};

/// `string` as a JSON string of ASCII characters.
fn quoted(text: &mut Vec<u8>, string: &[u8]) {
    text.push(b'"');
    let mut at = 0;
    loop {
        // Most text is printable ASCII, written as it is: a run of it is copied whole.
        let plain = string[at..]
            .iter()
            .position(|&byte| !PLAIN[usize::from(byte)])
            .unwrap_or(string.len() - at);
        text.extend_from_slice(&string[at..at + plain]);
        at += plain;
        if at == string.len() {
            break;
        }
        let (code, width) = code_point(&string[at..]);
        at += width;
        match code {
            0x22 => text.extend_from_slice(b"\\\""),
            0x5c => text.extend_from_slice(b"\\\\"),
            0x08 => text.extend_from_slice(b"\\b"),
            0x0c => text.extend_from_slice(b"\\f"),
            0x0a => text.extend_from_slice(b"\\n"),
            0x0d => text.extend_from_slice(b"\\r"),
            0x09 => text.extend_from_slice(b"\\t"),
            0x10000.. => {
                let above = code - 0x10000;
                escaped(text, 0xd800 | (above >> 10));
                escaped(text, 0xdc00 | (above & 0x3ff));
            }
            _ => escaped(text, code),
        }
    }
    text.push(b'"');
}

/// `\uXXXX`, lower-case hex, as Python writes it.
fn escaped(text: &mut Vec<u8>, unit: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    text.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        text.push(HEX[(unit >> shift & 0xf) as usize]);
    }
}

/// The code point `bytes` start with, and its width in bytes. The bytes are CPython's
/// UTF-8 of a str (lone surrogates as their three-byte form), so every sequence is whole.
fn code_point(bytes: &[u8]) -> (u32, usize) {
    let lead = u32::from(bytes[0]);
    let more = |count: usize| {
        bytes[1..=count]
            .iter()
            .fold(0, |code, &byte| code << 6 | (u32::from(byte) & 0x3f))
    };
    match lead {
        0x00..=0x7f => (lead, 1),
        0xc0..=0xdf => ((lead & 0x1f) << 6 | more(1), 2),
        0xe0..=0xef => ((lead & 0x0f) << 12 | more(2), 3),
        _ => ((lead & 0x07) << 18 | more(3), 4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_as_python_escapes_them() {
        // json.dumps([["a\"b\\", 7, "\x00\x1f\x7f \b\f\n\r\t~ é €😀"]], ensure_ascii=True,
        // separators=(",", ":")), and a lone surrogate (surrogatepass) as Python writes it.
        let content = "\u{0}\u{1f}\u{7f} \u{8}\u{c}\n\r\t~ é €😀".as_bytes();
        let text = prefix_text([
            (&b"a\"b\\"[..], 7, content),
            (&b"\xed\xa0\x80x"[..], 0, &b""[..]),
        ]);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            r#"[["a\"b\\",7,"\u0000\u001f\u007f \b\f\n\r\t~ \u00e9 \u20ac\ud83d\ude00"],["\ud800x",0,""]]"#
        );
    }

    #[test]
    fn characters_past_the_first_plane_are_surrogate_pairs() {
        // Leads of F3 and F4: the lead's own bits count.
        let text = prefix_text([("\u{e0001}\u{10ffff}".as_bytes(), 1, &b""[..])]);
        assert_eq!(text, br#"[["\udb40\udc01\udbff\udfff",1,""]]"#);
    }

    #[test]
    fn no_fragments_is_an_empty_list() {
        assert_eq!(prefix_text([]), b"[]");
        assert_eq!(
            prefix_text([(&b"a"[..], u64::MAX >> 1, &b""[..])]),
            br#"[["a",9223372036854775807,""]]"#
        );
    }
}
