//! The numbers that decide how, not what: every answer is the same whatever they are, and
//! tests shrink them to drive every path with a few fragments.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tuning {
    /// From this many fragments on, the work runs inside the caller's [`crate::core::detach::Detach`] hook
    /// (the Python bindings release the GIL there): below it, the work is too short to be
    /// worth handing the interpreter to other threads and waiting to take it back.
    pub detach_from: usize,
    /// `optimal` runs there from this many fragments on: a call on a few hundred can work
    /// for a second (its work limit), holding the interpreter from every other thread and
    /// from Ctrl-C, where letting it go costs well under a microsecond.
    pub detach_optimal_from: usize,
    /// From this many fragments on, duplicate ids are looked for on a second thread while
    /// the ranking is sorted and packed, and a sort of this many entries on is shared with
    /// a second thread.
    pub parallel_from: usize,
    /// Sorts are cut into pieces of about this many entries (a few milliseconds each), so
    /// that they answer an interrupt and share out over threads.
    pub sort_piece: usize,
    /// The ranking is first sorted as far as the largest budget's share of all tokens, times
    /// this margin, plus `first_sort_extra` entries: enough that greedy packing rarely needs
    /// a second sort of the rest.
    pub first_sort_margin: f64,
    pub first_sort_extra: usize,
    /// From this many fragments on, relevance keys are counted as they are read, so that the
    /// first sort selects among the entries it may need instead of among all.
    pub count_keys_from: usize,
    /// From this share of all tokens on, the whole ranking is sorted at once.
    pub whole_sort_share: f64,
    /// Grouped fragments are spread into buckets of about this many by their names' hashes,
    /// few enough for each bucket to be grouped within the CPU caches.
    pub members_per_bucket: usize,
    /// The exact solvers keep their sets as trees and drop the nodes no set reaches once
    /// they may be half of all, and only after this many more have piled up: a collection is
    /// a pass over every node, so it waits until there are enough to be worth one.
    pub collect_slack: usize,
    /// The exact solvers hold at most `max_work / work_per_state` states at once, so that
    /// the memory a call takes is bounded by its work limit too (a state, with its share of
    /// the sets' trees and the lists it is merged through, takes about 100 bytes). Like the
    /// limit itself, it may change a set that is not exact, never one that is.
    pub work_per_state: u64,
    /// From this many fragments on, a result is built by visiting the input's fragments in
    /// their own order (`placement` in `input_order.rs`): a large input does not fit the CPU
    /// caches, and the kept fragments, in ranking order, jump all over it.
    pub visit_in_input_order_from: usize,
    /// `optimal` asks the request's interrupt at most this often: often enough that Ctrl-C
    /// stops it well within a tenth of a second, seldom enough to cost nothing.
    pub interrupt_every: Duration,
    /// `optimal`, with variants or without, keeps its states' value and tokens in 64 bits
    /// where every sum it can form fits (less memory each merge moves), else in 128; off,
    /// always in 128, so that tests can check that both widths decide alike.
    pub narrow_states: bool,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning::DEFAULT
    }
}

impl Tuning {
    pub const DEFAULT: Tuning = Tuning {
        detach_from: 20_000,
        detach_optimal_from: 64,
        parallel_from: 20_000,
        sort_piece: 1 << 16,
        first_sort_margin: 1.25,
        first_sort_extra: 1024,
        count_keys_from: 1 << 16,
        whole_sort_share: 0.5,
        members_per_bucket: 256,
        collect_slack: 1024,
        work_per_state: 64,
        visit_in_input_order_from: 1 << 19,
        interrupt_every: Duration::from_millis(20),
        narrow_states: true,
    };

    /// How many entries to rank first for these budgets.
    pub fn first_sort_size(&self, budgets: &[u128], original_tokens: u128, len: usize) -> usize {
        let Some(&largest) = budgets.iter().max() else {
            return 0;
        };
        if largest == 0 {
            return 0;
        }
        let share = largest as f64 / original_tokens.max(1) as f64 * self.first_sort_margin;
        if share >= self.whole_sort_share {
            return len;
        }
        ((len as f64 * share) as usize)
            .saturating_add(self.first_sort_extra)
            .min(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sort_covers_the_largest_budgets_share() {
        let tuning = Tuning::default();
        assert_eq!(tuning.first_sort_size(&[], 1000, 100_000), 0);
        assert_eq!(tuning.first_sort_size(&[0, 0], 1000, 100_000), 0);
        // A tenth of the tokens: an eighth of the entries, and some.
        assert_eq!(
            tuning.first_sort_size(&[10, 100], 1000, 100_000),
            12_500 + 1024
        );
        assert_eq!(tuning.first_sort_size(&[100], 1000, 1000), 1000);
        // From the whole-sort share on, everything.
        assert_eq!(tuning.first_sort_size(&[400], 1000, 100_000), 100_000);
        assert_eq!(tuning.first_sort_size(&[399], 1000, 100_000), 50_899);
        assert_eq!(tuning.first_sort_size(&[5], 0, 100_000), 100_000);
        assert_eq!(tuning.first_sort_size(&[u128::MAX], u128::MAX, 10), 10);
    }

    #[test]
    fn first_sort_obeys_each_number() {
        let tuning = Tuning {
            first_sort_margin: 2.0,
            first_sort_extra: 3,
            whole_sort_share: 0.9,
            ..Tuning::default()
        };
        assert_eq!(tuning.first_sort_size(&[100], 1000, 1000), 203);
        assert_eq!(tuning.first_sort_size(&[449], 1000, 1000), 901);
        assert_eq!(tuning.first_sort_size(&[450], 1000, 1000), 1000);
    }
}
