//! Variants: fragments that render one thing (`variant_of`), of which at most one unit is
//! kept. Units are grouped into variant sets ([`sets`]), the rules a set's units must keep are
//! checked ([`rules`]), and the value strategies choose with them as the multiple-choice
//! knapsack (`knapsack::multiple_choice`). Variant sets alone take the plain path ([`plain`]).

pub mod plain;
pub mod rules;
pub mod sets;
