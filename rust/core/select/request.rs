//! What a compression is asked for.

use crate::core::interrupt::Interrupt;
use crate::core::select::packing::Strategy;
use crate::core::select::policy::Policy;
use crate::core::select::share::Share;
use crate::core::select::tuning::Tuning;

/// What a compression is asked for. No budgets means only the checks (duplicate ids).
#[derive(Clone, Copy)]
pub struct Request<'a> {
    pub budgets: &'a [u128],
    pub strategy: Strategy,
    pub policy: &'a Policy,
    /// Whether to say why each fragment was kept or dropped (for the first budget).
    pub explain: bool,
    pub tuning: &'a Tuning,
    /// The most work `optimal` may do per budget, in its own steps (`None`: no limit); past
    /// it the best set found stands, marked not exact (`Selection::exact`).
    pub max_work: Option<u64>,
    /// Asked now and then while `optimal` works.
    pub interrupt: &'a dyn Interrupt,
    /// What to reuse of the previous call's output; heeded with exactly one budget.
    pub reuse: Option<&'a Reuse>,
}

impl Request<'_> {
    /// Whether a call on `len` fragments runs inside the caller's `Detach` hook: a large
    /// one, or an `optimal` one from `Tuning::detach_optimal_from` on, whose work, not its
    /// size, can take a second.
    pub fn detaches(&self, len: usize) -> bool {
        len >= self.tuning.detach_from
            || (self.strategy == Strategy::Optimal && len >= self.tuning.detach_optimal_from)
    }
}

/// What a call reuses of the previous one's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reuse {
    /// This call's fragments that the previous output sent, in its order, up to the first
    /// it sent that this call does not have.
    pub matched: Vec<u32>,
    /// The share of the value kept without reuse that reusing may cost.
    pub max_value_loss: Share,
    /// The share of the budget left free when the reused run breaks anyway.
    pub headroom: Share,
    /// The room that leaves, where the caller measured it (a budget past u128 is read as
    /// `u128::MAX`, so only the caller knows the real one); `None`: the budget less
    /// `headroom` of it.
    pub headroom_room: Option<u128>,
}
