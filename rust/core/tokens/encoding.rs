//! Token counts exactly as OpenAI's tokenizers give them (tiktoken's `encode_ordinary`), with
//! the tables compiled in: nothing is read or fetched at run time.
//!
//! The counting comes from the `bpe-openai` crate: its encoders give tiktoken's tokens, in
//! time linear in the text (see the README for why this crate). Its tables are compiled in
//! compact form (see [`table`](super::table)), under a third of their size, and an encoder is
//! rebuilt from its table the first time its encoding counts, not before: loading the library
//! costs no table memory or time.

use std::convert::Infallible;
use std::sync::OnceLock;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input, Match};

use crate::core::tokens::ascii_pieces::{cl100k_piece_end, o200k_piece_end};
use crate::core::tokens::surrogates::tiktoken_text;
use crate::core::tokens::table::{self, Ranks};

/// An encoding the library counts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    O200kBase,
    Cl100kBase,
}

/// An encoding once loaded: the crate's encoder, the pre-tokenizer that cuts text into the
/// pieces it encodes, and the bytes of every token, so that a piece of text that is a token
/// counts one without running the encoder (as tiktoken does too: most words are one token).
struct Loaded {
    bpe: BytePairEncoding,
    pieces: Regex,
    /// Per pattern of `pieces`: whether its match ends with one character looked at, not
    /// taken.
    looks_ahead: Vec<bool>,
    /// The end of an ASCII piece, found without the regex (see [`super::ascii_pieces`]).
    ascii_piece_end: fn(&[u8], usize) -> Option<usize>,
    whole_tokens: Ranks<'static>,
}

impl Loaded {
    /// The crate's encoder rebuilt from the compact table (serde is the only way into its
    /// fields), and the pre-tokenizer built from the patterns.
    fn new(encoding: Encoding) -> Loaded {
        let (fields, whole_tokens) = table::read(encoding.table());
        let fields = rmp_serde::to_vec(&fields).expect("the fields serialize");
        let bpe: BytePairEncoding = rmp_serde::from_slice(&fields).expect("the crate's fields");
        let patterns = encoding.patterns();
        let pieces = Regex::new_many(&patterns.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>())
            .expect("valid patterns");
        Loaded {
            bpe,
            pieces,
            looks_ahead: patterns.iter().map(|(_, ahead)| *ahead).collect(),
            ascii_piece_end: match encoding {
                Encoding::O200kBase => o200k_piece_end,
                Encoding::Cl100kBase => cl100k_piece_end,
            },
            whole_tokens,
        }
    }

    /// The count of `text`, the sum over its pieces (these encodings do not normalize text);
    /// `go_on` is asked before each piece. `find` runs the pre-tokenizer on what is left.
    fn count<E>(
        &self,
        text: &str,
        find: impl FnMut(&Input<'_>) -> Option<Match>,
        mut go_on: impl FnMut() -> Result<(), E>,
    ) -> Result<usize, E> {
        let mut count = 0;
        self.each_piece(text, find, |piece| {
            go_on()?;
            count += if self.whole_tokens.contains_key(piece) {
                1
            } else {
                self.bpe.count(piece)
            };
            Ok(())
        })?;
        Ok(count)
    }

    /// Cuts `text` into the pieces the encoder encodes one by one, as tiktoken's pattern does:
    /// each the longest match at the start of what is left, less the one character a
    /// looking-ahead pattern only looks at.
    fn each_piece<E>(
        &self,
        text: &str,
        mut find: impl FnMut(&Input<'_>) -> Option<Match>,
        mut piece: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let bytes = text.as_bytes();
        let mut start = 0;
        while start < text.len() {
            let found = (self.ascii_piece_end)(bytes, start)
                .or_else(|| self.regex_piece_end(text, start, &mut find));
            let Some(end) = found else { break };
            piece(&bytes[start..end])?;
            start = end;
        }
        Ok(())
    }

    /// The end of the piece at `start` by the pre-tokenizer itself: the longest match on
    /// what is left, less the one character a looking-ahead pattern only looks at.
    fn regex_piece_end(
        &self,
        text: &str,
        start: usize,
        find: &mut impl FnMut(&Input<'_>) -> Option<Match>,
    ) -> Option<usize> {
        // The rest alone, as the crate's pre-tokenizer sees it: `$` is the text's end.
        let rest = Input::new(&text[start..]).anchored(Anchored::Yes);
        let found = find(&rest)?;
        let mut end = start + found.end();
        if self.looks_ahead[found.pattern().as_usize()] {
            end -= text[start..end]
                .chars()
                .next_back()
                .map_or(0, char::len_utf8);
        }
        // The patterns that look ahead take two characters at least; a piece of nothing
        // would never end.
        assert!(end > start, "an empty piece at byte {start}");
        Some(end)
    }
}

/// The pre-tokenizer's working memory, for a thread counting many texts: the regex's own
/// pool hands its memory out fast only to the first thread that used it, and takes a lock
/// for every piece on the others (counting on two threads was slower than on one).
pub struct Scratch {
    encoding: Encoding,
    cache: Cache,
}

static O200K_BASE: OnceLock<Loaded> = OnceLock::new();
static CL100K_BASE: OnceLock<Loaded> = OnceLock::new();

// The default first.
named!(Encoding { O200kBase => "o200k_base", Cl100kBase => "cl100k_base" });

impl Encoding {
    /// The one way to the loaded encoding, so that `is_loaded` knows whether it was built.
    fn slot(self) -> &'static OnceLock<Loaded> {
        match self {
            Encoding::O200kBase => &O200K_BASE,
            Encoding::Cl100kBase => &CL100K_BASE,
        }
    }

    fn loaded(self) -> &'static Loaded {
        self.slot().get_or_init(|| Loaded::new(self))
    }

    /// The compact table the build script wrote.
    fn table(self) -> &'static [u8] {
        match self {
            Encoding::O200kBase => include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.table")),
            Encoding::Cl100kBase => {
                include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.table"))
            }
        }
    }

    /// The crate's pre-tokenizer patterns for this encoding, as `bpe-openai` 0.3.2 builds its
    /// own tokenizers (private there): tiktoken's pattern, its negative look-ahead
    /// `\s+(?!\S)` rewritten as a pattern whose last character is looked at, not taken.
    fn patterns(self) -> [(String, bool); 3] {
        let main = match self {
            Encoding::O200kBase => [
                "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                "\\p{N}{1,3}",
                " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
                "\\s*[\\r\\n]+",
                "\\s+$",
            ]
            .join("|"),
            Encoding::Cl100kBase => "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$".to_string(),
        };
        [
            (main, false),
            ("\\s+\\s".into(), true),
            ("\\s+".into(), false),
        ]
    }

    /// Whether the encoder has been rebuilt (by a count, or by [`Encoding::load`]).
    pub fn is_loaded(self) -> bool {
        self.slot().get().is_some()
    }

    /// Rebuilds the encoder now, if no count has yet.
    pub fn load(self) {
        self.loaded();
    }

    /// The number of tokens tiktoken's `encode_ordinary` gives for `text` (special tokens such
    /// as `<|endoftext|>` are ordinary text).
    pub fn count(self, text: &str) -> usize {
        let Ok(count) = self.count_with(text, || Ok::<(), Infallible>(()));
        count
    }

    fn count_with<E>(self, text: &str, go_on: impl FnMut() -> Result<(), E>) -> Result<usize, E> {
        let loaded = self.loaded();
        loaded.count(text, |rest| loaded.pieces.find(rest.clone()), go_on)
    }

    /// Working memory for [`Encoding::count_bytes_in`] (loading the encoding first).
    pub fn scratch(self) -> Scratch {
        Scratch {
            encoding: self,
            cache: self.loaded().pieces.create_cache(),
        }
    }

    /// [`Encoding::count_bytes_with`], in `scratch`'s memory (made by this encoding).
    pub fn count_bytes_in<E>(
        self,
        scratch: &mut Scratch,
        text: &[u8],
        go_on: impl FnMut() -> Result<(), E>,
    ) -> Result<usize, E> {
        assert_eq!(scratch.encoding, self, "scratch made by another encoding");
        let loaded = self.loaded();
        let cache = &mut scratch.cache;
        let find = |rest: &Input<'_>| loaded.pieces.search_with(cache, rest);
        loaded.count(&tiktoken_text(text), find, go_on)
    }

    /// [`Encoding::count`] for the bytes of a Python `str`: its UTF-8, where lone surrogates
    /// may stand as the three bytes of their code point. Such text is counted as tiktoken's
    /// Python wrapper counts it (see [`tiktoken_text`]).
    pub fn count_bytes(self, text: &[u8]) -> usize {
        self.count(&tiktoken_text(text))
    }

    /// [`Encoding::count_bytes`], asking `go_on` now and then whether to stop with its error.
    pub fn count_bytes_with<E>(
        self,
        text: &[u8],
        go_on: impl FnMut() -> Result<(), E>,
    ) -> Result<usize, E> {
        self.count_with(&tiktoken_text(text), go_on)
    }

    /// The bytes of every token, by rank (the token's number): the table this library was
    /// built with, for comparing it with the published one.
    pub fn tokens(self) -> Vec<&'static [u8]> {
        let bpe = &self.loaded().bpe;
        (0..bpe.num_tokens())
            .map(|rank| bpe.token_bytes(rank as u32))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The crate's own tokenizer, deserialized whole, which the rebuilt one must match.
    fn crates_tokenizer(encoding: Encoding) -> &'static bpe_openai::Tokenizer {
        match encoding {
            Encoding::O200kBase => bpe_openai::o200k_base(),
            Encoding::Cl100kBase => bpe_openai::cl100k_base(),
        }
    }

    #[test]
    fn names_round_trip() {
        for encoding in Encoding::ALL {
            assert_eq!(Encoding::from_name(encoding.name()), Some(encoding));
        }
        assert_eq!(Encoding::ALL[0].name(), "o200k_base");
        assert_eq!(Encoding::from_name("gpt2"), None);
        assert_eq!(Encoding::from_name("O200K_BASE"), None);
        assert_eq!(Encoding::from_name(""), None);
    }

    // Counts checked against tiktoken 0.14's `len(encode_ordinary(text))`; the Python tests
    // compare every kind of text with tiktoken itself.
    #[test]
    fn counts_known_texts() {
        let cases: [(&str, usize, usize); 6] = [
            ("", 0, 0),
            ("hello world", 2, 2),
            ("<|endoftext|>", 7, 7),
            ("    indented code\n\n", 5, 5),
            ("Съешь же ещё этих мягких французских булок", 12, 28),
            ("12345678901", 4, 4),
        ];
        for (text, o200k, cl100k) in cases {
            assert_eq!(Encoding::O200kBase.count(text), o200k, "o200k {text:?}");
            assert_eq!(Encoding::Cl100kBase.count(text), cl100k, "cl100k {text:?}");
        }
    }

    #[test]
    fn whole_tokens_count_as_the_crate_counts() {
        let texts = [
            "hello world, don't repeat yourself",
            "    indented\n\n\tcode(x) {}",
            "Съешь же ещё 東京都 😀👩‍👩‍👧‍👦 12345",
            "<|endoftext|>",
        ];
        for encoding in Encoding::ALL {
            let tokenizer = crates_tokenizer(encoding);
            for text in texts {
                assert_eq!(encoding.count(text), tokenizer.count(text), "{text:?}");
            }
        }
    }

    #[test]
    fn rebuilt_tokenizers_are_the_crates() {
        let text = "Hello,  World!\n\n  def f(x):\r\n\treturn x**2 # 12345 don't\u{a0} \
                    HTTPServer's URLs Ünïcödé 東京都 😀👩‍👩‍👧‍👦 🇫🇷 \u{fffd}   \n";
        for encoding in Encoding::ALL {
            let loaded = encoding.loaded();
            let crates = crates_tokenizer(encoding);
            let crates_pieces: Vec<&[u8]> = crates.split(text).map(str::as_bytes).collect();
            let mut scratch = encoding.scratch();
            let mut pooled = Vec::new();
            let mut scratched = Vec::new();
            let find = |rest: &Input<'_>| loaded.pieces.find(rest.clone());
            let _ = loaded.each_piece(text, find, |piece| {
                pooled.push(piece.to_vec());
                Ok::<(), Infallible>(())
            });
            let cache = &mut scratch.cache;
            let find = |rest: &Input<'_>| loaded.pieces.search_with(cache, rest);
            let _ = loaded.each_piece(text, find, |piece| {
                scratched.push(piece.to_vec());
                Ok::<(), Infallible>(())
            });
            assert_eq!(pooled, crates_pieces);
            assert_eq!(scratched, crates_pieces);
            let (ours, crates) = (&loaded.bpe, &crates.bpe);
            assert_eq!(ours.num_tokens(), crates.num_tokens());
            // Every token, and every token after the one before it: the merges across a split.
            let mut previous: &[u8] = b"";
            for rank in 0..crates.num_tokens() as u32 {
                let token = crates.token_bytes(rank);
                assert_eq!(ours.token_bytes(rank), token);
                let pair = [previous, token].concat();
                assert_eq!(ours.count(&pair), crates.count(&pair), "{pair:?}");
                assert_eq!(
                    ours.encode_via_backtracking(&pair),
                    crates.encode_via_backtracking(&pair)
                );
                previous = token;
            }
        }
    }

    /// Checks, at every byte of `text` where a character starts, that the piece found there
    /// by hand is the regex's, and is found by hand whenever `text` is ASCII; and that
    /// `text` is cut as the regex alone cuts it.
    fn assert_same_pieces(text: &str) {
        for encoding in Encoding::ALL {
            let loaded = encoding.loaded();
            let mut find = |rest: &Input<'_>| loaded.pieces.find(rest.clone());
            for start in (0..text.len()).filter(|&at| text.is_char_boundary(at)) {
                let by_regex = loaded.regex_piece_end(text, start, &mut find);
                match (loaded.ascii_piece_end)(text.as_bytes(), start) {
                    Some(end) => assert_eq!(Some(end), by_regex, "{encoding:?} {text:?} {start}"),
                    None => assert!(!text.is_ascii(), "{encoding:?} {text:?} {start}"),
                }
            }
            let mut ends = Vec::new();
            let mut at = 0;
            let _ = loaded.each_piece(text, &mut find, |piece| {
                at += piece.len();
                ends.push(at);
                Ok::<(), Infallible>(())
            });
            let mut by_regex = Vec::new();
            let mut start = 0;
            while start < text.len() {
                let Some(end) = loaded.regex_piece_end(text, start, &mut find) else {
                    break;
                };
                by_regex.push(end);
                start = end;
            }
            assert_eq!(ends, by_regex, "{encoding:?} {text:?}");
        }
    }

    #[test]
    fn ascii_pieces_are_the_regexs_for_every_pair_of_ascii_characters() {
        for first in 0..128u8 {
            for second in 0..128u8 {
                for text in [[first, second].as_slice(), &[b'a', first, second, b'x']] {
                    assert_same_pieces(std::str::from_utf8(text).unwrap());
                }
            }
        }
    }

    #[test]
    fn ascii_pieces_are_the_regexs_for_every_short_text() {
        // A character of each class the patterns tell apart, and the letters of contractions.
        let alphabet: Vec<char> = "asleAST0 \t\n\r\x0b'/.\x1c".chars().collect();
        let mut text = String::new();
        for length in 1..=4u32 {
            for mut number in 0..alphabet.len().pow(length) {
                text.clear();
                for _ in 0..length {
                    text.push(alphabet[number % alphabet.len()]);
                    number /= alphabet.len();
                }
                assert_same_pieces(&text);
            }
        }
    }

    #[test]
    fn ascii_pieces_are_the_regexs_beside_any_character() {
        // With characters beyond ASCII that are letters, marks, digits, spaces, symbols, and
        // letters that fold to the contractions' (`ſ` to `s`, the Kelvin sign to `k`).
        let alphabet: Vec<char> =
            "asltrvdmeAST09 \t\n\r\x0b'/.-_(\x1céÉſ\u{a0}\u{85}\u{663}—中\u{301}\u{212a}\u{2028}😀"
                .chars()
                .collect();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut text = String::new();
        for _ in 0..200_000 {
            text.clear();
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let length = (state >> 58) as usize; // 0 to 63
            for _ in 0..length {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                text.push(alphabet[(state >> 33) as usize % alphabet.len()]);
            }
            assert_same_pieces(&text);
        }
    }

    #[test]
    fn bytes_with_lone_surrogates_count_as_replacement_characters() {
        // U+D800 alone, as Python's surrogatepass writes it.
        let lone = b"a\xed\xa0\x80b";
        for encoding in Encoding::ALL {
            assert_eq!(encoding.count_bytes(lone), encoding.count("a\u{fffd}b"));
            assert_eq!(encoding.count_bytes(b"plain"), encoding.count("plain"));
        }
    }

    #[test]
    fn loads_and_lists_its_tokens() {
        // That nothing is loaded before the first count is checked from Python, in a fresh
        // process: the tests here share one.
        Encoding::Cl100kBase.load();
        assert!(Encoding::Cl100kBase.is_loaded());
        let tokens = Encoding::Cl100kBase.tokens();
        assert_eq!(tokens.len(), 100_256);
        assert_eq!(tokens[0], b"!");
        assert_eq!(Encoding::O200kBase.tokens().len(), 199_998);
    }
}
