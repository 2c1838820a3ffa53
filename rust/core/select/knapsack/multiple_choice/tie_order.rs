//! The states of the dynamic program in the order of the tie rule, best first, so that a tie
//! between two sets alike in tokens and value is settled by comparing two places.
//!
//! The tie rule prefers the set that keeps the better-ranked unit where two sets differ: the
//! order of the sets' membership read as bits, the best rank first. Beside the order, the
//! rank where each state and the next first differ (its gap) is kept. Growing a class in
//! keeps the order whole without comparing sets: adding one unit to every state keeps their
//! order, and a state grown by the class's best-ranked choice comes before every state grown
//! otherwise from states that agree on every rank above that choice's, which are runs of the
//! order cut where a gap ranks above it. So each class's choices, by rank, split the order
//! into nested blocks, the choice's states first in each; the states kept take their places
//! in it, a gap between two of them the best of the gaps in between.

use crate::core::interrupt::{Checkpoint, Interrupted};

/// No state, and the rank of choosing none of a class: below every unit.
pub const NONE: u32 = u32::MAX;

/// A block of the order to place, from `start` to `end`, at `depth` in the choices by rank,
/// and the gap crossed on coming to it.
struct Block {
    start: usize,
    end: usize,
    depth: usize,
    gap: u32,
}

/// The states in the tie rule's order, and the gaps between neighbours.
pub struct TieOrder {
    /// The states, by the tie rule, best first.
    order: Vec<u32>,
    /// `gaps[i]`: the best rank where `order[i]` and `order[i + 1]` differ.
    gaps: Vec<u32>,
    /// The placed states' gaps, and room to place and keep them.
    placed_gaps: Vec<u32>,
    grown_of: Vec<u32>,
    blocks: Vec<Block>,
    by_rank: Vec<usize>,
}

impl TieOrder {
    /// The order of one state.
    pub fn one_state() -> Self {
        TieOrder {
            order: vec![0],
            gaps: Vec::new(),
            placed_gaps: Vec::new(),
            grown_of: Vec::new(),
            blocks: Vec::new(),
            by_rank: Vec::new(),
        }
    }

    /// Places the states grown from the `states` in the order: choice `c`'s (`ranks[c]` its
    /// rank, [`NONE`] for none of the class) are `runs[c]..runs[c + 1]`, each grown from the
    /// state `from(g)`, at most one per state and choice. `places[g]` is set to the place of
    /// grown state `g`.
    pub fn place(
        &mut self,
        states: usize,
        (runs, ranks): (&[usize], &[u32]),
        from: impl Fn(usize) -> u32,
        places: &mut [u32],
        checkpoint: &mut Checkpoint<'_>,
    ) -> Result<(), Interrupted> {
        assert_eq!(
            self.order.len(),
            states,
            "the order is of the states grown from"
        );
        let choices = ranks.len();
        self.by_rank.clear();
        self.by_rank.extend(0..choices);
        self.by_rank.sort_unstable_by_key(|&choice| ranks[choice]);
        // The grown state of each choice (by rank) and state, or NONE.
        self.grown_of.clear();
        self.grown_of.resize(choices * states, NONE);
        for (depth, &choice) in self.by_rank.iter().enumerate() {
            for grown in runs[choice]..runs[choice + 1] {
                self.grown_of[depth * states + from(grown) as usize] = grown as u32;
            }
        }
        self.placed_gaps.clear();
        let mut placed = 0u32;
        let mut gap = NONE;
        self.blocks.clear();
        let rank_at = |depth: usize| ranks[self.by_rank[depth]];
        push_blocks(
            &mut self.blocks,
            &self.gaps,
            (0, self.order.len()),
            (0, rank_at(0)),
            NONE,
        );
        while let Some(block) = self.blocks.pop() {
            gap = gap.min(block.gap);
            let row = &self.grown_of[block.depth * states..][..states];
            for at in block.start..block.end {
                checkpoint.tick()?;
                if at > block.start {
                    gap = gap.min(self.gaps[at - 1]);
                }
                let grown = row[self.order[at] as usize];
                if grown != NONE {
                    if placed > 0 {
                        self.placed_gaps.push(gap);
                    }
                    places[grown as usize] = placed;
                    placed += 1;
                    gap = NONE;
                }
            }
            // This choice's states came first; the rest of the block by the choices after.
            let depth = block.depth + 1;
            if depth < choices {
                let span = (block.start, block.end);
                let after = rank_at(block.depth);
                push_blocks(
                    &mut self.blocks,
                    &self.gaps,
                    span,
                    (depth, rank_at(depth)),
                    after,
                );
            }
        }
        // A state grown twice from one state and choice would leave one unplaced, with a
        // place from before in `places`.
        assert_eq!(
            placed as usize, runs[choices],
            "every grown state placed once"
        );
        Ok(())
    }

    /// Keeps the placed states that `kept[place]` names (the state each becomes, or
    /// [`NONE`]) as the order for the next class.
    pub fn keep(
        &mut self,
        kept: &[u32],
        checkpoint: &mut Checkpoint<'_>,
    ) -> Result<(), Interrupted> {
        self.order.clear();
        self.gaps.clear();
        let mut gap = NONE;
        for (place, &state) in kept.iter().enumerate() {
            checkpoint.tick()?;
            if place > 0 {
                gap = gap.min(self.placed_gaps[place - 1]);
            }
            if state != NONE {
                if !self.order.is_empty() {
                    self.gaps.push(gap);
                }
                self.order.push(state);
                gap = NONE;
            }
        }
        Ok(())
    }
}

/// Pushes the blocks of the order from `start` to `end` placed at `depth`: runs of states
/// that agree above `rank` (the rank of the choice at that depth), the first coming after
/// `first_gap`, each later one after the gap it starts at. Pushed last to first, so that the
/// first is placed first. Choosing none ranks below every unit: its states are placed in
/// the order's own, as one block.
fn push_blocks(
    blocks: &mut Vec<Block>,
    gaps: &[u32],
    (start, mut end): (usize, usize),
    (depth, rank): (usize, u32),
    first_gap: u32,
) {
    if rank != NONE {
        for at in (start + 1..end).rev() {
            if gaps[at - 1] < rank {
                blocks.push(Block {
                    start: at,
                    end,
                    depth,
                    gap: gaps[at - 1],
                });
                end = at;
            }
        }
    }
    blocks.push(Block {
        start,
        end,
        depth,
        gap: first_gap,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::interrupt::{Interrupt, Uninterrupted};
    use crate::core::test_support::{InterruptAt, Lcg};

    /// Whether set `a` comes before set `b` (each its units' ranks, best first) by the tie
    /// rule, and the best rank where they differ.
    fn compare(a: &[u32], b: &[u32]) -> (bool, u32) {
        for (x, y) in a.iter().zip(b) {
            if x != y {
                return (x < y, *x.min(y));
            }
        }
        match (a.len(), b.len()) {
            (m, n) if m > n => (true, a[n]),
            (m, n) if m < n => (false, b[m]),
            _ => panic!("the same set twice"),
        }
    }

    #[test]
    fn placed_and_kept_states_follow_the_tie_rule_with_their_gaps() {
        // Classes of one to four units with ranks dealt at random; each level grows every
        // state by every choice (some grown states dropped), keeps some, and the order and
        // gaps kept are checked against the sets themselves.
        let mut rng = Lcg(17);
        let mut checkpoint = Checkpoint::new(&Uninterrupted, std::time::Duration::ZERO);
        for case in 0..30 {
            let mut deck: Vec<u32> = (0..200).collect();
            for at in (1..deck.len()).rev() {
                deck.swap(at, rng.below(at as u64 + 1) as usize);
            }
            let mut sets: Vec<Vec<u32>> = vec![Vec::new()];
            let mut order = TieOrder::one_state();
            for level in 0..8 {
                let count = 1 + rng.below(4) as usize;
                let units: Vec<u32> = deck.drain(..count).collect();
                let mut ranks: Vec<u32> = vec![NONE];
                ranks.extend(&units);
                // Grown by choice, then by state, each kept with a chance.
                let mut grown: Vec<(u32, usize)> = Vec::new();
                let mut runs = vec![0];
                for choice in 0..ranks.len() {
                    for state in 0..sets.len() {
                        if rng.below(5) > 0 {
                            grown.push((state as u32, choice));
                        }
                    }
                    runs.push(grown.len());
                }
                let mut places = vec![NONE; grown.len()];
                let from = |g: usize| grown[g].0;
                let placing = order.place(
                    sets.len(),
                    (&runs, &ranks),
                    from,
                    &mut places,
                    &mut checkpoint,
                );
                placing.unwrap();
                let set_of = |&(state, choice): &(u32, usize)| {
                    let mut set = sets[state as usize].clone();
                    if ranks[choice] != NONE {
                        set.push(ranks[choice]);
                        set.sort_unstable();
                    }
                    set
                };
                let mut by_place: Vec<usize> = (0..grown.len()).collect();
                by_place.sort_by_key(|&g| places[g]);
                let placed: Vec<u32> = by_place.iter().map(|&g| places[g]).collect();
                assert_eq!(placed, (0..grown.len() as u32).collect::<Vec<_>>());
                for pair in by_place.windows(2) {
                    let (a, b) = (set_of(&grown[pair[0]]), set_of(&grown[pair[1]]));
                    assert!(compare(&a, &b).0, "case {case} level {level}");
                }
                // Keep about two in three, renumbered in place order.
                let mut kept = vec![NONE; grown.len()];
                let mut next_sets = Vec::new();
                for &g in &by_place {
                    if rng.below(3) > 0 {
                        kept[places[g] as usize] = next_sets.len() as u32;
                        next_sets.push(set_of(&grown[g]));
                    }
                }
                if next_sets.is_empty() {
                    break;
                }
                order.keep(&kept, &mut checkpoint).unwrap();
                sets = next_sets;
                let expected: Vec<u32> = sets
                    .windows(2)
                    .map(|pair| compare(&pair[0], &pair[1]).1)
                    .collect();
                assert_eq!(order.gaps, expected, "case {case} level {level}");
                assert_eq!(order.order, (0..sets.len() as u32).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn placing_and_keeping_many_states_ask_for_an_interrupt_as_they_go() {
        // One state grown by a class of 10,000 units, and none of it: each pass is long.
        let count = 10_000usize;
        let mut ranks = vec![NONE];
        ranks.extend(0..count as u32);
        let runs: Vec<usize> = (0..=count + 1).collect();
        let mut places = vec![NONE; count + 1];
        let kept: Vec<u32> = (0..=count as u32).collect();
        let interrupt = InterruptAt::new(1);
        let asks: [(&dyn Interrupt, &dyn Interrupt); 2] =
            [(&interrupt, &Uninterrupted), (&Uninterrupted, &interrupt)];
        for (place_asks, keep_asks) in asks {
            let mut order = TieOrder::one_state();
            let mut placing = Checkpoint::new(place_asks, std::time::Duration::ZERO);
            let mut keeping = Checkpoint::new(keep_asks, std::time::Duration::ZERO);
            let done = order
                .place(1, (&runs, &ranks), |_| 0, &mut places, &mut placing)
                .and_then(|()| order.keep(&kept, &mut keeping));
            assert_eq!(done, Err(Interrupted));
        }
    }
}
