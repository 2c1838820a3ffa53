//! The selection policy beyond the strategy: required fragments, groups kept whole, a
//! relevance floor, what to do when the budget cannot be met, and the order of what is kept.

pub mod options;
pub mod units;

pub use options::{OnOverflow, Order, Policy};

#[cfg(test)]
mod tests;
