//! Group names as small numbers, in order of first appearance.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Passes on a hash the caller already has (the bindings give the one Python keeps with each
/// `str`), so names are not hashed twice.
#[derive(Default)]
struct GivenHash(u64);

impl Hasher for GivenHash {
    fn finish(&self) -> u64 {
        self.0
    }

    // Keys are u64 hashes, written with `write_u64`; bytes are folded in for completeness.
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.wrapping_mul(31).wrapping_add(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// Names seen so far: equal bytes get one number. Names sharing a hash are chained.
#[derive(Debug, Default)]
pub struct GroupNames {
    /// The first group seen with each hash, with the start of its name kept inline: most
    /// lookups are settled by this one entry, without reading the name elsewhere.
    first_with_hash: HashMap<u64, Slot, BuildHasherDefault<GivenHash>>,
    next_with_hash: Vec<u32>,
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

const INLINE: usize = 16;

#[derive(Debug, Clone, Copy)]
struct Slot {
    group: u32,
    len: usize,
    head: [u8; INLINE],
}

impl Slot {
    fn new(group: u32, name: &[u8]) -> Self {
        let mut head = [0; INLINE];
        let shown = name.len().min(INLINE);
        head[..shown].copy_from_slice(&name[..shown]);
        Slot {
            group,
            len: name.len(),
            head,
        }
    }

    /// Whether `name` may be this slot's name: always decided for short names.
    fn may_be(&self, name: &[u8]) -> bool {
        let shown = name.len().min(INLINE);
        self.len == name.len() && self.head[..shown] == name[..shown]
    }
}

const NONE: u32 = u32::MAX;

impl GroupNames {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn name(&self, group: u32) -> &[u8] {
        let group = group as usize;
        let start = if group == 0 { 0 } else { self.ends[group - 1] };
        &self.bytes[start..self.ends[group]]
    }

    /// The number of `name`, new or seen before; `hash` must be equal for equal names.
    pub fn number(&mut self, name: &[u8], hash: u64) -> u32 {
        let first = self.first_with_hash.get(&hash).copied();
        if let Some(slot) = first {
            if slot.may_be(name) && (name.len() <= INLINE || self.name(slot.group) == name) {
                return slot.group;
            }
            let mut candidate = self.next_with_hash[slot.group as usize];
            while candidate != NONE {
                if self.name(candidate) == name {
                    return candidate;
                }
                candidate = self.next_with_hash[candidate as usize];
            }
        }
        let group = self.ends.len() as u32;
        self.bytes.extend_from_slice(name);
        self.ends.push(self.bytes.len());
        match first {
            // Chained right after the first group with this hash.
            Some(slot) => {
                let after_first = &mut self.next_with_hash[slot.group as usize];
                let next = std::mem::replace(after_first, group);
                self.next_with_hash.push(next);
            }
            None => {
                self.first_with_hash.insert(hash, Slot::new(group, name));
                self.next_with_hash.push(NONE);
            }
        }
        group
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_names_share_a_number_even_when_hashes_collide() {
        let mut names = GroupNames::default();
        assert_eq!(names.number(b"tool", 7), 0);
        assert_eq!(names.number(b"other", 7), 1);
        assert_eq!(names.number(b"third", 9), 2);
        assert_eq!(names.number(b"tool", 7), 0);
        assert_eq!(names.number(b"other", 7), 1);
        assert_eq!(names.number(b"fourth", 7), 3);
        assert_eq!(names.number(b"other", 7), 1);
        assert_eq!(names.len(), 4);
        assert_eq!(names.name(3), b"fourth");
        assert_eq!(names.name(0), b"tool");
        assert!(!names.is_empty());
        assert!(GroupNames::default().is_empty());
    }

    #[test]
    fn long_names_are_compared_whole() {
        let mut names = GroupNames::default();
        let long = b"a group name longer than sixteen bytes";
        let other = b"a group name longer than sixteen bytes, too";
        let same_start = b"a group name longer than sixteen BYTES";
        assert_eq!(names.number(long, 1), 0);
        assert_eq!(names.number(same_start, 1), 1);
        assert_eq!(names.number(other, 1), 2);
        assert_eq!(names.number(long, 1), 0);
        assert_eq!(names.number(same_start, 1), 1);
        assert_eq!(names.number(other, 1), 2);
        assert_eq!(names.number(b"short", 1), 3);
        assert_eq!(names.number(b"short", 1), 3);
        assert_eq!(names.number(b"shorT", 1), 4);
    }

    #[test]
    fn the_hasher_passes_a_given_hash_on() {
        let mut hasher = GivenHash::default();
        hasher.write_u64(42);
        assert_eq!(hasher.finish(), 42);
        let mut bytes = GivenHash::default();
        bytes.write(&[1, 2]);
        assert_eq!(bytes.finish(), 33);
    }
}
