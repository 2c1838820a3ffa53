//! Variant sets numbered from their names, and units grouped by them.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::core::select::policy::groups::GroupMarks;
use crate::core::select::value::Item;

/// No variant set: a unit that renders nothing shared.
pub const NO_SET: u32 = u32::MAX;

/// Each fragment's variant set ([`NO_SET`] for none), numbered `0..count` in no particular
/// order: names decide which fragments share one, hashes only make it fast.
#[derive(Debug, Default)]
pub struct VariantSets {
    pub set_of_fragment: Vec<u32>,
    pub count: usize,
}

impl VariantSets {
    /// The sets the marks name, among `fragments` fragments. Sets are small and a table of
    /// them stays in the caches, so each mark is looked up in it by its name's hash; a name
    /// whose hash another name took first (rare) is looked up by its bytes.
    pub fn new(marks: &GroupMarks, fragments: usize) -> VariantSets {
        let mut set_of_fragment = vec![NO_SET; fragments];
        let mut by_hash: HashMap<u64, (u32, usize), BuildHasherDefault<Prehashed>> =
            HashMap::with_capacity_and_hasher(marks.len() / 2, BuildHasherDefault::default());
        let mut by_name: HashMap<&[u8], u32> = HashMap::new();
        let mut count = 0u32;
        for (mark, (fragment, hash)) in marks.marks().enumerate() {
            let mut fresh = || {
                count += 1;
                count - 1
            };
            let set = match by_hash.entry(hash) {
                Entry::Vacant(vacant) => vacant.insert((fresh(), mark)).0,
                Entry::Occupied(taken) => {
                    let (set, first) = *taken.get();
                    let name = marks.name(mark);
                    if name == marks.name(first) {
                        set
                    } else {
                        *by_name.entry(name).or_insert_with(fresh)
                    }
                }
            };
            set_of_fragment[fragment as usize] = set;
        }
        VariantSets {
            set_of_fragment,
            count: count as usize,
        }
    }
}

/// A hasher for keys that are hashes already.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prehashed_key_is_its_own_hash() {
        let mut hasher = Prehashed::default();
        hasher.write_u64(0x1234_5678_9abc_def0);
        assert_eq!(hasher.finish(), 0x1234_5678_9abc_def0);
        // Bytes are folded in, the ninth over the first.
        let mut folded = Prehashed::default();
        folded.write(&[1, 0, 0, 0, 0, 0, 0, 0, 3]);
        assert_eq!(folded.finish(), 2);
    }
}
