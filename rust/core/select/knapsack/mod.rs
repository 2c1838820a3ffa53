//! The 0-1 knapsack, as the strategies that choose by total value solve it: [`density`]
//! (the greedy walk by value per token, at least half the optimum, in `greedy.rs`) and
//! [`optimal`] (the exact optimum, one canonical set among ties: Dembo and Hammer's reduction
//! in `reduction.rs`, then Pisinger's expanding core in `expanding_core.rs`, its sets kept in
//! a [`parent_tree::ParentTree`]). With variant sets the same two strategies solve the
//! multiple-choice knapsack ([`multiple_choice`]).
//!
//! Both take the eligible units that are not required, with the capacity the required units
//! leave, and return the units they keep. `rank_order` is the ranking of units, which breaks
//! every tie.

use crate::core::select::value::Item;

pub mod expanding_core;
pub mod greedy;
pub mod multiple_choice;
pub mod parent_tree;
pub mod reduction;

pub use expanding_core::optimal;
pub(crate) use greedy::best_single;
pub use greedy::density;

/// What a strategy keeps: units in no particular order, and their value; and the floor of
/// the fractional optimum, which bounds what any set within the capacity keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chosen {
    pub units: Vec<u32>,
    pub value: u128,
    pub tokens: u128,
    pub bound: u128,
}

impl Chosen {
    pub(crate) fn add(&mut self, item: &Item) {
        self.units.push(item.unit);
        self.value += u128::from(item.value);
        self.tokens += item.tokens;
    }
}

#[cfg(test)]
mod tests;
