//! Packing the ranking into the budget.

use crate::core::select::budget_walk::{BudgetWalk, Step};
use crate::core::select::entry::{relevance_of_key, Entry};
use crate::core::select::exact_sum::ExactSum;
use crate::core::select::names::sets::NO_SET;
use crate::core::select::value::value_of;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Keep every fragment that still fits; skip the others and go on.
    Greedy,
    /// Stop at the first fragment that does not fit.
    Prefix,
    /// Walk by value per token, keeping what fits; or the best single unit, if worth more.
    Density,
    /// The most value that fits, exactly (one canonical set among ties).
    Optimal,
}

named!(Strategy {
    Greedy => "greedy",
    Prefix => "prefix",
    Density => "density",
    Optimal => "optimal",
});

impl Strategy {
    /// Whether the strategy chooses by total value rather than walking the ranking.
    pub fn by_value(self) -> bool {
        matches!(self, Strategy::Density | Strategy::Optimal)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    /// Kept fragment indices, in ranking order.
    pub kept: Vec<u32>,
    pub compressed_tokens: u128,
    /// The kept value, and a bound on what any selection within the budget keeps, in units
    /// (see [`crate::core::select::value`]).
    pub value_kept: u128,
    pub value_bound: u128,
    /// The tokens of the previous call's leading run kept first again (a turn's reuse,
    /// docs/turns.md; 0 without one).
    pub reused_tokens: u128,
    /// Whether the strategy's selection is exact: every walk's, and `optimal`'s unless it
    /// ran out of work (`Request::max_work`).
    pub exact: bool,
}

/// Packs one budget, fed the ranking piece by piece, best first.
///
/// Sums are `u128`: at most 2**32 fragments of at most 2**63 - 1 tokens cannot overflow them.
#[derive(Debug, Clone)]
pub struct Packer {
    budget: u128,
    walk: BudgetWalk,
    /// How many variant sets there are.
    sets: usize,
    kept: Vec<u32>,
    value_kept: u128,
    /// The kept relevance as read, summed exactly: what the caller reads as the value kept.
    relevance: ExactSum,
    /// The first fragment fed: its index, tokens and relevance key.
    top: Option<(u32, u64, u64)>,
}

impl Packer {
    /// A packer for fragments in `variant_sets` sets (0 when none has a `variant_of`).
    pub fn new(budget: u128, strategy: Strategy, variant_sets: usize) -> Self {
        Packer {
            budget,
            walk: BudgetWalk::new(budget, strategy == Strategy::Prefix, budget == 0),
            sets: variant_sets,
            kept: Vec::new(),
            value_kept: 0,
            relevance: ExactSum::default(),
            top: None,
        }
    }

    /// Walks the next part of the ranking. Returns whether anything further down could still
    /// be kept: `false` once the prefix strategy stopped, or once the budget is spent and no
    /// zero-token fragment (of `zero_token_fragments` in all) is left to come.
    ///
    /// `set_of` gives each fragment's variant set ([`NO_SET`] for none), or is empty when no
    /// fragment has one: a fragment whose set has a kept fragment is passed over, and prefix
    /// goes on past it.
    pub fn feed(
        &mut self,
        ranked: &[Entry],
        token_counts: &[u64],
        zero_token_fragments: usize,
        set_of: &[u32],
    ) -> bool {
        for entry in ranked {
            if self.walk.is_done() {
                break;
            }
            let tokens = entry.token_count(token_counts);
            self.top.get_or_insert((entry.index, tokens, entry.key));
            let set = set_of.get(entry.index as usize).map_or(NO_SET, |&set| set);
            if self.walk.step(u128::from(tokens), set, self.sets) == Step::Kept {
                self.kept.push(entry.index);
                let relevance = relevance_of_key(entry.key);
                self.value_kept += u128::from(value_of(relevance));
                self.relevance.add(relevance);
            }
            self.walk.end_if_spent(zero_token_fragments);
        }
        !self.walk.is_done()
    }

    /// A positive budget that nothing fits still keeps the top-ranked fragment, so a child
    /// only starts without context when its budget is zero (a zero budget is done before it
    /// sees any fragment, so it has no top one). The value bound is left for the caller.
    pub fn finish(self) -> Selection {
        self.finish_with_relevance().0
    }

    /// [`Packer::finish`], and the kept relevance summed exactly (a compression's
    /// `relevance_kept`).
    pub fn finish_with_relevance(self) -> (Selection, f64) {
        match (self.kept.is_empty(), self.top) {
            (true, Some((index, tokens, key))) => (
                Selection {
                    reused_tokens: 0,
                    kept: vec![index],
                    compressed_tokens: u128::from(tokens),
                    value_kept: u128::from(value_of(relevance_of_key(key))),
                    value_bound: 0,
                    exact: true,
                },
                relevance_of_key(key),
            ),
            _ => (
                Selection {
                    reused_tokens: 0,
                    kept: self.kept,
                    compressed_tokens: self.budget - self.walk.remaining(),
                    value_kept: self.value_kept,
                    value_bound: 0,
                    exact: true,
                },
                self.relevance.value(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packs `budget` along a complete ranking.
    fn select(
        ranked: &[Entry],
        token_counts: &[u64],
        budget: u128,
        strategy: Strategy,
    ) -> Selection {
        let zero_token_fragments = ranked
            .iter()
            .filter(|e| e.token_count(token_counts) == 0)
            .count();
        let mut packer = Packer::new(budget, strategy, 0);
        packer.feed(ranked, token_counts, zero_token_fragments, &[]);
        packer.finish()
    }

    /// Entries ranked in the order given (relevance strictly descending).
    fn ranked(tokens: &[u64]) -> Vec<Entry> {
        let n = tokens.len();
        tokens
            .iter()
            .enumerate()
            .map(|(i, &t)| Entry::new(1.0 - i as f64 / (n as f64 + 1.0), 0, i as u32, t))
            .collect()
    }

    fn run(tokens: &[u64], budget: u128, strategy: Strategy) -> (Vec<u32>, u128) {
        let s = select(&ranked(tokens), tokens, budget, strategy);
        (s.kept, s.compressed_tokens)
    }

    #[test]
    fn strategies_by_name() {
        for strategy in Strategy::ALL {
            assert_eq!(Strategy::from_name(strategy.name()), Some(strategy));
        }
        assert_eq!(Strategy::from_name("prefix"), Some(Strategy::Prefix));
        assert_eq!(Strategy::from_name("Greedy"), None);
        assert_eq!(Strategy::from_name(""), None);
    }

    #[test]
    fn greedy_skips_and_goes_on() {
        assert_eq!(
            run(&[50, 80, 30, 20], 100, Strategy::Greedy),
            (vec![0, 2, 3], 100)
        );
    }

    #[test]
    fn prefix_stops_at_first_misfit() {
        assert_eq!(run(&[50, 80, 30, 20], 100, Strategy::Prefix), (vec![0], 50));
    }

    #[test]
    fn zero_budget_keeps_nothing() {
        for strategy in [Strategy::Greedy, Strategy::Prefix] {
            assert_eq!(run(&[0, 5], 0, strategy), (vec![], 0));
        }
    }

    #[test]
    fn nothing_fits_keeps_top_fragment() {
        for strategy in [Strategy::Greedy, Strategy::Prefix] {
            assert_eq!(run(&[300, 200], 50, strategy), (vec![0], 300));
        }
        assert_eq!(run(&[], 50, Strategy::Greedy), (vec![], 0));
    }

    #[test]
    fn zero_token_fragments_fit_a_spent_budget() {
        assert_eq!(
            run(&[10, 5, 0, 7, 0], 10, Strategy::Greedy),
            (vec![0, 2, 4], 10)
        );
    }

    #[test]
    fn feeding_in_pieces_matches_one_walk() {
        let tokens: Vec<u64> = (0..300).map(|i| (i * 37 % 11) as u64).collect();
        let all = ranked(&tokens);
        let zeros = tokens.iter().filter(|&&t| t == 0).count();
        for budget in [0, 1, 10, 100, 1000, 10_000] {
            for strategy in [Strategy::Greedy, Strategy::Prefix] {
                let whole = select(&all, &tokens, budget, strategy);
                let mut packer = Packer::new(budget, strategy, 0);
                for piece in all.chunks(7) {
                    if !packer.feed(piece, &tokens, zeros, &[]) {
                        break;
                    }
                }
                assert_eq!(packer.finish(), whole, "budget {budget} {strategy:?}");
            }
        }
    }

    #[test]
    fn a_fragment_whose_variant_set_is_kept_is_passed_over() {
        // Fragments 0 and 2 render one thing, 1 and 3 another; 4 renders nothing shared.
        let tokens = [50, 80, 30, 20, 10];
        let set_of = [0, 1, 0, 1, NO_SET];
        let walk = |budget, strategy| {
            let mut packer = Packer::new(budget, strategy, 2);
            packer.feed(&ranked(&tokens), &tokens, 0, &set_of);
            packer.finish().kept
        };
        assert_eq!(walk(100, Strategy::Greedy), vec![0, 3, 4]);
        // Passing over 2 does not stop prefix, 1 not fitting does.
        assert_eq!(walk(100, Strategy::Prefix), vec![0]);
        assert_eq!(walk(200, Strategy::Prefix), vec![0, 1, 4]);
        assert_eq!(walk(40, Strategy::Greedy), vec![2, 4]);
    }

    #[test]
    fn spent_budget_stops_the_walk() {
        let tokens = [5, 5, 1, 1];
        let mut packer = Packer::new(10, Strategy::Greedy, 0);
        assert!(!packer.feed(&ranked(&tokens)[..2], &tokens, 0, &[]));
        let mut waiting = Packer::new(10, Strategy::Greedy, 0);
        assert!(waiting.feed(&ranked(&tokens)[..2], &tokens, 1, &[]));
        let tokens = [5, 5, 0, 1];
        let mut zero_seen = Packer::new(10, Strategy::Greedy, 0);
        assert!(zero_seen.feed(&ranked(&tokens)[..2], &tokens, 1, &[]));
        assert!(!zero_seen.feed(&ranked(&tokens)[2..3], &tokens, 1, &[]));
    }

    #[test]
    fn sums_do_not_overflow() {
        let max = i64::MAX as u64;
        let tokens = [max, max, max];
        assert_eq!(
            run(&tokens, u128::MAX, Strategy::Greedy),
            (vec![0, 1, 2], 3 * u128::from(max))
        );
        assert_eq!(
            run(&tokens, 2 * u128::from(max) + 1, Strategy::Greedy).0,
            vec![0, 1]
        );
    }
}
