//! What the tests of several modules share: a generator of random numbers, interrupts,
//! knapsack items, and generated inputs for the whole compression. No test reaches into
//! another module's tests.

mod inputs;
mod interrupts;
mod items;
mod random;

pub(crate) use inputs::{
    first_repeat, generated, relevance_of, tiny_tuning, weak_hash, Counting, Input,
};
pub(crate) use interrupts::{unasked, InterruptAt};
pub(crate) use items::{fractional, item, least_work, multiple_choice_by_dual};
pub(crate) use random::Lcg;
