//! The fractional bound of the classes the dynamic program has still to come to, at any room:
//! their hulls' steps by value per token, taken while they fit, then a part of the next. A
//! bound at one price per token (the relaxation's, for all classes) is a tangent to this one:
//! exact at the room the relaxation leaves, looser the further a state's room is from it. On
//! classes whose choices differ little in value per token (strongly correlated renderings)
//! this one holds the late levels to under a third of the states (docs/changelog.md).
//!
//! The steps sit in two Fenwick trees (tokens and value) in density order; a class the dynamic
//! program comes to leaves them as steps of nothing, and the room is found by one descent.

use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::select::knapsack::multiple_choice::relaxation::{hull_steps, upper_hull};
use crate::core::select::value::{density_order, fraction_of, Item};
use crate::core::sort_in_pieces::sort_in_pieces;

pub struct RestBound {
    /// Each step's (tokens, value), by density, best first; a left class's are zero.
    steps: Vec<(u128, u64)>,
    /// Fenwick trees over `steps`, 1-based.
    tokens: Vec<u128>,
    values: Vec<u128>,
    /// Where each class's steps stand in `steps`.
    places: Vec<Vec<usize>>,
}

impl RestBound {
    /// The bound of all of `classes` (each its members by tokens).
    pub fn new(
        classes: &[&[Item]],
        sort_piece: usize,
        checkpoint: &mut Checkpoint<'_>,
    ) -> Result<Self, Interrupted> {
        // (step, class)
        let mut ordered: Vec<(Item, u32)> = Vec::new();
        let mut class_steps = Vec::new();
        for (class, members) in classes.iter().enumerate() {
            checkpoint.tick()?;
            class_steps.clear();
            hull_steps(&upper_hull(&mut members.to_vec()), &mut class_steps);
            ordered.extend(class_steps.iter().map(|&step| (step, class as u32)));
        }
        let order = |a: &(Item, u32), b: &(Item, u32)| density_order(&a.0, &b.0);
        sort_in_pieces(&mut ordered, order, sort_piece, false, checkpoint)?;
        let mut places = vec![Vec::new(); classes.len()];
        let mut steps = Vec::with_capacity(ordered.len());
        for (place, (step, class)) in ordered.into_iter().enumerate() {
            places[class as usize].push(place);
            steps.push((step.tokens, step.value));
        }
        let count = steps.len();
        let (mut tokens, mut values) = (vec![0u128; count + 1], vec![0u128; count + 1]);
        for (at, &(step_tokens, step_value)) in steps.iter().enumerate() {
            checkpoint.tick()?;
            let node = at + 1;
            tokens[node] += step_tokens;
            values[node] += u128::from(step_value);
            let parent = node + (node & node.wrapping_neg());
            if parent <= count {
                tokens[parent] += tokens[node];
                values[parent] += values[node];
            }
        }
        Ok(RestBound {
            steps,
            tokens,
            values,
            places,
        })
    }

    /// `class`'s steps no longer count: the dynamic program has come to it.
    pub fn leave(&mut self, class: usize) {
        for &place in &self.places[class] {
            let (step_tokens, step_value) = std::mem::take(&mut self.steps[place]);
            let mut node = place + 1;
            while node < self.tokens.len() {
                self.tokens[node] -= step_tokens;
                self.values[node] -= u128::from(step_value);
                node += node & node.wrapping_neg();
            }
        }
    }

    /// How many steps fit wholly in `room` (in density order, a left class's counted as
    /// fitting), and their tokens and value.
    fn taken_within(&self, room: u128) -> (usize, u128, u128) {
        let count = self.steps.len();
        let (mut taken, mut tokens, mut value) = (0usize, 0u128, 0u128);
        let mut stride = (count + 1).next_power_of_two() / 2;
        while stride > 0 {
            let next = taken + stride;
            if next <= count && tokens + self.tokens[next] <= room {
                taken = next;
                tokens += self.tokens[next];
                value += self.values[next];
            }
            stride /= 2;
        }
        (taken, tokens, value)
    }

    /// The floor of the most the classes left add within `room`.
    pub fn within(&self, room: u128) -> u128 {
        let (taken, tokens, value) = self.taken_within(room);
        // The step after those taken does not fit (a left class's would have, taking none).
        match self.steps.get(taken) {
            Some(&(next, next_value)) => value + fraction_of(next_value, room - tokens, next),
            None => value,
        }
    }

    /// The bound at every room from `low` to `high` into `stretch`, as the points where a
    /// step ends; unless more than `most` steps end there (then `stretch` is left empty).
    pub fn stretch(&self, (low, high): (u128, u128), most: usize, stretch: &mut Stretch) {
        stretch.points.clear();
        let (mut at, mut tokens, mut value) = self.taken_within(low);
        loop {
            let next = self.steps.get(at).copied();
            stretch.points.push(Point {
                tokens,
                value,
                next,
            });
            let Some((next_tokens, next_value)) = next else {
                return;
            };
            at += 1;
            tokens += next_tokens;
            value += u128::from(next_value);
            // Left classes' steps, of nothing, end where the one before did (a class's free
            // step, first by density, is among those `low` takes).
            while let Some(&(0, _)) = self.steps.get(at) {
                at += 1;
            }
            if tokens > high {
                return;
            }
            if stretch.points.len() == most {
                stretch.points.clear();
                return;
            }
        }
    }
}

/// Where a step of the bound ends: the tokens and value taken, and the next step's.
#[derive(Clone, Copy)]
struct Point {
    tokens: u128,
    value: u128,
    next: Option<(u128, u64)>,
}

/// [`RestBound`] over a stretch of rooms, read without a descent.
#[derive(Default)]
pub struct Stretch {
    points: Vec<Point>,
}

impl Stretch {
    #[cfg(test)]
    fn is_filled(&self) -> bool {
        !self.points.is_empty()
    }
}

/// Reads a [`RestBound`] at the rooms of a run of states (falling, as the states come by
/// tokens): from its stretch, a point back at a time, or by a descent where the stretch does
/// not hold the room.
pub struct Sweep<'a> {
    bound: &'a RestBound,
    points: &'a [Point],
    at: usize,
    /// The descents made, for tests that check the stretch is read.
    #[cfg(test)]
    descents: usize,
}

impl<'a> Sweep<'a> {
    pub fn new(bound: &'a RestBound, stretch: &'a Stretch) -> Self {
        Sweep {
            bound,
            points: &stretch.points,
            at: stretch.points.len().saturating_sub(1),
            #[cfg(test)]
            descents: 0,
        }
    }

    /// Whether a set of `value` with `room` left can reach `target`. Rooms that fall from
    /// one call to the next, within the stretch, are read from it a point back at a time;
    /// any other by a descent.
    pub fn reaches(&mut self, room: u128, value: u128, target: u128) -> bool {
        let points = self.points;
        while self.at > 0 && points[self.at].tokens > room {
            self.at -= 1;
        }
        match points.get(self.at) {
            Some(point) if point.holds(room) => point.reaches(room, value, target),
            _ => {
                #[cfg(test)]
                {
                    self.descents += 1;
                }
                value + self.bound.within(room) >= target
            }
        }
    }
}

impl Point {
    /// Whether the bound at `room` is this point's: `room` ends in its next step.
    fn holds(&self, room: u128) -> bool {
        room >= self.tokens
            && self
                .next
                .is_none_or(|(tokens, _)| room - self.tokens < tokens)
    }

    /// Whether a set of `value` with `room` left, which this point holds, can reach `target`.
    fn reaches(&self, room: u128, value: u128, target: u128) -> bool {
        let Some(need) = target
            .checked_sub(value + self.value)
            .filter(|&need| need > 0)
        else {
            return true;
        };
        let Some((tokens, next_value)) = self.next else {
            return false;
        };
        // floor(part * next_value / tokens) >= need, without dividing: in one 64-bit
        // multiplication per side where the factors fit, as on most states.
        let part = room - self.tokens;
        if let (Ok(need), Ok(tokens), Ok(part)) = (
            u64::try_from(need),
            u64::try_from(tokens),
            u64::try_from(part),
        ) {
            return u128::from(part) * u128::from(next_value)
                >= u128::from(need) * u128::from(tokens);
        }
        match (
            need.checked_mul(tokens),
            part.checked_mul(u128::from(next_value)),
        ) {
            (Some(wanted), Some(given)) => given >= wanted,
            _ => fraction_of(next_value, part, tokens) >= need,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::interrupt::Uninterrupted;
    use crate::core::test_support::{item, Lcg};

    fn checkpoint() -> Checkpoint<'static> {
        Checkpoint::new(&Uninterrupted, std::time::Duration::ZERO)
    }

    /// The bound the slow way: every class's hull steps still counted, by density, filled.
    fn filled(classes: &[Vec<Item>], left: &[bool], room: u128) -> u128 {
        let mut steps = Vec::new();
        for (members, &gone) in classes.iter().zip(left) {
            if !gone {
                hull_steps(&upper_hull(&mut members.clone()), &mut steps);
            }
        }
        steps.sort_by(density_order);
        let (mut value, mut room) = (0u128, room);
        for step in steps {
            if step.tokens <= room {
                room -= step.tokens;
                value += u128::from(step.value);
            } else {
                return value + fraction_of(step.value, room, step.tokens);
            }
        }
        value
    }

    /// The bound of three classes. A: (6 for 3), then (4 for 5); B: (8 for 4); C: (1 for 5).
    fn bound_of_a_b_and_c() -> RestBound {
        let classes = [
            vec![item(0, 6, 3), item(1, 10, 8)],
            vec![item(2, 8, 4)],
            vec![item(3, 1, 5)],
        ];
        let views: Vec<&[Item]> = classes.iter().map(Vec::as_slice).collect();
        RestBound::new(&views, 2, &mut checkpoint()).unwrap()
    }

    #[test]
    fn the_bound_fills_the_steps_of_the_classes_left_by_density() {
        let mut bound = bound_of_a_b_and_c();
        // 6 for A's 3, 8 for B's 4, then of A's 5 tokens for 4 the part left: 1, 2 or 3.
        assert_eq!(bound.within(8), 14);
        assert_eq!(bound.within(9), 15);
        assert_eq!(bound.within(10), 16);
        assert_eq!(bound.within(2), 4);
        assert_eq!(bound.within(0), 0);
        assert_eq!(bound.within(1000), 19);
        bound.leave(1);
        // A's two steps, then C's.
        assert_eq!(bound.within(8), 10);
        assert_eq!(bound.within(9), 10);
        assert_eq!(bound.within(1000), 11);
        bound.leave(0);
        bound.leave(2);
        assert_eq!(bound.within(1000), 0);
    }

    #[test]
    fn a_sweep_reads_the_bound_at_falling_rooms_and_any_other() {
        let mut rng = Lcg(5);
        let classes: Vec<Vec<Item>> = (0..40u32)
            .map(|class| {
                (0..3)
                    .map(|member| {
                        let tokens = 1 + rng.below(40);
                        item(class * 3 + member, tokens + 10, u128::from(tokens))
                    })
                    .collect()
            })
            .collect();
        let views: Vec<&[Item]> = classes.iter().map(Vec::as_slice).collect();
        let mut bound = RestBound::new(&views, 4, &mut checkpoint()).unwrap();
        bound.leave(3);
        let mut stretch = Stretch::default();
        for most in [1, 3, 1000] {
            bound.stretch((200, 400), most, &mut stretch);
            assert_eq!(stretch.is_filled(), most == 1000, "most {most}");
            // Falling rooms in the stretch, then rooms outside it and rising.
            let rooms = (200..=400).rev().chain([0, 1000, 150, 401, 10_000, 300]);
            let mut sweep = Sweep::new(&bound, &stretch);
            for (at, room) in rooms.enumerate() {
                if at == 201 {
                    // The falling rooms read from a stretch that holds them, without a descent.
                    let descents = if most == 1000 { 0 } else { 201 * 6 };
                    assert_eq!(sweep.descents, descents, "most {most}");
                }
                let most_reached = bound.within(room);
                for value in [0, 5, 17] {
                    for target in [most_reached + value, most_reached + value + 1] {
                        let reached = value + most_reached >= target;
                        assert_eq!(
                            sweep.reaches(room, value, target),
                            reached,
                            "most {most}, room {room}, value {value}, target {target}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_stretch_holds_the_points_where_steps_end_from_low_to_high() {
        let mut bound = bound_of_a_b_and_c();
        // Steps by density: A's 3, B's 4 (ends at 7), A's 5 (12), C's 5 (17).
        let ends = |stretch: &Stretch| -> Vec<u128> {
            stretch.points.iter().map(|point| point.tokens).collect()
        };
        let mut stretch = Stretch::default();
        bound.stretch((4, 12), 10, &mut stretch);
        assert_eq!(ends(&stretch), [3, 7, 12]);
        bound.stretch((4, 11), 10, &mut stretch);
        assert_eq!(ends(&stretch), [3, 7]);
        bound.stretch((0, 100), 10, &mut stretch);
        assert_eq!(ends(&stretch), [0, 3, 7, 12, 17]);
        assert!(stretch.points[4].next.is_none());
        // Too many points: none.
        bound.stretch((0, 100), 4, &mut stretch);
        assert!(ends(&stretch).is_empty());
        // A left class's steps end where the one before did.
        bound.leave(1);
        bound.stretch((4, 12), 10, &mut stretch);
        assert_eq!(ends(&stretch), [3, 8]);
        // A point holds the rooms from its end to the next step's.
        let point = stretch.points[0];
        let held: Vec<u128> = (0..12).filter(|&room| point.holds(room)).collect();
        assert_eq!(held, [3, 4, 5, 6, 7]);
    }

    #[test]
    fn a_sweep_reads_steps_whose_products_pass_64_and_128_bits_exactly() {
        // Half of a step worth u64::MAX: floor((2**64 - 1) / 2). At 2**40 tokens every
        // factor is in 64 bits and each product past them; at 2**100 a factor is past them
        // and the products past 128 bits.
        for shift in [40, 100] {
            let classes = [vec![item(0, u64::MAX, 1 << shift)]];
            let views: Vec<&[Item]> = classes.iter().map(Vec::as_slice).collect();
            let bound = RestBound::new(&views, 2, &mut checkpoint()).unwrap();
            let mut stretch = Stretch::default();
            bound.stretch((0, 1 << (shift + 1)), 10, &mut stretch);
            let mut sweep = Sweep::new(&bound, &stretch);
            let (half, room) = ((1u128 << 63) - 1, 1 << (shift - 1));
            assert_eq!(bound.within(room), half, "2**{shift} tokens");
            assert!(sweep.reaches(room, 0, half), "2**{shift} tokens");
            assert!(!sweep.reaches(room, 0, half + 1), "2**{shift} tokens");
            assert!(sweep.reaches(room, 1, half + 1), "2**{shift} tokens");
            assert_eq!(sweep.descents, 0);
        }
    }

    #[test]
    fn the_bound_matches_filling_the_steps_left_at_every_room() {
        let mut rng = Lcg(11);
        for case in 0..20 {
            let classes: Vec<Vec<Item>> = (0..1 + case * 3)
                .map(|class| {
                    (0..1 + rng.below(4))
                        .map(|member| {
                            let tokens = u128::from(rng.below(30));
                            item(class * 4 + member as u32, rng.below(50), tokens)
                        })
                        .collect()
                })
                .collect();
            let views: Vec<&[Item]> = classes.iter().map(Vec::as_slice).collect();
            let mut bound = RestBound::new(&views, 3, &mut checkpoint()).unwrap();
            let mut left = vec![false; classes.len()];
            for class in 0..=classes.len() {
                for room in 0..200 {
                    assert_eq!(
                        bound.within(room),
                        filled(&classes, &left, room),
                        "case {case}, {class} left, room {room}"
                    );
                }
                if class < classes.len() {
                    bound.leave(class);
                    left[class] = true;
                }
            }
        }
    }
}
