//! The multiple-choice knapsack: the value strategies with variant sets, where each class (a
//! variant set, or a unit of none) keeps at most one of its units. The classes
//! ([`classes`]), the bound of the relaxation from the classes' hulls ([`relaxation`]),
//! `density` over classes ([`greedy`]) and the exact optimum, a dynamic program over Pareto
//! states ([`dynamic_program`]), cut by the bound of the classes still to come at each
//! state's room ([`rest_bound`]), its ties settled by the states' tie order ([`tie_order`]).

pub mod classes;
pub mod dynamic_program;
pub mod greedy;
pub mod relaxation;
pub mod rest_bound;
pub mod tie_order;

#[cfg(test)]
mod tests;
