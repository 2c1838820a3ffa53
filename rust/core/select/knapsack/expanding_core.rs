//! The exact 0-1 knapsack under the tie rule (`optimal`): the reduction fixes most items,
//! then a dynamic program solves the rest, the core, growing out from the break item
//! (Pisinger's expanding core): each set is the fractional optimum with some items flipped,
//! bounded by the next denser and sparser items to come, and remembers its flips 64 items at
//! a time in a [`ParentTree`], which also settles ties by the better-ranked item where two
//! sets first differ.

use std::cell::Cell;
use std::cmp::Ordering;

use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::knapsack::chosen::Chosen;
use crate::core::select::knapsack::greedy::{best_single, break_item, walk_by_density};
use crate::core::select::knapsack::parent_tree::{Child, ParentTree, NO_NODE};
use crate::core::select::knapsack::reduction::{reduced_gain, Reduction};
use crate::core::select::knapsack::word::{narrow_fits, Word};
use crate::core::select::knapsack::work::{Work, STATES_PER_CHECK};
use crate::core::select::tuning::Tuning;
use crate::core::select::value::{density_order, Item};

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
    work: &mut Work,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Chosen, Interrupted> {
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
    let mut open = items;
    open.retain(|item| {
        // A zero-token unit costs nothing and, kept, wins the rank tie; one of no value only
        // costs tokens; one larger than the capacity never fits.
        if item.tokens == 0 {
            chosen.add(item);
        }
        item.tokens > 0 && item.value > 0 && item.tokens <= capacity
    });
    // Each step below walks the open items once.
    checkpoint.advance(open.len())?;
    let single = best_single(&open, capacity, rank_order);
    let best = single.map_or(0, |item| u128::from(item.value));
    // The walk's set, less its zero-token units, is a set of open items.
    let lower = (walk.chosen.value - chosen.value).max(best);
    // `density`'s set: the walk's, or the single unit when it is worth more.
    let by_density = match single {
        Some(single) if best > walk.chosen.value => {
            let mut alone = Chosen {
                bound: walk.chosen.bound,
                ..Chosen::default()
            };
            alone.add(&single);
            alone
        }
        _ => walk.chosen,
    };
    // The bounds are the open units' own: one larger than the capacity, the walk's break,
    // is in no set, and would loosen every bound the reduction and the core use.
    let at_break = if at_break.tokens > capacity {
        let Some(at_break) = break_item(&mut open, capacity, rank_order, checkpoint)? else {
            // Every open unit fits with the rest.
            for item in &open {
                chosen.add(item);
            }
            return Ok(chosen);
        };
        at_break
    } else {
        at_break
    };
    checkpoint.advance(open.len())?;
    let reduced = Reduction::new(&open, at_break, capacity);
    checkpoint.advance(open.len())?;
    let (mut core, fixed) = reduced.split(&open, lower);
    checkpoint.advance(open.len())?;
    chosen.units.extend_from_slice(&fixed.units);
    chosen.value += fixed.value;
    chosen.tokens += fixed.tokens;
    let floor = i128::try_from(lower).unwrap_or(i128::MAX) - fixed.value as i128;
    let mut flips = SolutionVectors(ParentTree::new(tuning.collect_slack));
    let solved = solve_core(
        &mut core,
        (capacity - fixed.tokens, tuning.narrow_states),
        reduced.ratio,
        floor,
        (&mut flips, work),
        rank_order,
        checkpoint,
    )?;
    let Some((best, above, block)) = solved.filter(|(best, _, _)| {
        // Stopped short, the best set found stands only when worth more than `density`'s.
        work.finished() || chosen.value + best.value > by_density.value
    }) else {
        assert!(
            !work.finished(),
            "the set the floor came from, or a better one, is never cut"
        );
        return Ok(by_density);
    };
    let mut flipped = vec![false; core.len()];
    for at in flips.flipped(&best, block) {
        flipped[at as usize] = true;
    }
    for ((item, above), flipped) in core.iter().zip(above).zip(flipped) {
        if above != flipped {
            chosen.add(item);
        }
    }
    Ok(chosen)
}

/// One state of the dynamic program: the fractional optimum's set over the core (the items
/// denser than the break in, the others out), with the processed items it flips.
#[derive(Debug, Clone, Copy)]
struct State<W = u128> {
    value: W,
    tokens: W,
    /// The items this set flipped in earlier blocks, in `SolutionVectors`; `NO_NODE` for none.
    node: u32,
    /// The items it flipped in the current block: bit `i` for the block's `i`-th item.
    block_flips: u64,
}

impl<W: Word> State<W> {
    fn widen(self) -> State {
        State {
            value: self.value.into(),
            tokens: self.tokens.into(),
            node: self.node,
            block_flips: self.block_flips,
        }
    }
}

/// How a state width keeps the states that may still reach the floor: `u64` states by
/// [`Reach`] where its products fit.
trait Reaching: Word {
    /// Keeps the states that may still reach `floor` ([`may_reach`]).
    fn keep_reaching(
        states: &mut Vec<State<Self>>,
        capacity: u128,
        floor: i128,
        next_above: Option<&Item>,
        next_below: Option<&Item>,
    ) {
        retain_reaching(states, capacity, floor, next_above, next_below);
    }
}

impl Reaching for u64 {
    fn keep_reaching(
        states: &mut Vec<State<u64>>,
        capacity: u128,
        floor: i128,
        next_above: Option<&Item>,
        next_below: Option<&Item>,
    ) {
        match Reach::narrow(capacity, floor, next_above, next_below) {
            Some(reach) => states.retain(|state| reach.may_reach(state)),
            None => retain_reaching(states, capacity, floor, next_above, next_below),
        }
    }
}

/// The states that [`may_reach`] `floor`, by the checked bound: what every width does where
/// the 64-bit one does not apply.
fn retain_reaching<W: Word>(
    states: &mut Vec<State<W>>,
    capacity: u128,
    floor: i128,
    next_above: Option<&Item>,
    next_below: Option<&Item>,
) {
    states.retain(|state| may_reach(state, capacity, floor, next_above, next_below));
}

impl Reaching for u128 {}

/// The core is processed in blocks of this many items, one bit each in a state.
const BLOCK: usize = 64;

/// What one set flipped in one block, after what its parent set flipped in earlier blocks.
#[derive(Debug, Clone, Copy)]
struct Node {
    parent: u32,
    block: u32,
    flips: u64,
}

impl Child for Node {
    fn parent(&self) -> u32 {
        self.parent
    }

    fn set_parent(&mut self, parent: u32) {
        self.parent = parent;
    }
}

/// The sets' solution vectors, as the items each flipped, in a tree of blocks.
struct SolutionVectors(ParentTree<Node>);

impl SolutionVectors {
    /// Ends block `block`: what each state flipped in it becomes a node.
    fn end_block<W>(&mut self, states: &mut [State<W>], block: u32) {
        for state in states.iter_mut().filter(|state| state.block_flips != 0) {
            state.node = self.0.push(Node {
                parent: state.node,
                block,
                flips: state.block_flips,
            });
            state.block_flips = 0;
        }
        self.0.collect(states, |state| &mut state.node);
    }

    /// The positions in the core of the items `state` flipped, the last of which is in
    /// block `block`.
    fn flipped(&self, state: &State, block: usize) -> Vec<u32> {
        let mut items = Vec::new();
        let mut add = |block: usize, flips: u64| {
            let bits = (0..BLOCK).filter(|bit| flips >> bit & 1 == 1);
            items.extend(bits.map(|bit| (block * BLOCK + bit) as u32));
        };
        add(block, state.block_flips);
        for node in self.0.chain(state.node) {
            add(node.block as usize, node.flips);
        }
        items
    }

    /// Of the items two sets flip differently (`a` and `b`: each state's chain and current
    /// block), the best-ranked, and whether `a` flips it; and the steps it took (one, and one
    /// per node walked).
    fn first_difference(
        &self,
        a: (u32, u64),
        b: (u32, u64),
        block: usize,
        rank: &[u32],
    ) -> (Option<(usize, bool)>, u64) {
        let mut best: Option<(usize, bool)> = None;
        let mut steps = 1;
        let mut note = |block: usize, a_bits: u64, b_bits: u64| {
            let mut differ = a_bits ^ b_bits;
            while differ != 0 {
                let bit = differ.trailing_zeros() as usize;
                differ &= differ - 1;
                let at = block * BLOCK + bit;
                if best.is_none_or(|(best, _)| rank[at] < rank[best]) {
                    best = Some((at, a_bits >> bit & 1 == 1));
                }
            }
        };
        note(block, a.1, b.1);
        let (mut a, mut b) = (a.0, b.0);
        // Both chains run from later blocks to earlier ones; from a node they share, they
        // are the same.
        while a != b {
            steps += 1;
            let block_of = |node: u32| (node != NO_NODE).then(|| self.0[node].block);
            match block_of(a).cmp(&block_of(b)) {
                Ordering::Greater => {
                    note(self.0[a].block as usize, self.0[a].flips, 0);
                    a = self.0[a].parent;
                }
                Ordering::Less => {
                    note(self.0[b].block as usize, 0, self.0[b].flips);
                    b = self.0[b].parent;
                }
                Ordering::Equal => {
                    let (na, nb) = (self.0[a], self.0[b]);
                    note(na.block as usize, na.flips, nb.flips);
                    (a, b) = (na.parent, nb.parent);
                }
            }
        }
        (best, steps)
    }
}

/// The core in the order it is solved, growing out from the break: the items denser than
/// the break (in the fractional optimum) nearest the break first, taking turns with the
/// others, densest first. `above[i]`: whether the `i`-th is one of the denser.
fn expanding_order(core: &mut Vec<Item>, ratio: Option<(i128, i128)>) -> Vec<bool> {
    let is_above = |item: &Item| {
        ratio.is_some_and(|ratio| reduced_gain(item, ratio).is_some_and(|gain| gain > 0))
    };
    let (mut above, mut below): (Vec<Item>, Vec<Item>) = core.iter().partition(|i| is_above(i));
    above.sort_unstable_by(|a, b| density_order(b, a).then(b.unit.cmp(&a.unit)));
    below.sort_unstable_by(|a, b| density_order(a, b).then(a.unit.cmp(&b.unit)));
    core.clear();
    let mut flags = Vec::with_capacity(above.len() + below.len());
    let (mut above, mut below) = (above.into_iter(), below.into_iter());
    loop {
        let (a, b) = (above.next(), below.next());
        if a.is_none() && b.is_none() {
            break;
        }
        for (item, is_above) in [(a, true), (b, false)] {
            if let Some(item) = item {
                core.push(item);
                flags.push(is_above);
            }
        }
    }
    flags
}

/// The best set of `core` within `capacity`: the state of most value (then fewest tokens),
/// and the block its last flips are in; none when no set can keep `floor`. Once `work` is
/// spent, the best set found so far (items not processed yet as in the fractional optimum),
/// if one fits. `core` is put in the order it is solved in, which the
/// returned flips and flags (whether each item is in the set unflipped) refer to.
///
/// Dominated sets are dropped (another with value >= and tokens <=, one strictly), and so are
/// sets whose bound falls strictly below a set already found (`floor`, then the best state's
/// value): no set tied with the optimum is cut. Each set's flips are kept in `flips`, and
/// of two sets with equal value and tokens the one that keeps the better-ranked
/// item where they first differ stays (the third tie rule: the two agree on every item not
/// processed yet).
fn solve_core(
    core: &mut Vec<Item>,
    (capacity, narrow): (u128, bool),
    ratio: Option<(i128, i128)>,
    floor: i128,
    flips_and_work: (&mut SolutionVectors, &mut Work),
    rank_order: &impl Fn(u32, u32) -> Ordering,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Option<(State, Vec<bool>, usize)>, Interrupted> {
    // A state holds at most every core item's value and tokens; the merge's limit is the
    // capacity plus the denser items' tokens.
    let tokens = core
        .iter()
        .fold(capacity, |sum, item| sum.saturating_add(item.tokens));
    let value: u128 = core.iter().map(|item| u128::from(item.value)).sum();
    let solve = if narrow_fits(narrow, tokens.max(value)) {
        solve_in::<u64>
    } else {
        solve_in::<u128>
    };
    solve(
        core,
        capacity,
        ratio,
        floor,
        flips_and_work,
        rank_order,
        checkpoint,
    )
}

/// [`solve_core`] with states of `W` value and tokens, which hold the core's sums.
fn solve_in<W: Reaching>(
    core: &mut Vec<Item>,
    capacity: u128,
    ratio: Option<(i128, i128)>,
    mut floor: i128,
    (flips, work): (&mut SolutionVectors, &mut Work),
    rank_order: &impl Fn(u32, u32) -> Ordering,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Option<(State, Vec<bool>, usize)>, Interrupted> {
    let above = expanding_order(core, ratio);
    let mut by_rank: Vec<u32> = (0..core.len() as u32).collect();
    by_rank.sort_unstable_by(|&a, &b| rank_order(core[a as usize].unit, core[b as usize].unit));
    let mut rank = vec![0u32; core.len()];
    for (place, &at) in by_rank.iter().enumerate() {
        rank[at as usize] = place as u32;
    }
    // After each item, the next denser item and the next sparser one still to come.
    let mut next_above = vec![None; core.len()];
    let mut next_below = vec![None; core.len()];
    let (mut later_above, mut later_below) = (None, None);
    for at in (0..core.len()).rev() {
        (next_above[at], next_below[at]) = (later_above, later_below);
        if above[at] {
            later_above = Some(at);
        } else {
            later_below = Some(at);
        }
    }
    let (mut above_tokens, mut above_value) = (0u128, 0u128);
    for (item, _) in core.iter().zip(&above).filter(|(_, &above)| above) {
        above_tokens += item.tokens;
        above_value += u128::from(item.value);
    }
    let (capacity, mut above_tokens, above_value) =
        (W::of(capacity), W::of(above_tokens), W::of(above_value));
    let mut states = vec![State {
        value: above_value,
        tokens: above_tokens,
        node: NO_NODE,
        block_flips: 0,
    }];
    let mut next = Vec::new();
    let mut processed = 0;
    for (at, item) in core.iter().enumerate() {
        // A step per state, merged with its flipped copy into at most twice as many.
        checkpoint.advance(states.len())?;
        if !work.take(states.len() as u64, 2 * states.len()) {
            break;
        }
        let bit = 1 << (at % BLOCK);
        if above[at] {
            above_tokens = above_tokens - W::of(item.tokens);
        }
        // A set over the capacity by more than the denser items still to come never fits.
        let limit = capacity + above_tokens;
        let flip = if above[at] { Flip::Remove } else { Flip::Add };
        let walked = Cell::new(0u64);
        let prefer = |source: &State<W>, other: &State<W>| {
            let a = (source.node, source.block_flips | bit);
            let b = (other.node, other.block_flips);
            let (first, steps) = flips.first_difference(a, b, at / BLOCK, &rank);
            walked.set(walked.get() + steps);
            match first {
                // The set holding that item stays.
                Some((first, in_a)) => in_a != above[first],
                None => true,
            }
        };
        merge_with_item(
            &states,
            item,
            (flip, bit),
            limit,
            prefer,
            &mut next,
            checkpoint,
        )?;
        work.spend(walked.get());
        std::mem::swap(&mut states, &mut next);
        let fits = states.partition_point(|state| state.tokens <= capacity);
        if let Some(best) = fits.checked_sub(1).map(|best| &states[best]) {
            floor = floor.max(i128::try_from(best.value.into()).unwrap_or(i128::MAX));
        }
        if ratio.is_some() {
            let (above_next, below_next) = (
                next_above[at].map(|at| &core[at]),
                next_below[at].map(|at| &core[at]),
            );
            W::keep_reaching(&mut states, capacity.into(), floor, above_next, below_next);
        }
        if (at + 1) % BLOCK == 0 {
            flips.end_block(&mut states, (at / BLOCK) as u32);
        }
        processed = at + 1;
    }
    let fits = states.partition_point(|state| state.tokens <= capacity);
    let block = processed.saturating_sub(1) / BLOCK;
    Ok(fits
        .checked_sub(1)
        .map(|best| (states[best].widen(), above, block)))
}

/// Whether a set may still reach `floor`: at best it fills what is left of the capacity at
/// the density of the next sparser item to come, or, over the capacity, gives up the excess
/// at the density of the next denser one. Kept when the products do not fit.
fn may_reach<W: Word>(
    state: &State<W>,
    capacity: u128,
    floor: i128,
    next_above: Option<&Item>,
    next_below: Option<&Item>,
) -> bool {
    let (value, tokens): (u128, u128) = (state.value.into(), state.tokens.into());
    let reach = || -> Option<bool> {
        let value = i128::try_from(value).ok()?;
        if tokens <= capacity {
            let Some(next) = next_below else {
                return Some(value >= floor);
            };
            let (v_n, t_n) = (i128::from(next.value), i128::try_from(next.tokens).ok()?);
            let room = i128::try_from(capacity - tokens).ok()?;
            let bound = value
                .checked_mul(t_n)?
                .checked_add(room.checked_mul(v_n)?)?;
            Some(bound >= floor.checked_mul(t_n)?)
        } else {
            let Some(next) = next_above else {
                return Some(false);
            };
            let (v_n, t_n) = (i128::from(next.value), i128::try_from(next.tokens).ok()?);
            let excess = i128::try_from(tokens - capacity).ok()?;
            let bound = value
                .checked_mul(t_n)?
                .checked_sub(excess.checked_mul(v_n)?)?;
            Some(bound >= floor.checked_mul(t_n)?)
        }
    };
    reach().unwrap_or(true)
}

/// [`may_reach`] for one item's 64-bit states, in one 64-bit multiplication per product
/// where the capacity, the floor and the next items are below 2**62: with a state's value and
/// tokens below 2**64, every product and sum is then below 2**127, so neither form overflows
/// and both decide alike. It is most of the work on a core of many states.
struct Reach {
    capacity: u64,
    floor: u128,
    /// The next sparser item's value and tokens, and the floor times its tokens.
    below: Option<(u64, u64, u128)>,
    above: Option<(u64, u64, u128)>,
}

impl Reach {
    const LIMIT: u128 = 1 << 62;

    /// The bound, or none when the capacity, the floor or the next items are too large.
    fn narrow(
        capacity: u128,
        floor: i128,
        next_above: Option<&Item>,
        next_below: Option<&Item>,
    ) -> Option<Reach> {
        let small = |n: u128| (n < Reach::LIMIT).then_some(n as u64);
        let floor = u128::try_from(floor).ok().and_then(small)?;
        let capacity = small(capacity)?;
        let next = |item: Option<&Item>| -> Option<Option<(u64, u64, u128)>> {
            let Some(item) = item else {
                return Some(None);
            };
            let (value, tokens) = (small(u128::from(item.value))?, small(item.tokens)?);
            Some(Some((
                value,
                tokens,
                u128::from(floor) * u128::from(tokens),
            )))
        };
        Some(Reach {
            capacity,
            floor: u128::from(floor),
            below: next(next_below)?,
            above: next(next_above)?,
        })
    }

    fn may_reach(&self, state: &State<u64>) -> bool {
        let (value, tokens) = (state.value, state.tokens);
        let times = |a: u64, b: u64| u128::from(a) * u128::from(b);
        if tokens <= self.capacity {
            match self.below {
                None => u128::from(value) >= self.floor,
                Some((v_n, t_n, floor)) => {
                    times(value, t_n) + times(self.capacity - tokens, v_n) >= floor
                }
            }
        } else {
            match self.above {
                None => false,
                Some((v_n, t_n, floor)) => {
                    times(value, t_n) >= floor + times(tokens - self.capacity, v_n)
                }
            }
        }
    }
}

/// What processing an item does to a set: adds it, or, for an item the set holds unflipped,
/// removes it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flip {
    Add,
    Remove,
}

/// `states` and the same sets with `item` flipped (those within `limit` tokens), merged by
/// tokens, keeping only the sets no other dominates; of two with equal value and tokens,
/// the flipped one if `prefer` says so. `bit` marks `item` in the current block.
fn merge_with_item<W: Word>(
    states: &[State<W>],
    item: &Item,
    (flip, bit): (Flip, u64),
    limit: W,
    prefer: impl Fn(&State<W>, &State<W>) -> bool,
    merged: &mut Vec<State<W>>,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<(), Interrupted> {
    merged.clear();
    let (value, tokens) = (W::of(u128::from(item.value)), W::of(item.tokens));
    let flipped = |state: &State<W>| match flip {
        Flip::Add => (state.tokens + tokens, state.value + value),
        Flip::Remove => (state.tokens - tokens, state.value - value),
    };
    let room = (limit >= tokens).then(|| limit - tokens);
    let with_item = states
        .iter()
        .take_while(|state| flip == Flip::Remove || room.is_some_and(|room| state.tokens <= room));
    let mut with_item = with_item.peekable();
    let mut without = states.iter().peekable();
    // A later set has at least the tokens of every earlier one: it survives only with
    // strictly more value.
    let push = |state: State<W>, merged: &mut Vec<State<W>>| {
        if merged
            .last()
            .is_none_or(|last: &State<W>| state.value > last.value)
        {
            merged.push(state);
        }
    };
    // A merge of many states asks for an interrupt as it goes, once per piece of them.
    let mut steps = 0;
    loop {
        steps += 1;
        if steps == STATES_PER_CHECK {
            steps = 0;
            checkpoint.advance(STATES_PER_CHECK)?;
        }
        let took = with_item.peek().map(|s| flipped(s));
        let left = without.peek().map(|s| (s.tokens, s.value));
        let take_first = match (took, left) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((t1, v1)), Some((t2, v2))) => {
                if (t1, v1) == (t2, v2) {
                    // The same value and tokens: one of the two stays, the other is dropped
                    // as not better.
                    let (source, other) = (
                        with_item.peek().expect("peeked"),
                        without.peek().expect("peeked"),
                    );
                    prefer(source, other)
                } else {
                    // Fewer tokens first; at equal tokens more value first.
                    t1 < t2 || (t1 == t2 && v1 > v2)
                }
            }
        };
        if take_first {
            let state = *with_item.next().expect("peeked");
            let (tokens, value) = flipped(&state);
            push(
                State {
                    value,
                    tokens,
                    node: state.node,
                    block_flips: state.block_flips | bit,
                },
                merged,
            );
        } else {
            push(*without.next().expect("peeked"), merged);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::interrupt::Interrupt;
    use crate::core::test_support::{item, InterruptAt};

    #[test]
    fn a_merge_asks_for_an_interrupt_once_per_piece_of_states() {
        // 12,000 states and their copies with the item: 24,000 steps, five pieces.
        let states: Vec<State<u64>> = (0..12_000)
            .map(|n| State {
                value: n,
                tokens: n,
                node: NO_NODE,
                block_flips: 0,
            })
            .collect();
        let merge = |interrupt: &dyn Interrupt| {
            let mut checkpoint = Checkpoint::new(interrupt, std::time::Duration::ZERO);
            let mut merged = Vec::new();
            let prefer = |_: &State<u64>, _: &State<u64>| true;
            let flip = (Flip::Add, 1);
            merge_with_item(
                &states,
                &item(0, 1, 1),
                flip,
                u64::MAX,
                prefer,
                &mut merged,
                &mut checkpoint,
            )
            .map(|()| merged.len())
        };
        assert_eq!(merge(&InterruptAt::new(5)), Err(Interrupted));
        assert_eq!(merge(&InterruptAt::new(6)), Ok(12_001));
    }

    #[test]
    fn a_first_difference_takes_a_step_and_one_per_node_walked() {
        let mut flips = SolutionVectors(ParentTree::new(0));
        let node = |parent, block, flips| Node {
            parent,
            block,
            flips,
        };
        // Two chains from one shared node: `a` has two nodes of its own, `b` one.
        let shared = flips.0.push(node(NO_NODE, 0, 0b1));
        let a1 = flips.0.push(node(shared, 1, 0b10));
        let a2 = flips.0.push(node(a1, 2, 0b1));
        let b1 = flips.0.push(node(shared, 2, 0b100));
        let rank: Vec<u32> = (0..3 * BLOCK as u32).collect();
        // Blocks 2 and 2, then 1 against 0, then the shared node: two nodes walked. The
        // best-ranked item flipped by one only is block 1's second, flipped by `a`.
        let (first, steps) = flips.first_difference((a2, 0), (b1, 0), 3, &rank);
        assert_eq!(first, Some((BLOCK + 1, true)));
        assert_eq!(steps, 3);
        assert_eq!(
            flips.first_difference((a2, 0), (a2, 0), 3, &rank),
            (None, 1)
        );
    }

    #[test]
    fn the_narrow_bound_decides_as_the_checked_one_and_stands_aside_when_a_product_may_not_fit() {
        use crate::core::test_support::{item, Lcg};
        let mut rng = Lcg(17);
        // Small numbers meet every equality; the big ones sit on either side of the limit.
        let pick = |rng: &mut Lcg, big: bool| -> u128 {
            if big && rng.below(3) == 0 {
                Reach::LIMIT - 2 + u128::from(rng.below(4))
            } else {
                u128::from(rng.below(40))
            }
        };
        let (mut narrowed, mut kept, mut dropped, mut aside, mut large) = (0, 0, 0, 0, 0);
        for case in 0..20_000 {
            let big = case % 4 == 0;
            let mut states: Vec<State<u64>> = Vec::new();
            let (mut tokens, mut value) = (rng.below(40), rng.below(40));
            for _ in 0..1 + rng.below(5) {
                states.push(State {
                    value,
                    tokens,
                    node: NO_NODE,
                    block_flips: 0,
                });
                tokens += 1 + rng.below(40);
                value += 1 + rng.below(40);
            }
            // A state may be as large as 64 bits allow: its products still fit.
            if big && rng.below(2) == 0 {
                let at = rng.below(states.len() as u64) as usize;
                states[at].tokens = u64::MAX - rng.below(4);
                states[at].value = u64::MAX - rng.below(4);
            }
            let capacity = pick(&mut rng, big);
            let floor = pick(&mut rng, big) as i128 - if rng.below(5) == 0 { 45 } else { 0 };
            let next = |rng: &mut Lcg| {
                (rng.below(4) != 0).then(|| item(0, pick(rng, big) as u64, pick(rng, big)))
            };
            let (above, below) = (next(&mut rng), next(&mut rng));
            let (above, below) = (above.as_ref(), below.as_ref());
            let small = [capacity]
                .into_iter()
                .chain(
                    above
                        .into_iter()
                        .chain(below)
                        .flat_map(|item| [u128::from(item.value), item.tokens]),
                )
                .all(|n| n < Reach::LIMIT);
            let fits = small && (0..Reach::LIMIT as i128).contains(&floor);
            let narrow = Reach::narrow(capacity, floor, above, below);
            assert_eq!(narrow.is_some(), fits);
            let Some(reach) = narrow else {
                aside += 1;
                continue;
            };
            narrowed += 1;
            for state in &states {
                let checked = may_reach(state, capacity, floor, above, below);
                assert_eq!(
                    reach.may_reach(state),
                    checked,
                    "{state:?} {capacity} {floor}"
                );
                if u128::from(state.value.max(state.tokens)) >= Reach::LIMIT {
                    large += 1;
                } else if checked {
                    kept += 1;
                } else {
                    dropped += 1;
                }
            }
        }
        assert!(narrowed > 10_000 && aside > 1_000, "{narrowed} {aside}");
        assert!(kept > 5_000 && dropped > 5_000, "{kept} {dropped}");
        assert!(large > 100, "{large} states past 2**62");
    }
}
