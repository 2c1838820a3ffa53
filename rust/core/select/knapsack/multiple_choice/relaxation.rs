//! The fractional bound of the multiple-choice knapsack: each class (a variant set, or a unit
//! of none) taken in fractions that sum to at most 1. The best a class gives within some tokens
//! lies on the upper convex hull of its (tokens, value) points and the empty choice (0, 0);
//! the steps along every hull, filled by value per token across all classes, give the
//! relaxation's optimum (Sinha and Zoltners).

use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::entry::Entry;
use crate::core::select::knapsack::multiple_choice::classes::Classes;
use crate::core::select::names::sets::{VariantSets, NO_SET};
use crate::core::select::value::{density_order, split_at_capacity, weigh, wide_mul, Item};

/// The members of a class on the upper convex hull of their points and (0, 0), by tokens:
/// each of more value than the one before, the value per token of each step from the one
/// before (from (0, 0) for the first) strictly falling; the first may take no tokens.
/// `members` are left sorted by tokens, then value descending.
pub fn upper_hull(members: &mut [Item]) -> Vec<Item> {
    let mut hull = Vec::new();
    upper_hull_into(members, &mut hull);
    hull
}

/// [`upper_hull`] into `hull`, which is cleared first.
pub fn upper_hull_into(members: &mut [Item], hull: &mut Vec<Item>) {
    hull.clear();
    members.sort_unstable_by(|a, b| a.tokens.cmp(&b.tokens).then(b.value.cmp(&a.value)));
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

/// A step of the relaxation when every unit is one fragment, so that its tokens fit a `u64`:
/// half an [`Item`]'s size, which the selection over a million of them feels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    value: u64,
    tokens: u64,
}

impl Step {
    /// A fragment's item, or a step along a hull of fragments: its tokens fit a `u64`.
    fn of(item: &Item) -> Step {
        Step {
            value: item.value,
            tokens: item.tokens as u64,
        }
    }

    /// The step as [`density_order`] weighs it.
    fn item(&self) -> Item {
        Item {
            unit: 0,
            value: self.value,
            tokens: u128::from(self.tokens),
        }
    }
}

/// The steps of the multiple-choice relaxation when each fragment is a unit of its own (no
/// groups) are each fragment of no set and the steps along each set's hull: split here before
/// the sets are known, the hulls made by [`set_hull_steps`] once they are.
#[derive(Debug)]
pub struct FragmentSteps {
    /// The steps of the fragments in no set.
    pub loose: Vec<Step>,
    /// The fragments in a set, as steps, in input order.
    pub marked: Vec<Step>,
}

impl FragmentSteps {
    /// Each fragment as a step, the ones in a set (`marked`, ascending) apart. `entries` are
    /// in input order (entry `i` is fragment `i`).
    pub fn split(
        entries: &[Entry],
        token_counts: &[u64],
        mut marked: impl ExactSizeIterator<Item = u32>,
        checkpoint: &mut Checkpoint,
    ) -> Result<FragmentSteps, Interrupted> {
        let mut loose = Vec::with_capacity(entries.len());
        let mut marked_steps = Vec::with_capacity(marked.len());
        let mut next = marked.next();
        for (fragment, entry) in entries.iter().enumerate() {
            checkpoint.tick()?;
            let step = Step::of(&entry.item(token_counts));
            if next == Some(fragment as u32) {
                marked_steps.push(step);
                next = marked.next();
            } else {
                loose.push(step);
            }
        }
        Ok(FragmentSteps {
            loose,
            marked: marked_steps,
        })
    }
}

/// The steps along each set's hull, from [`FragmentSteps::marked`] and `marked`, which gives
/// the same fragments as [`FragmentSteps::split`] was given, each time it is called.
pub fn set_hull_steps<I: Iterator<Item = u32>>(
    marked: impl Fn() -> I,
    marked_steps: &[Step],
    sets: &VariantSets,
    checkpoint: &mut Checkpoint,
) -> Result<Vec<Step>, Interrupted> {
    let set_of = |fragment: u32| sets.set_of_fragment[fragment as usize] as usize;
    let mut starts = vec![0usize; sets.count + 1];
    for fragment in marked() {
        starts[set_of(fragment) + 1] += 1;
    }
    for at in 1..=sets.count {
        starts[at] += starts[at - 1];
    }
    // Each set's members side by side: written in one pass, read set by set.
    let mut members = vec![
        Step {
            value: 0,
            tokens: 0
        };
        marked_steps.len()
    ];
    let mut next = starts.clone();
    for (fragment, &step) in marked().zip(marked_steps) {
        checkpoint.tick()?;
        let at = &mut next[set_of(fragment)];
        members[*at] = step;
        *at += 1;
    }
    let mut steps = Vec::with_capacity(marked_steps.len());
    let (mut class, mut hull, mut climb) = (Vec::new(), Vec::new(), Vec::new());
    for set in 0..sets.count {
        checkpoint.tick()?;
        class.clear();
        class.extend(members[starts[set]..starts[set + 1]].iter().map(Step::item));
        upper_hull_into(&mut class, &mut hull);
        climb.clear();
        hull_steps(&hull, &mut climb);
        steps.extend(climb.iter().map(Step::of));
    }
    Ok(steps)
}

/// `floor` of the relaxation's optimum within `capacity`, over `steps` from
/// [`FragmentSteps`] (reordered, the same steps still).
pub fn steps_bound(
    steps: &mut [Step],
    capacity: u128,
    checkpoint: &mut Checkpoint,
) -> Result<u128, Interrupted> {
    let split = split_at_capacity(steps, capacity, Step::item, density_order, checkpoint)?;
    Ok(split.fractional_optimum(capacity))
}
