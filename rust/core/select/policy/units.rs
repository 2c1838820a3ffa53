//! Compression under a selection policy: fragments of one group form a unit, kept or dropped
//! whole; required units are kept first; a relevance floor keeps weak units out; an overflow
//! policy says what to do when the budget cannot be met; and each decision can be explained.

use std::cmp::Ordering;

use crate::core::errors::{BudgetExceeded, Refusal};
use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::binned::Binned;
use crate::core::select::budget_walk::{BudgetWalk, Step};
use crate::core::select::entry::{relevance_of_key, Entry};
use crate::core::select::ids::FragmentIds;
use crate::core::select::knapsack::multiple_choice::dynamic_program::optimal as variant_optimal;
use crate::core::select::knapsack::multiple_choice::greedy::density as variant_density;
use crate::core::select::knapsack::multiple_choice::relaxation::bound_of_items;
use crate::core::select::knapsack::{density, optimal, Work};
use crate::core::select::names::groups::Groups;
use crate::core::select::names::sets::{VariantSets, NO_SET};
use crate::core::select::packing::{Selection, Strategy};
use crate::core::select::policy::options::{OnOverflow, Order, Policy};
use crate::core::select::tuning::Tuning;
use crate::core::select::value::{
    density_order, fraction_of, fractional_optima, split_at_capacity, value_of, weigh, Item,
};
use crate::core::sort_in_pieces::{sort_in_pieces, Sorting};

const NONE: u32 = u32::MAX;

/// Fragments grouped into units. A unit's tokens are its members' sum, its lead the member
/// that ranks first, and it is required when any member is.
#[derive(Debug)]
pub struct Units {
    unit_of: Vec<u32>,
    /// Each unit's lead's ranking entry.
    leads: Vec<Entry>,
    tokens: Vec<u128>,
    /// Each unit's value, the sum of its members'.
    values: Vec<u64>,
    required: Vec<bool>,
    /// The required units, ascending.
    required_units: Vec<u32>,
    /// The first units, one per group, in their order; every other unit is one fragment.
    groups: Groups,
    /// Each unit's variant set ([`NO_SET`] for none); empty when no fragment has a
    /// `variant_of`.
    set_of: Vec<u32>,
    /// How many variant sets there are.
    sets: usize,
    /// The fewest tokens of any unit: a walk with less room left keeps nothing more.
    fewest_tokens: u128,
}

impl Units {
    /// `entries` are in input order (entry `i` is fragment `i`), with tie keys set, and
    /// `groups` made from them; `required` lists required fragments, by ascending fragment;
    /// `sets` are the fragments' variant sets, if any fragment has one (a group's members
    /// share theirs).
    pub fn new(
        entries: Vec<Entry>,
        token_counts: &[u64],
        required: &[u32],
        mut groups: Groups,
        sets: Option<&VariantSets>,
        checkpoint: &mut Checkpoint,
    ) -> Result<Units, Interrupted> {
        let len = entries.len();
        let mut unit_of = vec![NONE; len];
        for group in 0..groups.len() {
            for &fragment in groups.members(group) {
                unit_of[fragment as usize] = group as u32;
            }
        }
        let count = groups.len() + (len - groups.members.len());
        let mut tokens = std::mem::take(&mut groups.tokens);
        let mut values = std::mem::take(&mut groups.values);
        tokens.reserve_exact(count - tokens.len());
        values.reserve_exact(count - values.len());
        // With no group every entry leads its own unit: the entries are the leads, uncopied.
        let mut leads = match groups.is_empty() {
            true => Vec::new(),
            false => std::mem::take(&mut groups.leads),
        };
        leads.reserve_exact(count - leads.len());
        for ((unit, entry), &token_count) in unit_of.iter_mut().zip(&entries).zip(token_counts) {
            checkpoint.tick()?;
            if *unit == NONE {
                *unit = (tokens.len()) as u32;
                if !groups.is_empty() {
                    leads.push(*entry);
                }
                tokens.push(u128::from(token_count));
                values.push(value_of(relevance_of_key(entry.key)));
            }
        }
        if groups.is_empty() {
            leads = entries;
        }
        let mut is_required = vec![false; leads.len()];
        let mut required_units = Vec::new();
        for &fragment in required {
            let unit = unit_of[fragment as usize];
            if !std::mem::replace(&mut is_required[unit as usize], true) {
                required_units.push(unit);
            }
        }
        required_units.sort_unstable();
        let set_of = match sets {
            Some(sets) => leads
                .iter()
                .map(|lead| sets.set_of_fragment[lead.index as usize])
                .collect(),
            None => Vec::new(),
        };
        Ok(Units {
            fewest_tokens: tokens.iter().copied().min().unwrap_or(0),
            unit_of,
            leads,
            tokens,
            values,
            required: is_required,
            required_units,
            groups,
            set_of,
            sets: sets.map_or(0, |sets| sets.count),
        })
    }

    pub fn len(&self) -> usize {
        self.leads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.leads.is_empty()
    }

    /// How many fragments the units hold.
    pub fn fragments(&self) -> usize {
        self.unit_of.len()
    }

    pub fn lead(&self, unit: u32) -> u32 {
        self.leads[unit as usize].index
    }

    /// The ranking entry of the unit's lead (its index is the lead fragment).
    pub fn lead_entry(&self, unit: u32) -> &Entry {
        &self.leads[unit as usize]
    }

    pub fn tokens(&self, unit: u32) -> u128 {
        self.tokens[unit as usize]
    }

    pub fn value(&self, unit: u32) -> u64 {
        self.values[unit as usize]
    }

    pub fn is_required(&self, unit: u32) -> bool {
        self.required[unit as usize]
    }

    pub fn unit_of(&self, fragment: u32) -> u32 {
        self.unit_of[fragment as usize]
    }

    /// Whether any fragment has a `variant_of`.
    pub fn has_variants(&self) -> bool {
        !self.set_of.is_empty()
    }

    /// The unit's variant set, [`NO_SET`] for none.
    pub fn set_of(&self, unit: u32) -> u32 {
        self.set_of.get(unit as usize).copied().unwrap_or(NO_SET)
    }

    /// How many variant sets there are.
    pub fn sets(&self) -> usize {
        self.sets
    }

    /// The required units' tokens.
    pub fn required_tokens(&self) -> u128 {
        self.required_units
            .iter()
            .map(|&unit| self.tokens(unit))
            .sum()
    }

    /// Marks `units` (none of them required) required too: a turn's reused run, kept as
    /// required units are.
    pub fn pin(&mut self, units: &[u32]) {
        for &unit in units {
            self.required[unit as usize] = true;
        }
        self.required_units.extend_from_slice(units);
        self.required_units.sort_unstable();
    }

    /// Undoes `pin` for `pinned`.
    pub fn unpin(&mut self, pinned: &[u32]) {
        for &unit in pinned {
            self.required[unit as usize] = false;
        }
        let required = &self.required;
        self.required_units.retain(|&unit| required[unit as usize]);
    }

    /// Each variant set's units.
    pub fn set_units(&self) -> SetUnits {
        let with_sets = (0u32..)
            .zip(&self.set_of)
            .filter(|&(_, &set)| set != NO_SET)
            .map(|(unit, &set)| (set as usize, unit));
        SetUnits(Binned::new(with_sets, self.sets))
    }

    /// The fragments of `units`, unit after unit.
    pub fn fragments_of(&self, units: &[u32]) -> Vec<u32> {
        if self.groups.is_empty() {
            // `new` numbers the fragments outside groups in input order, after the groups.
            return units.to_vec();
        }
        units
            .iter()
            .flat_map(|&unit| self.members(unit))
            .copied()
            .collect()
    }

    /// The unit's fragments, in input order.
    pub fn members(&self, unit: u32) -> &[u32] {
        let unit = unit as usize;
        if unit < self.groups.len() {
            self.groups.members(unit)
        } else {
            std::slice::from_ref(&self.leads[unit].index)
        }
    }

    /// A ranking entry for `unit`: its lead's relevance and tie key, its own number as the
    /// index and its tokens.
    pub fn ranking_entry(&self, unit: u32) -> Entry {
        self.leads[unit as usize].renumbered(unit, self.tokens[unit as usize])
    }
}

/// Each variant set's units, in unit order ([`Units::set_units`]): bin `s` is set `s`.
pub struct SetUnits(Binned<u32>);

impl SetUnits {
    /// The units of `unit`'s variant set, itself included; none for a unit of no set.
    pub fn of(&self, units: &Units, unit: u32) -> &[u32] {
        match units.set_of(unit) {
            NO_SET => &[],
            set => self.0.bin(set as usize),
        }
    }
}

/// The ids that rank units: each unit's lead's, by unit number.
pub struct LeadIds<'a, I: ?Sized> {
    pub units: &'a Units,
    pub ids: &'a I,
}

impl<I: FragmentIds + ?Sized> FragmentIds for LeadIds<'_, I> {
    fn bytes(&self, unit: u32) -> &[u8] {
        self.ids.bytes(self.units.lead(unit))
    }
}

/// Why a fragment was kept or dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Required,
    Fits,
    TopOverBudget,
    NoRoom,
    AfterStop,
    BelowMinRelevance,
    ZeroBudget,
    Chosen,
    NotChosen,
    VariantKept,
    Reused,
}

named!(Reason {
    Required => "required",
    Fits => "fits",
    TopOverBudget => "top_over_budget",
    NoRoom => "no_room",
    AfterStop => "after_stop",
    BelowMinRelevance => "below_min_relevance",
    ZeroBudget => "zero_budget",
    Chosen => "chosen",
    NotChosen => "not_chosen",
    VariantKept => "variant_kept",
    Reused => "reused",
});

/// One unit's decision; every member of the unit shares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub kept: bool,
    pub reason: Reason,
    /// The unit's rank among all units, from 0.
    pub rank: u32,
    /// What was left of the budget when the walk reached the unit; `None` where no walk
    /// decided it.
    pub budget_left: Option<u128>,
}

/// The units as every budget's packing sees them: which are candidates, and what the
/// required ones take.
pub struct Candidates<'a> {
    pub units: &'a Units,
    pub policy: &'a Policy,
    pub strategy: Strategy,
    /// The most work `optimal` may do (see `Request::max_work`).
    pub max_work: Option<u64>,
    /// Whether each unit is walked: eligible, not required, and not in a variant set with a
    /// required unit.
    pub candidate: &'a [bool],
    /// Whether each unit is eligible but in a variant set with a required unit; empty when
    /// no fragment has a `variant_of`.
    pub settled: &'a [bool],
    pub required_tokens: u128,
    /// Candidates with no tokens, which fit even a spent budget.
    pub zero_token_candidates: usize,
}

impl Candidates<'_> {
    /// The budget left for the candidates, unless nothing is walked (a zero budget, or
    /// required units that do not fit).
    fn room(&self, budget: u128) -> Option<u128> {
        budget
            .checked_sub(self.required_tokens)
            .filter(|_| budget > 0)
    }

    /// The candidates, densest first, for `value_bound_along`; `None` with variant sets,
    /// whose bound is not a walk by density.
    pub fn by_density(
        &self,
        sort_piece: usize,
        checkpoint: &mut Checkpoint,
    ) -> Result<Option<Vec<Item>>, Interrupted> {
        if self.units.has_variants() {
            return Ok(None);
        }
        let mut items = self.items(checkpoint)?;
        sort_in_pieces(&mut items, density_order, sort_piece, false, checkpoint)?;
        Ok(Some(items))
    }

    /// `value_bound`, walking `by_density` to the first candidate that does not fit instead
    /// of selecting anew (selecting when there is none: variant sets). `by_density` is what
    /// `by_density` gave when every unit that is a candidate now was one (a turn makes it
    /// before pinning any of its run).
    pub fn value_bound_along(
        &self,
        by_density: Option<&[Item]>,
        budget: u128,
        checkpoint: &mut Checkpoint,
    ) -> Result<u128, Interrupted> {
        let Some(by_density) = by_density else {
            return self.value_bound(budget, checkpoint);
        };
        let Some(room) = self.room(budget) else {
            return Ok(self.required_value());
        };
        let (mut tokens, mut value) = (0u128, self.required_value());
        for item in by_density {
            if !self.candidate[item.unit as usize] {
                continue;
            }
            checkpoint.tick()?;
            if tokens + item.tokens > room {
                return Ok(value + fraction_of(item.value, room - tokens, item.tokens));
            }
            tokens += item.tokens;
            value += u128::from(item.value);
        }
        Ok(value)
    }

    fn items(&self, checkpoint: &mut Checkpoint) -> Result<Vec<Item>, Interrupted> {
        let units = self.units;
        let mut items = Vec::with_capacity(units.len());
        for unit in 0..units.len() as u32 {
            checkpoint.tick()?;
            if self.candidate[unit as usize] {
                items.push(Item {
                    unit,
                    value: units.value(unit),
                    tokens: units.tokens(unit),
                });
            }
        }
        Ok(items)
    }

    /// The most value any selection within `budget` keeps: the required units' and the
    /// floor of the candidates' fractional optimum in the room they leave.
    pub fn value_bound(
        &self,
        budget: u128,
        checkpoint: &mut Checkpoint,
    ) -> Result<u128, Interrupted> {
        let candidates = match self.room(budget) {
            Some(room) => self.candidates_bound(room, checkpoint)?,
            None => 0,
        };
        Ok(self.required_value() + candidates)
    }

    fn required_value(&self) -> u128 {
        let units = self.units;
        units
            .required_units
            .iter()
            .map(|&unit| u128::from(units.value(unit)))
            .sum()
    }

    /// The floor of the fractional optimum of the candidates within `room`.
    fn candidates_bound(
        &self,
        room: u128,
        checkpoint: &mut Checkpoint,
    ) -> Result<u128, Interrupted> {
        let units = self.units;
        if units.has_variants() {
            let candidates = || {
                (0..units.len() as u32)
                    .filter(|&unit| self.candidate[unit as usize])
                    .map(|unit| Item {
                        unit,
                        value: units.value(unit),
                        tokens: units.tokens(unit),
                    })
            };
            let set_of = |unit| units.set_of(unit);
            return bound_of_items(candidates, &set_of, units.sets(), room, checkpoint);
        }
        let mut items = self.items(checkpoint)?;
        let split = split_at_capacity(&mut items, room, weigh, density_order, checkpoint)?;
        Ok(split.fractional_optimum(room))
    }

    /// `candidates_bound` within each of `rooms`; without variant sets, one selection
    /// narrowed from the largest room down.
    fn candidates_bounds(
        &self,
        rooms: &[u128],
        checkpoint: &mut Checkpoint,
    ) -> Result<Vec<u128>, Interrupted> {
        if self.units.has_variants() {
            return rooms
                .iter()
                .map(|&room| self.candidates_bound(room, checkpoint))
                .collect();
        }
        let mut items = self.items(checkpoint)?;
        fractional_optima(&mut items, rooms, weigh, density_order, checkpoint)
    }
}

/// Packs one budget along the ranking of units, fed piece by piece, best first.
pub struct UnitPacker {
    budget: u128,
    walk: BudgetWalk,
    /// Kept units (in the order the walk kept them; by rank for a value strategy), and
    /// their tokens and value.
    kept: Vec<u32>,
    kept_tokens: u128,
    kept_value: u128,
    /// The first candidate walked, and the fewest tokens of any candidate walked.
    top: Option<u32>,
    smallest: Option<u128>,
    required_overflow: bool,
    /// Walked units with their reason and what was left, when explaining.
    walked: Option<Vec<(u32, Reason, u128)>>,
    /// The room the candidates had, when a value strategy chose among them.
    chosen_in: Option<u128>,
    /// The floor of the candidates' fractional optimum, when a value strategy found it.
    candidates_bound: Option<u128>,
    /// Whether the strategy's set is exact: false when `optimal` ran out of work.
    exact: bool,
}

impl UnitPacker {
    pub fn new(budget: u128, candidates: &Candidates<'_>, explain: bool) -> Self {
        let required_overflow = candidates.required_tokens > budget;
        UnitPacker {
            budget,
            // No unit further down fits once less room is left than the fewest tokens of
            // any: the rest of a long ranking is not walked (a turn walks it once per length
            // of reuse it tries). Explaining walks on.
            walk: BudgetWalk::new(
                budget.saturating_sub(candidates.required_tokens),
                candidates.strategy == Strategy::Prefix,
                budget == 0 || required_overflow,
            )
            .ending_below(if explain {
                0
            } else {
                candidates.units.fewest_tokens
            }),
            kept: Vec::new(),
            kept_tokens: 0,
            kept_value: 0,
            top: None,
            smallest: None,
            required_overflow,
            walked: explain.then(Vec::new),
            chosen_in: None,
            candidates_bound: None,
            exact: true,
        }
    }

    /// Packs one budget by a value strategy: every candidate at once, not a walk. `key` is a
    /// unit's ranking key and `rank_order` compares two units' ranks in full.
    pub fn by_value(
        budget: u128,
        candidates: &Candidates<'_>,
        key: &impl Fn(u32) -> u128,
        rank_order: &(impl Fn(u32, u32) -> Ordering + Sync),
        tuning: &Tuning,
        checkpoint: &mut Checkpoint<'_>,
    ) -> Result<Self, Interrupted> {
        let mut packer = UnitPacker::new(budget, candidates, false);
        let Some(room) = candidates.room(budget) else {
            return Ok(packer);
        };
        packer.chosen_in = Some(room);
        let items = candidates.items(checkpoint)?;
        let smallest = items.iter().map(|item| item.tokens).min();
        let units = candidates.units;
        let set_of = |unit| units.set_of(unit);
        let piece = tuning.sort_piece;
        let mut work = Work::new(candidates.max_work, tuning);
        let chosen = match (candidates.strategy, units.has_variants()) {
            (Strategy::Density, false) => density(items, room, rank_order, piece, checkpoint)?,
            (_, false) => optimal(items, room, rank_order, tuning, &mut work, checkpoint)?,
            (Strategy::Density, true) => {
                let sets = (&set_of, units.sets());
                variant_density(items, sets, room, rank_order, piece, checkpoint)?
            }
            (_, true) => {
                let sets = (&set_of, units.sets());
                let work = &mut work;
                variant_optimal(items, sets, room, rank_order, tuning, work, checkpoint)?
            }
        };
        packer.exact = work.finished();
        packer.candidates_bound = Some(chosen.bound);
        let mut sorting = Sorting {
            piece: tuning.sort_piece,
            parallel_from: tuning.parallel_from,
            checkpoint,
        };
        packer.kept = sorted_by_rank(&chosen.units, key, rank_order, &mut sorting)?;
        packer.kept_tokens = chosen.tokens;
        packer.kept_value = chosen.value;
        // The overflow rules apply when no candidate fits, not when the ones that fit are
        // worth nothing (and so are not chosen).
        if smallest.is_some_and(|least| least > room) {
            packer.smallest = smallest;
            packer.top = (0..candidates.units.len() as u32)
                .filter(|&unit| candidates.candidate[unit as usize])
                .min_by(|&a, &b| rank_order(a, b));
        }
        Ok(packer)
    }

    /// Walks the next part of the ranking; returns whether anything further down could
    /// still change the outcome.
    pub fn feed(&mut self, ranked: &[Entry], candidates: &Candidates<'_>) -> bool {
        let units = candidates.units;
        for entry in ranked {
            if self.walk.is_done() {
                break;
            }
            // Entries of units carry the unit's number and, mostly, its tokens.
            let unit = entry.index;
            if !candidates.candidate[unit as usize] {
                continue;
            }
            let tokens = entry.unit_tokens(&units.tokens);
            self.top.get_or_insert(unit);
            self.smallest = Some(self.smallest.map_or(tokens, |least| least.min(tokens)));
            let left = self.walk.remaining();
            // A unit passed over for its variant set does not stop prefix.
            let step = self.walk.step(tokens, units.set_of(unit), units.sets());
            if let Some(explained) = &mut self.walked {
                let reason = match step {
                    Step::Kept => Reason::Fits,
                    Step::PassedOver => Reason::VariantKept,
                    Step::NoRoom => Reason::NoRoom,
                };
                explained.push((unit, reason, left));
            }
            if step == Step::Kept {
                self.kept.push(unit);
                self.kept_tokens += tokens;
                self.kept_value += u128::from(units.value(unit));
            }
            // Explaining walks on: every unit gets its reason and what was left.
            if self.walked.is_none() {
                self.walk.end_if_spent(candidates.zero_token_candidates);
            }
        }
        !self.walk.is_done()
    }

    /// Each packer's kept units (`finish`), the first refusal the overflow policy asks for
    /// standing for all. `bounded`: whether the bound on any selection is wanted (a turn's
    /// fills, told apart by their value, skip it); of several packers, the bounds a value
    /// strategy did not find are found together.
    pub fn finish_all(
        mut packers: Vec<UnitPacker>,
        candidates: &Candidates<'_>,
        bounded: bool,
        checkpoint: &mut Checkpoint,
    ) -> Result<Vec<KeptUnits>, Refusal> {
        if bounded {
            let unbounded = |packer: &UnitPacker| {
                packer
                    .candidates_bound
                    .is_none()
                    .then(|| candidates.room(packer.budget))
                    .flatten()
            };
            if let [packer] = &mut packers[..] {
                // One packer (most calls): its bound alone, with nothing to share.
                if let Some(room) = unbounded(packer) {
                    packer.candidates_bound = Some(candidates.candidates_bound(room, checkpoint)?);
                }
            } else {
                let rooms: Vec<(usize, u128)> = (0..packers.len())
                    .filter_map(|at| Some((at, unbounded(&packers[at])?)))
                    .collect();
                let only_rooms: Vec<u128> = rooms.iter().map(|&(_, room)| room).collect();
                let bounds = candidates.candidates_bounds(&only_rooms, checkpoint)?;
                for ((at, _), bound) in rooms.into_iter().zip(bounds) {
                    packers[at].candidates_bound = Some(bound);
                }
            }
        }
        packers
            .into_iter()
            .map(|packer| packer.finish(candidates))
            .collect()
    }

    /// The kept units (required ones first, then the walk's), or the refusal the overflow
    /// policy asks for.
    fn finish(mut self, candidates: &Candidates<'_>) -> Result<KeptUnits, Refusal> {
        let on_overflow = candidates.policy.on_overflow;
        if self.required_overflow && on_overflow != OnOverflow::KeepTop {
            return Err(Refusal::BudgetExceeded(BudgetExceeded {
                budget: self.budget,
                needed: candidates.required_tokens,
                required: true,
            }));
        }
        let mut kept: Vec<u32> = candidates.units.required_units.clone();
        let mut top_over_budget = None;
        // A zero budget walks nothing, so it has no top unit.
        if kept.is_empty() && self.kept.is_empty() {
            if let Some(top) = self.top {
                match on_overflow {
                    OnOverflow::KeepTop => {
                        self.kept.push(top);
                        self.kept_tokens += candidates.units.tokens(top);
                        self.kept_value += u128::from(candidates.units.value(top));
                        top_over_budget = Some(top);
                    }
                    OnOverflow::Strict => {}
                    OnOverflow::Raise => {
                        let needed = match candidates.strategy {
                            Strategy::Prefix => Some(candidates.units.tokens[top as usize]),
                            _ => self.smallest,
                        };
                        return Err(Refusal::BudgetExceeded(BudgetExceeded {
                            budget: self.budget,
                            needed: needed.unwrap_or(0),
                            required: false,
                        }));
                    }
                }
            }
        }
        let required_count = kept.len();
        kept.extend_from_slice(&self.kept);
        let required_value = candidates.required_value();
        let compressed_tokens = candidates.required_tokens + self.kept_tokens;
        let value_kept = required_value + self.kept_value;
        // Not wanted, or no room for any candidate: 0.
        let candidates_bound = self.candidates_bound.unwrap_or(0);
        Ok(KeptUnits {
            budget: self.budget,
            kept,
            required_count,
            compressed_tokens,
            value_kept,
            value_bound: required_value + candidates_bound,
            top_over_budget,
            walked: self.walked.unwrap_or_default(),
            required_overflow: self.required_overflow,
            chosen_in: self.chosen_in,
            exact: self.exact,
        })
    }
}

/// `units` by rank: sorted on their keys (relevance and tie key), then runs of equal keys
/// (rare) on the whole order.
fn sorted_by_rank(
    units: &[u32],
    key: &impl Fn(u32) -> u128,
    rank_order: &impl Fn(u32, u32) -> Ordering,
    sorting: &mut Sorting,
) -> Result<Vec<u32>, Interrupted> {
    let mut keyed: Vec<(u128, u32)> = units.iter().map(|&unit| (key(unit), unit)).collect();
    sorting.sort(&mut keyed, |a, b| a.0.cmp(&b.0))?;
    for run in keyed.chunk_by_mut(|a, b| a.0 == b.0) {
        if let [_, _, ..] = run {
            run.sort_unstable_by(|a, b| rank_order(a.1, b.1));
        }
    }
    Ok(keyed.into_iter().map(|(_, unit)| unit).collect())
}

/// One budget's kept units and, when explaining, how the walk went.
#[derive(Clone)]
pub struct KeptUnits {
    budget: u128,
    /// The required units first (`required_count` of them), then the walk's, in rank order.
    kept: Vec<u32>,
    required_count: usize,
    compressed_tokens: u128,
    value_kept: u128,
    value_bound: u128,
    top_over_budget: Option<u32>,
    walked: Vec<(u32, Reason, u128)>,
    required_overflow: bool,
    chosen_in: Option<u128>,
    exact: bool,
}

impl KeptUnits {
    pub fn value_kept(&self) -> u128 {
        self.value_kept
    }

    pub fn value_bound(&self) -> u128 {
        self.value_bound
    }

    pub fn compressed_tokens(&self) -> u128 {
        self.compressed_tokens
    }

    /// The kept units: the required ones first, then the others.
    pub fn units(&self) -> &[u32] {
        &self.kept
    }

    /// Whether the strategy's set is exact (`optimal` did not run out of work).
    pub fn exact(&self) -> bool {
        self.exact
    }

    /// Whether no unit is kept, required or not.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// The kept fragments: those of the kept units `first` (a turn's reused run) in its
    /// order, then the others in the policy's order among themselves. `key` is a unit's
    /// ranking key (its lead's relevance and tie key) and `rank_order` compares two units'
    /// ranks in full.
    pub fn selection(
        &self,
        units: &Units,
        order: Order,
        first: &[u32],
        key: impl Fn(u32) -> u128,
        rank_order: impl Fn(u32, u32) -> Ordering,
        sorting: &mut Sorting,
    ) -> Result<Selection, Interrupted> {
        let not_first = |mut rest: Vec<u32>| {
            if !first.is_empty() {
                let mut is_first = vec![false; units.len()];
                for &unit in first {
                    is_first[unit as usize] = true;
                }
                rest.retain(|&unit| !is_first[unit as usize]);
            }
            rest
        };
        let rest = if order == Order::Input {
            let mut rest = if first.is_empty() {
                units.fragments_of(&self.kept)
            } else {
                units.fragments_of(&not_first(self.kept.clone()))
            };
            sorting.sort(&mut rest, u32::cmp)?;
            rest
        } else {
            let mut rest = not_first(self.in_rank_order(key, rank_order, sorting)?);
            if order == Order::Edges {
                let front = rest.iter().step_by(2);
                let back = rest.iter().skip(1).step_by(2).rev();
                rest = front.chain(back).copied().collect();
            }
            units.fragments_of(&rest)
        };
        let kept = if first.is_empty() {
            rest
        } else {
            let mut kept = units.fragments_of(first);
            kept.extend(rest);
            kept
        };
        Ok(Selection {
            kept,
            compressed_tokens: self.compressed_tokens,
            value_kept: self.value_kept,
            value_bound: self.value_bound,
            reused_tokens: 0,
            exact: self.exact,
        })
    }

    /// The kept units by rank: the walk kept its units in rank order, so only the required
    /// ones are sorted (on their keys, ties on the whole order), then merged in.
    fn in_rank_order(
        &self,
        key: impl Fn(u32) -> u128,
        rank_order: impl Fn(u32, u32) -> Ordering,
        sorting: &mut Sorting,
    ) -> Result<Vec<u32>, Interrupted> {
        let (required, walked) = self.kept.split_at(self.required_count);
        let pinned = sorted_by_rank(required, &key, &rank_order, sorting)?;
        let mut merged = Vec::with_capacity(self.kept.len());
        let (mut p, mut w) = (pinned.iter().copied().peekable(), walked.iter().peekable());
        loop {
            let next = match (p.peek(), w.peek()) {
                (Some(&a), Some(&&b)) if rank_order(a, b).is_lt() => p.next(),
                (_, Some(_)) => w.next().copied(),
                (Some(_), None) => p.next(),
                (None, None) => break,
            };
            merged.extend(next);
        }
        Ok(merged)
    }

    /// Every unit's decision, given each unit's rank.
    pub fn decisions(&self, candidates: &Candidates<'_>, ranks: &[u32]) -> Vec<Decision> {
        let units = candidates.units;
        let mut decisions: Vec<Decision> = (0..units.len())
            .map(|unit| {
                let (kept, reason) = if units.required[unit] {
                    (true, Reason::Required)
                } else if candidates.settled.get(unit) == Some(&true) {
                    (false, Reason::VariantKept)
                } else if !candidates.candidate[unit] {
                    (false, Reason::BelowMinRelevance)
                } else if self.budget == 0 {
                    (false, Reason::ZeroBudget)
                } else if self.required_overflow {
                    (false, Reason::NoRoom)
                } else {
                    (false, Reason::AfterStop)
                };
                Decision {
                    kept,
                    reason,
                    rank: ranks[unit],
                    budget_left: None,
                }
            })
            .collect();
        for &(unit, reason, left) in &self.walked {
            let decision = &mut decisions[unit as usize];
            decision.kept = reason == Reason::Fits;
            decision.reason = reason;
            decision.budget_left = Some(left);
        }
        if let Some(room) = self.chosen_in {
            for (unit, decision) in decisions.iter_mut().enumerate() {
                if candidates.candidate[unit] {
                    let fits = units.tokens[unit] <= room;
                    decision.reason = if fits {
                        Reason::NotChosen
                    } else {
                        Reason::NoRoom
                    };
                }
            }
            let mut kept_sets = vec![false; units.sets()];
            for &unit in &self.kept[self.required_count..] {
                decisions[unit as usize].kept = true;
                decisions[unit as usize].reason = Reason::Chosen;
                let set = units.set_of(unit);
                if set != NO_SET {
                    kept_sets[set as usize] = true;
                }
            }
            // A unit kept alone over budget was not chosen: its set's others are told as
            // the walks in rank order tell them.
            if units.has_variants() && self.top_over_budget.is_none() {
                for (unit, decision) in decisions.iter_mut().enumerate() {
                    let set = units.set_of(unit as u32);
                    if candidates.candidate[unit]
                        && !decision.kept
                        && set != NO_SET
                        && kept_sets[set as usize]
                    {
                        decision.reason = Reason::VariantKept;
                    }
                }
            }
        }
        if let Some(top) = self.top_over_budget {
            let decision = &mut decisions[top as usize];
            decision.kept = true;
            decision.reason = Reason::TopOverBudget;
            // As a walk would have reached it: with all the room the required units left.
            if self.chosen_in.is_some() {
                decision.budget_left = self.chosen_in;
            }
        }
        decisions
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::select::entry::Entry;
    use crate::core::select::names::marks::NameMarks;
    use crate::core::Uninterrupted;

    #[test]
    fn a_bound_along_the_density_order_is_the_bound_selected_anew() {
        // Units pinned and unpinned between calls, as a turn does, over ties of density,
        // zero-token units, budgets from nothing to all, and required units that overflow.
        let mut rng = crate::core::test_support::Lcg(11);
        let mut checkpoint = Checkpoint::new(&Uninterrupted, std::time::Duration::ZERO);
        for _ in 0..300 {
            let len = 1 + rng.below(40) as usize;
            let tokens: Vec<u64> = (0..len).map(|_| rng.below(9)).collect();
            let entries: Vec<Entry> = (0..len)
                .map(|i| Entry::new(rng.below(5) as f64 / 4.0, i as u64, i as u32, tokens[i]))
                .collect();
            let required: Vec<u32> = (0..len as u32).filter(|_| rng.below(8) == 0).collect();
            let units = Units::new(
                entries,
                &tokens,
                &required,
                Groups::default(),
                None,
                &mut checkpoint,
            );
            let units = units.unwrap();
            let mut candidate: Vec<bool> = (0..len as u32)
                .map(|unit| !units.is_required(unit))
                .collect();
            let policy = Policy::default();
            fn candidates<'a>(
                (units, policy): (&'a Units, &'a Policy),
                candidate: &'a [bool],
                required_tokens: u128,
            ) -> Candidates<'a> {
                Candidates {
                    units,
                    policy,
                    strategy: Strategy::Optimal,
                    max_work: None,
                    candidate,
                    settled: &[],
                    required_tokens,
                    zero_token_candidates: 0,
                }
            }
            let required_tokens: u128 = required.iter().map(|&unit| units.tokens(unit)).sum();
            let all = candidates((&units, &policy), &candidate, required_tokens);
            let by_density = all.by_density(3, &mut checkpoint).unwrap().unwrap();
            for _ in 0..5 {
                for flag in candidate.iter_mut() {
                    *flag &= rng.below(4) != 0;
                }
                let total: u64 = tokens.iter().sum();
                let budget = u128::from(rng.below(total + 2));
                let more = u128::from(rng.below(3));
                let now = candidates((&units, &policy), &candidate, required_tokens + more);
                let along = now.value_bound_along(Some(&by_density), budget, &mut checkpoint);
                let anew = now.value_bound(budget, &mut checkpoint).unwrap();
                assert_eq!(along.unwrap(), anew);
                // With no order to walk (variant sets), the selection itself.
                let selected = now.value_bound_along(None, budget, &mut checkpoint);
                assert_eq!(selected.unwrap(), anew);
            }
        }
    }

    #[test]
    fn units_group_fragments_in_input_order() {
        let entries: Vec<Entry> = (0..4)
            .map(|i| Entry::new(0.5, i, i as u32, i + 1))
            .collect();
        let ids: Vec<&str> = vec!["a", "b", "c", "d"];
        let mut marks = NameMarks::default();
        marks.push(1, b"g", 0);
        marks.push(3, b"g", 0);
        let groups = Groups::of(&marks, &entries, &[1, 2, 3, 4], &ids, 1);
        let mut checkpoint = Checkpoint::new(&Uninterrupted, std::time::Duration::ZERO);
        let units = Units::new(
            entries.clone(),
            &[1, 2, 3, 4],
            &[3],
            groups,
            None,
            &mut checkpoint,
        )
        .unwrap();
        assert_eq!(units.len(), 3);
        assert!(!units.is_empty());
        let group = units.unit_of(3);
        assert_eq!(units.unit_of(1), group);
        assert_eq!(units.members(group), [1, 3]);
        assert_eq!(units.tokens(group), 6);
        assert_eq!(units.members(units.unit_of(2)), [2]);
        assert!(units.is_required(group) && !units.is_required(units.unit_of(0)));
        assert_eq!(units.lead(group), 1);
        assert_eq!(units.ranking_entry(group).index, group);
        assert_eq!(units.ranking_entry(group).sort_key(), entries[1].sort_key());
        let none = Units::new(
            Vec::new(),
            &[],
            &[],
            Groups::default(),
            None,
            &mut checkpoint,
        );
        let none = none.unwrap();
        assert!(none.is_empty());
    }
}
