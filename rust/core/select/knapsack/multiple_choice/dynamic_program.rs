//! `optimal` with variant sets: the multiple-choice knapsack, each class (a variant set, or a
//! unit of none) keeping at most one of its units, under the tie rule of `optimal` (most
//! value, then fewest tokens, then the set that keeps the better-ranked unit at the first rank
//! where two differ).
//!
//! First a set within the capacity: each class climbs its convex hull a step at a time, the
//! steps of all classes by value per token, while a step fits; the first step that does not
//! fit gives a price per token (the relaxation's, as in Sinha and Zoltners). At that price a
//! class adds at most its best margin (value less the price of its tokens, or 0 for none of
//! it): choices that would lose more than that bound exceeds the set's value are dropped, and
//! a class left with one choice, none of it ruled out too, is decided (Dembo and Hammer's
//! reduction, for classes). The rest is a dynamic program over Pareto states (tokens, value),
//! a class at a time, where a state is cut that cannot reach the set's value even with the
//! fractional best of the classes to come in the tokens it has left ([`RestBound`]). Every
//! cut is strict, so no set of most value is lost; of two states alike in tokens and value,
//! the one the tie rule prefers stays: the one placed first in the states' tie order
//! ([`TieOrder`]), kept class by class beside them. Stopped short by its work limit, it
//! returns the better of its best state and the set found first.

use std::cmp::Ordering;

use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::knapsack::chosen::Chosen;
use crate::core::select::knapsack::multiple_choice::classes::Classes;
use crate::core::select::knapsack::multiple_choice::greedy::density;
use crate::core::select::knapsack::multiple_choice::relaxation::{
    hull_steps, multiple_choice_bound, upper_hull,
};
use crate::core::select::knapsack::multiple_choice::rest_bound::{RestBound, Stretch, Sweep};
use crate::core::select::knapsack::multiple_choice::tie_order::{TieOrder, NONE};
use crate::core::select::knapsack::parent_tree::{Child, ParentTree, NO_NODE};
use crate::core::select::knapsack::word::{narrow_fits, Word};
use crate::core::select::knapsack::work::{Work, STATES_PER_CHECK};
use crate::core::select::tuning::Tuning;
use crate::core::select::value::{density_order, Item};
use crate::core::sort_in_pieces::sort_in_pieces;

/// The canonical optimal set of `items` within `capacity`; `set_of` gives a unit's variant set
/// among `sets` and `rank_order` compares two units' ranks.
pub fn optimal(
    items: Vec<Item>,
    (set_of, sets): (&impl Fn(u32) -> u32, usize),
    capacity: u128,
    rank_order: &(impl Fn(u32, u32) -> Ordering + Sync),
    tuning: &Tuning,
    work: &mut Work,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Chosen, Interrupted> {
    let sort_piece = tuning.sort_piece;
    // Kept for `density`, should the work run out.
    let all = items.clone();
    let mut classes = Classes::new(&items, set_of, sets);
    let bound = multiple_choice_bound(&mut classes, capacity, checkpoint)?;
    let fitting: Vec<Item> = items
        .into_iter()
        .filter(|item| item.tokens <= capacity)
        .collect();
    let ranks = Ranks::new(&fitting, rank_order, sort_piece, checkpoint)?;
    let mut classes = Classes::new(&fitting, set_of, sets);
    drop(fitting);
    let mut useful: Vec<Vec<Item>> = Vec::new();
    for class in 0..classes.len() {
        checkpoint.tick()?;
        let members = &mut classes.items[classes.starts[class]..classes.starts[class + 1]];
        let kept = useful_members(members, &ranks);
        if !kept.is_empty() {
            useful.push(kept);
        }
    }
    drop(classes);
    let mut chosen = Chosen {
        bound,
        ..Chosen::default()
    };
    let (filled, price) = filled_by_steps(&useful, capacity, sort_piece, checkpoint)?;
    let prices = Prices::new(price, &useful, capacity, filled.value);
    let (fixed, mut open) = prices.reduce(useful);
    // The classes whose best choice at the relaxation's price leads their next by most first
    // (the choices a far lead leaves within the bound are few, so the states multiply late),
    // ties by the worst best-ranked member first. Measured on sets of three renderings,
    // strongly and weakly correlated and uncorrelated: 1.6x to 4x fewer states grown than
    // by rank alone (which beat the classes' own order and their spread of tokens), up to
    // 9% more where the states fill the bound's window from the first classes on.
    open.sort_by_cached_key(|class| {
        (
            std::cmp::Reverse(class.lead(&prices)),
            std::cmp::Reverse(class.best_rank(&ranks)),
        )
    });
    for item in &fixed {
        chosen.add(item);
    }
    let members: Vec<&[Item]> = open.iter().map(|class| &class.members[..]).collect();
    let rest = RestBound::new(&members, sort_piece, checkpoint)?;
    // A state holds the fixed items and at most the largest and the most valuable member of
    // each class (a sum formed before the capacity is checked, too).
    let most = |of: fn(&Item) -> u128, fixed: u128| {
        open.iter().fold(fixed, |sum, class| {
            let largest = class.members.iter().map(of).max().unwrap_or(0);
            sum.saturating_add(largest)
        })
    };
    let most_tokens = most(|item| item.tokens, chosen.tokens);
    let most_value = most(|item| u128::from(item.value), chosen.value);
    let solve = if narrow_fits(tuning.narrow_states, most_tokens.max(most_value)) {
        best_state::<u64>
    } else {
        best_state::<u128>
    };
    let best = solve(
        &open,
        (chosen.tokens, chosen.value),
        capacity,
        (rest, filled.value),
        Choices {
            nodes: ParentTree::new(tuning.collect_slack),
            ranks: &ranks,
            work,
        },
        checkpoint,
    )?;
    for item in best {
        chosen.add(&item);
    }
    if !work.finished() {
        // Stopped short: the best set found (the climb's, when the states' best is worth
        // less), unless `density`'s is worth as much.
        if filled.value > chosen.value {
            chosen = Chosen { bound, ..filled };
        }
        let by_density = density(
            all,
            (set_of, sets),
            capacity,
            rank_order,
            sort_piece,
            checkpoint,
        )?;
        if by_density.value >= chosen.value {
            return Ok(by_density);
        }
    }
    Ok(chosen)
}

/// Each unit's place in the ranking of the fitting units (0 the best).
struct Ranks(Vec<u32>);

impl Ranks {
    fn new(
        items: &[Item],
        rank_order: &(impl Fn(u32, u32) -> Ordering + Sync),
        sort_piece: usize,
        checkpoint: &mut Checkpoint<'_>,
    ) -> Result<Ranks, Interrupted> {
        let mut ranked: Vec<u32> = items.iter().map(|item| item.unit).collect();
        sort_in_pieces(
            &mut ranked,
            |a, b| rank_order(*a, *b),
            sort_piece,
            false,
            checkpoint,
        )?;
        let most = ranked.iter().max().map_or(0, |&unit| unit as usize + 1);
        let mut ranks = vec![NONE; most];
        for (rank, &unit) in ranked.iter().enumerate() {
            ranks[unit as usize] = rank as u32;
        }
        Ok(Ranks(ranks))
    }

    fn of(&self, unit: u32) -> u32 {
        self.0[unit as usize]
    }
}

/// The members some set of most value may keep: each worth more than every member of no more
/// tokens (ties by rank), and each worth something or free. The others are beaten, in every
/// set, by a member of the class or by keeping none of it.
fn useful_members(members: &mut [Item], ranks: &Ranks) -> Vec<Item> {
    members.sort_unstable_by(|a, b| {
        let by_size = a.tokens.cmp(&b.tokens).then(b.value.cmp(&a.value));
        by_size.then_with(|| ranks.of(a.unit).cmp(&ranks.of(b.unit)))
    });
    let mut useful = Vec::new();
    let mut best = None;
    for member in members.iter() {
        if best.is_none_or(|best| member.value > best) && (member.value > 0 || member.tokens == 0) {
            useful.push(*member);
            best = Some(member.value);
        }
    }
    useful
}

/// A set within `capacity` (each class climbs its hull a step at a time, the steps of all
/// classes by value per token, while a step fits), and the step of the relaxation that first
/// does not fit, as (value, tokens): its value per token is the price.
fn filled_by_steps(
    classes: &[Vec<Item>],
    capacity: u128,
    sort_piece: usize,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<(Chosen, Option<(u64, u128)>), Interrupted> {
    // (step, class, level)
    let mut steps: Vec<(Item, u32, u32)> = Vec::new();
    let mut hulls: Vec<Vec<Item>> = Vec::with_capacity(classes.len());
    let mut class_steps = Vec::new();
    for (number, members) in classes.iter().enumerate() {
        checkpoint.tick()?;
        let hull = upper_hull(&mut members.clone());
        class_steps.clear();
        hull_steps(&hull, &mut class_steps);
        for (level, step) in class_steps.iter().enumerate() {
            steps.push((*step, number as u32, level as u32 + 1));
        }
        hulls.push(hull);
    }
    let order = |a: &(Item, u32, u32), b: &(Item, u32, u32)| {
        density_order(&a.0, &b.0).then((a.1, a.2).cmp(&(b.1, b.2)))
    };
    sort_in_pieces(&mut steps, order, sort_piece, false, checkpoint)?;
    let mut levels = vec![0u32; classes.len()];
    let mut left = capacity;
    let mut price = None;
    for (step, class, level) in steps {
        if step.tokens > left {
            price.get_or_insert((step.value, step.tokens));
        } else if levels[class as usize] == level - 1 {
            levels[class as usize] = level;
            left -= step.tokens;
        }
    }
    let mut filled = Chosen::default();
    for (hull, &level) in hulls.iter().zip(&levels) {
        if level > 0 {
            filled.add(&hull[level as usize - 1]);
        }
    }
    Ok((filled, price))
}

/// A price per token, `price / per`, and what it bounds: at it, a set keeps at most its
/// margins (value less the price of its tokens, or 0) plus the price of the capacity. All of
/// it times `per`, in integers; the price falls to 0 where the products might not fit.
struct Prices {
    price: i128,
    per: i128,
    capacity: i128,
    /// `per` times the value of the set found first.
    floor: i128,
}

impl Prices {
    fn new(
        step: Option<(u64, u128)>,
        classes: &[Vec<Item>],
        capacity: u128,
        reached: u128,
    ) -> Self {
        let total_value: u128 = classes
            .iter()
            .flatten()
            .map(|item| u128::from(item.value))
            .sum();
        let total_tokens: u128 = classes.iter().flatten().map(|item| item.tokens).sum();
        let (price, per) = step.map_or((0, 1), |(value, tokens)| (u128::from(value), tokens));
        let limit = 1u128 << 124;
        let fits = |a: u128, b: u128| a.checked_mul(b).is_some_and(|product| product < limit);
        let capacity = capacity.min(total_tokens);
        let (price, per) = if fits(per, total_value) && fits(price, total_tokens + 1) {
            (price as i128, per as i128)
        } else {
            (0, 1)
        };
        Prices {
            price,
            per,
            capacity: capacity as i128,
            floor: reached as i128 * per,
        }
    }

    fn margin(&self, item: &Item) -> i128 {
        item.value as i128 * self.per - self.price * item.tokens as i128
    }

    /// The classes' items decided by the bound (`fixed`), and the classes left open with
    /// their choices that may still be in a set of most value.
    fn reduce(&self, classes: Vec<Vec<Item>>) -> (Vec<Item>, Vec<OpenClass>) {
        let best = |members: &[Item]| {
            members
                .iter()
                .map(|m| self.margin(m))
                .max()
                .unwrap_or(0)
                .max(0)
        };
        let slack = classes.iter().map(|members| best(members)).sum::<i128>()
            + self.price * self.capacity
            - self.floor;
        let mut fixed = Vec::new();
        let mut open = Vec::new();
        for members in classes {
            let most = best(&members);
            let kept: Vec<Item> = members
                .into_iter()
                .filter(|member| most - self.margin(member) <= slack)
                .collect();
            match &kept[..] {
                [only] if most > slack => fixed.push(*only),
                [] => {}
                _ => open.push(OpenClass { members: kept }),
            }
        }
        (fixed, open)
    }
}

struct OpenClass {
    members: Vec<Item>,
}

impl OpenClass {
    /// How far the best margin at `prices` stands above the next, keeping none of the class
    /// being a margin of 0.
    fn lead(&self, prices: &Prices) -> i128 {
        let (mut best, mut next) = (0, i128::MIN);
        for member in &self.members {
            let margin = prices.margin(member);
            if margin > best {
                (best, next) = (margin, best);
            } else if margin > next {
                next = margin;
            }
        }
        best.saturating_sub(next)
    }

    fn best_rank(&self, ranks: &Ranks) -> u32 {
        self.members
            .iter()
            .map(|member| ranks.of(member.unit))
            .min()
            .unwrap_or(NONE)
    }
}

/// One set of the dynamic program: its tokens and value, and its choices (a chain of nodes).
#[derive(Debug, Clone, Copy)]
struct State<W> {
    tokens: W,
    value: W,
    node: u32,
}

/// A unit chosen in the class at `level`, after the choices of `parent`.
#[derive(Debug, Clone, Copy)]
struct Node {
    parent: u32,
    unit: u32,
    level: u32,
}

impl Child for Node {
    fn parent(&self) -> u32 {
        self.parent
    }

    fn set_parent(&mut self, parent: u32) {
        self.parent = parent;
    }
}

/// A state grown from one of the states before (`from`): `parent`'s choices and `unit`
/// ([`NONE`]: none of this class), and its place in the tie order.
#[derive(Debug, Clone, Copy)]
struct Grown<W> {
    tokens: W,
    value: W,
    parent: u32,
    unit: u32,
    from: u32,
    place: u32,
}

/// The states `Work` counts as held (about 100 bytes each) for one grown state: its entry
/// and the merge's copy of it, the state it may become, its place in the tie order and its
/// share of the sets' tree take three of them at 64 bits, four at 128 (measured: a million
/// grown 64-bit states took 356 MiB at their peak, 128-bit ones 474 MiB).
fn held_per_grown<W>() -> usize {
    std::mem::size_of::<Grown<W>>().div_ceil(16) + 1
}

/// The states' choices, the ranks that break their ties, and the work left.
struct Choices<'r> {
    nodes: ParentTree<Node>,
    ranks: &'r Ranks,
    work: &'r mut Work,
}

/// `grown`'s runs (each from one of `runs` to the next) merged by tokens, the more valuable
/// first among equal tokens, two at a time, level by level, into `grown` again (`spare` the
/// room between levels). Each run is the states grown by one choice: in the states' order, by
/// tokens and so by value (the states are Pareto), so merging orders them with a comparison
/// or two per state and level, where a sort compares each many times.
fn merge_by_tokens<W: Word>(
    grown: &mut Vec<Grown<W>>,
    runs: &mut Vec<usize>,
    spare: &mut Vec<Grown<W>>,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<(), Interrupted> {
    let before = |a: &Grown<W>, b: &Grown<W>| (a.tokens, b.value) < (b.tokens, a.value);
    while runs.len() > 2 {
        spare.clear();
        let count = runs.len() - 1;
        for first in (0..count).step_by(2) {
            let (start, middle) = (runs[first], runs[first + 1]);
            let end = runs[(first + 2).min(count)];
            let (mut left, mut right) = (start, middle);
            while left < middle && right < end {
                checkpoint.advance(STATES_PER_CHECK)?;
                let stop = left + right + STATES_PER_CHECK;
                while left < middle && right < end && left + right < stop {
                    if before(&grown[right], &grown[left]) {
                        spare.push(grown[right]);
                        right += 1;
                    } else {
                        spare.push(grown[left]);
                        left += 1;
                    }
                }
            }
            spare.extend_from_slice(&grown[left..middle]);
            spare.extend_from_slice(&grown[right..end]);
        }
        std::mem::swap(grown, spare);
        // Each pair is now one run where the pair stood: every other bound, and the end.
        let end = runs[count];
        let mut at = 0;
        runs.retain(|_| {
            at += 1;
            at % 2 == 1
        });
        if count % 2 == 1 {
            runs.push(end);
        }
    }
    Ok(())
}

/// The canonical best set of the open classes, after fixed items of `tokens` and `value`;
/// once the work is spent, the best set found so far (none of the classes not reached).
fn best_state<W: Word>(
    open: &[OpenClass],
    (tokens, value): (u128, u128),
    capacity: u128,
    (mut rest, floor): (RestBound, u128),
    mut choices: Choices,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Vec<Item>, Interrupted> {
    let mut states = vec![State {
        tokens: W::of(tokens),
        value: W::of(value),
        node: NO_NODE,
    }];
    let mut grown: Vec<Grown<W>> = Vec::new();
    // Where each choice's run of `grown` starts, and room to merge them.
    let mut runs: Vec<usize> = Vec::new();
    let mut spare: Vec<Grown<W>> = Vec::new();
    let mut stretch = Stretch::default();
    // The states in the tie rule's order, and room to place the grown ones.
    let mut ties = TieOrder::one_state();
    let (mut choice_ranks, mut places, mut kept) = (Vec::new(), Vec::new(), Vec::new());
    for (level, class) in open.iter().enumerate() {
        // Two steps per state and choice: a state grown, and placed in the tie order.
        let growing = states.len() * (class.members.len() + 1);
        checkpoint.advance(growing)?;
        if !choices
            .work
            .take(2 * growing as u64, growing * held_per_grown::<W>())
        {
            break;
        }
        rest.leave(level);
        let largest = class.members.iter().map(|member| member.tokens).max();
        let last = states.last().map_or(0, |state| state.tokens.into());
        let most_tokens = last + largest.unwrap_or(0);
        let rooms = (
            capacity - most_tokens.min(capacity),
            capacity - states.first().map_or(0, |state| state.tokens.into()),
        );
        rest.stretch(rooms, growing, &mut stretch);
        // Whether a set can still reach the set found first. One that cannot is dropped
        // before the merge: a set it would dominate (no fewer tokens, no more value) cannot
        // either.
        let mut sweep = Sweep::new(&rest, &stretch);
        grown.clear();
        grown.extend(
            states
                .iter()
                .enumerate()
                .filter(|(_, state)| {
                    sweep.reaches(capacity - state.tokens.into(), state.value.into(), floor)
                })
                .map(|(from, state)| Grown {
                    tokens: state.tokens,
                    value: state.value,
                    parent: state.node,
                    unit: NONE,
                    from: from as u32,
                    place: NONE,
                }),
        );
        runs.clear();
        runs.push(0);
        for member in &class.members {
            let (member_tokens, member_value) = (W::of(member.tokens), W::of(member.value.into()));
            runs.push(grown.len());
            let mut sweep = Sweep::new(&rest, &stretch);
            // States come by tokens: those that fit with this member are a first run.
            let fits =
                states.partition_point(|state| (state.tokens + member_tokens).into() <= capacity);
            let pieces = (0..fits)
                .step_by(STATES_PER_CHECK)
                .zip(states[..fits].chunks(STATES_PER_CHECK));
            for (start, piece) in pieces {
                checkpoint.advance(STATES_PER_CHECK)?;
                for (from, state) in (start..).zip(piece) {
                    let (tokens, value) =
                        (state.tokens + member_tokens, state.value + member_value);
                    if sweep.reaches(capacity - tokens.into(), value.into(), floor) {
                        grown.push(Grown {
                            tokens,
                            value,
                            parent: state.node,
                            unit: member.unit,
                            from: from as u32,
                            place: NONE,
                        });
                    }
                }
            }
        }
        runs.push(grown.len());
        choice_ranks.clear();
        choice_ranks.push(NONE);
        choice_ranks.extend(class.members.iter().map(|m| choices.ranks.of(m.unit)));
        places.resize(grown.len(), NONE);
        let from = |at: usize| grown[at].from;
        ties.place(
            states.len(),
            (&runs, &choice_ranks),
            from,
            &mut places,
            checkpoint,
        )?;
        for (state, &place) in grown.iter_mut().zip(&places) {
            state.place = place;
        }
        merge_by_tokens(&mut grown, &mut runs, &mut spare, checkpoint)?;
        states.clear();
        kept.clear();
        kept.resize(grown.len(), NONE);
        let mut last_value = None;
        let mut at = 0;
        while at < grown.len() {
            checkpoint.tick()?;
            let mut end = at + 1;
            while end < grown.len()
                && grown[end].tokens == grown[at].tokens
                && grown[end].value == grown[at].value
            {
                end += 1;
            }
            let (tokens, value) = (grown[at].tokens, grown[at].value);
            // A later set has at least the tokens of every earlier one: it survives only with
            // strictly more value.
            if last_value.is_none_or(|last| value > last) {
                let pick = grown[at..end]
                    .iter()
                    .min_by_key(|state| state.place)
                    .expect("a run of one or more");
                kept[pick.place as usize] = states.len() as u32;
                let node = if pick.unit == NONE {
                    pick.parent
                } else {
                    choices.nodes.push(Node {
                        parent: pick.parent,
                        unit: pick.unit,
                        level: level as u32,
                    })
                };
                states.push(State {
                    tokens,
                    value,
                    node,
                });
                last_value = Some(value);
            }
            at = end;
        }
        ties.keep(&kept, checkpoint)?;
        choices.nodes.collect(&mut states, |state| &mut state.node);
    }
    let best = states
        .last()
        .copied()
        .expect("the set found first, or a better one, stays");
    let mut items = Vec::new();
    for node in choices.nodes.chain(best.node) {
        let members = &open[node.level as usize].members;
        items.extend(members.iter().filter(|member| member.unit == node.unit));
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::interrupt::{Interrupt, Uninterrupted};
    use crate::core::select::names::sets::NO_SET;
    use crate::core::test_support::item;
    use crate::core::test_support::InterruptAt;

    fn checkpoint() -> Checkpoint<'static> {
        Checkpoint::new(&Uninterrupted, std::time::Duration::ZERO)
    }

    fn units(items: &[Item]) -> Vec<u32> {
        items.iter().map(|item| item.unit).collect()
    }

    /// Ranks by unit number, for units up to `count`.
    fn ranks(count: u32) -> Ranks {
        Ranks((0..count).collect())
    }

    #[test]
    fn useful_members_are_worth_more_than_every_smaller_one_and_something_or_free() {
        let mut members = vec![
            item(0, 5, 3),
            item(1, 5, 3), // as good as 0, ranked below it
            item(2, 4, 2),
            item(3, 0, 4), // worth nothing, costs tokens
            item(4, 0, 0), // free
            item(5, 7, 9),
            item(6, 6, 9),
        ];
        assert_eq!(
            units(&useful_members(&mut members, &ranks(7))),
            [4, 2, 0, 5]
        );
        // A member worth nothing that costs tokens is of no use even first.
        let mut members = vec![item(0, 0, 1), item(1, 3, 2)];
        assert_eq!(units(&useful_members(&mut members, &ranks(2))), [1]);
    }

    #[test]
    fn stopped_short_the_climbs_set_stands_when_worth_more_than_the_states_best() {
        // Sets of three strongly correlated renderings: `density` keeps the smallest of
        // each set, the climb keeps far more; ten steps stop the states at once.
        let mut rng = crate::core::test_support::Lcg(7);
        let items: Vec<Item> = (0..90)
            .map(|unit| {
                let tokens = 1 + rng.below(1000);
                item(unit, (tokens + 100) * 1000, u128::from(tokens))
            })
            .collect();
        let classes: Vec<Vec<Item>> = items.chunks(3).map(<[Item]>::to_vec).collect();
        let capacity = items.iter().map(|item| item.tokens).sum::<u128>() / 4;
        let (climb, _) = filled_by_steps(&classes, capacity, 5, &mut checkpoint()).unwrap();
        let set_of = |unit: u32| unit / 3;
        let by_number = |a: u32, b: u32| a.cmp(&b);
        let sets = (&set_of, 30);
        let by_density = density(
            items.clone(),
            sets,
            capacity,
            &by_number,
            5,
            &mut checkpoint(),
        );
        assert!(climb.value > by_density.unwrap().value);
        let mut work = Work::new(Some(10), &Tuning::DEFAULT);
        let tuning = Tuning::DEFAULT;
        let chosen = optimal(
            items,
            sets,
            capacity,
            &by_number,
            &tuning,
            &mut work,
            &mut checkpoint(),
        );
        let chosen = chosen.unwrap();
        assert!(!work.finished());
        let (mut kept, mut climbed) = (chosen.units.clone(), climb.units.clone());
        kept.sort_unstable();
        climbed.sort_unstable();
        assert_eq!(
            (chosen.value, chosen.tokens, kept),
            (climb.value, climb.tokens, climbed)
        );
    }

    #[test]
    fn merging_many_states_asks_for_an_interrupt_as_it_goes() {
        // Two runs of 6,000 states: three pieces, the third ask stops the merge.
        let grown_of = |tokens: u64| Grown {
            tokens,
            value: tokens,
            parent: NO_NODE,
            unit: 0,
            from: 0,
            place: 0,
        };
        let count = 6_000;
        let mut grown: Vec<Grown<u64>> = (0..count).chain(0..count).map(grown_of).collect();
        let merge = |grown: &mut Vec<Grown<u64>>, interrupt: &dyn Interrupt| {
            let mut checkpoint = Checkpoint::new(interrupt, std::time::Duration::ZERO);
            let mut runs = vec![0, count as usize, 2 * count as usize];
            merge_by_tokens(grown, &mut runs, &mut Vec::new(), &mut checkpoint)
        };
        assert_eq!(
            merge(&mut grown.clone(), &InterruptAt::new(3)),
            Err(Interrupted)
        );
        assert_eq!(merge(&mut grown, &InterruptAt::new(4)), Ok(()));
        let tokens: Vec<u64> = grown.iter().map(|state| state.tokens).collect();
        assert!(tokens.windows(2).all(|pair| pair[0] <= pair[1]));
        assert_eq!(tokens.len(), 2 * count as usize);
    }

    #[test]
    fn the_first_set_climbs_hulls_by_value_per_token_while_steps_fit() {
        // A: steps (6 for 3), then (4 for 5); B: (8 for 4); C: (1 for 5). Within 8: A's
        // first step, B's (A's came first among equals), then A's second does not fit and
        // prices the rest.
        let classes = vec![
            vec![item(0, 6, 3), item(1, 10, 8)],
            vec![item(2, 8, 4)],
            vec![item(3, 1, 5)],
        ];
        let climb = |classes: &[Vec<Item>], capacity| {
            let (mut set, price) =
                filled_by_steps(classes, capacity, 2, &mut checkpoint()).unwrap();
            set.units.sort_unstable();
            (set.value, set.tokens, set.units, price)
        };
        assert_eq!(climb(&classes, 8), (14, 7, vec![0, 2], Some((4, 5))));
        assert_eq!(climb(&classes, 20), (19, 17, vec![1, 2, 3], None));
        // B's step fits exactly what A's first leaves.
        assert_eq!(climb(&classes, 7), (14, 7, vec![0, 2], Some((4, 5))));
        // A step whose level before it did not fit is not taken, even where it fits.
        let classes = vec![vec![item(0, 8, 4), item(1, 9, 6)]];
        assert_eq!(climb(&classes, 3), (0, 0, vec![], Some((8, 4))));
        // A later class's step taken after one that did not fit.
        let classes = vec![vec![item(0, 9, 9)], vec![item(1, 2, 1), item(2, 3, 5)]];
        assert_eq!(climb(&classes, 5), (3, 5, vec![2], Some((9, 9))));
    }

    #[test]
    fn the_price_decides_classes_and_drops_choices() {
        // As above within 8: reached 14 at a price of 4 per 5 tokens. Margins (times 5): A's
        // both 18, B's 24, C's -15; slack 18 + 24 + 4 * 8 - 70 = 4. B alone beats none by
        // more: decided; C cannot be in a set of 14; A stays open with both.
        let classes = vec![
            vec![item(0, 6, 3), item(1, 10, 8)],
            vec![item(2, 8, 4)],
            vec![item(3, 1, 5)],
        ];
        let prices = Prices::new(Some((4, 5)), &classes, 8, 14);
        assert_eq!(
            (prices.price, prices.per, prices.capacity, prices.floor),
            (4, 5, 8, 70)
        );
        assert_eq!(prices.margin(&item(0, 6, 3)), 18);
        let (fixed, open) = prices.reduce(classes);
        assert_eq!(units(&fixed), [2]);
        assert_eq!(open.len(), 1);
        assert_eq!(units(&open[0].members), [0, 1]);
        // The capacity counts no further than all the tokens.
        let prices = Prices::new(Some((4, 5)), &[vec![item(0, 6, 3)]], 1 << 100, 6);
        assert_eq!(prices.capacity, 3);
        // Products that might not fit: no price.
        let huge = vec![vec![item(0, u64::MAX, 1 << 90)]];
        let prices = Prices::new(Some((u64::MAX, 1 << 90)), &huge, 1 << 91, 0);
        assert_eq!((prices.price, prices.per), (0, 1));
    }

    #[test]
    fn many_classes_match_the_exact_table_whether_unreached_choices_are_collected_or_not() {
        // Hundreds of classes of small units: the states' choices pile up, and are collected
        // as soon as the unreached may be half of all, or never. The set's value and tokens
        // against a table over tokens, and the same set either way.
        let mut rng = crate::core::test_support::Lcg(3);
        for case in 0..4 {
            let count = 300 + 100 * case;
            let items: Vec<Item> = (0..count)
                .map(|unit| item(unit, 1 + rng.below(40), u128::from(1 + rng.below(12))))
                .collect();
            let sets = (count / 3) as usize;
            let set_of = |unit: u32| {
                if unit % 5 == 4 {
                    NO_SET
                } else {
                    unit % sets as u32
                }
            };
            let capacity = 40 + 30 * case as u128;
            let by_number = |a: u32, b: u32| a.cmp(&b);
            let solve = |collect_slack| {
                let tuning = Tuning {
                    sort_piece: 64,
                    collect_slack,
                    ..Tuning::DEFAULT
                };
                let sets = (&set_of, sets);
                optimal(
                    items.clone(),
                    sets,
                    capacity,
                    &by_number,
                    &tuning,
                    &mut Work::unlimited(),
                    &mut checkpoint(),
                )
            };
            let chosen = solve(0).unwrap();
            assert_eq!(Ok(&chosen), solve(usize::MAX).as_ref(), "case {case}");
            let tokens: u128 = chosen.units.iter().map(|&u| items[u as usize].tokens).sum();
            // Per set at most one: most value within each number of tokens.
            let mut classes: std::collections::BTreeMap<u32, Vec<Item>> = Default::default();
            for item in &items {
                let key = match set_of(item.unit) {
                    NO_SET => sets as u32 + item.unit,
                    set => set,
                };
                classes.entry(key).or_default().push(*item);
            }
            let mut best = vec![None::<u128>; capacity as usize + 1];
            best[0] = Some(0);
            for class in classes.values() {
                let before = best.clone();
                for member in class {
                    for (used, value) in before.iter().enumerate() {
                        let Some(value) = value else { continue };
                        let total = used + member.tokens as usize;
                        if total <= capacity as usize {
                            let value = value + u128::from(member.value);
                            if best[total].is_none_or(|known| known < value) {
                                best[total] = Some(value);
                            }
                        }
                    }
                }
            }
            let most = best.iter().flatten().max().copied().unwrap();
            let fewest = best.iter().position(|&value| value == Some(most)).unwrap();
            assert_eq!(
                (chosen.value, tokens),
                (most, fewest as u128),
                "case {case}"
            );
            let mut taken_sets: Vec<u32> = chosen
                .units
                .iter()
                .map(|&u| set_of(u))
                .filter(|&set| set != NO_SET)
                .collect();
            let kept = taken_sets.len();
            taken_sets.sort_unstable();
            taken_sets.dedup();
            assert_eq!(taken_sets.len(), kept, "case {case}");
        }
    }
}
