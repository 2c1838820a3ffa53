//! Knapsack items for tests, and the fractional optimum walked the plain way.

use crate::core::select::value::{density_order, Item};

pub(crate) fn item(unit: u32, value: u64, tokens: u128) -> Item {
    Item {
        unit,
        value,
        tokens,
    }
}

/// The floor of the fractional optimum, walked on a sorted copy.
pub(crate) fn fractional(items: &[Item], capacity: u128) -> u128 {
    let mut sorted = items.to_vec();
    sorted.sort_by(density_order);
    let (mut left, mut bound) = (capacity, 0);
    for item in &sorted {
        if item.tokens <= left {
            left -= item.tokens;
            bound += u128::from(item.value);
        } else {
            return bound + u128::from(item.value) * left / item.tokens;
        }
    }
    bound
}

/// The floor of the multiple-choice relaxation by its dual: the least, over the prices
/// `p / q` at which some choice changes, of `p / q * room` plus each class's best margin
/// (classes of `(value, tokens)`).
pub(crate) fn multiple_choice_by_dual(classes: &[Vec<(u128, u128)>], room: u128) -> u128 {
    let total: u128 = classes.iter().flatten().map(|&(_, t)| t).sum();
    let room = room.min(total) as i128;
    let mut prices: Vec<(i128, i128)> = vec![(0, 1)];
    for class in classes {
        for &(va, ta) in class {
            if ta > 0 {
                prices.push((va as i128, ta as i128));
            }
            for &(vb, tb) in class {
                if ta > tb && va > vb {
                    prices.push(((va - vb) as i128, (ta - tb) as i128));
                }
            }
        }
    }
    let at_price = |(p, q): (i128, i128)| {
        let margins: i128 = classes
            .iter()
            .map(|class| {
                let best = class.iter().map(|&(v, t)| v as i128 * q - p * t as i128);
                best.max().unwrap_or(0).max(0)
            })
            .sum();
        (p * room + margins, q)
    };
    let least = prices
        .into_iter()
        .map(at_price)
        .min_by(|a, b| (a.0 * b.1).cmp(&(b.0 * a.1)))
        .unwrap();
    (least.0 / least.1) as u128
}

/// The least work limit (from 1 to 2^40) at which `finishes` says a solver ran to its end.
pub(crate) fn least_work(finishes: impl Fn(u64) -> bool) -> u64 {
    let (mut low, mut high) = (1u64, 1u64 << 40);
    assert!(finishes(high));
    while low < high {
        let middle = low + (high - low) / 2;
        if finishes(middle) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    low
}
