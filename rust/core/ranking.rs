//! Ranking: relevance descending, then fragment id ascending.
//!
//! Relevance is sorted as an integer key without touching ids; only runs of equal relevance
//! need the ids, and the caller orders those runs with its own comparison. The ranking is
//! built on demand, best first: a small budget only needs the top of it sorted.

use std::cmp::Ordering;
use std::ops::Range;

/// An ascending sort key for a relevance in `[0, 1]` that orders higher relevance first.
///
/// Non-negative floats order like their bit patterns. `-0.0` is mapped to `0.0` because
/// Python calls them equal, so they tie and fall back to the id.
pub fn relevance_key(score: f64) -> u64 {
    let bits = if score == 0.0 { 0 } else { score.to_bits() };
    !bits
}

/// One fragment as the ranking sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub key: u64,
    pub index: u32,
    /// The token count when it fits below `u32::MAX`, so packing reads it from the entry
    /// instead of looking it up; `u32::MAX` means "look it up".
    tokens_hint: u32,
}

impl Entry {
    pub fn new(relevance: f64, index: u32, token_count: u64) -> Self {
        let tokens_hint = u32::try_from(token_count).unwrap_or(u32::MAX);
        Entry {
            key: relevance_key(relevance),
            index,
            tokens_hint,
        }
    }

    #[inline]
    pub fn token_count(&self, token_counts: &[u64]) -> u64 {
        if self.tokens_hint == u32::MAX {
            token_counts[self.index as usize]
        } else {
            u64::from(self.tokens_hint)
        }
    }

    #[inline]
    fn order(&self) -> u128 {
        (u128::from(self.key) << 32) | u128::from(self.index)
    }
}

/// Entries whose first `ranked` positions are in final ranking order.
#[derive(Debug, Clone)]
pub struct Ranking {
    entries: Vec<Entry>,
    ranked: usize,
}

impl Ranking {
    pub fn new(entries: Vec<Entry>) -> Self {
        Ranking { entries, ranked: 0 }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The entries back, in whatever order they are, for their buffer to be reused.
    pub fn into_entries(self) -> Vec<Entry> {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The part of the ranking that is final.
    pub fn ranked(&self) -> &[Entry] {
        &self.entries[..self.ranked]
    }

    pub fn is_complete(&self) -> bool {
        self.ranked == self.entries.len()
    }

    /// Ranks at least `count` entries in all (everything when `count` reaches the length) and
    /// returns the positions ranked by this call. No run of equal relevance is split, so the
    /// range can be ordered by id on its own.
    pub fn extend(&mut self, count: usize) -> Range<usize> {
        let start = self.ranked;
        let len = self.entries.len();
        if start == len {
            return start..start;
        }
        let mut end = count.clamp(start + 1, len);
        if end < len {
            let rest = &mut self.entries[start..];
            let (_, boundary, _) = rest.select_nth_unstable_by_key(end - start - 1, Entry::order);
            let boundary_key = boundary.key;
            let tail = &mut rest[end - start..];
            let mut ties = 0;
            for position in 0..tail.len() {
                if tail[position].key == boundary_key {
                    tail.swap(ties, position);
                    ties += 1;
                }
            }
            end += ties;
        }
        self.entries[start..end].sort_unstable_by_key(Entry::order);
        self.ranked = end;
        start..end
    }

    /// Runs of two or more entries with equal relevance within `within`.
    pub fn tie_runs(&self, within: Range<usize>) -> Vec<Range<usize>> {
        let entries = &self.entries[within.clone()];
        let mut runs = Vec::new();
        let mut start = 0;
        for (position, pair) in entries.windows(2).enumerate() {
            if pair[0].key != pair[1].key {
                if position > start {
                    runs.push(within.start + start..within.start + position + 1);
                }
                start = position + 1;
            }
        }
        if entries.len() > start + 1 {
            runs.push(within.start + start..within.end);
        }
        runs
    }

    /// Orders every run of equal relevance in `within` by `compare_ids` on fragment indices.
    pub fn resolve_ties(
        &mut self,
        within: Range<usize>,
        mut compare_ids: impl FnMut(u32, u32) -> Ordering,
    ) {
        for run in self.tie_runs(within) {
            self.entries[run].sort_unstable_by(|a, b| compare_ids(a.index, b.index));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn entries(scores: &[f64], tokens: &[u64]) -> Vec<Entry> {
        scores
            .iter()
            .zip(tokens)
            .enumerate()
            .map(|(i, (&s, &t))| Entry::new(s, i as u32, t))
            .collect()
    }

    /// The full ranking, extended `step` entries at a time.
    pub fn ranked_in_steps(scores: &[f64], ids: &[&str], step: usize) -> Vec<u32> {
        let mut ranking = Ranking::new(entries(scores, &vec![1; scores.len()]));
        while !ranking.is_complete() {
            let wanted = ranking.ranked().len() + step;
            let range = ranking.extend(wanted);
            ranking.resolve_ties(range, |a, b| ids[a as usize].cmp(ids[b as usize]));
        }
        ranking.ranked().iter().map(|e| e.index).collect()
    }

    fn ranked(scores: &[f64], ids: &[&str]) -> Vec<u32> {
        ranked_in_steps(scores, ids, usize::MAX / 2)
    }

    #[test]
    fn keys_order_descending_relevance() {
        let scores = [0.0, 1e-300, 0.25, 0.5, 0.999_999, 1.0];
        for pair in scores.windows(2) {
            assert!(relevance_key(pair[0]) > relevance_key(pair[1]));
        }
        assert_eq!(relevance_key(-0.0), relevance_key(0.0));
    }

    #[test]
    fn relevance_then_id() {
        let order = ranked(&[0.3, 0.9, 0.5, 0.9, 0.5], &["a", "d", "c", "b", "b2"]);
        assert_eq!(order, vec![3, 1, 4, 2, 0]);
    }

    #[test]
    fn negative_zero_ties_with_zero() {
        assert_eq!(ranked(&[-0.0, 0.0, -0.0], &["c", "a", "b"]), vec![1, 2, 0]);
    }

    #[test]
    fn ids_compare_by_code_point() {
        // "\u{ff}" sorts after "z" and before an astral character, as in Python.
        let ids = ["\u{1F600}", "\u{ff}", "z", "Z"];
        assert_eq!(ranked(&[0.5; 4], &ids), vec![3, 2, 1, 0]);
    }

    #[test]
    fn extending_in_steps_gives_the_full_ranking() {
        let scores: Vec<f64> = (0..500)
            .map(|i| f64::from((i * 7919) % 13) / 13.0)
            .collect();
        let names: Vec<String> = (0..500)
            .map(|i| format!("id{:04}", (i * 31) % 500))
            .collect();
        let ids: Vec<&str> = names.iter().map(String::as_str).collect();
        let whole = ranked(&scores, &ids);
        for step in [1, 2, 7, 64, 499, 500] {
            assert_eq!(ranked_in_steps(&scores, &ids, step), whole, "step {step}");
        }
        for pair in whole.windows(2) {
            let (a, b) = (pair[0] as usize, pair[1] as usize);
            assert!(scores[a] > scores[b] || (scores[a] == scores[b] && ids[a] < ids[b]));
        }
    }

    #[test]
    fn extend_never_splits_a_tie_run() {
        let mut ranking = Ranking::new(entries(&[0.5, 0.9, 0.5, 0.5, 0.1], &[1; 5]));
        assert_eq!(ranking.extend(2), 0..4);
        assert_eq!(ranking.extend(5), 4..5);
        assert!(ranking.is_complete());
        assert_eq!(ranking.extend(9), 5..5);
    }

    #[test]
    fn tie_runs_cover_only_equal_keys() {
        let mut ranking = Ranking::new(entries(&[0.9, 0.5, 0.5, 0.3, 0.1, 0.1, 0.1], &[1; 7]));
        ranking.extend(7);
        assert_eq!(ranking.tie_runs(0..7), vec![1..3, 4..7]);
        assert_eq!(ranking.tie_runs(2..7), vec![4..7]);
        let mut single = Ranking::new(entries(&[0.5], &[1]));
        single.extend(1);
        assert!(single.tie_runs(0..1).is_empty());
    }

    #[test]
    fn large_token_counts_are_looked_up() {
        let big = u64::from(u32::MAX) + 5;
        let counts = [big, 7, u64::from(u32::MAX)];
        let all = entries(&[0.5, 0.5, 0.5], &counts);
        let found: Vec<u64> = all.iter().map(|e| e.token_count(&counts)).collect();
        assert_eq!(found, counts);
    }
}
