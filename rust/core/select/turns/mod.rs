//! A turn of an agent loop: what the previous call sent first is kept first again, as far
//! as the value allows, so that a provider's prompt cache serves it (docs/turns.md).

pub mod rows_by_id;
pub mod run;

use crate::core::errors::Refusal;
use crate::core::interrupt::Checkpoint;
use crate::core::select::ids::FragmentIds;
use crate::core::select::packing::{Selection, Strategy};
use crate::core::select::policy::units::{Decision, KeptUnits, Reason, SetUnits, Units};
use crate::core::select::policy::{OnOverflow, Policy};
use crate::core::select::request::{Request, Reuse};
use crate::core::select::share::Share;
use crate::core::select::unit_ranking::{one, UnitRanking};
use run::reusable_run;

/// The turn's selection and, when explaining, its decisions: the longest reusable run that
/// keeps enough value, pinned first, then the fill. `request` has one budget.
pub fn pack_turn(
    units: Units,
    reuse: &Reuse,
    ids: &impl FragmentIds,
    request: Request<'_>,
    checkpoint: &mut Checkpoint,
) -> Result<(Vec<Selection>, Vec<Decision>), Refusal> {
    let mut ranking = UnitRanking::new(units, request, ids, checkpoint)?;
    let &[budget] = request.budgets else {
        return ranking.pack(ids, request, checkpoint);
    };
    let [ordinary] = one(ranking.kept_units(ids, request, true, checkpoint)?);
    let floor = request.policy.min_relevance;
    let run = reusable_run(ranking.units(), &reuse.matched, budget, floor);
    let bound = ordinary.value_bound();
    if run.is_empty() {
        return finish(&ranking, &ordinary, &[], bound, ids, request, checkpoint);
    }
    // The reuse is measured against the ordinary call's value: exact only if that is.
    let ordinary_exact = ordinary.exact();
    let units = ranking.units();
    let loose = run.iter().map(|&unit| !units.is_required(unit)).collect();
    let mut fills = Fills {
        sets: units.set_units(),
        ranking,
        run: &run,
        loose,
        pinned: 0,
        best: ordinary.value_kept(),
        max_value_loss: reuse.max_value_loss,
        all_exact: true,
    };
    let (reused, kept) = if request.strategy == Strategy::Optimal {
        fills.longest_by_halves(ordinary, ids, request, checkpoint)?
    } else {
        fills.longest_by_steps(ordinary, ids, request, checkpoint)?
    };
    fills.pin_to(reused);
    // A fill stopped short may have been refused a length that holds.
    let exact = ordinary_exact && fills.all_exact;
    let ranking = &mut fills.ranking;
    let first = &run[..reused];
    // The cached prompt breaks anyway: room is left for the next turns to append to.
    if reused < run.len() && !reuse.headroom.is_zero() {
        let smaller = reuse
            .headroom_room
            .unwrap_or_else(|| budget - reuse.headroom.of_amount(budget));
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
            let [left_room] = one(ranking.kept_units(ids, within, false, checkpoint)?);
            if !left_room.is_empty() {
                let found = finish(ranking, &left_room, first, bound, ids, within, checkpoint);
                return exact_only_if(found, exact);
            }
        }
    }
    let found = finish(ranking, &kept, first, bound, ids, request, checkpoint);
    exact_only_if(found, exact)
}

/// The turn's selection, not exact unless `exact`.
fn exact_only_if(
    found: Result<(Vec<Selection>, Vec<Decision>), Refusal>,
    exact: bool,
) -> Result<(Vec<Selection>, Vec<Decision>), Refusal> {
    found.map(|(mut selections, decisions)| {
        for selection in &mut selections {
            selection.exact &= exact;
        }
        (selections, decisions)
    })
}

/// The fills of one turn: the ranking with the first `pinned` units of the run pinned.
struct Fills<'r> {
    ranking: UnitRanking,
    sets: SetUnits,
    run: &'r [u32],
    /// Whether each unit of the run is not required (and so is pinned when reused).
    loose: Vec<bool>,
    pinned: usize,
    /// The value kept without reuse.
    best: u128,
    max_value_loss: Share,
    /// Whether every fill made so far finished.
    all_exact: bool,
}

impl Fills<'_> {
    /// Pins the first `length` units of the run, and only those.
    fn pin_to(&mut self, length: usize) {
        let loose = |at: &usize| self.loose[*at];
        if length > self.pinned {
            let more: Vec<u32> = (self.pinned..length)
                .filter(loose)
                .map(|at| self.run[at])
                .collect();
            self.ranking.pin(&more, &self.sets);
        } else {
            let fewer: Vec<u32> = (length..self.pinned)
                .filter(loose)
                .map(|at| self.run[at])
                .collect();
            self.ranking.unpin(&fewer, &self.sets);
        }
        self.pinned = length;
    }

    /// The fill with the first `length` units of the run pinned, if it keeps enough.
    fn enough(
        &mut self,
        length: usize,
        ids: &impl FragmentIds,
        request: Request<'_>,
        checkpoint: &mut Checkpoint,
    ) -> Result<Option<KeptUnits>, Refusal> {
        self.pin_to(length);
        let [kept] = one(self.ranking.kept_units(ids, request, false, checkpoint)?);
        self.all_exact &= kept.exact();
        Ok(self
            .max_value_loss
            .keeps_enough(kept.value_kept(), self.best)
            .then_some(kept))
    }

    /// The longest reuse, from the whole run down one unit at a time: what a walk keeps
    /// may rise or fall as units are pinned.
    fn longest_by_steps(
        &mut self,
        ordinary: KeptUnits,
        ids: &impl FragmentIds,
        request: Request<'_>,
        checkpoint: &mut Checkpoint,
    ) -> Result<(usize, KeptUnits), Refusal> {
        for length in (1..=self.run.len()).rev() {
            if let Some(kept) = self.enough(length, ids, request, checkpoint)? {
                return Ok((length, kept));
            }
        }
        Ok((0, ordinary))
    }

    /// The longest reuse by halves: each unit pinned narrows what `optimal` chooses from, so
    /// its value only falls as the reuse grows, and so does the bound on it. The bound,
    /// cheap beside a fill, narrows the lengths first.
    fn longest_by_halves(
        &mut self,
        ordinary: KeptUnits,
        ids: &impl FragmentIds,
        request: Request<'_>,
        checkpoint: &mut Checkpoint,
    ) -> Result<(usize, KeptUnits), Refusal> {
        let budget = request.budgets[0];
        // Sorted once, walked to the break at each length.
        let by_density = self.ranking.by_density(request, checkpoint)?;
        let most = longest_where(self.run.len(), |length| {
            self.pin_to(length);
            let along = by_density.as_deref();
            let bound = self
                .ranking
                .value_bound_along(along, budget, request, checkpoint)?;
            Ok::<bool, Refusal>(self.max_value_loss.keeps_enough(bound, self.best))
        })?;
        let mut found = ordinary;
        let length = longest_where(most, |length| {
            Ok::<bool, Refusal>(match self.enough(length, ids, request, checkpoint)? {
                Some(kept) => {
                    found = kept;
                    true
                }
                None => false,
            })
        })?;
        // Each length that held is longer than the last: `found` is the fill at `length`.
        Ok((length, found))
    }
}

/// The longest length in 0..=`longest` that `holds` (which holds at 0, and whose truth only
/// falls as the length grows), trying `longest` first: a turn that only appends reuses the
/// whole run.
fn longest_where<E>(
    longest: usize,
    mut holds: impl FnMut(usize) -> Result<bool, E>,
) -> Result<usize, E> {
    if longest == 0 || holds(longest)? {
        return Ok(longest);
    }
    let (mut yes, mut no) = (0, longest);
    while no - yes > 1 {
        let middle = yes + (no - yes) / 2;
        if holds(middle)? {
            yes = middle;
        } else {
            no = middle;
        }
    }
    Ok(yes)
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

#[cfg(test)]
mod tests;
