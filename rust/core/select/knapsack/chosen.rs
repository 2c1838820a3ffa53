//! What a strategy that chooses by value returns.

use crate::core::select::value::Item;

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
