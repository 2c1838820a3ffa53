//! Ranking: relevance descending, then fragment id ascending.
//!
//! Relevance is compared as an integer key, and ids mostly as an integer too (their tie
//! key); only ids whose tie keys are equal are compared whole. The ranking is built on
//! demand, best first: a small budget only needs the top of it sorted.

use std::ops::Range;

use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::entry::Entry;
use crate::core::select::ids::FragmentIds;
use crate::core::select::key_ranges::KeyCounts;
use crate::core::select::tuning::Tuning;
use crate::core::sort_in_pieces::{sort_in_pieces, PieceWork};

/// What the last sort of a ranking did, which the answers do not show: how many entries its
/// selection looked at (none when all it ranks were wanted), and how it was cut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SortWork {
    pub selected_among: usize,
    pub pieces: PieceWork,
}

/// Entries whose first `ranked` positions are in final ranking order.
#[derive(Debug)]
pub struct Ranking {
    entries: Vec<Entry>,
    ranked: usize,
    /// The counts of the entries' keys, for the first sort.
    counts: KeyCounts,
    /// Sorts are cut into pieces of about this many entries.
    sort_piece: usize,
    /// A sort of this many entries on is shared with a second thread.
    parallel_from: usize,
    pub last_sort: SortWork,
}

impl Ranking {
    pub fn new(entries: Vec<Entry>, tuning: &Tuning) -> Self {
        Ranking::counted(entries, KeyCounts::default(), tuning)
    }

    /// A ranking whose first sort is guided by `counts`, the counts of `entries`' keys (or
    /// none).
    pub fn counted(entries: Vec<Entry>, counts: KeyCounts, tuning: &Tuning) -> Self {
        Ranking {
            entries,
            ranked: 0,
            counts,
            sort_piece: tuning.sort_piece,
            parallel_from: tuning.parallel_from,
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

    /// Hands the ranked entries to `feed`, a piece at a time, while it says it wants more:
    /// the rest is ranked, all of it at once, only when it does.
    pub fn feed_while_wanted(
        &mut self,
        ids: &(impl FragmentIds + ?Sized),
        checkpoint: &mut Checkpoint,
        mut feed: impl FnMut(&[Entry]) -> bool,
    ) -> Result<(), Interrupted> {
        let mut fed = 0usize;
        loop {
            // What is ranked and not yet fed, a sort piece at a time: feeding a million
            // entries takes long enough to answer an interrupt in between.
            loop {
                let upto = self.ranked.min(fed.saturating_add(self.sort_piece.max(1)));
                let wanting = feed(&self.entries[fed..upto]);
                let piece = upto - fed;
                fed = upto;
                if !wanting {
                    return Ok(());
                }
                if fed == self.ranked {
                    break;
                }
                checkpoint.advance(piece)?;
            }
            if self.is_complete() {
                return Ok(());
            }
            self.rank_top(self.len(), ids, checkpoint)?;
        }
    }

    /// Ranks the first `count` entries in all (everything when `count` reaches the length)
    /// and returns the positions ranked by this call. Ids are unique, so the order is total
    /// and the top `count` are known without sorting the rest. An interrupted call ranks
    /// nothing more, and leaves the unranked entries in some order.
    pub fn rank_top(
        &mut self,
        count: usize,
        ids: &(impl FragmentIds + ?Sized),
        checkpoint: &mut Checkpoint,
    ) -> Result<Range<usize>, Interrupted> {
        let (start, len) = (self.ranked, self.len());
        let end = count.clamp(start, len);
        if end == start {
            return Ok(start..start);
        }
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
        // (rare) by id.
        let top = &mut rest[..wanted];
        let two_threads = wanted >= self.parallel_from;
        self.last_sort.pieces = sort_in_pieces(
            top,
            |a: &Entry, b: &Entry| a.sort_key().cmp(&b.sort_key()),
            self.sort_piece,
            two_threads,
            checkpoint,
        )?;
        for run in top.chunk_by_mut(|a, b| a.sort_key() == b.sort_key()) {
            if let [_, _, ..] = run {
                run.sort_unstable_by(|a, b| ids.compare(a.index, b.index));
            }
        }
        self.ranked = end;
        Ok(start..end)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::core::test_support::InterruptAt;
    use crate::core::Uninterrupted;

    /// [`Ranking::rank_top`], never interrupted.
    pub fn rank(
        ranking: &mut Ranking,
        count: usize,
        ids: &(impl FragmentIds + ?Sized),
    ) -> Range<usize> {
        let mut checkpoint = Checkpoint::new(&Uninterrupted, Duration::ZERO);
        ranking.rank_top(count, ids, &mut checkpoint).unwrap()
    }
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
        let mut ranking = Ranking::new(entries(scores, &vec![1; scores.len()]), &Tuning::DEFAULT);
        while !ranking.is_complete() {
            let wanted = ranking.ranked().len() + step;
            let range = rank(&mut ranking, wanted, ids);
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
        let mut ranking = Ranking::new(all, &Tuning::DEFAULT);
        rank(&mut ranking, 3, &["", "", ""]);
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
        // A feeder that wants more after each of its first `wants` batches, fed pieces of
        // `piece`: what each batch held, by index, and whether the ranking was completed.
        let fed = |wants: usize, sort_piece: usize| {
            let tuning = Tuning {
                sort_piece,
                ..Tuning::DEFAULT
            };
            let mut ranking = Ranking::new(entries(&scores, &[1; 5]), &tuning);
            rank(&mut ranking, 2, &ids);
            let mut batches = Vec::new();
            let mut checkpoint = Checkpoint::new(&Uninterrupted, Duration::ZERO);
            let feeding = ranking.feed_while_wanted(&ids, &mut checkpoint, |fresh| {
                batches.push(fresh.iter().map(|e| e.index).collect::<Vec<_>>());
                batches.len() <= wants
            });
            assert_eq!(feeding, Ok(()));
            (batches, ranking.is_complete())
        };
        assert_eq!(fed(0, 100), (vec![vec![1, 3]], false));
        assert_eq!(fed(1, 100), (vec![vec![1, 3], vec![2, 0, 4]], true));
        // Still wanting when all is ranked: the feeding ends all the same.
        assert_eq!(fed(9, 100), (vec![vec![1, 3], vec![2, 0, 4]], true));
        // In pieces of two.
        assert_eq!(fed(9, 2), (vec![vec![1, 3], vec![2, 0], vec![4]], true));
        assert_eq!(fed(1, 2), (vec![vec![1, 3], vec![2, 0]], true));
        // Nothing ranked yet: the feeder is asked once before anything is sorted.
        let tuning = Tuning::DEFAULT;
        let mut ranking = Ranking::new(entries(&scores, &[1; 5]), &tuning);
        let mut checkpoint = Checkpoint::new(&Uninterrupted, Duration::ZERO);
        let mut asked = Vec::new();
        let feeding = ranking.feed_while_wanted(&ids, &mut checkpoint, |fresh| {
            asked.push(fresh.len());
            false
        });
        assert_eq!(
            (feeding, asked, ranking.ranked().len()),
            (Ok(()), vec![0], 0)
        );
    }

    #[test]
    fn extend_ranks_exactly_what_is_asked() {
        let ids = ["e", "d", "c", "b", "a"];
        let mut ranking = Ranking::new(
            entries(&[0.5, 0.9, 0.5, 0.5, 0.1], &[1; 5]),
            &Tuning::DEFAULT,
        );
        assert_eq!(rank(&mut ranking, 0, &ids), 0..0);
        assert_eq!(rank(&mut ranking, 2, &ids), 0..2);
        assert_eq!(
            ranking.ranked().iter().map(|e| e.index).collect::<Vec<_>>(),
            vec![1, 3]
        );
        assert!(!ranking.is_complete());
        assert_eq!(rank(&mut ranking, 9, &ids), 2..5);
        assert!(ranking.is_complete());
        assert_eq!(rank(&mut ranking, 9, &ids), 5..5);
        assert_eq!(ranking.len(), 5);
        assert!(!ranking.is_empty());
        assert!(Ranking::new(Vec::new(), &Tuning::DEFAULT).is_empty());
    }

    /// 640 entries, ten in each of the 64 ranges of relevance in `[0.5, 1)` (each range
    /// 1/128 wide), counted; ids in input order. Sorts are cut into pieces of 30, and shared
    /// with a second thread from 90 entries on.
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
        let tuning = Tuning {
            sort_piece: 30,
            parallel_from: 90,
            ..Tuning::DEFAULT
        };
        (Ranking::counted(all, counts, &tuning), ids)
    }

    fn indices(entries: &[Entry]) -> Vec<u32> {
        entries.iter().map(|e| e.index).collect()
    }

    #[test]
    fn counts_guide_the_first_sort_and_pieces_cut_every_sort() {
        let (mut ranking, ids) = counted_ranges();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        // The best 95 are in the top ten ranges (100 entries), sorted in four pieces of
        // about thirty; some may go to the second thread.
        rank(&mut ranking, 95, &ids);
        let sorted = ranking.last_sort;
        assert_eq!((sorted.selected_among, sorted.pieces.pieces), (100, 4));
        assert!(sorted.pieces.on_second_thread <= 4);
        let best: Vec<u32> = (545..640).rev().collect();
        assert_eq!(indices(ranking.ranked()), best);
        // Later sorts select among all that is left; 105 make four pieces, 440 sixteen.
        rank(&mut ranking, 200, &ids);
        let later = ranking.last_sort;
        assert_eq!((later.selected_among, later.pieces.pieces), (545, 4));
        assert_eq!(
            indices(ranking.ranked()),
            (440..640).rev().collect::<Vec<_>>()
        );
        rank(&mut ranking, 640, &ids);
        let last = ranking.last_sort;
        assert_eq!((last.selected_among, last.pieces.pieces), (0, 16));
        assert_eq!(
            indices(ranking.ranked()),
            (0..640).rev().collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_sort_below_the_piece_or_the_threshold_stays_on_one_thread() {
        let (mut ranking, ids) = counted_ranges();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        rank(&mut ranking, 30, &ids);
        let one = PieceWork {
            pieces: 1,
            on_second_thread: 0,
        };
        assert_eq!(ranking.last_sort.pieces, one);
        rank(&mut ranking, 119, &ids);
        assert_eq!(ranking.last_sort.pieces.pieces, 4);
        assert_eq!(ranking.last_sort.pieces.on_second_thread, 0);
    }

    #[test]
    fn an_interrupted_sort_ranks_nothing_and_a_later_one_ranks_all() {
        let (mut ranking, ids) = counted_ranges();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let interrupt = InterruptAt::new(1);
        let mut checkpoint = Checkpoint::new(&interrupt, Duration::ZERO);
        assert_eq!(
            ranking.rank_top(640, &ids, &mut checkpoint),
            Err(Interrupted)
        );
        assert!(ranking.ranked().is_empty());
        rank(&mut ranking, 640, &ids);
        assert_eq!(
            indices(ranking.ranked()),
            (0..640).rev().collect::<Vec<_>>()
        );
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
