//! Ranking: relevance descending, then fragment id ascending.
//!
//! Relevance is sorted as an integer key without touching ids; only runs of equal relevance
//! need the ids, and the caller orders those runs with its own comparison.

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

/// Fragment indices in ranking order, each with its relevance key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ranking {
    entries: Vec<(u64, u32)>,
}

/// Sorts `(relevance_key, index)` pairs; equal relevance stays ordered by index until
/// [`Ranking::resolve_ties`] orders it by id.
pub fn rank(mut entries: Vec<(u64, u32)>) -> Ranking {
    entries.sort_unstable();
    Ranking { entries }
}

impl Ranking {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn indices(&self) -> impl ExactSizeIterator<Item = u32> + Clone + '_ {
        self.entries.iter().map(|&(_, index)| index)
    }

    /// Runs of two or more entries with equal relevance, in ranking order.
    pub fn tie_runs(&self) -> Vec<Range<usize>> {
        let mut runs = Vec::new();
        let mut start = 0;
        for (position, pair) in self.entries.windows(2).enumerate() {
            if pair[0].0 != pair[1].0 {
                if position > start {
                    runs.push(start..position + 1);
                }
                start = position + 1;
            }
        }
        if self.entries.len() > start + 1 {
            runs.push(start..self.entries.len());
        }
        runs
    }

    /// Orders every run of equal relevance by `compare_ids` on fragment indices.
    pub fn resolve_ties(&mut self, mut compare_ids: impl FnMut(u32, u32) -> Ordering) {
        for run in self.tie_runs() {
            self.entries[run].sort_unstable_by(|a, b| compare_ids(a.1, b.1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked(scores: &[f64], ids: &[&str]) -> Vec<u32> {
        let entries = scores
            .iter()
            .enumerate()
            .map(|(i, &s)| (relevance_key(s), i as u32))
            .collect();
        let mut ranking = rank(entries);
        ranking.resolve_ties(|a, b| ids[a as usize].cmp(ids[b as usize]));
        ranking.indices().collect()
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
    fn tie_runs_cover_only_equal_keys() {
        let ranking = rank(vec![(1, 0), (2, 1), (2, 2), (3, 3), (4, 4), (4, 5), (4, 6)]);
        assert_eq!(ranking.tie_runs(), vec![1..3, 4..7]);
        assert!(rank(vec![(1, 0)]).tie_runs().is_empty());
        assert!(rank(Vec::new()).tie_runs().is_empty());
        assert_eq!(rank(vec![(7, 1), (7, 0)]).tie_runs(), vec![0..2]);
    }
}
