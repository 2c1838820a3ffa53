//! Variants: fragments that render one thing (`variant_of`), of which at most one unit is
//! kept. Their sets are numbered from the names (`names::sets`); here are the rules a set's
//! units must keep ([`rules`]) and variant sets alone on the plain path ([`plain`]). The
//! value strategies choose with them as the multiple-choice knapsack
//! (`knapsack::multiple_choice`).

pub mod plain;
pub mod rules;
