//! Token counts exactly as OpenAI's tokenizers give them (tiktoken's `encode_ordinary`), with
//! the tables compiled in: nothing is read or fetched at run time.
//!
//! The tables and the counting come from the `bpe-openai` crate: its encoders give tiktoken's
//! tokens, in time linear in the text (see the README for why this crate). An encoding's
//! table is deserialized the first time it counts, not before: loading the library costs no
//! table memory or time.

use std::sync::OnceLock;

use bpe_openai::Tokenizer;

use super::surrogates::tiktoken_text;

/// An encoding the library counts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    O200kBase,
    Cl100kBase,
}

static O200K_BASE: OnceLock<&'static Tokenizer> = OnceLock::new();
static CL100K_BASE: OnceLock<&'static Tokenizer> = OnceLock::new();

impl Encoding {
    /// Every encoding, the default first.
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    pub fn from_name(name: &str) -> Option<Encoding> {
        Encoding::ALL
            .into_iter()
            .find(|encoding| encoding.name() == name)
    }

    /// The one way to the crate's tokenizer, so that `is_loaded` knows whether it was built.
    fn slot(
        self,
    ) -> (
        &'static OnceLock<&'static Tokenizer>,
        fn() -> &'static Tokenizer,
    ) {
        match self {
            Encoding::O200kBase => (&O200K_BASE, bpe_openai::o200k_base),
            Encoding::Cl100kBase => (&CL100K_BASE, bpe_openai::cl100k_base),
        }
    }

    fn tokenizer(self) -> &'static Tokenizer {
        let (slot, build) = self.slot();
        slot.get_or_init(build)
    }

    /// Whether the table has been deserialized (by a count, or by [`Encoding::load`]).
    pub fn is_loaded(self) -> bool {
        self.slot().0.get().is_some()
    }

    /// Deserializes the table now, if no count has yet.
    pub fn load(self) {
        self.tokenizer();
    }

    /// The number of tokens tiktoken's `encode_ordinary` gives for `text` (special tokens such
    /// as `<|endoftext|>` are ordinary text).
    pub fn count(self, text: &str) -> usize {
        self.tokenizer().count(text)
    }

    /// [`Encoding::count`] for the bytes of a Python `str`: its UTF-8, where lone surrogates
    /// may stand as the three bytes of their code point. Such text is counted as tiktoken's
    /// Python wrapper counts it (see [`tiktoken_text`]).
    pub fn count_bytes(self, text: &[u8]) -> usize {
        self.count(&tiktoken_text(text))
    }

    /// The bytes of every token, by rank (the token's number): the table this library was
    /// built with, for comparing it with the published one.
    pub fn tokens(self) -> Vec<&'static [u8]> {
        let bpe = &self.tokenizer().bpe;
        (0..bpe.num_tokens())
            .map(|rank| bpe.token_bytes(rank as u32))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
