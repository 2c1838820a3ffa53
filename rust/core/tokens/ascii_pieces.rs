//! The pre-tokenizers' pieces of ASCII text, found without the regex: on ASCII every class
//! the patterns use is a byte class, and a piece is found in one pass over its bytes, where
//! the regex's search costs far more per piece than the piece's few bytes.
//!
//! Each function gives the end of the piece that starts at `start`, exactly as the
//! encoding's pattern ends it (see `Encoding::patterns`), or
//! `None` when that takes looking at a byte that is not ASCII: letters, digits, spaces and
//! case folding beyond ASCII are the regex's to judge.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Upper,
    Lower,
    Digit,
    /// `\r` or `\n`.
    Newline,
    /// Whitespace that is not a newline: space, `\t`, `\x0b`, `\x0c`.
    Blank,
    /// Neither whitespace, letter nor digit: punctuation, symbols, control bytes.
    Other,
    NotAscii,
    /// Past the text's end.
    End,
}

fn class(text: &[u8], at: usize) -> Class {
    let Some(&byte) = text.get(at) else {
        return Class::End;
    };
    match byte {
        b'A'..=b'Z' => Class::Upper,
        b'a'..=b'z' => Class::Lower,
        b'0'..=b'9' => Class::Digit,
        b'\r' | b'\n' => Class::Newline,
        b' ' | b'\t' | 0x0b | 0x0c => Class::Blank,
        0x80.. => Class::NotAscii,
        _ => Class::Other,
    }
}

/// Where the run of bytes of the classes `in_run` that starts at `at` ends; `None` when the
/// byte that ends it is not ASCII (it might belong to the run).
fn run_end(text: &[u8], mut at: usize, in_run: impl Fn(Class) -> bool) -> Option<usize> {
    loop {
        match class(text, at) {
            Class::NotAscii => return None,
            found if in_run(found) => at += 1,
            _ => return Some(at),
        }
    }
}

/// `[^\r\n\p{L}\p{N}]`: a byte a word may start with.
fn is_prefix(class: Class) -> bool {
    matches!(class, Class::Blank | Class::Other)
}

fn is_whitespace(class: Class) -> bool {
    matches!(class, Class::Blank | Class::Newline)
}

/// The end of `(?i:'s|'t|'re|'ve|'m|'ll|'d)` matched at `at`, or `at` when it does not
/// match there.
fn contraction_end(text: &[u8], at: usize) -> Option<usize> {
    if text.get(at) != Some(&b'\'') {
        return Some(at);
    }
    // Unicode case folding lets a few letters beyond ASCII stand for these (`ſ` for `s`).
    let letter = |offset: usize| match text.get(at + offset) {
        Some(byte) if !byte.is_ascii() => None,
        byte => Some(byte.map(u8::to_ascii_lowercase)),
    };
    Some(match letter(1)? {
        Some(b's' | b't' | b'm' | b'd') => at + 2,
        Some(first @ (b'r' | b'v' | b'l')) => {
            let second = if first == b'l' { b'l' } else { b'e' };
            if letter(2)? == Some(second) {
                at + 3
            } else {
                at
            }
        }
        _ => at,
    })
}

/// `\p{N}{1,3}` at `at`, a digit.
fn digits_end(text: &[u8], at: usize) -> Option<usize> {
    let mut end = at;
    while end < at + 3 {
        match class(text, end) {
            Class::Digit => end += 1,
            Class::NotAscii => return None,
            _ => break,
        }
    }
    Some(end)
}

/// ` ?[^\s\p{L}\p{N}]+` and then any of `trailing`, at `at`; `None` inside when no symbol
/// follows the optional space.
fn symbols_end(text: &[u8], at: usize, trailing: &[u8]) -> Option<Option<usize>> {
    let first = if text[at] == b' ' { at + 1 } else { at };
    match class(text, first) {
        Class::Other => {}
        Class::NotAscii => return None,
        _ => return Some(None),
    }
    let mut end = run_end(text, first, |class| class == Class::Other)?;
    // No byte beyond ASCII is one of `trailing`: the run's end needs no more looking.
    while text.get(end).is_some_and(|byte| trailing.contains(byte)) {
        end += 1;
    }
    Some(Some(end))
}

/// `\s*[\r\n]+|\s+(?!\S)|\s+` at `at`, whitespace (the tail both patterns share).
fn whitespace_end(text: &[u8], at: usize) -> Option<usize> {
    let end = run_end(text, at, is_whitespace)?;
    if let Some(last_newline) = text[at..end]
        .iter()
        .rposition(|&b| b == b'\r' || b == b'\n')
    {
        return Some(at + last_newline + 1);
    }
    // Before a non-space the run leaves its last space to start the next piece.
    if end < text.len() && end - at >= 2 {
        Some(end - 1)
    } else {
        Some(end)
    }
}

/// o200k_base's piece at `start` (`start < text.len()`).
pub fn o200k_piece_end(text: &[u8], start: usize) -> Option<usize> {
    let first = class(text, start);
    if first == Class::NotAscii {
        return None;
    }
    // `P?U*L+C?`, then `P?U+L*C?`: after the upper-case run, lower case or not.
    let word = if is_prefix(first) { start + 1 } else { start };
    let upper_end = run_end(text, word, |class| class == Class::Upper)?;
    let lower_end = run_end(text, upper_end, |class| class == Class::Lower)?;
    if lower_end > word {
        return contraction_end(text, lower_end);
    }
    match first {
        Class::Digit => digits_end(text, start),
        Class::Other | Class::Blank => match symbols_end(text, start, b"\r\n/")? {
            Some(end) => Some(end),
            None => whitespace_end(text, start),
        },
        _ => whitespace_end(text, start),
    }
}

/// cl100k_base's piece at `start` (`start < text.len()`).
pub fn cl100k_piece_end(text: &[u8], start: usize) -> Option<usize> {
    let first = class(text, start);
    if first == Class::NotAscii {
        return None;
    }
    let contraction = contraction_end(text, start)?;
    if contraction > start {
        return Some(contraction);
    }
    // `P?\p{L}+`
    let word = if is_prefix(first) { start + 1 } else { start };
    let letters_end = run_end(text, word, |class| {
        matches!(class, Class::Upper | Class::Lower)
    })?;
    if letters_end > word {
        return Some(letters_end);
    }
    match first {
        Class::Digit => digits_end(text, start),
        Class::Other | Class::Blank => match symbols_end(text, start, b"\r\n")? {
            Some(end) => Some(end),
            None => whitespace_end(text, start),
        },
        _ => whitespace_end(text, start),
    }
}
