//! The whole compression: duplicate ids, ranking and packing every budget, from checked
//! columns to selections.

use crate::core::beside::beside;
use crate::core::detach::Detach;
use crate::core::errors::{Duplicate, Refusal};
use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::columns::Columns;
use crate::core::select::duplicates::check::DuplicateCheck;
use crate::core::select::entry::{relevance_of_key, Entry};
use crate::core::select::exact_sum::exact_sum;
use crate::core::select::ids::{tie_key, FragmentIds, IdArena, SharedPrefix};
use crate::core::select::key_ranges::KeyCounts;
use crate::core::select::knapsack::multiple_choice::relaxation::{steps_bound, Step};
use crate::core::select::names::groups::Groups;
use crate::core::select::names::marks::NameMarks;
use crate::core::select::names::sets::VariantSets;
use crate::core::select::packing::{Packer, Selection};
use crate::core::select::policy::units::{Decision, Units};
use crate::core::select::ranking::Ranking;
use crate::core::select::request::Request;
use crate::core::select::turns::pack_turn;
use crate::core::select::unit_ranking::UnitRanking;
use crate::core::select::value::{density_order, fractional_optima, split_at_capacity};
use crate::core::select::variants::plain::PlainVariants;
use crate::core::select::variants::rules::{group_mismatch, required_twice, Names};

#[derive(Debug, Clone, PartialEq)]
pub struct Compression {
    pub original_tokens: u128,
    /// One per budget, in the budgets' order.
    pub selections: Vec<Selection>,
    /// One per selection: the relevance it kept as the caller would add it up, its kept
    /// fragments' relevances summed exactly and rounded once ([`exact_sum`]). The choice is
    /// made in units (`value_kept`); this is how that choice reads.
    pub relevance_kept: Vec<f64>,
    /// When explaining: one per fragment, in input order, for the first budget.
    pub decisions: Vec<Decision>,
}

/// Rejects duplicate ids, then ranks as far as the budgets need and packs each of them.
/// Large inputs, and `optimal` past a few fragments, run inside `detach`, whole. A
/// duplicate wins over a budget exceeded.
pub fn compress(
    columns: Columns,
    request: Request<'_>,
    detach: &impl Detach,
) -> Result<Compression, Refusal> {
    if request.detaches(columns.len()) {
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
                let (selections, relevance_kept) = pack_plain(plain, ids, request, checkpoint)?;
                Ok((selections, Vec::new(), relevance_kept))
            } else {
                // Units are made of the entries: their relevances are read off first, in
                // input order, for the relevance each selection keeps.
                let relevances: Vec<f64> = entries
                    .iter()
                    .map(|entry| relevance_of_key(entry.key))
                    .collect();
                let policy = PolicyInput {
                    entries,
                    token_counts: &token_counts,
                    required: &required,
                    groups: &groups,
                    variants: &variants,
                };
                let (selections, decisions) = pack_with_policy(policy, ids, request, checkpoint)?;
                let relevance_kept = selections
                    .iter()
                    .map(|selection| relevance_kept(&selection.kept, &relevances))
                    .collect();
                Ok((selections, decisions, relevance_kept))
            }
        },
    );
    answer(duplicate, packed, original_tokens)
}

/// The tie keys made before the prefix all ids share was known to be shorter, made again.
/// `entries` are in input order: entry `i` is fragment `i`.
pub(super) fn make_stale_tie_keys(
    entries: &mut [Entry],
    ids: &IdArena,
    shared_prefix: &SharedPrefix,
) {
    for index in shared_prefix.stale() {
        entries[index].tie = tie_key(ids.bytes(index as u32), shared_prefix.len());
    }
}

/// Whether the input takes the plain path: no policy, no required fragment or group, no
/// explaining, no reuse, and a strategy that walks the ranking. Variant sets alone are
/// walked on the plain path too: one check per fragment.
fn takes_plain_path(columns: &Columns, request: &Request<'_>) -> bool {
    request.policy.is_plain()
        && request.reuse.is_none()
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
) -> Result<(Vec<Selection>, Vec<f64>), Interrupted> {
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
pub(super) struct PolicyInput<'a> {
    pub entries: Vec<Entry>,
    pub token_counts: &'a [u64],
    pub required: &'a [u32],
    pub groups: &'a NameMarks,
    pub variants: &'a NameMarks,
}

/// The policy path: fragments made into units, the units ranked, and every budget packed
/// with the policy.
fn pack_with_policy(
    input: PolicyInput<'_>,
    ids: &IdArena,
    request: Request<'_>,
    checkpoint: &mut Checkpoint,
) -> Result<(Vec<Selection>, Vec<Decision>), Refusal> {
    let units = policy_units(input, ids, request, checkpoint)?;
    if let Some(reuse) = request.reuse {
        return pack_turn(units, reuse, ids, request, checkpoint);
    }
    let mut unit_ranking = UnitRanking::new(units, request, ids, checkpoint)?;
    unit_ranking.pack(ids, request, checkpoint)
}

/// The fragments made into units: groups whole, variant sets checked against their rules.
pub(super) fn policy_units(
    input: PolicyInput<'_>,
    ids: &IdArena,
    request: Request<'_>,
    checkpoint: &mut Checkpoint,
) -> Result<Units, Refusal> {
    let PolicyInput {
        entries,
        token_counts,
        required,
        groups,
        variants,
    } = input;
    let len = entries.len();
    let per_bucket = request.tuning.members_per_bucket;
    let grouped = Groups::of(groups, &entries, token_counts, ids, per_bucket);
    checkpoint.advance(len)?;
    let names = Names {
        ids,
        groups,
        variants,
    };
    let sets = (!variants.is_empty()).then(|| VariantSets::new(variants, len));
    if let Some(sets) = &sets {
        if let Some(rule) = group_mismatch(&grouped, &sets.set_of_fragment, &names) {
            return Err(Refusal::VariantRule(rule));
        }
        checkpoint.advance(len)?;
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
    Ok(units)
}

/// Each budget's selection, the decisions when explaining, and each selection's kept
/// relevance (see [`Compression::relevance_kept`]).
type Packed = (Vec<Selection>, Vec<Decision>, Vec<f64>);

/// The answer from what both threads found. An interruption is answered whatever else was
/// found: the caller asked to stop. A duplicate wins over a broken variant rule and a budget
/// exceeded.
fn answer(
    duplicate: Result<Option<Duplicate>, Interrupted>,
    packed: Result<Packed, Refusal>,
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
    let (selections, decisions, relevance_kept) = packed?;
    Ok(Compression {
        original_tokens,
        selections,
        relevance_kept,
        decisions,
    })
}

/// The relevance of the `kept` fragments (indices into `relevances`), summed exactly.
pub(super) fn relevance_kept(kept: &[u32], relevances: &[f64]) -> f64 {
    exact_sum(kept.iter().map(|&index| relevances[index as usize]))
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
) -> Result<(Vec<Selection>, Vec<f64>), Interrupted> {
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
    let (mut selections, relevance_kept): (Vec<Selection>, Vec<f64>) = packers
        .into_iter()
        .map(Packer::finish_with_relevance)
        .unzip();
    // The ranking is done with: its entries are split in place, with no copy.
    let entries = ranking.entries_mut();
    let weigh = |entry: &Entry| entry.item(token_counts);
    if steps.is_none() && request.budgets.len() > 1 {
        bound_several(&mut selections, entries, token_counts, request, checkpoint)?;
        return Ok((selections, relevance_kept));
    }
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
    Ok((selections, relevance_kept))
}

/// The value bound of each selection of several budgets (`pack`'s), each split from what the
/// next larger budget took. Apart, so that the one-budget call stays as small as it was.
#[inline(never)]
fn bound_several(
    selections: &mut [Selection],
    entries: &mut [Entry],
    token_counts: &[u64],
    request: Request<'_>,
    checkpoint: &mut Checkpoint,
) -> Result<(), Interrupted> {
    let asked: Vec<usize> = (0..request.budgets.len())
        .filter(|&at| request.budgets[at] > 0)
        .collect();
    let budgets: Vec<u128> = asked.iter().map(|&at| request.budgets[at]).collect();
    let weigh = |entry: &Entry| entry.item(token_counts);
    let bounds = fractional_optima(entries, &budgets, weigh, density_order, checkpoint)?;
    for (at, bound) in asked.into_iter().zip(bounds) {
        selections[at].value_bound = bound;
    }
    Ok(())
}

#[cfg(test)]
#[path = "compress_tests.rs"]
mod tests;
