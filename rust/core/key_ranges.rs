//! Relevance keys counted by range as they are read, and the entries of the best ranges set
//! apart meanwhile, so that the first sort takes the entries it needs from a few instead of
//! going through all of them.

use super::ranking::Entry;
use super::tuning::Tuning;
use super::workspace::Workspace;

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
///
/// When the budget is known before the read ([`KeyCounts::expect`]), the entries of the
/// ranges that the first sort will likely need are also set apart as they are read, the
/// ranges chosen from the counts of the first entries: the first sort then takes its entries
/// from those when they hold every entry it needs, and from all when they do not.
#[derive(Debug)]
pub struct KeyCounts {
    counts: Vec<u32>,
    /// Entries whose keys are in the ranges below `set_apart_below`, in the order added; no
    /// more than `set_apart_limit` (the first entries were no guide to the others then).
    set_apart: Vec<Entry>,
    set_apart_below: usize,
    set_apart_limit: usize,
    /// After this many entries, the ranges to set apart are chosen.
    choose_at: usize,
    expected: Option<Expected>,
}

/// What the ranges set apart are chosen for.
#[derive(Debug, Clone, Copy)]
struct Expected {
    budget: u128,
    len: usize,
    tuning: Tuning,
}

impl Default for KeyCounts {
    fn default() -> Self {
        KeyCounts {
            counts: Vec::new(),
            set_apart: Vec::new(),
            set_apart_below: 0,
            set_apart_limit: 0,
            choose_at: usize::MAX,
            expected: None,
        }
    }
}

impl KeyCounts {
    pub fn new(workspace: &mut Workspace) -> Self {
        let mut counts = workspace.buffer(RANGES);
        counts.resize(RANGES, 0);
        KeyCounts {
            counts,
            ..KeyCounts::default()
        }
    }

    /// Sets apart the entries that a first sort for `budget` (the largest, when there are
    /// several) among `len` entries will likely need, as they are added: from the
    /// `tuning.set_apart_sample`-th entry on, which [`KeyCounts::choose`] is called with.
    /// Nothing is set apart when not counted, or when `len` is below twice the sample.
    pub fn expect(&mut self, budget: u128, len: usize, tuning: &Tuning, workspace: &mut Workspace) {
        let sample = tuning.set_apart_sample.max(1);
        if self.counts.is_empty() || len / 2 < sample {
            return;
        }
        self.set_apart = workspace.buffer(0);
        self.choose_at = sample;
        self.expected = Some(Expected {
            budget,
            len,
            tuning: *tuning,
        });
    }

    /// How many entries are added when [`KeyCounts::choose`] is due (`usize::MAX`: never).
    #[inline]
    pub fn choose_at(&self) -> usize {
        self.choose_at
    }

    /// Chooses the ranges to set apart from the counts of `added`, the entries added so far,
    /// of `tokens` tokens in all, and sets theirs apart.
    pub fn choose(&mut self, added: &[Entry], tokens: u128) {
        self.choose_at = usize::MAX;
        let Some(Expected {
            budget,
            len,
            tuning,
        }) = self.expected
        else {
            return;
        };
        let sampled = added.len().max(1);
        let estimated_tokens = tokens.saturating_mul(len as u128) / sampled as u128;
        let first_sort = tuning.first_sort_size(&[budget], estimated_tokens, len);
        if first_sort >= len {
            return;
        }
        let share = first_sort as f64 / len as f64 * tuning.set_apart_margin;
        let Some((last, covered)) = self.cover((share * sampled as f64).ceil() as usize) else {
            return;
        };
        if covered as f64 >= sampled as f64 * tuning.whole_sort_share {
            return;
        }
        let expected = (covered as u128 * len as u128 / sampled as u128) as usize;
        self.set_apart.reserve(expected + expected / 8);
        self.set_apart_below = last + 1;
        self.set_apart_limit = expected.saturating_mul(2);
        self.set_apart.extend(
            added
                .iter()
                .filter(|entry| range_of(entry.key) <= last)
                .copied(),
        );
    }

    #[inline]
    pub fn add(&mut self, entry: &Entry) {
        let range = range_of(entry.key);
        if let Some(count) = self.counts.get_mut(range) {
            *count += 1;
        }
        if self.set_apart_below > 0 {
            // Every entry is pushed, and taken back unless set apart: no branch to mispredict
            // on the ranges, which come in no order.
            self.set_apart.push(*entry);
            let kept = self.set_apart.len() - usize::from(range >= self.set_apart_below);
            self.set_apart.truncate(kept);
            if kept > self.set_apart_limit {
                self.stop_setting_apart();
            }
        }
    }

    #[cold]
    fn stop_setting_apart(&mut self) {
        self.set_apart_below = 0;
        self.set_apart.clear();
    }

    /// The entries set apart whose indices are below `end` (the first ones, since they are
    /// in input order), to have their tie keys made again.
    pub fn set_apart_below_index(&mut self, end: usize) -> &mut [Entry] {
        let count = self
            .set_apart
            .partition_point(|entry| (entry.index as usize) < end);
        &mut self.set_apart[..count]
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

    /// The entries set apart, and the first range not set apart, when they hold every entry
    /// of the ranges that the best `wanted` keys reach; they are no longer kept here then.
    pub(super) fn take_set_apart(&mut self, wanted: usize) -> Option<(Vec<Entry>, usize)> {
        let (last, _) = self.cover(wanted)?;
        if last < self.set_apart_below {
            let below = std::mem::take(&mut self.set_apart_below);
            Some((std::mem::take(&mut self.set_apart), below))
        } else {
            None
        }
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

    pub fn recycle(self, workspace: &mut Workspace) {
        workspace.give(self.counts);
        workspace.give(self.set_apart);
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
    use crate::core::ranking::relevance_key;

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
        let mut workspace = Workspace::default();
        let mut counts = KeyCounts::new(&mut workspace);
        for score in [0.5, 0.75, 0.75, 1.0] {
            counts.add(&Entry::new(score, 0, 0, 1));
        }
        assert_eq!(counts.cover(0), Some((0, 0)));
        assert_eq!(counts.cover(1), Some((63, 1)));
        assert_eq!(counts.cover(2), Some((95, 3)));
        assert_eq!(counts.cover(4), Some((127, 4)));
        assert_eq!(counts.cover(5), None);
        counts.recycle(&mut workspace);
        assert_eq!(workspace.kept::<u32>(), 1);
    }

    /// Each range of `[0.5, 1)` is 1/128 wide: score `level` is in a range of its own.
    fn score(level: u32) -> f64 {
        0.5 + (f64::from(level) + 0.5) / 128.0
    }

    fn tuning(sample: usize) -> Tuning {
        Tuning {
            set_apart_sample: sample,
            set_apart_margin: 1.0,
            first_sort_margin: 1.0,
            first_sort_extra: 0,
            whole_sort_share: 0.5,
            ..Tuning::default()
        }
    }

    /// Counts entries of one token each, scored by `levels`, as the columns add them, for a
    /// first sort for `budget` tokens; with the room made for those set apart.
    fn counted(levels: &[u32], budget: u128, tuning: &Tuning) -> (KeyCounts, usize) {
        let mut workspace = Workspace::default();
        let mut counts = KeyCounts::new(&mut workspace);
        counts.expect(budget, levels.len(), tuning, &mut workspace);
        let mut added = Vec::new();
        let mut room = 0;
        for (index, &level) in (0u32..).zip(levels) {
            let entry = Entry::new(score(level), 0, index, 1);
            counts.add(&entry);
            added.push(entry);
            if added.len() == counts.choose_at() {
                counts.choose(&added, added.len() as u128);
                room = counts.set_apart.capacity();
            }
        }
        (counts, room)
    }

    fn indices(entries: &[Entry]) -> Vec<u32> {
        entries.iter().map(|entry| entry.index).collect()
    }

    #[test]
    fn the_first_entries_choose_the_ranges_set_apart() {
        // Forty entries at ten levels, the best (9) last of each ten. A budget of 8 of the 40
        // tokens: the first sort takes a fifth, which the sample of ten finds in levels 9
        // and 8.
        let levels: Vec<u32> = (0..40).map(|i| i % 10).collect();
        let (mut counts, room) = counted(&levels, 8, &tuning(10));
        assert_eq!(counts.choose_at(), usize::MAX);
        // Room for an eighth more than the sample suggests, which was enough.
        assert!((9..16).contains(&room));
        assert_eq!(counts.set_apart.capacity(), room);
        assert_eq!(
            indices(counts.set_apart_below_index(20)),
            vec![8, 9, 18, 19]
        );
        let (set_apart, below) = counts.take_set_apart(8).unwrap();
        assert_eq!(indices(&set_apart), vec![8, 9, 18, 19, 28, 29, 38, 39]);
        assert_eq!(below, range_of(relevance_key(score(8))) + 1);
        assert_eq!(counts.take_set_apart(8), None);
        // Nine wanted reach level 7, which was not set apart.
        let (mut counts, _) = counted(&levels, 8, &tuning(10));
        assert_eq!(counts.take_set_apart(9), None);
        assert_eq!(counts.take_set_apart(8).map(|(all, _)| all.len()), Some(8));
    }

    #[test]
    fn the_margin_widens_the_ranges_set_apart() {
        let levels: Vec<u32> = (0..40).map(|i| i % 10).collect();
        let wider = Tuning {
            set_apart_margin: 1.25,
            ..tuning(10)
        };
        let (mut counts, _) = counted(&levels, 8, &wider);
        let (set_apart, _) = counts.take_set_apart(12).unwrap();
        assert_eq!(set_apart.len(), 12);
    }

    #[test]
    fn nothing_is_set_apart_when_the_first_entries_are_no_guide() {
        let spread: Vec<u32> = (0..40).map(|i| i % 10).collect();
        let set_apart = |levels: &[u32], budget: u128, tuning: &Tuning| {
            let (mut counts, _) = counted(levels, budget, tuning);
            let count = counts.set_apart_below_index(usize::MAX).len();
            assert_eq!(counts.take_set_apart(1).is_some(), count > 0);
            count
        };
        assert_eq!(set_apart(&spread, 8, &tuning(10)), 8);
        assert_eq!(set_apart(&spread[..20], 4, &tuning(10)), 4);
        // Fewer than twice the sample.
        assert_eq!(set_apart(&spread[..19], 4, &tuning(10)), 0);
        // A first sort of half the entries or more sorts them all.
        let narrower = Tuning {
            set_apart_margin: 0.8,
            ..tuning(10)
        };
        assert_eq!(set_apart(&spread, 19, &narrower), 16);
        assert_eq!(set_apart(&spread, 20, &narrower), 0);
        // Not counted.
        let mut counts = KeyCounts::default();
        counts.expect(8, 40, &tuning(10), &mut Workspace::default());
        assert_eq!(counts.choose_at(), usize::MAX);
        // Half the sample or more would be set apart: every entry ties.
        assert_eq!(set_apart(&[3; 40], 8, &tuning(10)), 0);
        let almost: Vec<u32> = (0..40).map(|i| u32::from(i % 10 < 4)).collect();
        assert_eq!(set_apart(&almost, 8, &tuning(10)), 16);
        let half: Vec<u32> = (0..40).map(|i| u32::from(i % 10 < 5)).collect();
        assert_eq!(set_apart(&half, 8, &tuning(10)), 0);
        // Past twice as many as the sample suggests: the best came late.
        let late: Vec<u32> = (0..40).map(|i| if i < 10 { i } else { 9 }).collect();
        assert_eq!(set_apart(&late, 8, &tuning(10)), 0);
        // Twice as many is the most set apart: eight (two in the sample), then fourteen
        // more or fifteen more.
        let best_after = |more: u32| -> Vec<u32> {
            (0..40)
                .map(|i| match i {
                    0..10 => i,
                    _ if i < 10 + more => 9,
                    _ => 0,
                })
                .collect()
        };
        assert_eq!(set_apart(&best_after(14), 8, &tuning(10)), 16);
        assert_eq!(set_apart(&best_after(15), 8, &tuning(10)), 0);
    }
}
