//! Relevance keys counted by range as they are read, so that the first sort takes the
//! entries it needs in one pass and selects among those alone.

use crate::core::select::entry::Entry;

/// The ranges of relevance keys that [`KeyCounts`] counts in: 2^16 of them, 64 per halving
/// of the relevance, so that `[0.5, 1)` spreads over 64.
const RANGES: usize = 1 << 16;

/// The range of `key`, below [`RANGES`]: a key's range never falls as the key grows. Keys of
/// relevances in `[0, 1]` start with two set bits, which are skipped.
#[inline]
pub(super) fn range_of(key: u64) -> usize {
    (key >> 46).saturating_sub(3 << 16) as usize
}

/// How many entries have relevance keys in each range, counted as they are read: the first
/// sort then takes the entries of the ranges it needs in one pass, and selects among those
/// alone instead of among all. Empty when not counted.
#[derive(Debug, Default)]
pub struct KeyCounts {
    counts: Vec<u32>,
}

impl KeyCounts {
    /// Every range counted, from zero (the default counts none).
    pub fn new() -> Self {
        KeyCounts {
            counts: vec![0; RANGES],
        }
    }

    #[inline]
    pub fn add(&mut self, entry: &Entry) {
        if let Some(count) = self.counts.get_mut(range_of(entry.key)) {
            *count += 1;
        }
    }

    /// The last range that the `wanted` best keys reach, and how many keys are in it and
    /// the ranges before; `None` when not counted, or when fewer are counted.
    pub(super) fn cover(&self, wanted: usize) -> Option<(usize, usize)> {
        let mut covered = 0;
        for (range, &count) in self.counts.iter().enumerate() {
            covered += count as usize;
            if covered >= wanted {
                return Some((range, covered));
            }
        }
        None
    }

    /// Moves the entries of the ranges that the best `count` keys reach ahead of the others
    /// in `entries`, which hold every entry of those ranges, and returns how many they are;
    /// `None` when not counted, or when they are all of `entries`.
    pub(super) fn take_covering(&self, entries: &mut [Entry], count: usize) -> Option<usize> {
        let (last, covered) = self.cover(count)?;
        if covered >= entries.len() {
            return None;
        }
        let taken = take_first(entries, |entry| range_of(entry.key) <= last);
        debug_assert_eq!(taken, covered);
        Some(taken)
    }
}

/// Moves the entries that pass `test` ahead of the others, in one pass, and returns how many
/// they are.
fn take_first(entries: &mut [Entry], test: impl Fn(&Entry) -> bool) -> usize {
    let mut taken = 0;
    for at in 0..entries.len() {
        if test(&entries[at]) {
            entries.swap(taken, at);
            taken += 1;
        }
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::select::entry::relevance_key;

    #[test]
    fn key_ranges_follow_the_keys() {
        assert_eq!(range_of(relevance_key(1.0)), 63);
        assert_eq!(range_of(relevance_key(0.75)), 95);
        assert_eq!(range_of(relevance_key(0.5)), 127);
        assert_eq!(range_of(relevance_key(0.25)), 191);
        assert_eq!(range_of(0), 0);
        assert_eq!(range_of(u64::MAX), RANGES - 1);
        let mut counts = KeyCounts::default();
        counts.add(&Entry::new(0.5, 0, 0, 1));
        assert_eq!(counts.cover(0), None);
        let mut counts = KeyCounts::new();
        for score in [0.5, 0.75, 0.75, 1.0] {
            counts.add(&Entry::new(score, 0, 0, 1));
        }
        assert_eq!(counts.cover(0), Some((0, 0)));
        assert_eq!(counts.cover(1), Some((63, 1)));
        assert_eq!(counts.cover(2), Some((95, 3)));
        assert_eq!(counts.cover(4), Some((127, 4)));
        assert_eq!(counts.cover(5), None);
    }
}
