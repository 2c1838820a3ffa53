//! A larger shared set with `max_value_loss`: units some children keep and others do not,
//! made every child's, while every child keeps at least (1 - loss) of its own call's value
//! within its budget and the priced cost falls.
//!
//! Candidates are tried by how many children keep them (most first: they cost the fewest
//! children any value), then by input position, in batches that double after a success and
//! halve after a failure (a single candidate that fails is dropped), at most [`MAX_TRIALS`]
//! batches: the growth costs a bounded multiple of the children's own calls. A trial stops
//! at the first child that fails, and that child is asked first next time.

use crate::core::errors::Refusal;
use crate::core::select::entry::relevance_of_key;
use crate::core::select::names::sets::NO_SET;
use crate::core::select::request::Request;
use crate::core::select::share::Share;

use super::{shared_anchors, Choice, Growth, House, Kid, Packing};
use crate::core::select::unit_ranking::one;

/// Trials of a larger shared set made at most, each up to one packing per child.
pub const MAX_TRIALS: usize = 24;

/// The children's choices, outputs and cost with a larger shared set, when one costs less
/// than `billed` (the cost with the children's own selections), and whether every
/// re-solve made to look for it finished.
pub(super) fn grown(
    house: &mut House<'_, '_>,
    kids: &mut [Kid],
    loss: Share,
    billed: f64,
) -> Result<Growth, Refusal> {
    let mut growth = Growth {
        grown: None,
        all_exact: true,
    };
    if kids.iter().any(|kid| kid.budget == 0) {
        // A budget of 0 keeps only required units: no unit can join the shared set.
        return Ok(growth);
    }
    let Some(first) = kids.first() else {
        return Ok(growth);
    };
    let units = first.units();
    let fragments = units.fragments();
    // Before any pin: whether each anchor's unit is required, and its variant set.
    let required: Vec<bool> = (0..fragments as u32)
        .map(|anchor| units.is_required(units.unit_of(anchor)))
        .collect();
    let sets: Vec<u32> = (0..fragments as u32)
        .map(|anchor| units.set_of(units.unit_of(anchor)))
        .collect();
    let set_of = |anchor: u32| sets[anchor as usize];
    let mut keeping = vec![0usize; fragments];
    for kid in kids.iter() {
        for &anchor in &kid.solo.anchors {
            keeping[anchor as usize] += 1;
        }
    }
    let floor = house.request.policy.min_relevance;
    let eligible = |anchor: u32| {
        required[anchor as usize]
            || kids.iter().all(|kid| {
                let unit = kid.units().unit_of(anchor);
                relevance_of_key(kid.units().lead_entry(unit).key) >= floor
            })
    };
    let mut queue: Vec<u32> = (0..fragments as u32)
        .filter(|&anchor| {
            let count = keeping[anchor as usize];
            count > 0 && count < kids.len() && eligible(anchor)
        })
        .collect();
    queue.sort_by_key(|&anchor| (std::cmp::Reverse(keeping[anchor as usize]), anchor));
    let solo: Vec<&Choice> = kids.iter().map(|kid| &kid.solo).collect();
    // What every child keeps alone stays in every child.
    let mut forced: Vec<u32> = shared_anchors(&solo)
        .into_iter()
        .filter(|&anchor| !required[anchor as usize])
        .collect();
    let mut best_billed = billed;
    let mut asked: Vec<usize> = (0..kids.len()).collect();
    let (mut size, mut trials) = (queue.len(), 0);
    while !queue.is_empty() && trials < MAX_TRIALS {
        let batch = next_batch(&mut queue, &forced, size, &set_of);
        if batch.is_empty() {
            break;
        }
        trials += 1;
        let trying: Vec<u32> = forced.iter().chain(&batch).copied().collect();
        let found = trial(house, kids, &trying, &required, loss, &mut asked)?;
        growth.all_exact &= found.all_exact;
        if let Some(found) = found.choices {
            let chosen: Vec<&Choice> = found.iter().collect();
            let outputs = house.arranged(kids, &chosen)?;
            let priced = house.price(&outputs);
            if priced.billed < best_billed {
                best_billed = priced.billed;
                growth.grown = Some(Packing {
                    choices: found,
                    outputs,
                    cost: priced,
                });
                forced.extend_from_slice(&batch);
                queue.retain(|anchor| !batch.contains(anchor));
                size *= 2;
                continue;
            }
        }
        if size > 1 {
            size /= 2;
        } else {
            queue.retain(|&anchor| anchor != batch[0]);
        }
    }
    Ok(growth)
}

/// The next `size` candidates, passing over one whose variant set the shared set or the
/// batch already holds (a child keeps one unit of a set); one whose set is shared already
/// can never be added and leaves the queue.
fn next_batch(
    queue: &mut Vec<u32>,
    forced: &[u32],
    size: usize,
    set_of: &impl Fn(u32) -> u32,
) -> Vec<u32> {
    let shared_sets: Vec<u32> = forced
        .iter()
        .map(|&anchor| set_of(anchor))
        .filter(|&set| set != NO_SET)
        .collect();
    let mut sets = shared_sets.clone();
    let mut batch = Vec::new();
    let mut left = Vec::with_capacity(queue.len());
    for &anchor in queue.iter() {
        if batch.len() == size {
            left.push(anchor);
            continue;
        }
        let set = set_of(anchor);
        if set != NO_SET && sets.contains(&set) {
            if !shared_sets.contains(&set) {
                left.push(anchor);
            }
            continue;
        }
        batch.push(anchor);
        left.push(anchor);
        if set != NO_SET {
            sets.push(set);
        }
    }
    *queue = left;
    batch
}

/// A trial's choices, and whether every child's solve in it finished.
struct Trial {
    choices: Option<Vec<Choice>>,
    all_exact: bool,
}

/// Every child's choice with the `forced` units kept; `None` at the first child that would
/// go over its budget or keep less than (1 - `loss`) of its own call's value (that child
/// moves to the front of `asked`).
fn trial(
    house: &mut House<'_, '_>,
    kids: &mut [Kid],
    forced: &[u32],
    required: &[bool],
    loss: Share,
    asked: &mut Vec<usize>,
) -> Result<Trial, Refusal> {
    let mut all_exact = true;
    let loose: Vec<u32> = forced
        .iter()
        .copied()
        .filter(|&anchor| !required[anchor as usize])
        .collect();
    let mut found: Vec<Option<Choice>> = vec![None; kids.len()];
    for position in 0..asked.len() {
        let child = asked[position];
        let kid = &mut kids[child];
        let pinned = kid.unit_list(&loose);
        let forced_tokens: u128 = pinned.iter().map(|&unit| kid.units().tokens(unit)).sum();
        let mut choice = None;
        if kid.required_tokens + forced_tokens <= kid.budget {
            let budgets = [kid.budget];
            let request = Request {
                budgets: &budgets,
                ..house.request
            };
            kid.ranking.pin(&pinned, &kid.sets);
            let kept = kid
                .ranking
                .kept_units(house.ids, request, false, &mut house.checkpoint);
            kid.ranking.unpin(&pinned, &kid.sets);
            let [kept] = one(kept?);
            all_exact &= kept.exact();
            if kept.compressed_tokens() <= kid.budget
                && loss.keeps_enough(kept.value_kept(), kid.solo.kept.value_kept())
            {
                choice = Some(Choice::of(kept, kid.units()));
            }
        }
        let Some(choice) = choice else {
            asked.remove(position);
            asked.insert(0, child);
            return Ok(Trial {
                choices: None,
                all_exact,
            });
        };
        found[child] = Some(choice);
    }
    Ok(Trial {
        choices: Some(found.into_iter().flatten().collect()),
        all_exact,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_holds_one_unit_per_variant_set_and_none_of_a_shared_set() {
        // Units 0 and 1 render set 7, 3 and 5 set 8; 4 renders set 9, which the shared
        // unit 6 renders too; 2 renders none.
        let set_of = |anchor: u32| match anchor {
            0 | 1 => 7,
            3 | 5 => 8,
            4 | 6 => 9,
            _ => NO_SET,
        };
        let mut queue = vec![0, 1, 2, 3, 4, 5];
        assert_eq!(next_batch(&mut queue, &[6], 10, &set_of), vec![0, 2, 3]);
        // 1 and 5 wait for a later batch; 4 can never join.
        assert_eq!(queue, vec![0, 1, 2, 3, 5]);
        let mut queue = vec![0, 1, 2, 3, 4, 5];
        assert_eq!(next_batch(&mut queue, &[6], 2, &set_of), vec![0, 2]);
        // Past a full batch nothing is looked at.
        assert_eq!(queue, vec![0, 1, 2, 3, 4, 5]);
        let mut queue = vec![4, 1];
        assert_eq!(next_batch(&mut queue, &[2], 1, &set_of), vec![4]);
        assert_eq!(queue, vec![4, 1]);
    }
}
