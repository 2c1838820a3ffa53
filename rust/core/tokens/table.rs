//! An encoding's table in compact form, and the crate's byte-pair encoder rebuilt from it.
//!
//! The `bpe-openai` crate compiles in each encoder serialized whole (32 MB for `o200k_base`),
//! most of it data derived from the token list. The build script (which includes this file)
//! writes only what cannot be derived quickly: every token's bytes, the length of the first
//! of the two tokens it merges from, and the automaton that finds the longest token (slow to
//! build). The rest is derived here at first use, the way the crate derives it, and the build
//! script checks that the two agree field by field for both encodings.
//!
//! Counting reads the longest-token automaton only: the crate's two automata of all matches
//! (16 MB for `o200k_base`) serve encoders this library never calls, so they stand as the
//! automata of the 256 one-byte tokens, written by the build script.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hasher;

use fnv::{FnvBuildHasher, FnvHashMap, FnvHasher};
use serde::de::{Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The fields of `bpe::byte_pair_encoding::BytePairEncoding`, in its order and serialized
/// form: its fields are private, and serde is the way in and out.
#[derive(Serialize, Deserialize)]
pub struct BpeFields {
    pub all_tokens: Vec<u8>,
    pub token_starts: Vec<u32>,
    pub bytes_hash_to_token: FnvHashMap<u32, u32>,
    pub split_table: Vec<(u32, u32)>,
    pub pair_lookup: FnvHashMap<(u32, u32), u32>,
    pub longest_searcher: Automaton,
    pub overlapping_searcher: Automaton,
    pub overlapping_searcher_rev: Automaton,
    pub next_prefix_match: Vec<u32>,
    pub hash_factor: u64,
}

/// A serialized `DoubleArrayAhoCorasick`, which the crate stores as bytes.
#[derive(PartialEq, Eq)]
pub struct Automaton(pub Vec<u8>);

impl Serialize for Automaton {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Automaton {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Automaton, D::Error> {
        deserializer.deserialize_bytes(AutomatonVisitor)
    }
}

struct AutomatonVisitor;

impl Visitor<'_> for AutomatonVisitor {
    type Value = Automaton;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a serialized automaton")
    }

    fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Automaton, E> {
        Ok(Automaton(bytes.to_vec()))
    }
}

/// `split_table`'s entry for a token that is not merged from two others.
fn unmerged(rank: u32) -> (u32, u32) {
    (rank, rank)
}

/// The compact form of `fields`, with `stand_ins` as its two automata of all matches:
/// the hash factor, the token count, each token's length, each token's first part's length
/// (0 when unmerged), the tokens' bytes, then the three automata, each after its length.
pub fn write(fields: &BpeFields, stand_ins: [&Automaton; 2]) -> Vec<u8> {
    let starts = &fields.token_starts;
    let mut out = Vec::new();
    out.extend(fields.hash_factor.to_le_bytes());
    out.extend((fields.split_table.len() as u32).to_le_bytes());
    out.extend(starts.windows(2).map(|pair| byte(pair[1] - pair[0])));
    out.extend(fields.split_table.iter().zip(0..).map(|(&pair, rank)| {
        if pair == unmerged(rank) {
            0
        } else {
            let first = pair.0 as usize;
            byte(starts[first + 1] - starts[first])
        }
    }));
    out.extend(&fields.all_tokens);
    for automaton in [&fields.longest_searcher, stand_ins[0], stand_ins[1]] {
        out.extend((automaton.0.len() as u32).to_le_bytes());
        out.extend(&automaton.0);
    }
    out
}

fn byte(length: u32) -> u8 {
    u8::try_from(length).expect("tokens are at most 255 bytes")
}

/// The compact form read back, a few bytes at a time.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> &'a [u8] {
        let (taken, rest) = self.bytes.split_at(count);
        self.bytes = rest;
        taken
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take(4).try_into().expect("4 bytes"))
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take(8).try_into().expect("8 bytes"))
    }

    fn automaton(&mut self) -> Automaton {
        let length = self.u32() as usize;
        Automaton(self.take(length).to_vec())
    }
}

/// The fields [`write`] wrote, with those it left out derived again; and every token's rank
/// by its bytes, which deriving them needs (and counting can use).
pub fn read(compact: &[u8]) -> (BpeFields, Ranks<'_>) {
    let mut reader = Reader { bytes: compact };
    let hash_factor = reader.u64();
    let count = reader.u32() as usize;
    let token_starts = starts(reader.take(count));
    let first_lengths = reader.take(count);
    let all_tokens = reader.take(*token_starts.last().expect("a start") as usize);
    let tokens = Tokens {
        all: all_tokens,
        starts: &token_starts,
    };
    let ranks = tokens.ranks();
    let split_table = split_table(&tokens, &ranks, first_lengths);
    let fields = BpeFields {
        bytes_hash_to_token: tokens.hashes(hash_factor),
        pair_lookup: pair_lookup(&split_table),
        next_prefix_match: tokens.longest_prefixes(&ranks),
        all_tokens: all_tokens.to_vec(),
        split_table,
        longest_searcher: reader.automaton(),
        overlapping_searcher: reader.automaton(),
        overlapping_searcher_rev: reader.automaton(),
        token_starts,
        hash_factor,
    };
    (fields, ranks)
}

fn starts(lengths: &[u8]) -> Vec<u32> {
    let mut starts = Vec::with_capacity(lengths.len() + 1);
    let mut start = 0;
    starts.push(start);
    for &length in lengths {
        start += u32::from(length);
        starts.push(start);
    }
    starts
}

/// The tokens' bytes, by rank.
struct Tokens<'a, 's> {
    all: &'a [u8],
    starts: &'s [u32],
}

pub type Ranks<'a> = HashMap<&'a [u8], u32, FnvBuildHasher>;

impl<'a> Tokens<'a, '_> {
    fn iter(&self) -> impl Iterator<Item = &'a [u8]> + '_ {
        self.starts
            .windows(2)
            .map(|pair| &self.all[pair[0] as usize..pair[1] as usize])
    }

    fn ranks(&self) -> Ranks<'a> {
        self.iter().zip(0..).collect()
    }

    /// The crate's `bytes_hash_to_token`, keyed by its `hash_bytes`.
    fn hashes(&self, factor: u64) -> FnvHashMap<u32, u32> {
        self.iter()
            .zip(0..)
            .map(|(token, rank)| (hash_bytes(token, factor), rank))
            .collect()
    }

    /// The crate's `next_prefix_match`: the longest token that is a proper prefix of each
    /// (the crate finds the leftmost longest token in all but the last byte, which starts at
    /// the first byte as every byte is a token), or `u32::MAX` when there is none.
    fn longest_prefixes(&self, ranks: &Ranks) -> Vec<u32> {
        self.iter()
            .map(|token| {
                (1..token.len())
                    .rev()
                    .find_map(|length| ranks.get(&token[..length]).copied())
                    .unwrap_or(u32::MAX)
            })
            .collect()
    }
}

/// The crate's `hash_bytes`, which keys `bytes_hash_to_token`.
fn hash_bytes(bytes: &[u8], factor: u64) -> u32 {
    let mut hasher = FnvHasher::default();
    hasher.write(&(bytes.len() as u64).to_le_bytes());
    hasher.write(bytes);
    (hasher.finish().wrapping_mul(factor) >> 32) as u32
}

/// The two tokens each token merges from, found by the stored length of the first.
fn split_table(tokens: &Tokens<'_, '_>, ranks: &Ranks, first_lengths: &[u8]) -> Vec<(u32, u32)> {
    tokens
        .iter()
        .zip(first_lengths)
        .zip(0..)
        .map(|((token, &length), rank)| match usize::from(length) {
            0 => unmerged(rank),
            length => (ranks[&token[..length]], ranks[&token[length..]]),
        })
        .collect()
}

fn pair_lookup(split_table: &[(u32, u32)]) -> FnvHashMap<(u32, u32), u32> {
    split_table
        .iter()
        .zip(0..)
        .filter(|&(&pair, rank)| pair != unmerged(rank))
        .map(|(&pair, rank)| (pair, rank))
        .collect()
}
