//! Where a result's kept fragments are placed from: in ranking order, or, for a large input,
//! in the input's own order, each with its place in the ranking, so that building the result
//! visits the input's fragments the way they sit in memory.

use crate::core::select::tuning::Tuning;

/// The order in which a result takes its kept fragments (`kept`, fragment indices in ranking
/// order) from an input of `input_len` fragments.
#[derive(Debug, PartialEq, Eq)]
pub enum Placement {
    /// `kept` as it is: the `i`-th kept fragment is the result's `i`-th.
    Ranking,
    /// `(fragment index, position in the result)` for each kept fragment, by fragment index.
    Input(Vec<(u32, u32)>),
}

pub fn placement(kept: &[u32], input_len: usize, tuning: &Tuning) -> Placement {
    if input_len < tuning.visit_in_input_order_from {
        Placement::Ranking
    } else {
        Placement::Input(in_input_order(kept))
    }
}

/// Bits of the fragment index sorted per pass: 2^11 counters stay in the L1 cache.
const DIGIT_BITS: u32 = 11;

/// `(fragment index, position)` for each of `kept` (fragment indices in ranking order), by
/// ascending fragment index. A radix sort on the index: linear in `kept.len()`, with one pass
/// per 11 bits that the largest index needs.
fn in_input_order(kept: &[u32]) -> Vec<(u32, u32)> {
    let mut pairs: Vec<(u32, u32)> = kept.iter().copied().zip(0u32..).collect();
    let largest = kept.iter().copied().max().unwrap_or(0);
    let passes = (u32::BITS - largest.leading_zeros()).div_ceil(DIGIT_BITS);
    let mut spare = vec![(0, 0); pairs.len()];
    for pass in 0..passes {
        let shift = pass * DIGIT_BITS;
        let digit = |(index, _): (u32, u32)| ((index >> shift) & ((1 << DIGIT_BITS) - 1)) as usize;
        let mut starts = [0usize; 1 << DIGIT_BITS];
        for &pair in &pairs {
            starts[digit(pair)] += 1;
        }
        let mut start = 0;
        for slot in &mut starts {
            (*slot, start) = (start, start + *slot);
        }
        for &pair in &pairs {
            let slot = &mut starts[digit(pair)];
            spare[*slot] = pair;
            *slot += 1;
        }
        std::mem::swap(&mut pairs, &mut spare);
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(kept: &[u32]) -> Vec<(u32, u32)> {
        let mut pairs: Vec<(u32, u32)> = (0u32..).zip(kept).map(|(p, &i)| (i, p)).collect();
        pairs.sort_unstable();
        pairs
    }

    #[test]
    fn small_and_empty() {
        assert!(in_input_order(&[]).is_empty());
        assert_eq!(in_input_order(&[0]), vec![(0, 0)]);
        assert_eq!(in_input_order(&[5, 0, 3]), vec![(0, 1), (3, 2), (5, 0)]);
    }

    #[test]
    fn indices_of_every_width() {
        // One, two and three passes, with digits that differ in each pass; an index kept
        // twice (which no selection has) keeps its positions in order.
        for top in [2047u32, 2048, 1 << 22, (1 << 22) + 1, u32::MAX] {
            let kept: Vec<u32> = (0..3000u32)
                .map(|i| (u64::from(i) * 2_654_435_761 % (u64::from(top) + 1)) as u32)
                .chain([top, 0])
                .collect();
            assert_eq!(in_input_order(&kept), sorted(&kept), "up to {top}");
        }
    }

    #[test]
    fn a_large_input_is_visited_in_its_own_order() {
        let tuning = Tuning {
            visit_in_input_order_from: 4,
            ..Tuning::DEFAULT
        };
        assert_eq!(placement(&[2, 0], 3, &tuning), Placement::Ranking);
        assert_eq!(
            placement(&[2, 0], 4, &tuning),
            Placement::Input(vec![(0, 1), (2, 0)])
        );
        assert_eq!(
            placement(&[5, 1], 1 << 19, &Tuning::DEFAULT),
            Placement::Input(vec![(1, 1), (5, 0)])
        );
        assert_eq!(
            placement(&[5, 1], (1 << 19) - 1, &Tuning::DEFAULT),
            Placement::Ranking
        );
    }
}
