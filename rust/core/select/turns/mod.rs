//! A turn of an agent loop: what the previous call sent first is kept first again, as far
//! as the value allows, so that a provider's prompt cache serves it (docs/turns.md).

pub mod rows_by_id;
pub mod run;
pub mod share;

use crate::core::errors::Refusal;
use crate::core::interrupt::Checkpoint;
use crate::core::select::ids::FragmentIds;
use crate::core::select::packing::Selection;
use crate::core::select::policy::units::{Decision, KeptUnits, Reason, Units};
use crate::core::select::policy::{OnOverflow, Policy};
use crate::core::select::request::Request;
use crate::core::select::unit_ranking::UnitRanking;
use run::reusable_run;
use share::Share;

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
}

/// The turn's selection and, when explaining, its decisions: the longest reusable run that
/// keeps enough value, pinned first, then the fill. `request` has one budget.
pub fn pack_turn(
    units: Units,
    reuse: &Reuse,
    ids: &impl FragmentIds,
    request: Request<'_>,
    checkpoint: &mut Checkpoint,
) -> Result<(Vec<Selection>, Vec<Decision>), Refusal> {
    let mut ordinary = UnitRanking::new(units, request, ids, checkpoint)?;
    let &[budget] = request.budgets else {
        return ordinary.pack(ids, request, checkpoint);
    };
    let [ordinary_kept] = one(ordinary.kept_units(ids, request, checkpoint)?);
    let floor = request.policy.min_relevance;
    let run = reusable_run(ordinary.units(), &reuse.matched, budget, floor);
    let (best, bound) = (ordinary_kept.value_kept(), ordinary_kept.value_bound());
    if run.is_empty() {
        return finish(
            &ordinary,
            &ordinary_kept,
            &[],
            bound,
            ids,
            request,
            checkpoint,
        );
    }
    let mut units = ordinary.into_units();
    let mut length = run.len();
    let (mut ranking, kept, reused) = loop {
        if length == 0 {
            let mut ranking = UnitRanking::new(units, request, ids, checkpoint)?;
            let [kept] = one(ranking.kept_units(ids, request, checkpoint)?);
            break (ranking, kept, 0);
        }
        let pinned = units.pin(&run[..length]);
        let mut ranking = UnitRanking::new(units, request, ids, checkpoint)?;
        let [kept] = one(ranking.kept_units(ids, request, checkpoint)?);
        if reuse.max_value_loss.keeps_enough(kept.value_kept(), best) {
            break (ranking, kept, length);
        }
        units = ranking.into_units();
        units.unpin(&pinned);
        length -= 1;
    };
    // The cached prompt breaks anyway: room is left for the next turns to append to.
    if reused < run.len() && !reuse.headroom.is_zero() {
        let smaller = budget - reuse.headroom.of_amount(budget);
        if ranking.units().required_tokens() <= smaller {
            let strict = Policy {
                on_overflow: OnOverflow::Strict,
                ..*request.policy
            };
            let budgets = [smaller];
            let within = Request {
                budgets: &budgets,
                policy: &strict,
                ..request
            };
            let [left_room] = one(ranking.kept_units(ids, within, checkpoint)?);
            if !left_room.is_empty() {
                let first = &run[..reused];
                return finish(&ranking, &left_room, first, bound, ids, within, checkpoint);
            }
        }
    }
    finish(
        &ranking,
        &kept,
        &run[..reused],
        bound,
        ids,
        request,
        checkpoint,
    )
}

/// The one budget's kept units.
fn one(kept: Vec<KeptUnits>) -> [KeptUnits; 1] {
    match <[KeptUnits; 1]>::try_from(kept) {
        Ok(one) => one,
        Err(_) => unreachable!("one budget, one packing"),
    }
}

/// The selection of `kept` with the run's units `first`, the bound of the call without
/// reuse, and the decisions when explaining, the run's told `reused`.
fn finish(
    ranking: &UnitRanking,
    kept: &KeptUnits,
    first: &[u32],
    bound: u128,
    ids: &impl FragmentIds,
    request: Request<'_>,
    checkpoint: &mut Checkpoint,
) -> Result<(Vec<Selection>, Vec<Decision>), Refusal> {
    let units = ranking.units();
    let mut selection = ranking.selection(kept, first, ids, request, checkpoint)?;
    selection.value_bound = bound;
    selection.reused_tokens = first.iter().map(|&unit| units.tokens(unit)).sum();
    let mut decisions = Vec::new();
    if request.explain {
        decisions = ranking.decisions(kept, request);
        for &fragment in &units.fragments_of(first) {
            let decision = &mut decisions[fragment as usize];
            decision.reason = Reason::Reused;
            decision.budget_left = None;
        }
    }
    Ok((vec![selection], decisions))
}
