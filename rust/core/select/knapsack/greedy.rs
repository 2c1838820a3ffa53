//! The greedy walk by value per token (`density`): every unit that fits what is left,
//! densest first; then the single unit of most value that fits, instead, when it is worth more
//! (the extended greedy algorithm, at least half the optimum). Its first misfit is the break
//! item the exact solver grows its core from.

use std::cmp::Ordering;

use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::knapsack::chosen::Chosen;
use crate::core::select::value::{density_order, split_at_capacity, weigh, Item};
use crate::core::sort_in_pieces::sort_in_pieces;

/// The walk by density: every unit that fits what is left, densest first; then the single
/// unit of most value that fits, instead, when it is worth more.
pub fn density(
    mut items: Vec<Item>,
    capacity: u128,
    rank_order: &(impl Fn(u32, u32) -> Ordering + Sync),
    sort_piece: usize,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Chosen, Interrupted> {
    let best = best_single(&items, capacity, rank_order);
    checkpoint.advance(items.len())?;
    let walk = walk_by_density(&mut items, capacity, rank_order, sort_piece, checkpoint)?;
    Ok(match best {
        Some(best) if u128::from(best.value) > walk.chosen.value => {
            let mut alone = Chosen {
                bound: walk.chosen.bound,
                ..Chosen::default()
            };
            alone.add(&best);
            alone
        }
        _ => walk.chosen,
    })
}

/// The unit of most value that fits `capacity` alone (ties: the better rank).
pub(crate) fn best_single(
    items: &[Item],
    capacity: u128,
    rank_order: &impl Fn(u32, u32) -> Ordering,
) -> Option<Item> {
    items
        .iter()
        .filter(|item| item.tokens <= capacity)
        .min_by(|a, b| {
            b.value
                .cmp(&a.value)
                .then_with(|| rank_order(a.unit, b.unit))
        })
        .copied()
}

/// The walk by density: what it keeps, and the first item that did not fit (the break item
/// of the fractional optimum), if any.
pub(super) struct Walk {
    pub(super) chosen: Chosen,
    pub(super) at_break: Option<Item>,
}

/// Keeps, densest first, each item that fits what is left.
pub(super) fn walk_by_density(
    items: &mut [Item],
    capacity: u128,
    rank_order: &(impl Fn(u32, u32) -> Ordering + Sync),
    sort_piece: usize,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Walk, Interrupted> {
    let split = split_at_capacity(items, capacity, weigh, by_density(rank_order), checkpoint)?;
    let mut chosen = Chosen {
        bound: split.fractional_optimum(capacity),
        ..Chosen::default()
    };
    for item in &items[..split.taken] {
        chosen.add(item);
    }
    let mut left = capacity - split.tokens;
    // Past the first misfit only what fits the rest can be kept, and the rest only shrinks.
    let mut smaller: Vec<Item> = items
        .get(split.taken + 1..)
        .unwrap_or_default()
        .iter()
        .filter(|item| item.tokens <= left)
        .copied()
        .collect();
    sort_in_pieces(
        &mut smaller,
        by_density(rank_order),
        sort_piece,
        false,
        checkpoint,
    )?;
    for item in &smaller {
        if item.tokens <= left {
            left -= item.tokens;
            chosen.add(item);
        }
    }
    Ok(Walk {
        chosen,
        at_break: items.get(split.taken).copied(),
    })
}

/// The first of `items` the walk by density cannot take whole (the break item of their
/// fractional optimum), if any; `items` are left split around it.
pub(super) fn break_item(
    items: &mut [Item],
    capacity: u128,
    rank_order: &impl Fn(u32, u32) -> Ordering,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Option<Item>, Interrupted> {
    let split = split_at_capacity(items, capacity, weigh, by_density(rank_order), checkpoint)?;
    Ok(items.get(split.taken).copied())
}

/// Densest first, ties by rank.
fn by_density(
    rank_order: &impl Fn(u32, u32) -> Ordering,
) -> impl Fn(&Item, &Item) -> Ordering + Copy + '_ {
    move |a, b| density_order(a, b).then_with(|| rank_order(a.unit, b.unit))
}
