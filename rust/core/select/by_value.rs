//! The strategies that choose by total value: `density` (a walk by value per token, at least
//! half the optimum) and `optimal` (the exact optimum, one canonical set among ties).
//!
//! Both take the eligible units that are not required, with the capacity the required units
//! leave, and return the units they keep. `rank_order` is the ranking of units, which breaks
//! every tie.

use std::cmp::Ordering;

use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::parent_tree::{Child, ParentTree, NO_NODE};
use crate::core::select::pieces::sort_in_pieces;
use crate::core::select::tuning::Tuning;
use crate::core::select::value::{density_order, split_at_capacity, weigh, Item};

/// What a strategy keeps: units in no particular order, and their value; and the floor of
/// the fractional optimum, which bounds what any set within the capacity keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chosen {
    pub units: Vec<u32>,
    pub value: u128,
    pub bound: u128,
}

impl Chosen {
    pub(crate) fn add(&mut self, item: &Item) {
        self.units.push(item.unit);
        self.value += u128::from(item.value);
    }
}

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
    checkpoint.check()?;
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
struct Walk {
    chosen: Chosen,
    at_break: Option<Item>,
}

/// Keeps, densest first, each item that fits what is left.
fn walk_by_density(
    items: &mut [Item],
    capacity: u128,
    rank_order: &(impl Fn(u32, u32) -> Ordering + Sync),
    sort_piece: usize,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Walk, Interrupted> {
    let order = |a: &Item, b: &Item| density_order(a, b).then_with(|| rank_order(a.unit, b.unit));
    let split = split_at_capacity(items, capacity, weigh, order, checkpoint)?;
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
    sort_in_pieces(&mut smaller, order, sort_piece, false, checkpoint)?;
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

/// The canonical optimum: of the sets of items within `capacity`, those of most value; of
/// those, those of fewest tokens; of those, the one that keeps the better-ranked unit at the
/// first rank where two differ.
///
/// Items are fixed in or out by bounds with strict inequalities, so that no set tied with the
/// optimum is cut; the rest (the core) is solved by a dynamic program over states.
pub fn optimal(
    mut items: Vec<Item>,
    capacity: u128,
    rank_order: &(impl Fn(u32, u32) -> Ordering + Sync),
    tuning: &Tuning,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Chosen, Interrupted> {
    let near = tuning.near_break;
    let walk = walk_by_density(
        &mut items,
        capacity,
        rank_order,
        tuning.sort_piece,
        checkpoint,
    )?;
    let mut chosen = Chosen {
        bound: walk.chosen.bound,
        ..Chosen::default()
    };
    let Some(at_break) = walk.at_break else {
        // Everything fits: all but what only costs tokens.
        for item in &items {
            if item.tokens == 0 || item.value > 0 {
                chosen.add(item);
            }
        }
        return Ok(chosen);
    };
    let mut open = Vec::with_capacity(items.len());
    for item in items {
        // A zero-token unit costs nothing and, kept, wins the rank tie; one of no value only
        // costs tokens; one larger than the capacity never fits.
        if item.tokens == 0 {
            chosen.add(&item);
        } else if item.value > 0 && item.tokens <= capacity {
            open.push(item);
        }
    }
    checkpoint.check()?;
    let best = best_single(&open, capacity, rank_order).map_or(0, |item| u128::from(item.value));
    // The walk's set, less its zero-token units, is a set of open items.
    let lower = (walk.chosen.value - chosen.value).max(best);
    // A better set to reach first, so that the bounds fix more: the open items nearest the
    // break solved exactly, the others as the fractional optimum has them. A few first, then
    // twice as many while the core left is larger than twice those: past that, solving the
    // core itself costs less.
    checkpoint.check()?;
    let reduced = Reduction::new(&open, at_break, capacity);
    checkpoint.check()?;
    let mut lower = lower;
    if let Some(ratio) = reduced.ratio {
        let mut solved = near.min(FIRST_NEAR);
        loop {
            let near_set = near_break(&open, &reduced, lower, ratio, capacity, solved, checkpoint)?;
            lower = lower.max(near_set);
            if solved >= near || reduced.core_len(lower) <= 2 * solved {
                break;
            }
            solved = near.min(2 * solved);
        }
    }
    let (mut core, fixed) = reduced.split(&open, lower);
    checkpoint.check()?;
    chosen.units.extend_from_slice(&fixed.units);
    chosen.value += fixed.value;
    // Worst-ranked first: see `solve_core`.
    core.sort_unstable_by(|a, b| rank_order(b.unit, a.unit));
    let floor = i128::try_from(lower).unwrap_or(i128::MAX) - fixed.value as i128;
    let mut taken = Taken(ParentTree::new(tuning.collect_slack));
    let best = solve_core(
        &core,
        capacity - fixed.tokens,
        reduced.ratio,
        floor,
        Some(&mut taken),
        checkpoint,
    )?
    .expect("the set the floor came from, or a better one, is never cut");
    for at in taken.items(&best, core.len().saturating_sub(1) / BLOCK) {
        chosen.add(&core[at as usize]);
    }
    Ok(chosen)
}

/// How many items near the break `optimal` solves first.
const FIRST_NEAR: usize = 8;

/// The value of a good set: of the items the reduction left open, the `near` ones nearest the
/// break (by `|v_j * t_b - v_b * t_j|`) solved exactly, the others as the fractional optimum
/// has them (in when denser than the break, else out).
fn near_break(
    items: &[Item],
    reduced: &Reduction,
    lower: u128,
    ratio: (i128, i128),
    capacity: u128,
    near: usize,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<u128, Interrupted> {
    let (mut core, fixed) = reduced.split(items, lower);
    let distance = |item: &Item| reduced_gain(item, ratio).map(i128::unsigned_abs);
    if core.len() > near {
        core.select_nth_unstable_by_key(near, distance);
    }
    let (near, far) = core.split_at(near.min(core.len()));
    let (mut tokens, mut value) = (fixed.tokens, fixed.value);
    for item in far {
        if reduced_gain(item, ratio).is_some_and(|gain| gain > 0) {
            tokens += item.tokens;
            value += u128::from(item.value);
        }
    }
    let Some(room) = capacity.checked_sub(tokens) else {
        return Ok(0);
    };
    // Only a set better than `lower` is of use: the others may be cut.
    let floor = i128::try_from(lower)
        .ok()
        .zip(i128::try_from(value).ok())
        .map_or(0, |(lower, value)| lower - value);
    let best = solve_core(near, room, Some(ratio), floor, None, checkpoint)?;
    Ok(best.map_or(0, |best| value + best.value))
}

/// The bound of Dembo and Hammer around the break item `b` of the fractional optimum (ratio
/// `r = v_b / t_b`; any `r >= 0` gives a valid bound, this one the tightest): a set
/// keeps at most `r * capacity + sum(max(0, v_i - r * t_i))`, less `|v_j - r * t_j|` when
/// it differs from the fractional optimum at item `j`. All of it times `t_b`, in integers.
struct Reduction {
    /// `v_b` and `t_b`; `None` when the products do not fit (nothing is then fixed or cut by
    /// bounds).
    ratio: Option<(i128, i128)>,
    /// Each item's `v_j * t_b - v_b * t_j`.
    gains: Vec<i128>,
    /// `v_b * capacity + sum(max(0, gain))`: `t_b` times the fractional optimum.
    bound: i128,
}

/// The items a reduction fixed in, with their tokens and value.
#[derive(Default)]
struct Fixed {
    units: Vec<u32>,
    tokens: u128,
    value: u128,
}

impl Reduction {
    fn new(items: &[Item], at_break: Item, capacity: u128) -> Reduction {
        let unbounded = Reduction {
            ratio: None,
            gains: Vec::new(),
            bound: 0,
        };
        let v_b = i128::from(at_break.value);
        let (Ok(t_b), Ok(capacity)) = (i128::try_from(at_break.tokens), i128::try_from(capacity))
        else {
            return unbounded;
        };
        let gains: Option<Vec<i128>> = items
            .iter()
            .map(|item| reduced_gain(item, (v_b, t_b)))
            .collect();
        let Some(gains) = gains else {
            return unbounded;
        };
        let positive = gains
            .iter()
            .try_fold(0i128, |sum, &gain| sum.checked_add(gain.max(0)));
        let bound = v_b
            .checked_mul(capacity)
            .and_then(|part| part.checked_add(positive?));
        let Some(bound) = bound else {
            return unbounded;
        };
        Reduction {
            ratio: Some((v_b, t_b)),
            gains,
            bound,
        }
    }

    /// How many items `split` leaves open given a set of value `lower`.
    fn core_len(&self, lower: u128) -> usize {
        match self.needed(lower) {
            Some(needed) => self
                .gains
                .iter()
                .filter(|gain| self.bound - gain.abs() >= needed)
                .count(),
            None => self.gains.len(),
        }
    }

    /// `t_b * lower`: what a bound times `t_b` must reach for a set to be kept open.
    fn needed(&self, lower: u128) -> Option<i128> {
        match (self.ratio, i128::try_from(lower)) {
            (Some((_, t_b)), Ok(lower)) => t_b.checked_mul(lower),
            _ => None,
        }
    }

    /// The items (those `new` was given) left open, the core, and the ones fixed in, given a
    /// set of value `lower` within the capacity: an item is fixed when the bound of every set
    /// that differs from the fractional optimum there falls strictly below `lower`.
    fn split(&self, items: &[Item], lower: u128) -> (Vec<Item>, Fixed) {
        let Some(needed) = self.needed(lower) else {
            return (items.to_vec(), Fixed::default());
        };
        let mut core = Vec::new();
        let mut fixed = Fixed::default();
        for (item, &gain) in items.iter().zip(&self.gains) {
            if self.bound - gain.abs() >= needed {
                core.push(*item);
            } else if gain > 0 {
                fixed.units.push(item.unit);
                fixed.tokens += item.tokens;
                fixed.value += u128::from(item.value);
            }
        }
        (core, fixed)
    }
}

/// `v_j * t_b - v_b * t_j`, if it fits.
fn reduced_gain(item: &Item, (v_b, t_b): (i128, i128)) -> Option<i128> {
    let value = i128::from(item.value);
    let tokens = i128::try_from(item.tokens).ok()?;
    value
        .checked_mul(t_b)?
        .checked_sub(v_b.checked_mul(tokens)?)
}

/// One state of the dynamic program: a set of the core items processed so far.
#[derive(Debug, Clone, Copy)]
struct State {
    value: u128,
    tokens: u128,
    /// The items this set took in earlier blocks, in `Taken`; `NO_NODE` for none.
    node: u32,
    /// The items it took in the current block: bit `i` for the block's `i`-th item.
    block_taken: u64,
}

/// The core is processed in blocks of this many items, one bit each in a state.
const BLOCK: usize = 64;

/// What one set took in one block, after what its parent set took in earlier blocks.
#[derive(Debug, Clone, Copy)]
struct Node {
    parent: u32,
    block: u32,
    taken: u64,
}

impl Child for Node {
    fn parent(&self) -> u32 {
        self.parent
    }

    fn set_parent(&mut self, parent: u32) {
        self.parent = parent;
    }
}

/// The sets' items as a tree of blocks.
struct Taken(ParentTree<Node>);

impl Taken {
    /// Ends block `block`: what each state took in it becomes a node.
    fn end_block(&mut self, states: &mut [State], block: u32) {
        for state in states.iter_mut().filter(|state| state.block_taken != 0) {
            state.node = self.0.push(Node {
                parent: state.node,
                block,
                taken: state.block_taken,
            });
            state.block_taken = 0;
        }
        self.0.collect(states, |state| &mut state.node);
    }

    /// The positions in the core of the items `state` took, the last of which is in block
    /// `block`.
    fn items(&self, state: &State, block: usize) -> Vec<u32> {
        let mut items = Vec::new();
        let mut add = |block: usize, taken: u64| {
            let bits = (0..BLOCK).filter(|bit| taken >> bit & 1 == 1);
            items.extend(bits.map(|bit| (block * BLOCK + bit) as u32));
        };
        add(block, state.block_taken);
        for node in self.0.chain(state.node) {
            add(node.block as usize, node.taken);
        }
        items
    }
}

/// The best set of `core` within `capacity`: the state of most value (then fewest tokens);
/// none when no set can keep `floor`.
///
/// Dominated sets are dropped (another with value >= and tokens <=, one strictly), and so are
/// sets whose bound falls strictly below a set already found (`floor`, then the best state's
/// value): no set tied with the optimum is cut. With `taken`, each set's items are kept
/// there, and of two sets with equal value and tokens the one holding the item just taken
/// stays: with the core worst-ranked first, that is the set the third tie rule prefers (the
/// two agree on every better-ranked item, none of them taken yet).
fn solve_core(
    core: &[Item],
    capacity: u128,
    ratio: Option<(i128, i128)>,
    mut floor: i128,
    mut taken: Option<&mut Taken>,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Option<State>, Interrupted> {
    let gains: Option<Vec<i128>> = ratio.map(|ratio| {
        core.iter()
            .map(|item| reduced_gain(item, ratio).unwrap_or(0).max(0))
            .collect()
    });
    let mut unprocessed_gain: i128 = gains.as_ref().map_or(0, |g| g.iter().sum());
    let mut states = vec![State {
        value: 0,
        tokens: 0,
        node: NO_NODE,
        block_taken: 0,
    }];
    let mut next = Vec::new();
    for (at, item) in core.iter().enumerate() {
        checkpoint.check()?;
        if let Some(gains) = &gains {
            unprocessed_gain -= gains[at];
        }
        merge_with_item(&states, item, 1 << (at % BLOCK), capacity, &mut next);
        std::mem::swap(&mut states, &mut next);
        if let Some((v_b, t_b)) = ratio {
            if let Some(best) = states.last() {
                floor = floor.max(best.value as i128);
            }
            // Scaled by t_b: value * t_b + v_b * (capacity - tokens) + the unprocessed gains.
            let needed = floor.saturating_mul(t_b);
            states.retain(|state| {
                let bound = (state.value as i128)
                    .saturating_mul(t_b)
                    .saturating_add(v_b.saturating_mul((capacity - state.tokens) as i128))
                    .saturating_add(unprocessed_gain);
                bound >= needed
            });
        }
        if let Some(taken) = taken.as_deref_mut() {
            if (at + 1) % BLOCK == 0 {
                taken.end_block(&mut states, (at / BLOCK) as u32);
            }
        }
    }
    Ok(states.last().copied())
}

/// `states` and the same sets with `item` taken (those within `capacity`), merged by tokens,
/// keeping only the sets no other dominates; of two with equal value and tokens, the one that
/// took `item`. `bit` marks `item` in the current block.
fn merge_with_item(
    states: &[State],
    item: &Item,
    bit: u64,
    capacity: u128,
    merged: &mut Vec<State>,
) {
    merged.clear();
    let value = u128::from(item.value);
    // An item larger than what the fixed items leave only adds sets that do not fit.
    let room = capacity.checked_sub(item.tokens);
    let with_item = states
        .iter()
        .take_while(|state| room.is_some_and(|room| state.tokens <= room));
    let mut with_item = with_item.peekable();
    let mut without = states.iter().peekable();
    let push = |state: State, merged: &mut Vec<State>| {
        // A later set has at least the tokens of every earlier one: it survives only with
        // strictly more value.
        if merged
            .last()
            .is_none_or(|last: &State| state.value > last.value)
        {
            merged.push(state);
        }
    };
    loop {
        let took = with_item
            .peek()
            .map(|s| (s.tokens + item.tokens, s.value + value));
        let left = without.peek().map(|s| (s.tokens, s.value));
        let take_first = match (took, left) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            // Fewer tokens first; at equal tokens more value first, and at equal value too
            // the set that took the item, so that the other is dropped as not better.
            (Some((t1, v1)), Some((t2, v2))) => t1 < t2 || (t1 == t2 && v1 >= v2),
        };
        if take_first {
            let state = *with_item.next().expect("peeked");
            let (tokens, value) = (state.tokens + item.tokens, state.value + value);
            if merged.last().is_none_or(|last| value > last.value) {
                merged.push(State {
                    value,
                    tokens,
                    node: state.node,
                    block_taken: state.block_taken | bit,
                });
            }
        } else {
            push(*without.next().expect("peeked"), merged);
        }
    }
}

#[cfg(test)]
#[path = "by_value_tests.rs"]
mod tests;
