//! Fragment ids as the ranking sees them: byte strings that order as their code points do.

use std::cmp::Ordering;

/// The ids of the fragments being compressed, by fragment index.
///
/// `bytes` must order as the ids' code points do: UTF-8 does, and so does its extension to
/// lone surrogates (each encoded as the three bytes its code point would take). Implementations
/// are shared with a second thread while duplicates are looked for, hence `Sync`.
pub trait FragmentIds: Sync {
    fn bytes(&self, index: u32) -> &[u8];

    fn compare(&self, a: u32, b: u32) -> Ordering {
        self.bytes(a).cmp(self.bytes(b))
    }
}

impl<T: AsRef<[u8]> + Sync> FragmentIds for [T] {
    fn bytes(&self, index: u32) -> &[u8] {
        self[index as usize].as_ref()
    }
}

impl<T: AsRef<[u8]> + Sync, const N: usize> FragmentIds for [T; N] {
    fn bytes(&self, index: u32) -> &[u8] {
        self[index as usize].as_ref()
    }
}

impl<T: AsRef<[u8]> + Sync> FragmentIds for Vec<T> {
    fn bytes(&self, index: u32) -> &[u8] {
        self[index as usize].as_ref()
    }
}

/// Copies of the ids read, one after another: what was read is what is ranked, whatever the
/// caller's objects do afterwards, and the copies can be compared on any thread.
#[derive(Debug, Default)]
pub struct IdArena {
    bytes: Vec<u8>,
    /// Where each id ends in `bytes`.
    ends: Vec<u64>,
}

impl IdArena {
    pub fn new(len: usize) -> Self {
        IdArena {
            bytes: Vec::with_capacity(len.saturating_mul(24)),
            ends: Vec::with_capacity(len),
        }
    }

    pub fn push(&mut self, id: &[u8]) {
        self.bytes.extend_from_slice(id);
        self.ends.push(self.bytes.len() as u64);
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

impl FragmentIds for IdArena {
    fn bytes(&self, index: u32) -> &[u8] {
        let index = index as usize;
        let start = match index {
            0 => 0,
            _ => self.ends[index - 1] as usize,
        };
        &self.bytes[start..self.ends[index] as usize]
    }
}

/// The prefix that every id seen so far shares, kept up to date as ids are read, with the
/// ids whose tie keys were made when it was longer.
#[derive(Debug, Default)]
pub struct SharedPrefix {
    first: Vec<u8>,
    shared: usize,
    seen: usize,
    stale_below: usize,
}

impl SharedPrefix {
    /// Takes in the next id and returns its tie key for the prefix shared so far.
    #[inline]
    pub fn key(&mut self, id: &[u8]) -> u64 {
        if self.seen == 0 || !starts_with(id, &self.first[..self.shared]) {
            self.shorten(id);
        }
        self.seen += 1;
        tie_key(id, self.shared)
    }

    /// Takes in an id that does not start with the prefix shared so far (or the first).
    #[cold]
    #[inline(never)]
    fn shorten(&mut self, id: &[u8]) {
        if self.seen == 0 {
            self.first = id.to_vec();
            self.shared = id.len();
            return;
        }
        self.shared = self.first[..self.shared]
            .iter()
            .zip(id)
            .take_while(|(a, b)| a == b)
            .count();
        self.stale_below = self.seen;
    }

    pub fn len(&self) -> usize {
        self.shared
    }

    pub fn is_empty(&self) -> bool {
        self.shared == 0
    }

    /// The ids whose keys were made for a longer prefix than all ids share, by index.
    pub fn stale(&self) -> std::ops::Range<usize> {
        0..self.stale_below
    }
}

/// `id.starts_with(prefix)` for the short prefixes ids share, a word at a time, without a
/// library call.
#[inline]
fn starts_with(id: &[u8], prefix: &[u8]) -> bool {
    let Some(mut head) = id.get(..prefix.len()) else {
        return false;
    };
    let (Some(head_tail), Some(prefix_tail)) = (head.last_chunk::<8>(), prefix.last_chunk::<8>())
    else {
        return head.iter().zip(prefix).all(|(a, b)| a == b);
    };
    if head_tail != prefix_tail {
        return false;
    }
    // The last word is equal; the words before it decide (the last may overlap them).
    let mut prefix = prefix;
    while let (Some(a), Some(b)) = (head.first_chunk::<8>(), prefix.first_chunk::<8>()) {
        if a != b {
            return false;
        }
        (head, prefix) = (&head[8..], &prefix[8..]);
    }
    true
}

/// An id's tie key: the eight bytes that follow the prefix every id shares (`shared` bytes),
/// big-endian and zero-padded, so that ids sharing a relevance mostly order as integers. A
/// smaller key means a smaller id; equal keys say nothing, and the ids are compared whole.
#[inline]
pub fn tie_key(id: &[u8], shared: usize) -> u64 {
    let rest = id.get(shared..).unwrap_or_default();
    if let Some(word) = rest.first_chunk::<8>() {
        return u64::from_be_bytes(*word);
    }
    if rest.is_empty() {
        return 0;
    }
    // Fewer than eight bytes left: the id's last eight, shifted so that the rest leads (read
    // as one word; bytes gathered through memory would stall the load that follows).
    if let Some(last) = id.last_chunk::<8>() {
        return u64::from_be_bytes(*last) << (8 * (8 - rest.len()));
    }
    rest.iter()
        .zip((0..8).rev())
        .fold(0, |key, (&byte, at)| key + (u64::from(byte) << (8 * at)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(ids: &[&str]) -> Vec<u64> {
        let mut shared = SharedPrefix::default();
        let mut keys: Vec<u64> = ids.iter().map(|id| shared.key(id.as_bytes())).collect();
        for index in shared.stale() {
            keys[index] = tie_key(ids[index].as_bytes(), shared.len());
        }
        keys
    }

    fn shared(ids: &[&str]) -> (usize, usize) {
        let mut shared = SharedPrefix::default();
        for id in ids {
            shared.key(id.as_bytes());
        }
        (shared.len(), shared.stale().end)
    }

    #[test]
    fn keys_skip_the_shared_prefix() {
        let found = keys(&["fragment-0012", "fragment-0003", "fragment-1"]);
        assert_eq!(found[0], u64::from_be_bytes(*b"0012\0\0\0\0"));
        assert_eq!(found[1], u64::from_be_bytes(*b"0003\0\0\0\0"));
        assert_eq!(found[2], u64::from_be_bytes(*b"1\0\0\0\0\0\0\0"));
        assert_eq!(
            tie_key(b"fragment-123456789", 9),
            u64::from_be_bytes(*b"12345678")
        );
        assert_eq!(tie_key(b"fragment", 8), 0);
        assert_eq!(tie_key(b"fragment", 9), 0);
        assert_eq!(
            tie_key(b"fragment", 7),
            u64::from_be_bytes(*b"t\0\0\0\0\0\0\0")
        );
        assert_eq!(tie_key(b"abc", 1), u64::from_be_bytes(*b"bc\0\0\0\0\0\0"));
        assert_eq!(tie_key(b"abc", 0), u64::from_be_bytes(*b"abc\0\0\0\0\0"));
    }

    #[test]
    fn the_shared_prefix_is_the_longest_all_ids_have() {
        assert_eq!(shared(&[]), (0, 0));
        assert!(SharedPrefix::default().is_empty());
        let mut one = SharedPrefix::default();
        one.key(b"a");
        assert!(!one.is_empty());
        assert_eq!(shared(&["abc"]), (3, 0));
        assert_eq!(shared(&["abcd", "abcd-e", "abx"]), (2, 2));
        assert_eq!(shared(&["abcd", "abcd-e", "ab"]), (2, 2));
        assert_eq!(shared(&["abcd", "abcd-e", "xyz", "xy"]), (0, 2));
        assert_eq!(shared(&["ab", "abc", "abd"]), (2, 0));
        let long = "0123456789abcdefghij";
        assert_eq!(shared(&[long, &long[..17], long]), (17, 1));
        assert_eq!(shared(&[long, "0123456789abcdeXghij"]), (15, 1));
        assert_eq!(shared(&[long, "0123456X"]), (7, 1));
        assert_eq!(shared(&[long, "X123456789abcdefghij"]), (0, 1));
        assert_eq!(shared(&[long, "01234567X9abcdefghij"]), (8, 1));
        assert_eq!(shared(&["abc", "abd"]), (2, 1));
    }

    #[test]
    fn smaller_key_means_smaller_id() {
        let ids = [
            "",
            "a",
            "a\0",
            "ab",
            "abcdefghij",
            "abcdefghik",
            "b",
            "\u{ff}",
            "\u{1F600}",
            "z",
        ];
        let found = keys(&ids);
        for (i, a) in ids.iter().enumerate() {
            for (j, b) in ids.iter().enumerate() {
                if found[i] < found[j] {
                    assert!(a < b, "{a:?} {b:?}");
                }
            }
        }
        assert_eq!(found[1], found[2], "keys may tie where ids differ");
    }

    #[test]
    fn the_arena_gives_back_each_id() {
        let mut arena = IdArena::new(3);
        assert!(arena.is_empty());
        arena.push(b"");
        assert!(!arena.is_empty());
        let mut arena = IdArena::new(3);
        for id in ["ab", "", "\u{e9}x"] {
            arena.push(id.as_bytes());
        }
        assert_eq!(arena.len(), 3);
        assert_eq!(arena.bytes(0), b"ab");
        assert_eq!(arena.bytes(1), b"");
        assert_eq!(arena.bytes(2), "\u{e9}x".as_bytes());
        assert_eq!(arena.compare(0, 2), Ordering::Less);
    }

    #[test]
    fn ids_compare_as_bytes() {
        let ids = vec!["b", "a", "\u{ff}"];
        assert_eq!(ids.compare(0, 1), Ordering::Greater);
        assert_eq!(ids.compare(1, 1), Ordering::Equal);
        assert_eq!(ids[..].compare(2, 0), Ordering::Greater);
    }
}
