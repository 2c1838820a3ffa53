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
