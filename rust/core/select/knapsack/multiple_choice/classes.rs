//! The classes of the multiple-choice knapsack: the items of one variant set side by side,
//! at most one of them to be kept, and each item of no set a class of its own.

use crate::core::select::names::sets::NO_SET;
use crate::core::select::value::Item;

/// Items grouped into classes, at most one of each to be kept: the items of one variant set
/// side by side, and an item of no set alone. Class `c` is `items[starts[c]..starts[c + 1]]`.
#[derive(Debug, Default)]
pub struct Classes {
    pub items: Vec<Item>,
    pub starts: Vec<usize>,
}

impl Classes {
    /// `items` by class, in one counting pass over `sets` set numbers (`set_of` gives a unit's
    /// set, [`NO_SET`] for none): linear, not a sort.
    pub fn new(items: &[Item], set_of: &impl Fn(u32) -> u32, sets: usize) -> Classes {
        // Slot 0 holds the items of no set, each a class of its own; slot s + 1 set s.
        let mut ends = vec![0usize; sets + 2];
        for item in items {
            ends[slot(set_of(item.unit))] += 1;
        }
        let mut start = 0;
        for end in ends.iter_mut() {
            let count = *end;
            *end = start;
            start += count;
        }
        let mut grouped = vec![
            Item {
                unit: 0,
                value: 0,
                tokens: 0
            };
            items.len()
        ];
        for item in items {
            let at = &mut ends[slot(set_of(item.unit))];
            grouped[*at] = *item;
            *at += 1;
        }
        // `ends[s]` is now where slot s ends.
        let alone = ends[0];
        let mut starts: Vec<usize> = (0..alone).collect();
        let mut last = alone;
        for &end in &ends[1..] {
            if end > last {
                starts.push(last);
                last = end;
            }
        }
        starts.push(items.len());
        Classes {
            items: grouped,
            starts,
        }
    }

    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn class(&self, class: usize) -> &[Item] {
        &self.items[self.starts[class]..self.starts[class + 1]]
    }
}

fn slot(set: u32) -> usize {
    if set == NO_SET {
        0
    } else {
        set as usize + 1
    }
}
