//! Selection: checked fragments in plain columns, duplicate ids rejected, ranked as far as
//! the budgets need, and packed into one selection per budget ([`compress`]).

pub mod binned;
pub mod budget_walk;
pub mod columns;
pub mod compress;
pub mod duplicates;
pub mod entry;
pub mod exact_sum;
pub mod ids;
pub mod input_order;
pub mod key_ranges;
pub mod knapsack;
pub mod names;
pub mod packing;
pub mod policy;
pub mod ranking;
pub mod request;
pub mod share;
pub mod siblings;
pub mod tuning;
pub mod turns;
pub mod unit_ranking;
pub mod value;
pub mod variants;

pub use compress::compress;
