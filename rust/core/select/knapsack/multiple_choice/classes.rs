//! The classes of the multiple-choice knapsack: the items of one variant set side by side,
//! at most one of them to be kept, and each item of no set a class of its own.

use crate::core::select::binned::Binned;
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
    /// `items` by class, dealt by their set (`set_of` gives a unit's set of `sets`,
    /// [`NO_SET`] for none): linear, not a sort.
    pub fn new(items: &[Item], set_of: &impl Fn(u32) -> u32, sets: usize) -> Classes {
        // Bin 0 holds the items of no set, each a class of its own; bin s + 1 set s.
        let by_set = items.iter().map(|item| (bin(set_of(item.unit)), *item));
        let Binned {
            starts: bins,
            items,
        } = Binned::new(by_set, sets + 1);
        let alone = bins[1];
        let mut starts: Vec<usize> = (0..alone).collect();
        // The sets' bins that hold an item, each a class.
        starts.extend(
            bins[1..]
                .windows(2)
                .filter(|bin| bin[1] > bin[0])
                .map(|bin| bin[0]),
        );
        starts.push(items.len());
        Classes { items, starts }
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

fn bin(set: u32) -> usize {
    if set == NO_SET {
        0
    } else {
        set as usize + 1
    }
}
