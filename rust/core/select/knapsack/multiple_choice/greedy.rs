//! `density` with variant sets: the walk by value per token passing over a unit whose set
//! already has one kept; then the single unit of most value, instead, when it is worth more.

use std::cmp::Ordering;

use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::knapsack::chosen::Chosen;
use crate::core::select::knapsack::greedy::best_single;
use crate::core::select::knapsack::multiple_choice::classes::Classes;
use crate::core::select::knapsack::multiple_choice::relaxation::multiple_choice_bound;
use crate::core::select::names::sets::NO_SET;
use crate::core::select::value::{density_order, Item};
use crate::core::sort_in_pieces::sort_in_pieces;

/// `set_of` gives a unit's variant set ([`NO_SET`] for none) among `sets`.
pub fn density(
    mut items: Vec<Item>,
    (set_of, sets): (&impl Fn(u32) -> u32, usize),
    capacity: u128,
    rank_order: &(impl Fn(u32, u32) -> Ordering + Sync),
    sort_piece: usize,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Chosen, Interrupted> {
    let best = best_single(&items, capacity, rank_order);
    let mut classes = Classes::new(&items, set_of, sets);
    let bound = multiple_choice_bound(&mut classes, capacity, checkpoint)?;
    drop(classes);
    // Passing over a unit frees room for later ones, so the whole order is walked.
    let order = |a: &Item, b: &Item| density_order(a, b).then_with(|| rank_order(a.unit, b.unit));
    sort_in_pieces(&mut items, order, sort_piece, false, checkpoint)?;
    let mut walk = Chosen {
        bound,
        ..Chosen::default()
    };
    let mut taken = vec![false; sets];
    let mut left = capacity;
    for item in &items {
        checkpoint.tick()?;
        if item.tokens > left {
            if left == 0 {
                break; // zero-token items come first: none of the rest fits
            }
            continue;
        }
        let set = set_of(item.unit);
        if set != NO_SET {
            if taken[set as usize] {
                continue;
            }
            taken[set as usize] = true;
        }
        left -= item.tokens;
        walk.add(item);
    }
    Ok(match best {
        Some(best) if u128::from(best.value) > walk.value => {
            let mut alone = Chosen {
                bound,
                ..Chosen::default()
            };
            alone.add(&best);
            alone
        }
        _ => walk,
    })
}
