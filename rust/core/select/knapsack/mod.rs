//! The 0-1 knapsack, as the strategies that choose by total value solve it: [`density`]
//! (the greedy walk by value per token, at least half the optimum, in `greedy.rs`) and
//! [`optimal`] (the exact optimum, one canonical set among ties: Dembo and Hammer's reduction
//! in `reduction.rs`, then Pisinger's expanding core in `expanding_core.rs`, its sets kept in
//! a [`parent_tree::ParentTree`]). With variant sets the same two strategies solve the
//! multiple-choice knapsack ([`multiple_choice`]).
//!
//! The exact solvers count their work against a limit ([`work::Work`]): past it they return
//! the best set found, never worth less than `density`'s, and say it may not be the optimum.
//!
//! Both take the eligible units that are not required, with the capacity the required units
//! leave, and return the units they keep. `rank_order` is the ranking of units, which breaks
//! every tie.

pub mod chosen;
pub mod expanding_core;
pub mod greedy;
pub mod multiple_choice;
pub mod parent_tree;
pub mod reduction;
pub mod word;
pub mod work;

pub use chosen::Chosen;
pub use expanding_core::optimal;
pub use greedy::density;
pub use work::Work;

#[cfg(test)]
mod tests;
