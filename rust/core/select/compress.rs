//! The whole compression: duplicate ids, ranking and packing every budget, from checked
//! columns to selections.

use crate::core::beside::beside;
use crate::core::detach::Detach;
use crate::core::errors::{Duplicate, Refusal};
use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::columns::Columns;
use crate::core::select::duplicates::check::DuplicateCheck;
use crate::core::select::entry::{relevance_of_key, Entry};
use crate::core::select::ids::{tie_key, FragmentIds, IdArena, SharedPrefix};
use crate::core::select::key_ranges::KeyCounts;
use crate::core::select::knapsack::multiple_choice::relaxation::{steps_bound, Step};
use crate::core::select::names::groups::Groups;
use crate::core::select::names::marks::NameMarks;
use crate::core::select::names::sets::{VariantSets, NO_SET};
use crate::core::select::packing::{Packer, Selection};
use crate::core::select::policy::units::{Candidates, Decision, LeadIds, UnitPacker, Units};
use crate::core::select::ranking::Ranking;
use crate::core::select::request::Request;
use crate::core::select::value::{density_order, split_at_capacity};
use crate::core::select::variants::plain::PlainVariants;
use crate::core::select::variants::rules::{group_mismatch, required_twice, Names};
use crate::core::sort_in_pieces::Sorting;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compression {
    pub original_tokens: u128,
    /// One per budget, in the budgets' order.
    pub selections: Vec<Selection>,
    /// When explaining: one per fragment, in input order, for the first budget.
    pub decisions: Vec<Decision>,
}

/// Rejects duplicate ids, then ranks as far as the budgets need and packs each of them.
/// Large inputs run inside `detach`, whole. A duplicate wins over a budget exceeded.
pub fn compress(
    columns: Columns,
    request: Request<'_>,
    detach: &impl Detach,
) -> Result<Compression, Refusal> {
    if columns.len() >= request.tuning.detach_from {
        detach.detach(|| run(columns, request))
    } else {
        run(columns, request)
    }
}

fn run(columns: Columns, request: Request<'_>) -> Result<Compression, Refusal> {
    let plain = takes_plain_path(&columns, &request);
    let Columns {
        mut entries,
        ids: arena,
        shared_prefix,
        token_counts,
        id_hashes,
        original_tokens,
        zero_token_fragments,
        required,
        groups,
        variants,
        key_counts,
    } = columns;
    let ids: &IdArena = &arena;
    let len = entries.len();
    make_stale_tie_keys(&mut entries, ids, &shared_prefix);
    let mut check = DuplicateCheck::new(len);
    let plain_variants =
        (plain && !variants.is_empty()).then(|| PlainVariants::new(&variants, len));
    let in_parallel = len >= request.tuning.parallel_from;
    let mut checkpoint = Checkpoint::new(request.interrupt, request.tuning.interrupt_every);
    let (duplicate, packed) = beside(
        in_parallel,
        &mut checkpoint,
        |stop| {
            // Whatever of the variant sets' work this thread gets to first, the other need
            // not do: before the duplicate check, and after it what is left.
            let work_ahead = || {
                if let Some(variants) = &plain_variants {
                    variants.work_ahead(stop);
                }
            };
            work_ahead();
            let duplicate = check.run(&id_hashes, ids, stop);
            work_ahead();
            duplicate
        },
        |checkpoint| {
            if plain {
                let plain = PlainInput {
                    entries,
                    key_counts,
                    token_counts: &token_counts,
                    zero_token_fragments,
                    original_tokens,
                    variants: plain_variants.as_ref(),
                };
                let selections = pack_plain(plain, ids, request, checkpoint)?;
                Ok((selections, Vec::new()))
            } else {
                let policy = PolicyInput {
                    entries,
                    token_counts: &token_counts,
                    required: &required,
                    groups,
                    variants: &variants,
                };
                pack_with_policy(policy, ids, request, checkpoint)
            }
        },
    );
    answer(duplicate, packed, original_tokens)
}

/// The tie keys made before the prefix all ids share was known to be shorter, made again.
/// `entries` are in input order: entry `i` is fragment `i`.
fn make_stale_tie_keys(entries: &mut [Entry], ids: &IdArena, shared_prefix: &SharedPrefix) {
    for index in shared_prefix.stale() {
        entries[index].tie = tie_key(ids.bytes(index as u32), shared_prefix.len());
    }
}

/// Whether the input takes the plain path: no policy, no required fragment or group, no
/// explaining, and a strategy that walks the ranking. Variant sets alone are walked on the
/// plain path too: one check per fragment.
fn takes_plain_path(columns: &Columns, request: &Request<'_>) -> bool {
    request.policy.is_plain()
        && columns.required.is_empty()
        && columns.groups.is_empty()
        && !request.explain
        && !request.strategy.by_value()
}

/// What the plain path takes of the columns.
struct PlainInput<'a, 'v> {
    entries: Vec<Entry>,
    key_counts: KeyCounts,
    token_counts: &'a [u64],
    zero_token_fragments: usize,
    original_tokens: u128,
    variants: Option<&'a PlainVariants<'v>>,
}

/// The plain path: fragments ranked as far as the budgets need and walked, variant sets
/// passed over once one of theirs is kept.
fn pack_plain(
    input: PlainInput<'_, '_>,
    ids: &IdArena,
    request: Request<'_>,
    checkpoint: &mut Checkpoint,
) -> Result<Vec<Selection>, Interrupted> {
    let PlainInput {
        entries,
        key_counts,
        token_counts,
        zero_token_fragments,
        original_tokens,
        variants,
    } = input;
    let len = entries.len();
    let loose = match variants {
        Some(variants) => Some(variants.split(&entries, token_counts, checkpoint)?),
        None => None,
    };
    let first = request
        .tuning
        .first_sort_size(request.budgets, original_tokens, len);
    let mut ranking = Ranking::counted(entries, key_counts, request.tuning);
    ranking.rank_top(first, ids, checkpoint)?;
    let variants = match (variants, loose) {
        (Some(variants), Some(loose)) => Some(variants.finish(loose, checkpoint)?),
        _ => None,
    };
    pack(
        &mut ranking,
        token_counts,
        zero_token_fragments,
        variants,
        ids,
        request,
        checkpoint,
    )
}

/// What the policy path takes of the columns.
struct PolicyInput<'a> {
    entries: Vec<Entry>,
    token_counts: &'a [u64],
    required: &'a [u32],
    groups: NameMarks,
    variants: &'a NameMarks,
}

/// The policy path: fragments made into units (groups whole, variant sets checked against
/// their rules), the units ranked, and every budget packed with the policy.
fn pack_with_policy(
    input: PolicyInput<'_>,
    ids: &IdArena,
    request: Request<'_>,
    checkpoint: &mut Checkpoint,
) -> Result<(Vec<Selection>, Vec<Decision>), Refusal> {
    let PolicyInput {
        entries,
        token_counts,
        required,
        groups,
        variants,
    } = input;
    let len = entries.len();
    let per_bucket = request.tuning.members_per_bucket;
    let grouped = Groups::of(&groups, &entries, token_counts, ids, per_bucket);
    checkpoint.check()?;
    let names = Names {
        ids,
        groups: &groups,
        variants,
    };
    let sets = (!variants.is_empty()).then(|| VariantSets::new(variants, len));
    if let Some(sets) = &sets {
        if let Some(rule) = group_mismatch(&grouped, &sets.set_of_fragment, &names) {
            return Err(Refusal::VariantRule(rule));
        }
        checkpoint.check()?;
    }
    let units = Units::new(
        entries,
        token_counts,
        required,
        grouped,
        sets.as_ref(),
        checkpoint,
    )?;
    if let Some(sets) = &sets {
        let unit_of = |fragment| units.unit_of(fragment);
        let set_of = &sets.set_of_fragment;
        let twice = required_twice(required, set_of, sets.count, unit_of, &names);
        if let Some(rule) = twice {
            return Err(Refusal::VariantRule(rule));
        }
    }
    drop((sets, groups));
    let mut unit_ranking = UnitRanking::new(units, request, ids, checkpoint)?;
    unit_ranking.pack(ids, request, checkpoint)
}

/// The answer from what both threads found. An interruption is answered whatever else was
/// found: the caller asked to stop. A duplicate wins over a broken variant rule and a budget
/// exceeded.
fn answer(
    duplicate: Result<Option<Duplicate>, Interrupted>,
    packed: Result<(Vec<Selection>, Vec<Decision>), Refusal>,
    original_tokens: u128,
) -> Result<Compression, Refusal> {
    let Ok(duplicate) = duplicate else {
        return Err(Refusal::Interrupted);
    };
    if let Err(Refusal::Interrupted) = packed {
        return Err(Refusal::Interrupted);
    }
    if let Some(duplicate) = duplicate {
        return Err(Refusal::Duplicate(duplicate));
    }
    let (selections, decisions) = packed?;
    Ok(Compression {
        original_tokens,
        selections,
        decisions,
    })
}

/// Units ranked by their leads, as far as the budgets need (all of them when explaining,
/// since every unit's rank is told). The ranking's entries are numbered by unit.
struct UnitRanking {
    units: Units,
    ranking: Ranking,
    candidate: Vec<bool>,
    /// Eligible units in a variant set with a required unit; empty without variants.
    settled: Vec<bool>,
    required_tokens: u128,
    zero_token_candidates: usize,
}

impl UnitRanking {
    fn new(
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

    /// Packs every budget; the first budget the overflow policy refuses is the answer.
    fn pack(
        &mut self,
        ids: &impl FragmentIds,
        request: Request<'_>,
        checkpoint: &mut Checkpoint,
    ) -> Result<(Vec<Selection>, Vec<Decision>), Refusal> {
        let candidates = Candidates {
            units: &self.units,
            policy: request.policy,
            strategy: request.strategy,
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
        let mut selections = Vec::with_capacity(packers.len());
        let mut decisions = Vec::new();
        for (at, packer) in packers.into_iter().enumerate() {
            let packed = packer.finish(&candidates, checkpoint)?;
            let mut sorting = Sorting {
                piece: request.tuning.sort_piece,
                parallel_from: request.tuning.parallel_from,
                checkpoint,
            };
            let order = request.policy.order;
            selections.push(packed.selection(units, order, key, rank_order, &mut sorting)?);
            if request.explain && at == 0 {
                let mut ranks = vec![0u32; units.len()];
                for (rank, entry) in self.ranking.ranked().iter().enumerate() {
                    ranks[entry.index as usize] = rank as u32;
                }
                let by_unit = packed.decisions(&candidates, &ranks);
                decisions = (0..units.fragments() as u32)
                    .map(|fragment| by_unit[units.unit_of(fragment) as usize])
                    .collect();
            }
        }
        Ok((selections, decisions))
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

/// Packs every budget along the ranked top, and ranks the rest only if some budget is not
/// done with the top. With variant `sets`, a fragment whose set has a kept one is passed over.
fn pack(
    ranking: &mut Ranking,
    token_counts: &[u64],
    zero_token_fragments: usize,
    variants: Option<(&VariantSets, Vec<Step>)>,
    ids: &impl FragmentIds,
    request: Request<'_>,
    checkpoint: &mut Checkpoint,
) -> Result<Vec<Selection>, Interrupted> {
    let (sets, mut steps) = variants.unzip();
    let set_of: &[u32] = sets.map_or(&[], |sets| &sets.set_of_fragment);
    let mut packers: Vec<Packer> = request
        .budgets
        .iter()
        .map(|&budget| Packer::new(budget, request.strategy, sets.map_or(0, |sets| sets.count)))
        .collect();
    ranking.feed_while_wanted(ids, checkpoint, |fresh| {
        packers.iter_mut().fold(false, |wanting, packer| {
            packer.feed(fresh, token_counts, zero_token_fragments, set_of) | wanting
        })
    })?;
    let mut selections: Vec<Selection> = packers.into_iter().map(Packer::finish).collect();
    // The ranking is done with: its entries are split in place, with no copy.
    let entries = ranking.entries_mut();
    let weigh = |entry: &Entry| entry.item(token_counts);
    for (selection, &budget) in selections.iter_mut().zip(request.budgets) {
        if budget == 0 {
            continue;
        }
        selection.value_bound = match &mut steps {
            Some(steps) => steps_bound(steps, budget, checkpoint)?,
            None => {
                let split = split_at_capacity(entries, budget, weigh, density_order, checkpoint)?;
                split.fractional_optimum(budget)
            }
        };
    }
    Ok(selections)
}

#[cfg(test)]
#[path = "compress_tests.rs"]
mod tests;
