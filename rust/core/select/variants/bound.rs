//! The fractional bound of the multiple-choice knapsack: each class (a variant set, or a unit
//! of none) taken in fractions that sum to at most 1. The best a class gives within some tokens
//! lies on the upper convex hull of its (tokens, value) points and the empty choice (0, 0);
//! the steps along every hull, filled by value per token across all classes, give the
//! relaxation's optimum (Sinha and Zoltners).

use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::value::{density_order, split_at_capacity, weigh, wide_mul, Item};
use crate::core::select::variants::sets::{Classes, NO_SET};

/// The members of a class on the upper convex hull of their points and (0, 0), by tokens:
/// each of more value than the one before, the value per token of each step from the one
/// before (from (0, 0) for the first) strictly falling; the first may take no tokens.
/// `members` are left sorted by tokens, then value descending.
pub fn upper_hull(members: &mut [Item]) -> Vec<Item> {
    members.sort_unstable_by(|a, b| a.tokens.cmp(&b.tokens).then(b.value.cmp(&a.value)));
    let mut hull: Vec<Item> = Vec::new();
    for &point in members.iter() {
        let last = hull.last().map_or((0, 0), |item| (item.value, item.tokens));
        if point.value <= last.0 {
            continue; // no more value for at least as many tokens
        }
        // The last vertex on or below the segment from the one before it to this point is
        // not a vertex.
        while let Some(&vertex) = hull.last() {
            let before = match hull.len() {
                1 => (0, 0),
                len => (hull[len - 2].value, hull[len - 2].tokens),
            };
            let rise_in = (vertex.value - before.0, vertex.tokens - before.1);
            let rise_out = (point.value - vertex.value, point.tokens - vertex.tokens);
            if steeper(rise_in, rise_out) {
                break;
            }
            hull.pop();
        }
        hull.push(point);
    }
    hull
}

/// Whether a rise of `a.0` over `a.1` tokens is strictly steeper than `b.0` over `b.1`.
fn steeper(a: (u64, u128), b: (u64, u128)) -> bool {
    wide_mul(a.0, b.1) > wide_mul(b.0, a.1)
}

/// The steps from (0, 0) along a hull, as items of the class's first unit.
pub fn hull_steps(hull: &[Item], steps: &mut Vec<Item>) {
    let (mut value, mut tokens) = (0, 0);
    for vertex in hull {
        steps.push(Item {
            unit: vertex.unit,
            value: vertex.value - value,
            tokens: vertex.tokens - tokens,
        });
        (value, tokens) = (vertex.value, vertex.tokens);
    }
}

/// [`multiple_choice_bound`] of `items` (given twice over, in one order), each in the variant
/// set `set_of` gives among `sets`: the items of no set go straight to the steps, and only
/// the others are gathered by set, so no copy of all the items is made.
pub fn bound_of_items<I: Iterator<Item = Item>>(
    items: impl Fn() -> I,
    set_of: &impl Fn(u32) -> u32,
    sets: usize,
    capacity: u128,
    checkpoint: &mut Checkpoint,
) -> Result<u128, Interrupted> {
    let mut ends = vec![0usize; sets + 1];
    let mut steps = Vec::new();
    for item in items() {
        checkpoint.tick()?;
        // A step of no value adds nothing wherever it falls.
        match set_of(item.unit) {
            NO_SET => steps.push(item),
            set => ends[set as usize + 1] += 1,
        }
    }
    for at in 1..=sets {
        ends[at] += ends[at - 1];
    }
    let mut members = vec![item_none(); ends[sets]];
    for item in items() {
        checkpoint.tick()?;
        let set = set_of(item.unit);
        if set != NO_SET {
            let at = &mut ends[set as usize];
            members[*at] = item;
            *at += 1;
        }
    }
    // `ends[s]` is now where set s ends, and `ends[s - 1]` where it starts.
    let mut start = 0;
    for &end in &ends[..sets] {
        checkpoint.tick()?;
        match &mut members[start..end] {
            [] => {}
            [alone] => steps.push(*alone),
            class => hull_steps(&upper_hull(class), &mut steps),
        }
        start = end;
    }
    let split = split_at_capacity(&mut steps, capacity, weigh, density_order, checkpoint)?;
    Ok(split.fractional_optimum(capacity))
}

fn item_none() -> Item {
    Item {
        unit: 0,
        value: 0,
        tokens: 0,
    }
}

/// `floor` of the most value the classes give within `capacity` when each item is taken in
/// any fraction in [0, 1] and the fractions of one class sum to at most 1.
pub fn multiple_choice_bound(
    classes: &mut Classes,
    capacity: u128,
    checkpoint: &mut Checkpoint,
) -> Result<u128, Interrupted> {
    let mut steps = Vec::with_capacity(classes.items.len());
    for class in 0..classes.len() {
        checkpoint.tick()?;
        let members = &mut classes.items[classes.starts[class]..classes.starts[class + 1]];
        if let [alone] = members {
            steps.push(*alone);
        } else {
            hull_steps(&upper_hull(members), &mut steps);
        }
    }
    // One class's steps fall in value per token, so any walk by value per token takes them
    // in their order: filling by it is the relaxation.
    let split = split_at_capacity(&mut steps, capacity, weigh, density_order, checkpoint)?;
    Ok(split.fractional_optimum(capacity))
}
