//! The reduction of Dembo and Hammer: items fixed in or out of the optimum by the bound
//! around the break item, with strict inequalities, so that no set tied with the optimum is
//! cut. What is left open is the core the exact solver works on.

use crate::core::select::value::Item;

/// The bound of Dembo and Hammer around the break item `b` of the fractional optimum (ratio
/// `r = v_b / t_b`; any `r >= 0` gives a valid bound, this one the tightest): a set
/// keeps at most `r * capacity + sum(max(0, v_i - r * t_i))`, less `|v_j - r * t_j|` when
/// it differs from the fractional optimum at item `j`. All of it times `t_b`, in integers.
pub(super) struct Reduction {
    /// `v_b` and `t_b`; `None` when the products do not fit (nothing is then fixed or cut by
    /// bounds).
    pub(super) ratio: Option<(i128, i128)>,
    /// `v_b * capacity + sum(max(0, v_j * t_b - v_b * t_j))`: `t_b` times the fractional
    /// optimum.
    pub(super) bound: i128,
}

/// The items a reduction fixed in, with their tokens and value.
#[derive(Default)]
pub(super) struct Fixed {
    pub(super) units: Vec<u32>,
    pub(super) tokens: u128,
    pub(super) value: u128,
}

impl Reduction {
    pub(super) fn new(items: &[Item], at_break: Item, capacity: u128) -> Reduction {
        let unbounded = Reduction {
            ratio: None,
            bound: 0,
        };
        let v_b = i128::from(at_break.value);
        let (Ok(t_b), Ok(capacity)) = (i128::try_from(at_break.tokens), i128::try_from(capacity))
        else {
            return unbounded;
        };
        let positive = items.iter().try_fold(0i128, |sum, item| {
            sum.checked_add(reduced_gain(item, (v_b, t_b))?.max(0))
        });
        let bound = v_b
            .checked_mul(capacity)
            .and_then(|part| part.checked_add(positive?));
        let Some(bound) = bound else {
            return unbounded;
        };
        Reduction {
            ratio: Some((v_b, t_b)),
            bound,
        }
    }

    /// `t_b * lower`: what a bound times `t_b` must reach for a set to be kept open.
    fn needed(&self, lower: u128) -> Option<i128> {
        match (self.ratio, i128::try_from(lower)) {
            (Some((_, t_b)), Ok(lower)) => t_b.checked_mul(lower),
            _ => None,
        }
    }

    /// The items (those `new` was given) left open, the core, and the ones fixed in, given a
    /// set of value `lower` within the capacity: an item is fixed when the bound of every set
    /// that differs from the fractional optimum there falls strictly below `lower`.
    pub(super) fn split(&self, items: &[Item], lower: u128) -> (Vec<Item>, Fixed) {
        let (Some(ratio), Some(needed)) = (self.ratio, self.needed(lower)) else {
            return (items.to_vec(), Fixed::default());
        };
        let mut core = Vec::new();
        let mut fixed = Fixed::default();
        for item in items {
            // A gain that does not fit (not one of the items `new` checked) fixes nothing.
            let Some(gain) = reduced_gain(item, ratio) else {
                core.push(*item);
                continue;
            };
            if self.bound - gain.abs() >= needed {
                core.push(*item);
            } else if gain > 0 {
                fixed.units.push(item.unit);
                fixed.tokens += item.tokens;
                fixed.value += u128::from(item.value);
            }
        }
        (core, fixed)
    }
}

/// `v_j * t_b - v_b * t_j`, if it fits.
pub(super) fn reduced_gain(item: &Item, (v_b, t_b): (i128, i128)) -> Option<i128> {
    let value = i128::from(item.value);
    let tokens = i128::try_from(item.tokens).ok()?;
    value
        .checked_mul(t_b)?
        .checked_sub(v_b.checked_mul(tokens)?)
}
