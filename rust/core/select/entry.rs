//! One fragment as the ranking sees it: its relevance as an integer key, its id's tie key,
//! its index and, where it fits, its token count.

use std::cmp::Ordering;

use crate::core::select::ids::FragmentIds;
use crate::core::select::value::{value_of, Item};

/// An ascending sort key for a relevance in `[0, 1]` that orders higher relevance first.
///
/// Non-negative floats order like their bit patterns. `-0.0` is mapped to `0.0` because
/// Python calls them equal, so they tie and fall back to the id.
pub fn relevance_key(score: f64) -> u64 {
    let bits = if score == 0.0 { 0 } else { score.to_bits() };
    !bits
}

/// The relevance a key was made from (`-0.0` comes back as `0.0`).
pub fn relevance_of_key(key: u64) -> f64 {
    f64::from_bits(!key)
}

/// One fragment as the ranking sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub key: u64,
    /// The id's tie key (see [`crate::core::select::ids::tie_key`]).
    pub tie: u64,
    pub index: u32,
    /// The token count when it fits below `u32::MAX`, so packing reads it from the entry
    /// instead of looking it up; `u32::MAX` means "look it up".
    tokens_hint: u32,
}

impl Entry {
    /// A placeholder, for buffers filled out of order.
    pub const NONE: Entry = Entry {
        key: 0,
        tie: 0,
        index: 0,
        tokens_hint: 0,
    };

    pub fn new(relevance: f64, tie: u64, index: u32, token_count: u64) -> Self {
        let tokens_hint = u32::try_from(token_count).unwrap_or(u32::MAX);
        Entry {
            key: relevance_key(relevance),
            tie,
            index,
            tokens_hint,
        }
    }

    #[inline]
    pub fn token_count(&self, token_counts: &[u64]) -> u64 {
        self.hinted_tokens(token_counts)
    }

    /// This entry with another relevance (a child's score of the same fragment).
    pub fn rescored(&self, relevance: f64) -> Entry {
        Entry {
            key: relevance_key(relevance),
            ..*self
        }
    }

    /// This entry's relevance and tie key for a unit numbered `index` of `token_count` tokens.
    pub fn renumbered(&self, index: u32, token_count: u128) -> Entry {
        Entry {
            index,
            tokens_hint: u32::try_from(token_count).unwrap_or(u32::MAX),
            ..*self
        }
    }

    /// The tokens of a unit's entry (see [`Entry::renumbered`]), looked up in `tokens` when
    /// the entry could not carry them.
    #[inline]
    pub fn unit_tokens(&self, tokens: &[u128]) -> u128 {
        self.hinted_tokens(tokens)
    }

    /// The tokens the entry carries, or else `tokens` at its index.
    #[inline]
    fn hinted_tokens<T: Copy + From<u32>>(&self, tokens: &[T]) -> T {
        if self.tokens_hint == u32::MAX {
            tokens[self.index as usize]
        } else {
            T::from(self.tokens_hint)
        }
    }

    /// The fragment as the value strategies see it.
    pub fn item(&self, token_counts: &[u64]) -> Item {
        Item {
            unit: self.index,
            value: value_of(relevance_of_key(self.key)),
            tokens: u128::from(self.token_count(token_counts)),
        }
    }

    #[inline]
    pub fn rank_order(&self, other: &Entry, ids: &(impl FragmentIds + ?Sized)) -> Ordering {
        self.sort_key()
            .cmp(&other.sort_key())
            .then_with(|| ids.compare(self.index, other.index))
    }

    /// Relevance and tie key as one integer: one comparison instead of two.
    #[inline]
    pub fn sort_key(&self) -> u128 {
        (u128::from(self.key) << 64) + u128::from(self.tie)
    }
}
