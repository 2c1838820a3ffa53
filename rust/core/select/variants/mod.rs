//! Variants: fragments that render one thing (`variant_of`), of which at most one unit is
//! kept. Units are grouped into variant sets ([`sets`]), the rules a set's units must keep are
//! checked ([`rules`]), and the value strategies choose with them: the multiple-choice bound
//! ([`bound`]), `density` ([`density`]) and the exact multiple-choice knapsack ([`optimal`]).
//! Variant sets alone take the plain path ([`plain`]).

pub mod bound;
pub mod density;
pub mod optimal;
pub mod plain;
pub mod rules;
pub mod sets;

#[cfg(test)]
mod tests;
