//! What a compression is asked for.

use crate::core::interrupt::Interrupt;
use crate::core::select::packing::Strategy;
use crate::core::select::policy::Policy;
use crate::core::select::tuning::Tuning;
use crate::core::select::turns::Reuse;

/// What a compression is asked for. No budgets means only the checks (duplicate ids).
#[derive(Clone, Copy)]
pub struct Request<'a> {
    pub budgets: &'a [u128],
    pub strategy: Strategy,
    pub policy: &'a Policy,
    /// Whether to say why each fragment was kept or dropped (for the first budget).
    pub explain: bool,
    pub tuning: &'a Tuning,
    /// Asked now and then while `optimal` works.
    pub interrupt: &'a dyn Interrupt,
    /// What to reuse of the previous call's output; heeded with exactly one budget.
    pub reuse: Option<&'a Reuse>,
}
