//! Ranking: relevance descending, then fragment id ascending.
//!
//! Relevance is compared as an integer key, and ids mostly as an integer too (their tie
//! key); only ids whose tie keys are equal are compared whole. The ranking is built on
//! demand, best first: a small budget only needs the top of it sorted.

use std::ops::Range;
use std::thread;

use crate::core::select::entry::Entry;
use crate::core::select::ids::FragmentIds;
use crate::core::select::key_ranges::KeyCounts;

/// What the last sort of a ranking did, which the answers do not show: how many entries its
/// selection looked at (none when all it ranks were wanted), and how many it sorted on a
/// second thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SortWork {
    pub selected_among: usize,
    pub on_second_thread: usize,
}

/// Entries whose first `ranked` positions are in final ranking order.
#[derive(Debug)]
pub struct Ranking {
    entries: Vec<Entry>,
    ranked: usize,
    /// The counts of the entries' keys, for the first sort.
    counts: KeyCounts,
    /// A first sort of this many entries on is split in two and sorted on two threads.
    split_sort_from: usize,
    pub last_sort: SortWork,
}

impl Ranking {
    pub fn new(entries: Vec<Entry>) -> Self {
        Ranking::counted(entries, KeyCounts::default(), usize::MAX)
    }

    /// A ranking whose first sort is guided by `counts`, the counts of `entries`' keys (or
    /// none), and split over two threads from `split_sort_from` entries on.
    pub fn counted(entries: Vec<Entry>, counts: KeyCounts, split_sort_from: usize) -> Self {
        Ranking {
            entries,
            ranked: 0,
            counts,
            split_sort_from,
            last_sort: SortWork::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every entry, to reorder once the ranking is no longer needed: what was ranked is lost.
    pub fn entries_mut(&mut self) -> &mut [Entry] {
        self.ranked = 0;
        &mut self.entries
    }

    /// The part of the ranking that is final.
    pub fn ranked(&self) -> &[Entry] {
        &self.entries[..self.ranked]
    }

    pub fn is_complete(&self) -> bool {
        self.ranked == self.len()
    }

    /// Hands the ranked entries to `feed`, which says whether it wants more: the rest is
    /// ranked, all of it at once, only when it does.
    pub fn feed_while_wanted(
        &mut self,
        ids: &(impl FragmentIds + ?Sized),
        mut feed: impl FnMut(&[Entry]) -> bool,
    ) {
        let mut fed = 0;
        loop {
            let wanting = feed(&self.ranked()[fed..]);
            fed = self.ranked;
            if !wanting || self.is_complete() {
                return;
            }
            self.rank_top(self.len(), ids);
        }
    }

    /// Whether a first sort of `count` entries by [`Ranking::rank_top`] is split over two
    /// threads: when the best half of them is at most the keys of some ranges, and they are
    /// many.
    pub fn splits_first_sort(&self, count: usize) -> bool {
        let wanted = count.min(self.len());
        self.ranked == 0
            && wanted >= self.split_sort_from
            && self
                .counts
                .cover(wanted / 2)
                .is_some_and(|(_, covered)| covered < wanted)
    }

    /// Ranks the first `count` entries in all (everything when `count` reaches the length)
    /// and returns the positions ranked by this call. Ids are unique, so the order is total
    /// and the top `count` are known without sorting the rest.
    pub fn rank_top(&mut self, count: usize, ids: &(impl FragmentIds + ?Sized)) -> Range<usize> {
        let (start, len) = (self.ranked, self.len());
        let end = count.clamp(start, len);
        if end == start {
            return start..start;
        }
        let split = self.splits_first_sort(count);
        let wanted = end - start;
        self.last_sort = SortWork::default();
        // The counts are of all entries: only the first sort has them all in `rest`.
        let rest = &mut self.entries[start..];
        let taken = if start == 0 {
            self.counts.take_covering(rest, wanted)
        } else {
            None
        };
        let candidates = match taken {
            // Every entry taken ranks before every other, so the `wanted` best are among them
            // when they are as many.
            Some(taken) if taken >= wanted => taken,
            _ => rest.len(),
        };
        if wanted < candidates {
            // Puts the first entry not wanted at `wanted`, and the ones before it ahead.
            rest[..candidates].select_nth_unstable_by(wanted, |a, b| a.rank_order(b, ids));
            self.last_sort.selected_among = candidates;
        }
        // Sorted by relevance and tie key alone, which is quick, then runs of equal keys
        // (rare) by id. A large first sort is split in two at a range of keys, and the two
        // parts sorted on two threads.
        let top = &mut rest[..wanted];
        let ahead = if split {
            // The top holds every entry of the ranges the best half reaches.
            self.counts.take_covering(top, wanted / 2).unwrap_or(0)
        } else {
            0
        };
        self.last_sort.on_second_thread = sort_by_keys(top, ahead);
        for run in top.chunk_by_mut(|a, b| a.sort_key() == b.sort_key()) {
            if let [_, _, ..] = run {
                run.sort_unstable_by(|a, b| ids.compare(a.index, b.index));
            }
        }
        self.ranked = end;
        start..end
    }
}

/// Sorts `entries` by their sort keys, the first `ahead` (whose keys are all below the
/// others') on a second thread when there are any and one can be had; returns how many were
/// sorted there.
fn sort_by_keys(entries: &mut [Entry], ahead: usize) -> usize {
    if ahead == 0 {
        entries.sort_unstable_by_key(Entry::sort_key);
        return 0;
    }
    let (first, second) = entries.split_at_mut(ahead);
    let first_sorted = thread::scope(|scope| {
        let spawned = thread::Builder::new()
            .spawn_scoped(scope, move || first.sort_unstable_by_key(Entry::sort_key));
        second.sort_unstable_by_key(Entry::sort_key);
        match spawned {
            Ok(sorting) => sorting
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => return false,
        }
        true
    });
    if first_sorted {
        ahead
    } else {
        entries[..ahead].sort_unstable_by_key(Entry::sort_key);
        0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::core::select::entry::relevance_key;

    pub fn entries(scores: &[f64], tokens: &[u64]) -> Vec<Entry> {
        scores
            .iter()
            .zip(tokens)
            .enumerate()
            .map(|(i, (&s, &t))| Entry::new(s, 0, i as u32, t))
            .collect()
    }

    /// The full ranking, extended `step` entries at a time.
    pub fn ranked_in_steps(scores: &[f64], ids: &[&str], step: usize) -> Vec<u32> {
        let mut ranking = Ranking::new(entries(scores, &vec![1; scores.len()]));
        while !ranking.is_complete() {
            let wanted = ranking.ranked().len() + step;
            let range = ranking.rank_top(wanted, ids);
            assert_eq!(range.len(), step.min(scores.len() - range.start));
        }
        ranking.ranked().iter().map(|e| e.index).collect()
    }

    fn ranked(scores: &[f64], ids: &[&str]) -> Vec<u32> {
        ranked_in_steps(scores, ids, scores.len().max(1))
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
    fn tie_keys_decide_before_ids() {
        // Tie keys consistent with the ids order them without looking at the ids.
        let mut all = entries(&[0.5; 3], &[1; 3]);
        for (entry, tie) in all.iter_mut().zip([3, 1, 2]) {
            entry.tie = tie;
        }
        let mut ranking = Ranking::new(all);
        ranking.rank_top(3, &["", "", ""]);
        let order: Vec<u32> = ranking.ranked().iter().map(|e| e.index).collect();
        assert_eq!(order, vec![1, 2, 0]);
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
    fn the_rest_is_ranked_only_while_it_is_wanted() {
        let ids = ["e", "d", "c", "b", "a"];
        let scores = [0.5, 0.9, 0.5, 0.5, 0.1];
        // A feeder that wants more after each of its first `wants` batches: what each batch
        // held, by index, and whether the ranking was completed.
        let fed = |wants: usize| {
            let mut ranking = Ranking::new(entries(&scores, &[1; 5]));
            ranking.rank_top(2, &ids);
            let mut batches = Vec::new();
            ranking.feed_while_wanted(&ids, |fresh| {
                batches.push(fresh.iter().map(|e| e.index).collect::<Vec<_>>());
                batches.len() <= wants
            });
            (batches, ranking.is_complete())
        };
        assert_eq!(fed(0), (vec![vec![1, 3]], false));
        assert_eq!(fed(1), (vec![vec![1, 3], vec![2, 0, 4]], true));
        // Still wanting when all is ranked: the feeding ends all the same.
        assert_eq!(fed(9), (vec![vec![1, 3], vec![2, 0, 4]], true));
    }

    #[test]
    fn extend_ranks_exactly_what_is_asked() {
        let ids = ["e", "d", "c", "b", "a"];
        let mut ranking = Ranking::new(entries(&[0.5, 0.9, 0.5, 0.5, 0.1], &[1; 5]));
        assert_eq!(ranking.rank_top(0, &ids), 0..0);
        assert_eq!(ranking.rank_top(2, &ids), 0..2);
        assert_eq!(
            ranking.ranked().iter().map(|e| e.index).collect::<Vec<_>>(),
            vec![1, 3]
        );
        assert!(!ranking.is_complete());
        assert_eq!(ranking.rank_top(9, &ids), 2..5);
        assert!(ranking.is_complete());
        assert_eq!(ranking.rank_top(9, &ids), 5..5);
        assert_eq!(ranking.len(), 5);
        assert!(!ranking.is_empty());
        assert!(Ranking::new(Vec::new()).is_empty());
    }

    /// 640 entries, ten in each of the 64 ranges of relevance in `[0.5, 1)` (each range
    /// 1/128 wide), counted; ids in input order.
    fn counted_ranges() -> (Ranking, Vec<String>) {
        let scores: Vec<f64> = (0..640)
            .map(|i| 0.5 + (f64::from(i / 10) + f64::from(i % 10 + 1) / 12.0) / 128.0)
            .collect();
        let mut counts = KeyCounts::new();
        let all = entries(&scores, &vec![1; scores.len()]);
        for entry in &all {
            counts.add(entry);
        }
        let ids = (0..640).map(|i| format!("id{i:03}")).collect();
        (Ranking::counted(all, counts, 90), ids)
    }

    fn indices(entries: &[Entry]) -> Vec<u32> {
        entries.iter().map(|e| e.index).collect()
    }

    #[test]
    fn a_first_sort_is_split_when_its_best_half_is_fewer_than_it() {
        // Fifty entries at 0.9 and fifty at 0.6, two ranges; sorts of forty on are split.
        let two_ranges = || {
            let scores: Vec<f64> = (0..100)
                .map(|i| if i % 2 == 0 { 0.9 } else { 0.6 })
                .collect();
            let all = entries(&scores, &[1; 100]);
            let mut counts = KeyCounts::new();
            for entry in &all {
                counts.add(entry);
            }
            Ranking::counted(all, counts, 40)
        };
        let ids: Vec<String> = (0..100).map(|i| format!("id{i:03}")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        // The best 25 of 50 reach a range of 50: not fewer, so not split.
        let mut fifty = two_ranges();
        assert!(!fifty.splits_first_sort(50));
        fifty.rank_top(50, &ids);
        assert_eq!(fifty.last_sort.on_second_thread, 0);
        // The best 50 of 100 are the range of 50: split there.
        let mut all = two_ranges();
        assert!(all.splits_first_sort(100));
        all.rank_top(100, &ids);
        assert_eq!(all.last_sort.on_second_thread, 50);
    }

    #[test]
    fn counts_guide_the_first_sort_and_split_it() {
        let (mut ranking, ids) = counted_ranges();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        // The best 95 are in the top ten ranges (100 entries); the first five (50) go to the
        // second thread.
        assert!(ranking.splits_first_sort(95));
        ranking.rank_top(95, &ids);
        let expected = SortWork {
            selected_among: 100,
            on_second_thread: 50,
        };
        assert_eq!(ranking.last_sort, expected);
        let best: Vec<u32> = (545..640).rev().collect();
        assert_eq!(indices(ranking.ranked()), best);
        // Later sorts select among all that is left, on one thread.
        assert!(!ranking.splits_first_sort(640));
        ranking.rank_top(200, &ids);
        let later = SortWork {
            selected_among: 545,
            on_second_thread: 0,
        };
        assert_eq!(ranking.last_sort, later);
        assert_eq!(
            indices(ranking.ranked()),
            (440..640).rev().collect::<Vec<_>>()
        );
        ranking.rank_top(640, &ids);
        assert_eq!(ranking.last_sort, SortWork::default());
        assert_eq!(
            indices(ranking.ranked()),
            (0..640).rev().collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_small_or_whole_first_sort_is_not_split() {
        let (mut ranking, ids) = counted_ranges();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        assert!(!ranking.splits_first_sort(89));
        ranking.rank_top(89, &ids);
        assert_eq!(ranking.last_sort.selected_among, 90);
        assert_eq!(ranking.last_sort.on_second_thread, 0);
        let (mut whole, _) = counted_ranges();
        assert!(whole.splits_first_sort(640) && whole.splits_first_sort(10_000));
        whole.rank_top(640, &ids);
        let expected = SortWork {
            selected_among: 0,
            on_second_thread: 320,
        };
        assert_eq!(whole.last_sort, expected);
        assert_eq!(indices(whole.ranked()), (0..640).rev().collect::<Vec<_>>());
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
