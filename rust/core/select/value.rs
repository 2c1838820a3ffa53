//! Value: relevance in exact integer units, the order by value per token, and the fractional
//! optimum that bounds what any selection within a budget can keep.

use std::cmp::Ordering;

use crate::core::interrupt::{Checkpoint, Interrupted};

/// One unit of value is `2**-32` of relevance.
pub const UNITS_PER_RELEVANCE: f64 = 4_294_967_296.0;

/// A relevance in `[0, 1]` in units: `round_half_even(relevance * 2**32)`, exact because the
/// product only shifts the exponent. Adding and taking away 2**52 rounds a number below 2**52
/// to an integer, half to even, as IEEE arithmetic does by default; unlike
/// `f64::round_ties_even`, which is a call to `rint` where SSE4.1 is not assumed, it is two
/// additions.
#[inline]
pub fn value_of(relevance: f64) -> u64 {
    const TWO_POW_52: f64 = 4_503_599_627_370_496.0;
    ((relevance * UNITS_PER_RELEVANCE + TWO_POW_52) - TWO_POW_52) as u64
}

/// A unit as the value strategies see it: its number, value and tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    pub unit: u32,
    pub value: u64,
    pub tokens: u128,
}

/// `a * b` as (high, low) halves of a 192-bit number, for exact comparisons of densities.
#[inline]
pub(crate) fn wide_mul(a: u64, b: u128) -> (u64, u128) {
    let low = u128::from(a) * (b as u64 as u128);
    let high = u128::from(a) * (b >> 64);
    let (lo, carry) = low.overflowing_add(high << 64);
    ((high >> 64) as u64 + u64::from(carry), lo)
}

/// Compares two items' values per token, the denser first (`Less`); a zero-token item is
/// denser than any other, and two of them are equal.
#[inline]
pub fn density_order(a: &Item, b: &Item) -> Ordering {
    match (a.tokens, b.tokens) {
        (0, 0) => Ordering::Equal,
        (0, _) => Ordering::Less,
        (_, 0) => Ordering::Greater,
        _ => {
            if a.tokens <= u128::from(u64::MAX) && b.tokens <= u128::from(u64::MAX) {
                let left = u128::from(a.value) * b.tokens;
                let right = u128::from(b.value) * a.tokens;
                right.cmp(&left)
            } else {
                wide_mul(b.value, a.tokens).cmp(&wide_mul(a.value, b.tokens))
            }
        }
    }
}

/// `floor(value * part / whole)` for `part < whole`, exact where the product would not fit.
pub fn fraction_of(value: u64, part: u128, whole: u128) -> u128 {
    debug_assert!(part < whole);
    if let Some(product) = u128::from(value).checked_mul(part) {
        return product / whole;
    }
    // Long multiplication bit by bit, keeping quotient and remainder: `whole` is a sum of token
    // counts, below 2**96, so the doubled remainder cannot overflow.
    let (mut quotient, mut remainder) = (0u128, 0u128);
    for bit in (0..64).rev() {
        quotient <<= 1;
        remainder <<= 1;
        if remainder >= whole {
            remainder -= whole;
            quotient += 1;
        }
        if value >> bit & 1 == 1 {
            remainder += part;
            if remainder >= whole {
                remainder -= whole;
                quotient += 1;
            }
        }
    }
    quotient
}

/// Where the walk by density stops fitting: `items[..taken]` are the densest, whole, within
/// the capacity (`tokens` and `value` in all); `next` is the value and tokens of the first
/// that does not fit after them, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    pub taken: usize,
    pub tokens: u128,
    pub value: u128,
    pub next: Option<(u64, u128)>,
}

impl Split {
    /// The floor of the fractional optimum: the items taken, and of the next item the part
    /// that fills what is left.
    pub fn fractional_optimum(&self, capacity: u128) -> u128 {
        match self.next {
            Some((value, tokens)) => {
                self.value + fraction_of(value, capacity - self.tokens, tokens)
            }
            None => self.value,
        }
    }
}

/// `split_at_capacity(..).fractional_optimum` at each of `capacities`, in their order. The
/// largest first: what a smaller capacity takes, and the first item it cannot, are among what
/// the next larger took and the first it could not, so each split searches only those,
/// weighed once after the first.
pub fn fractional_optima<T: Copy, W: Copy>(
    items: &mut [T],
    capacities: &[u128],
    weigh: impl Fn(&T) -> W,
    order: impl Fn(&W, &W) -> Ordering,
    checkpoint: &mut Checkpoint,
) -> Result<Vec<u128>, Interrupted>
where
    (u64, u128): From<W>,
{
    let mut largest_first: Vec<usize> = (0..capacities.len()).collect();
    largest_first.sort_unstable_by_key(|&at| std::cmp::Reverse(capacities[at]));
    let mut optima = vec![0; capacities.len()];
    let Some((&largest, smaller)) = largest_first.split_first() else {
        return Ok(optima);
    };
    let split = split_at_capacity(items, capacities[largest], &weigh, &order, checkpoint)?;
    optima[largest] = split.fractional_optimum(capacities[largest]);
    let mut weighed: Vec<W> = items[..(split.taken + 1).min(items.len())]
        .iter()
        .map(&weigh)
        .collect();
    let mut within = weighed.len();
    for &at in smaller {
        let capacity = capacities[at];
        let searched = &mut weighed[..within];
        let split = split_at_capacity(searched, capacity, |w: &W| *w, &order, checkpoint)?;
        within = within.min(split.taken + 1);
        optima[at] = split.fractional_optimum(capacity);
    }
    Ok(optima)
}

/// Puts the densest items that fit `capacity` whole, walking by `order`, in `items[..taken]`
/// (in no particular order) and the first that does not fit at `taken`: a weighted selection
/// in expected linear time, not a sort. `weigh` gives an item's value and tokens, and `order`
/// compares two items by what `weigh` gave. Items `order` calls equal are walked in place, so
/// an order that is not total (densities alone) costs no more. `checkpoint` is asked before
/// each pass over what is left.
pub fn split_at_capacity<T: Copy, W: Copy>(
    items: &mut [T],
    capacity: u128,
    weigh: impl Fn(&T) -> W,
    order: impl Fn(&W, &W) -> Ordering,
    checkpoint: &mut Checkpoint,
) -> Result<Split, Interrupted>
where
    (u64, u128): From<W>,
{
    let mut split = Split {
        taken: 0,
        tokens: 0,
        value: 0,
        next: None,
    };
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64 ^ items.len() as u64;
    let mut next_random = |below: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % below as u64) as usize
    };
    let (mut low, mut high) = (0, items.len());
    if items.len() >= SAMPLED_FROM {
        (low, high) = first_cut(
            items,
            capacity,
            &weigh,
            &order,
            &mut split,
            &mut next_random,
            checkpoint,
        )?;
    }
    while low < high {
        checkpoint.advance(high - low)?;
        // A pseudo-random pivot: no input order makes the selection quadratic by design.
        let pivot = weigh(&items[low + next_random(high - low)]);
        // Three parts: before the pivot, equal to it, after it.
        let (mut before, mut at, mut after) = (low, low, high);
        let (mut tokens, mut value) = (0u128, 0u128);
        while at < after {
            let weighed = weigh(&items[at]);
            match order(&weighed, &pivot) {
                Ordering::Less => {
                    let (item_value, item_tokens) = weighed.into();
                    tokens += item_tokens;
                    value += u128::from(item_value);
                    items.swap(at, before);
                    before += 1;
                    at += 1;
                }
                Ordering::Equal => at += 1,
                Ordering::Greater => {
                    after -= 1;
                    items.swap(at, after);
                }
            }
        }
        if split.tokens + tokens > capacity {
            high = before;
            continue;
        }
        split.tokens += tokens;
        split.value += value;
        split.taken = before;
        for equal in &items[before..after] {
            let (item_value, item_tokens) = weigh(equal).into();
            if split.tokens + item_tokens > capacity {
                split.next = Some((item_value, item_tokens));
                return Ok(split);
            }
            split.tokens += item_tokens;
            split.value += u128::from(item_value);
            split.taken += 1;
        }
        low = after;
    }
    Ok(split)
}

/// From this many items on, the first cut is made at two pivots a sample puts around the
/// break: one pass sets most items aside, instead of several.
pub const SAMPLED_FROM: usize = 1 << 14;
const SAMPLE: usize = 1024;
/// How far from the sample's estimate of the break each pivot is, in sampled items: about
/// three standard deviations of where the break falls in a sample this size.
const SAMPLE_MARGIN: usize = 48;

/// The first cut of [`split_at_capacity`]: items denser than a low pivot first, then those
/// between the pivots, then the rest; what is certainly taken goes into `split`, and the
/// window where the break lies is returned. Exact whatever the sample: a cut that misses the
/// break only leaves a larger window.
fn first_cut<T: Copy, W: Copy>(
    items: &mut [T],
    capacity: u128,
    weigh: &impl Fn(&T) -> W,
    order: &impl Fn(&W, &W) -> Ordering,
    split: &mut Split,
    next_random: &mut impl FnMut(usize) -> usize,
    checkpoint: &mut Checkpoint,
) -> Result<(usize, usize), Interrupted>
where
    (u64, u128): From<W>,
{
    let len = items.len();
    let mut sample: Vec<W> = (0..SAMPLE)
        .map(|_| weigh(&items[next_random(len)]))
        .collect();
    sample.sort_unstable_by(order);
    let mut sampled_tokens = 0u128;
    let estimate = sample.iter().position(|weighed| {
        sampled_tokens += <(u64, u128)>::from(*weighed).1;
        sampled_tokens.saturating_mul(len as u128) > capacity.saturating_mul(SAMPLE as u128)
    });
    let Some(estimate) = estimate else {
        return Ok((0, len));
    };
    let low_pivot = sample[estimate.saturating_sub(SAMPLE_MARGIN)];
    let high_pivot = sample[(estimate + SAMPLE_MARGIN).min(SAMPLE - 1)];
    let (mut before, mut at, mut after) = (0, 0, len);
    let (mut above, mut between) = ((0u128, 0u128), (0u128, 0u128));
    while at < after {
        checkpoint.tick()?;
        let weighed = weigh(&items[at]);
        if order(&weighed, &low_pivot).is_lt() {
            let (value, tokens) = weighed.into();
            above = (above.0 + u128::from(value), above.1 + tokens);
            items.swap(at, before);
            before += 1;
            at += 1;
        } else if order(&weighed, &high_pivot).is_gt() {
            after -= 1;
            items.swap(at, after);
        } else {
            let (value, tokens) = weighed.into();
            between = (between.0 + u128::from(value), between.1 + tokens);
            at += 1;
        }
    }
    if above.1 > capacity {
        return Ok((0, before));
    }
    split.value += above.0;
    split.tokens += above.1;
    split.taken = before;
    if split.tokens + between.1 > capacity {
        return Ok((before, after));
    }
    split.value += between.0;
    split.tokens += between.1;
    split.taken = after;
    Ok((after, len))
}

impl From<Item> for (u64, u128) {
    fn from(item: Item) -> (u64, u128) {
        (item.value, item.tokens)
    }
}

/// An item as [`split_at_capacity`] weighs it: itself.
pub fn weigh(item: &Item) -> Item {
    *item
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::test_support::{fractional, item, Lcg};
    use crate::core::Uninterrupted;

    /// [`split_at_capacity`], never interrupted.
    fn split_whole<T: Copy, W: Copy>(
        items: &mut [T],
        capacity: u128,
        weigh: impl Fn(&T) -> W,
        order: impl Fn(&W, &W) -> Ordering,
    ) -> Split
    where
        (u64, u128): From<W>,
    {
        let mut checkpoint = Checkpoint::new(&Uninterrupted, std::time::Duration::ZERO);
        split_at_capacity(items, capacity, weigh, order, &mut checkpoint).unwrap()
    }

    #[test]
    fn values_round_half_to_even() {
        assert_eq!(value_of(0.0), 0);
        assert_eq!(value_of(-0.0), 0);
        assert_eq!(value_of(1.0), 1 << 32);
        assert_eq!(value_of(0.5), 1 << 31);
        // 2**-33 is half a unit: rounds to the even 0; 3 * 2**-33 to 2.
        assert_eq!(value_of(2f64.powi(-33)), 0);
        assert_eq!(value_of(3.0 * 2f64.powi(-33)), 2);
        assert_eq!(value_of(5.0 * 2f64.powi(-33)), 2);
        assert_eq!(value_of(0.1), 429_496_730);
        let mut bits = 1u64;
        for _ in 0..100_000 {
            bits = bits.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let relevance = (bits >> 11) as f64 / (1u64 << 53) as f64;
            let product = relevance * UNITS_PER_RELEVANCE;
            assert_eq!(value_of(relevance), product.round_ties_even() as u64);
            let half = (product.floor() + 0.5) / UNITS_PER_RELEVANCE;
            assert_eq!(
                value_of(half),
                (half * UNITS_PER_RELEVANCE).round_ties_even() as u64
            );
        }
    }

    #[test]
    fn densities_compare_exactly() {
        assert!(density_order(&item(0, 3, 2), &item(1, 1, 1)).is_lt());
        assert!(density_order(&item(0, 2, 2), &item(1, 1, 1)).is_eq());
        assert!(density_order(&item(0, 0, 0), &item(1, u64::MAX, 1)).is_lt());
        assert!(density_order(&item(0, 5, 1), &item(1, 0, 0)).is_gt());
        assert!(density_order(&item(0, 0, 0), &item(1, 7, 0)).is_eq());
        // Past 64 bits of tokens the products take 192 bits.
        let huge = 1u128 << 90;
        assert!(density_order(&item(0, u64::MAX, huge), &item(1, u64::MAX - 1, huge)).is_lt());
        assert!(density_order(&item(0, 1 << 40, huge), &item(1, 1 << 39, huge >> 1)).is_eq());
        assert!(density_order(&item(0, 3, huge + 1), &item(1, 3, huge)).is_gt());
        // One huge token count alone takes the wide products too, whichever item has it.
        let (dense, sparse) = (item(0, 1 << 40, 1), item(1, 1, huge));
        assert!(density_order(&dense, &sparse).is_lt());
        assert!(density_order(&sparse, &dense).is_gt());
        // The low halves' sum carries into the high half.
        assert_eq!(
            wide_mul(u64::MAX, (1 << 65) - 1),
            (1, 340_282_366_920_938_463_408_034_375_210_639_556_609)
        );
        assert_eq!(
            wide_mul(u64::MAX, u128::MAX),
            (u64::MAX - 1, 1 + (u128::MAX - u128::from(u64::MAX)))
        );
    }

    #[test]
    fn fractions_floor_exactly() {
        assert_eq!(fraction_of(10, 1, 3), 3);
        assert_eq!(fraction_of(u64::MAX, 3, 4), u128::from(u64::MAX) * 3 / 4);
        let whole = (1u128 << 95) + 7;
        let part = whole - 2;
        // (2**64 - 1) * (whole - 2) / whole = 2**64 - 1 - ceil(2 * (2**64 - 1) / whole) = 2**64 - 2.
        assert_eq!(fraction_of(u64::MAX, part, whole), u128::from(u64::MAX) - 1);
        assert_eq!(fraction_of(0, part, whole), 0);
        // A long division that sometimes takes the whole away after adding the part, and
        // sometimes not.
        let (value, part, whole) = (0xDEAD_BEEF_CAFE_F00D, 3 << 92 | 1, (1 << 94) + 99);
        assert_eq!(fraction_of(value, part, whole), 12_034_268_238_377_333_769);
    }

    /// The walk by density on a sorted copy, as the reference.
    fn walked(items: &[Item], capacity: u128) -> (usize, u128, u128) {
        let mut sorted = items.to_vec();
        sorted.sort_by(|a, b| density_order(a, b).then(a.unit.cmp(&b.unit)));
        let (mut tokens, mut value, mut taken) = (0, 0, 0);
        for item in &sorted {
            if tokens + item.tokens > capacity {
                break;
            }
            tokens += item.tokens;
            value += u128::from(item.value);
            taken += 1;
        }
        (taken, tokens, value)
    }

    #[test]
    fn split_matches_a_sorted_walk() {
        let mut random = Lcg(7);
        let mut next = |limit: u64| random.below(limit);
        for case in 0..800 {
            let len = next(if case % 2 == 0 { 40 } else { 150 }) as usize;
            let (values, tokens) = if case % 2 == 0 {
                (6, 5)
            } else {
                (1 << 32, 1 << 12)
            };
            let items: Vec<Item> = (0..len as u32)
                .map(|unit| item(unit, next(values), u128::from(next(tokens))))
                .collect();
            let total: u128 = items.iter().map(|i| i.tokens).sum();
            for capacity in [0, 1, total / 2, total.saturating_sub(1), total, total + 3] {
                let mut shuffled = items.clone();
                let order = |a: &Item, b: &Item| density_order(a, b).then(a.unit.cmp(&b.unit));
                let split = split_whole(&mut shuffled, capacity, weigh, order);
                let (taken, tokens, value) = walked(&items, capacity);
                assert_eq!(
                    (split.taken, split.tokens, split.value),
                    (taken, tokens, value),
                    "case {case}"
                );
                let mut sorted = items.clone();
                sorted.sort_by(order);
                let mut head: Vec<u32> = shuffled[..taken].iter().map(|i| i.unit).collect();
                head.sort_unstable();
                let mut want: Vec<u32> = sorted[..taken].iter().map(|i| i.unit).collect();
                want.sort_unstable();
                assert_eq!(head, want);
                assert_eq!(shuffled.get(taken), sorted.get(taken));
            }
        }
    }

    #[test]
    fn large_inputs_are_cut_at_sampled_pivots_first() {
        let mut random = Lcg(3);
        let mut next = |limit: u64| random.below(limit);
        for case in 0..6 {
            let len = SAMPLED_FROM + next(5000) as usize;
            let levels = [3, 1 << 32][case % 2];
            let items: Vec<Item> = (0..len as u32)
                .map(|unit| item(unit, next(levels), u128::from(next(50))))
                .collect();
            let total: u128 = items.iter().map(|i| i.tokens).sum();
            for capacity in [1, total / 100, total / 10, total / 2, total - 1, total] {
                let mut work = items.clone();
                let split = split_whole(&mut work, capacity, weigh, density_order);
                let bound = fractional(&items, capacity);
                assert_eq!(
                    split.fractional_optimum(capacity),
                    bound,
                    "{case} {capacity}"
                );
                let mut sorted = items.clone();
                // A total order: the taken items are the densest, exactly.
                let order = |a: &Item, b: &Item| density_order(a, b).then(a.unit.cmp(&b.unit));
                let mut work = items.clone();
                let split = split_whole(&mut work, capacity, weigh, order);
                sorted.sort_by(order);
                let mut taken: Vec<u32> = work[..split.taken].iter().map(|i| i.unit).collect();
                taken.sort_unstable();
                let mut want: Vec<u32> = sorted[..split.taken].iter().map(|i| i.unit).collect();
                want.sort_unstable();
                assert_eq!(taken, want);
                assert_eq!(work.get(split.taken), sorted.get(split.taken));
                let prefix: u128 = sorted[..split.taken].iter().map(|i| i.tokens).sum();
                assert!(prefix <= capacity);
                assert!(sorted
                    .get(split.taken)
                    .is_none_or(|i| prefix + i.tokens > capacity));
            }
        }
    }

    #[test]
    fn a_dense_unit_too_large_for_the_capacity_breaks_the_walk_the_sample_missed() {
        // The densest unit alone exceeds the capacity: everything denser than the low pivot
        // does not fit, and the walk stops at that unit.
        let mut items: Vec<Item> = (0..20_000).map(|unit| item(unit, 1, 1)).collect();
        items[12_345] = item(12_345, 10_000_000, 1_000_000);
        let order = |a: &Item, b: &Item| density_order(a, b).then(a.unit.cmp(&b.unit));
        let split = split_whole(&mut items, 10_000, weigh, order);
        assert_eq!((split.taken, split.tokens, split.value), (0, 0, 0));
        assert_eq!(split.next, Some((10_000_000, 1_000_000)));
        assert_eq!(split.fractional_optimum(10_000), 100_000);
    }

    #[test]
    fn equal_densities_are_walked_in_place() {
        // Densities alone: many items compare equal, and the selection still finds the part.
        let items: Vec<Item> = (0..5000)
            .map(|unit| item(unit, 6, 2 + u128::from(unit % 2)))
            .collect();
        for capacity in [0, 1, 7, 9_999, 12_499, 12_500, 20_000] {
            let mut work = items.clone();
            let split = split_whole(&mut work, capacity, weigh, density_order);
            let bound = fractional(&items, capacity);
            assert_eq!(split.fractional_optimum(capacity), bound, "{capacity}");
            assert!(split.tokens <= capacity);
        }
    }

    #[test]
    fn fractional_optimum_takes_part_of_the_break_item() {
        let items = [item(0, 10, 2), item(1, 9, 3), item(2, 1, 4)];
        let mut work = items;
        let order = |a: &Item, b: &Item| density_order(a, b).then(a.unit.cmp(&b.unit));
        let split = split_whole(&mut work, 4, weigh, order);
        assert_eq!(split.taken, 1);
        // 10 whole, then 2 of item 1's 3 tokens: floor(9 * 2 / 3) = 6.
        assert_eq!(split.fractional_optimum(4), 16);
        let split = split_whole(&mut work, 100, weigh, order);
        assert_eq!(split.fractional_optimum(100), 20);
    }

    #[test]
    fn a_split_asks_the_checkpoint_before_each_pass() {
        let mut rng = Lcg(9);
        let mut items: Vec<Item> = (0..20_000)
            .map(|unit| item(unit, rng.below(1000), 1 + u128::from(rng.below(100))))
            .collect();
        let interrupt = crate::core::test_support::InterruptAt::new(1);
        let mut checkpoint = Checkpoint::new(&interrupt, std::time::Duration::ZERO);
        let split = split_at_capacity(&mut items, 5_000, weigh, density_order, &mut checkpoint);
        assert_eq!(split.map(|_| ()), Err(Interrupted));
    }
}
