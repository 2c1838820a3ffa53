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

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// Names seen so far: equal bytes get one number. Names sharing a hash are chained.
#[derive(Debug, Default)]
pub struct GroupNames {
    first_with_hash: HashMap<u64, u32, BuildHasherDefault<GivenHash>>,
    next_with_hash: Vec<u32>,
    bytes: Vec<u8>,
    ends: Vec<usize>,
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
        let mut candidate = self.first_with_hash.get(&hash).copied().unwrap_or(NONE);
        while candidate != NONE {
            if self.name(candidate) == name {
                return candidate;
            }
            candidate = self.next_with_hash[candidate as usize];
        }
        let group = self.ends.len() as u32;
        let previous = self.first_with_hash.insert(hash, group).unwrap_or(NONE);
        self.next_with_hash.push(previous);
        self.bytes.extend_from_slice(name);
        self.ends.push(self.bytes.len());
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
    }

    #[test]
    fn the_hasher_passes_a_given_hash_on() {
        let mut hasher = GivenHash::default();
        hasher.write_u64(42);
        assert_eq!(hasher.finish(), 42);
        let mut bytes = GivenHash::default();
        bytes.write(&[1, 2]);
        assert_eq!(bytes.finish(), 0x102);
    }
}
