//! Packing the ranking into the budget.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Keep every fragment that still fits; skip the others and go on.
    Greedy,
    /// Stop at the first fragment that does not fit.
    Prefix,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Selection {
    /// Kept fragment indices, in ranking order.
    pub kept: Vec<u32>,
    pub compressed_tokens: u128,
}

/// Walks `ranking` and keeps what fits in `budget`.
///
/// A positive budget that nothing fits still keeps the top-ranked fragment, so a child only
/// starts without context when its budget is zero. Sums are `u128`: at most 2**32 fragments
/// of at most 2**63 - 1 tokens cannot overflow them.
pub fn select(
    ranking: impl Iterator<Item = u32> + Clone,
    token_counts: &[u64],
    budget: u128,
    strategy: Strategy,
) -> Selection {
    let mut selection = Selection::default();
    if budget == 0 {
        return selection;
    }
    let mut remaining = budget;
    for index in ranking.clone() {
        let tokens = u128::from(token_counts[index as usize]);
        if tokens <= remaining {
            remaining -= tokens;
            selection.kept.push(index);
        } else if strategy == Strategy::Prefix {
            break;
        }
    }
    if selection.kept.is_empty() {
        if let Some(top) = ranking.into_iter().next() {
            selection.kept.push(top);
            selection.compressed_tokens = u128::from(token_counts[top as usize]);
            return selection;
        }
    }
    selection.compressed_tokens = budget - remaining;
    selection
}

/// The exact sum of all token counts.
pub fn total_tokens(token_counts: &[u64]) -> u128 {
    token_counts.iter().map(|&t| u128::from(t)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(order: &[u32], tokens: &[u64], budget: u128, strategy: Strategy) -> (Vec<u32>, u128) {
        let s = select(order.iter().copied(), tokens, budget, strategy);
        (s.kept, s.compressed_tokens)
    }

    #[test]
    fn greedy_skips_and_goes_on() {
        let tokens = [50, 80, 30, 20];
        assert_eq!(run(&[0, 1, 2, 3], &tokens, 100, Strategy::Greedy), (vec![0, 2, 3], 100));
    }

    #[test]
    fn prefix_stops_at_first_misfit() {
        let tokens = [50, 80, 30, 20];
        assert_eq!(run(&[0, 1, 2, 3], &tokens, 100, Strategy::Prefix), (vec![0], 50));
    }

    #[test]
    fn zero_budget_keeps_nothing() {
        for strategy in [Strategy::Greedy, Strategy::Prefix] {
            assert_eq!(run(&[0, 1], &[0, 5], 0, strategy), (vec![], 0));
        }
    }

    #[test]
    fn nothing_fits_keeps_top_fragment() {
        for strategy in [Strategy::Greedy, Strategy::Prefix] {
            assert_eq!(run(&[1, 0], &[300, 200], 50, strategy), (vec![1], 200));
        }
        assert_eq!(run(&[], &[], 50, Strategy::Greedy), (vec![], 0));
    }

    #[test]
    fn zero_token_fragments_fit_a_spent_budget() {
        assert_eq!(run(&[0, 1, 2], &[10, 5, 0], 10, Strategy::Greedy), (vec![0, 2], 10));
    }

    #[test]
    fn sums_do_not_overflow() {
        let max = i64::MAX as u64;
        let tokens = [max, max, max];
        let budget = u128::MAX;
        let (kept, sum) = run(&[0, 1, 2], &tokens, budget, Strategy::Greedy);
        assert_eq!(kept, vec![0, 1, 2]);
        assert_eq!(sum, 3 * u128::from(max));
        assert_eq!(total_tokens(&tokens), 3 * u128::from(max));
        let (kept, _) = run(&[0, 1, 2], &tokens, 2 * u128::from(max) + 1, Strategy::Greedy);
        assert_eq!(kept, vec![0, 1]);
    }
}
