//! Units ranked by their leads, and every budget packed along that ranking with the policy.

use crate::core::errors::Refusal;
use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::entry::relevance_of_key;
use crate::core::select::ids::FragmentIds;
use crate::core::select::names::sets::NO_SET;
use crate::core::select::packing::Selection;
use crate::core::select::policy::units::{
    Candidates, Decision, KeptUnits, LeadIds, SetUnits, UnitPacker, Units,
};
use crate::core::select::ranking::Ranking;
use crate::core::select::request::Request;
use crate::core::select::value::Item;
use crate::core::sort_in_pieces::Sorting;

/// Units ranked by their leads, as far as the budgets need (all of them when explaining,
/// since every unit's rank is told). The ranking's entries are numbered by unit.
pub struct UnitRanking {
    units: Units,
    ranking: Ranking,
    candidate: Vec<bool>,
    /// Eligible units in a variant set with a required unit; empty without variants.
    settled: Vec<bool>,
    required_tokens: u128,
    zero_token_candidates: usize,
}

impl UnitRanking {
    pub fn new(
        units: Units,
        request: Request<'_>,
        ids: &impl FragmentIds,
        checkpoint: &mut Checkpoint,
    ) -> Result<Self, Interrupted> {
        let floor = request.policy.min_relevance;
        let (mut required_tokens, mut candidate_tokens, mut zero_token_candidates) = (0, 0, 0);
        let mut candidate = Vec::with_capacity(units.len());
        let mut unit_entries = Vec::with_capacity(units.len());
        let settled_sets = settled_sets(&units);
        let mut settled = Vec::new();
        if !settled_sets.is_empty() {
            settled.resize(units.len(), false);
        }
        for unit in 0..units.len() as u32 {
            checkpoint.tick()?;
            let lead = units.lead_entry(unit);
            let tokens = units.tokens(unit);
            let mut is_candidate = !units.is_required(unit) && relevance_of_key(lead.key) >= floor;
            let set = units.set_of(unit);
            if is_candidate && set != NO_SET && settled_sets.get(set as usize) == Some(&true) {
                settled[unit as usize] = true;
                is_candidate = false;
            }
            if units.is_required(unit) {
                required_tokens += tokens;
            } else if is_candidate {
                candidate_tokens += tokens;
                zero_token_candidates += usize::from(tokens == 0);
            }
            // The value strategies rank only to explain.
            if request.explain || (is_candidate && !request.strategy.by_value()) {
                unit_entries.push(units.ranking_entry(unit));
            }
            candidate.push(is_candidate);
        }
        let len = unit_entries.len();
        // The value strategies choose among all candidates at once; they rank only to explain.
        let first = if request.explain {
            len
        } else if request.strategy.by_value() {
            0
        } else {
            request
                .tuning
                .first_sort_size(request.budgets, candidate_tokens, len)
        };
        let mut ranking = Ranking::new(unit_entries, request.tuning);
        ranking.rank_top(first, &LeadIds { units: &units, ids }, checkpoint)?;
        Ok(UnitRanking {
            units,
            ranking,
            candidate,
            settled,
            required_tokens,
            zero_token_candidates,
        })
    }

    pub fn units(&self) -> &Units {
        &self.units
    }

    /// Keeps `pinned` as required units (a turn's reused units, none required already):
    /// no longer walked, their tokens taken first, and the other units of their variant
    /// sets (which have no required unit) settled.
    pub fn pin(&mut self, pinned: &[u32], sets: &SetUnits) {
        self.units.pin(pinned);
        for &unit in pinned {
            self.required_tokens += self.units.tokens(unit);
            self.set_candidate(unit, false);
            let members = sets.of(&self.units, unit);
            if !members.is_empty() && self.settled.is_empty() {
                self.settled.resize(self.units.len(), false);
            }
            for &other in members.iter().filter(|&&other| other != unit) {
                if self.candidate[other as usize] {
                    self.set_candidate(other, false);
                    self.settled[other as usize] = true;
                }
            }
        }
    }

    /// Undoes `pin` for `pinned`, units it pinned.
    pub fn unpin(&mut self, pinned: &[u32], sets: &SetUnits) {
        self.units.unpin(pinned);
        for &unit in pinned {
            self.required_tokens -= self.units.tokens(unit);
            self.set_candidate(unit, true);
            for &other in sets
                .of(&self.units, unit)
                .iter()
                .filter(|&&other| other != unit)
            {
                if std::mem::replace(&mut self.settled[other as usize], false) {
                    self.set_candidate(other, true);
                }
            }
        }
    }

    fn set_candidate(&mut self, unit: u32, candidate: bool) {
        if std::mem::replace(&mut self.candidate[unit as usize], candidate) != candidate
            && self.units.tokens(unit) == 0
        {
            if candidate {
                self.zero_token_candidates += 1;
            } else {
                self.zero_token_candidates -= 1;
            }
        }
    }

    fn candidates<'a>(&'a self, request: Request<'a>) -> Candidates<'a> {
        Candidates {
            units: &self.units,
            policy: request.policy,
            strategy: request.strategy,
            max_work: request.max_work,
            candidate: &self.candidate,
            settled: &self.settled,
            required_tokens: self.required_tokens,
            zero_token_candidates: self.zero_token_candidates,
        }
    }

    /// Packs every budget: its selection, and the decisions for the first when explaining.
    /// The first budget the overflow policy refuses is the answer.
    pub fn pack(
        &mut self,
        ids: &impl FragmentIds,
        request: Request<'_>,
        checkpoint: &mut Checkpoint,
    ) -> Result<(Vec<Selection>, Vec<Decision>), Refusal> {
        let packed = self.kept_units(ids, request, true, checkpoint)?;
        let mut selections = Vec::with_capacity(packed.len());
        let mut decisions = Vec::new();
        for (at, kept) in packed.iter().enumerate() {
            selections.push(self.selection(kept, &[], ids, request, checkpoint)?);
            if request.explain && at == 0 {
                decisions = self.decisions(kept, request);
            }
        }
        Ok((selections, decisions))
    }

    /// The kept units of every budget, with the bound on any selection when `bounded`, or
    /// the first refusal.
    pub fn kept_units(
        &mut self,
        ids: &impl FragmentIds,
        request: Request<'_>,
        bounded: bool,
        checkpoint: &mut Checkpoint,
    ) -> Result<Vec<KeptUnits>, Refusal> {
        let candidates = Candidates {
            units: &self.units,
            policy: request.policy,
            strategy: request.strategy,
            max_work: request.max_work,
            candidate: &self.candidate,
            settled: &self.settled,
            required_tokens: self.required_tokens,
            zero_token_candidates: self.zero_token_candidates,
        };
        let units = &self.units;
        let key = |unit: u32| units.lead_entry(unit).sort_key();
        let rank_order = |a: u32, b: u32| units.lead_entry(a).rank_order(units.lead_entry(b), ids);
        let packers: Vec<UnitPacker> = if request.strategy.by_value() {
            let pack = |&budget: &u128| {
                UnitPacker::by_value(
                    budget,
                    &candidates,
                    &key,
                    &rank_order,
                    request.tuning,
                    checkpoint,
                )
            };
            let packers: Result<Vec<UnitPacker>, Interrupted> =
                request.budgets.iter().map(pack).collect();
            packers?
        } else {
            let mut packers: Vec<UnitPacker> = request
                .budgets
                .iter()
                .map(|&budget| UnitPacker::new(budget, &candidates, request.explain))
                .collect();
            let lead_ids = LeadIds { units, ids };
            self.ranking
                .feed_while_wanted(&lead_ids, checkpoint, |fresh| {
                    packers.iter_mut().fold(false, |wanting, packer| {
                        packer.feed(fresh, &candidates) | wanting
                    })
                })?;
            packers
        };
        UnitPacker::finish_all(packers, &candidates, bounded, checkpoint)
    }

    /// The selection of `kept`: the units `first` in their order, then the others in the
    /// policy's order.
    pub fn selection(
        &self,
        kept: &KeptUnits,
        first: &[u32],
        ids: &impl FragmentIds,
        request: Request<'_>,
        checkpoint: &mut Checkpoint,
    ) -> Result<Selection, Interrupted> {
        let units = &self.units;
        let key = |unit: u32| units.lead_entry(unit).sort_key();
        let rank_order = |a: u32, b: u32| units.lead_entry(a).rank_order(units.lead_entry(b), ids);
        let mut sorting = Sorting {
            piece: request.tuning.sort_piece,
            parallel_from: request.tuning.parallel_from,
            checkpoint,
        };
        let order = request.policy.order;
        kept.selection(units, order, first, key, rank_order, &mut sorting)
    }

    /// The candidates densest first, for `value_bound_along`; `None` with variant sets.
    pub fn by_density(
        &self,
        request: Request<'_>,
        checkpoint: &mut Checkpoint,
    ) -> Result<Option<Vec<Item>>, Interrupted> {
        let sort_piece = request.tuning.sort_piece;
        self.candidates(request).by_density(sort_piece, checkpoint)
    }

    /// `value_bound` along `by_density`, made by `by_density` with no unit pinned that is
    /// not pinned now (`value_bound` itself when that gave none).
    pub fn value_bound_along(
        &self,
        by_density: Option<&[Item]>,
        budget: u128,
        request: Request<'_>,
        checkpoint: &mut Checkpoint,
    ) -> Result<u128, Interrupted> {
        self.candidates(request)
            .value_bound_along(by_density, budget, checkpoint)
    }

    /// Every fragment's decision, in input order, given the kept units of an explained
    /// ranking (every unit ranked).
    pub fn decisions(&self, kept: &KeptUnits, request: Request<'_>) -> Vec<Decision> {
        let units = &self.units;
        let mut ranks = vec![0u32; units.len()];
        for (rank, entry) in self.ranking.ranked().iter().enumerate() {
            ranks[entry.index as usize] = rank as u32;
        }
        let by_unit = kept.decisions(&self.candidates(request), &ranks);
        (0..units.fragments() as u32)
            .map(|fragment| by_unit[units.unit_of(fragment) as usize])
            .collect()
    }
}

/// The kept units of a request with one budget, as `UnitRanking::kept_units` gives them.
pub fn one(kept: Vec<KeptUnits>) -> [KeptUnits; 1] {
    match <[KeptUnits; 1]>::try_from(kept) {
        Ok(one) => one,
        Err(_) => unreachable!("one budget, one packing"),
    }
}

/// Per variant set, whether it has a required unit; empty when none has.
fn settled_sets(units: &Units) -> Vec<bool> {
    let mut settled = Vec::new();
    if !units.has_variants() {
        return settled;
    }
    for unit in (0..units.len() as u32).filter(|&unit| units.is_required(unit)) {
        let set = units.set_of(unit);
        if set != NO_SET {
            settled.resize(units.sets(), false);
            settled[set as usize] = true;
        }
    }
    settled
}
