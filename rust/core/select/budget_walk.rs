//! The walk of one budget down the ranking, as `greedy` and `prefix` take it, shared by the
//! plain path's packer (fragments) and the policy path's (units): each item fits what is
//! left and is kept, or is passed over because its variant set already has a kept one, or
//! does not fit, which ends a prefix walk. What each packer keeps of the item (its index,
//! value, and the reasons it explains) stays with the packer.

use crate::core::select::names::sets::NO_SET;

/// What the walk did with one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Kept,
    /// Its variant set already has a kept item.
    PassedOver,
    NoRoom,
}

/// One budget's walk: what is left of it, and whether anything further down could still be
/// kept.
#[derive(Debug, Clone)]
pub struct BudgetWalk {
    remaining: u128,
    prefix: bool,
    done: bool,
    zero_token_seen: usize,
    /// Once an item is kept, the walk ends when less room is left than this: no item further
    /// down has fewer tokens (0: it walks on).
    fewest: u128,
    /// Per variant set, whether an item of it is kept; made at the first item in a set.
    taken: Vec<bool>,
}

impl BudgetWalk {
    /// A walk of `room` tokens, stopping at the first item that does not fit when `prefix`
    /// (else passing over it); `done` when it walks nothing at all.
    pub fn new(room: u128, prefix: bool, done: bool) -> Self {
        BudgetWalk {
            remaining: room,
            prefix,
            done,
            zero_token_seen: 0,
            fewest: 0,
            taken: Vec::new(),
        }
    }

    /// The walk, ending once it has kept an item and less than `fewest` tokens are left, the
    /// fewest any item further down has. (Before it keeps one, whatever it walks may count:
    /// the first item, the smallest.)
    pub fn ending_below(self, fewest: u128) -> Self {
        BudgetWalk { fewest, ..self }
    }

    /// Walks one item of `tokens` in variant set `set` ([`NO_SET`] for none) of `sets`.
    #[inline]
    pub fn step(&mut self, tokens: u128, set: u32, sets: usize) -> Step {
        self.zero_token_seen += usize::from(tokens == 0);
        if set != NO_SET {
            if self.taken.is_empty() {
                self.taken = vec![false; sets];
            }
            if self.taken[set as usize] {
                return Step::PassedOver;
            }
        }
        if tokens <= self.remaining {
            self.remaining -= tokens;
            self.done |= self.remaining < self.fewest;
            if set != NO_SET {
                self.taken[set as usize] = true;
            }
            Step::Kept
        } else {
            self.done |= self.prefix;
            Step::NoRoom
        }
    }

    /// Ends the walk once the budget is spent and none of the `zero_token_items` is left to
    /// come (they fit even a spent budget).
    #[inline]
    pub fn end_if_spent(&mut self, zero_token_items: usize) {
        if self.remaining == 0 && self.zero_token_seen == zero_token_items {
            self.done = true;
        }
    }

    #[inline]
    pub fn is_done(&self) -> bool {
        self.done
    }

    pub fn remaining(&self) -> u128 {
        self.remaining
    }
}
