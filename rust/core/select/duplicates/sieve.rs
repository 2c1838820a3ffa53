//! Finding fragments that share an id: hashes sift out the few that may, and the ids
//! themselves decide.

use crate::core::select::ids::FragmentIds;
use crate::core::select::names::spread::SPREAD;

/// Bits per hash in the bitmap that sifts out the hashes seen only once.
const BITS_PER_HASH: usize = 16;

/// Bits per repeated hash in the bitmap that picks out the hashes to compare.
const BITS_PER_REPEAT: usize = 64;

/// Hashes taken in as fragments are read, sifted as they come: a bitmap of the slots taken
/// so far sets apart every hash met in a slot already taken (each later occurrence of a
/// repeated hash, and a few percent of the others).
#[derive(Debug)]
pub struct Sieve {
    seen: Vec<u64>,
    slot_bits: u32,
    /// The hashes met in a taken slot, in input order.
    again: Vec<u64>,
}

impl Sieve {
    /// A sieve for `len` hashes. Its bitmap is made by the first hash taken, on the thread
    /// that takes it, not on the reader's before it starts.
    pub fn new(len: usize) -> Self {
        Sieve {
            seen: Vec::new(),
            slot_bits: slot_bits(len, BITS_PER_HASH),
            again: Vec::new(),
        }
    }

    #[inline]
    pub fn take(&mut self, hash: u64) {
        if self.seen.is_empty() {
            self.seen.resize(1 << (self.slot_bits - 6), 0);
        }
        let (word, bit) = slot(hash, self.slot_bits);
        let seen = &mut self.seen[word];
        if *seen & bit != 0 {
            self.again.push(hash);
        }
        *seen |= bit;
    }

    /// Groups of indices into `hashes` (the hashes taken, in order) whose hashes are equal,
    /// each group ascending, groups ordered by their first index. Equal ids always land in
    /// one group; the caller compares the ids themselves, since different ids may share a
    /// hash.
    /// `bits` is a buffer for a bitmap, which the caller may reuse.
    pub fn colliding_groups(&self, hashes: &[u64], bits: &mut Vec<u64>) -> Vec<Vec<u32>> {
        let mut members = self.candidates(hashes, bits);
        members.sort_unstable();
        let mut groups: Vec<Vec<u32>> = members
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|group| group.len() > 1)
            .map(|group| group.iter().map(|&(_, index)| index).collect())
            .collect();
        groups.sort_unstable_by_key(|group| group[0]);
        groups
    }

    /// The hashes that may occur more than once, with their indices: every hash met again,
    /// wherever it occurs, and a few others, sifted by a bitmap of the hashes met again.
    fn candidates(&self, hashes: &[u64], repeated: &mut Vec<u64>) -> Vec<(u64, u32)> {
        if self.again.is_empty() {
            return Vec::new();
        }
        let slot_bits = slot_bits(self.again.len(), BITS_PER_REPEAT);
        repeated.clear();
        repeated.resize(1 << (slot_bits - 6), 0);
        for &hash in &self.again {
            let (word, bit) = slot(hash, slot_bits);
            repeated[word] |= bit;
        }
        (0u32..)
            .zip(hashes)
            .filter(|&(_, &hash)| {
                let (word, bit) = slot(hash, slot_bits);
                repeated[word] & bit != 0
            })
            .map(|(index, &hash)| (hash, index))
            .collect()
    }
}

/// Bits that number the slots of a bitmap of `per_hash` bits for each of `len` hashes: at
/// most 2^32 slots, which the hashes of the largest input fill once.
fn slot_bits(len: usize, per_hash: usize) -> u32 {
    (len.min(1 << 28).saturating_mul(per_hash))
        .next_power_of_two()
        .trailing_zeros()
        .clamp(6, 32)
}

/// The word and bit of `hash`'s slot among 2^`slot_bits`.
#[inline]
fn slot(hash: u64, slot_bits: u32) -> (usize, u64) {
    let slot = (hash.wrapping_mul(SPREAD) >> (64 - slot_bits)) as usize;
    (slot / 64, 1u64 << (slot % 64))
}

/// The duplicate reported to the user: the earliest index `j` whose id already appeared,
/// with the first index `i` holding that id. Each group is sorted by id, so that a group of
/// many different ids sharing a hash costs a sort, not a comparison of every pair.
pub fn first_duplicate(groups: &[Vec<u32>], ids: &impl FragmentIds) -> Option<(u32, u32)> {
    let mut repeats = Vec::new();
    for group in groups {
        let mut members = group.clone();
        members.sort_unstable_by(|&a, &b| ids.compare(a, b).then(a.cmp(&b)));
        for same in members.chunk_by(|&a, &b| ids.bytes(a) == ids.bytes(b)) {
            if let [first, second, ..] = *same {
                repeats.push((first, second));
            }
        }
    }
    repeats.into_iter().min_by_key(|&(_, second)| second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_collisions() {
        assert!(colliding_groups(&[1, 2, 3]).is_empty());
        assert!(colliding_groups(&[]).is_empty());
    }

    #[test]
    fn groups_by_hash() {
        assert_eq!(
            colliding_groups(&[9, 4, 9, 7, 4, 9]),
            vec![vec![0, 2, 5], vec![1, 4]]
        );
    }

    #[test]
    fn many_hashes_across_buckets() {
        // A multiplicative hash spreads over the top bits, as a keyed hash does.
        let mut hashes: Vec<u64> = (0..100_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        assert!(colliding_groups(&hashes).is_empty());
        hashes[70_000] = hashes[123];
        hashes[99_999] = hashes[5];
        assert_eq!(
            colliding_groups(&hashes),
            vec![vec![5, 99_999], vec![123, 70_000]]
        );
    }

    #[test]
    fn zero_and_hashes_sharing_a_slot() {
        // 0 is a hash like any other; hashes sharing a bitmap slot are told apart exactly.
        let hashes = [0, 8, 16, 0, 24, 16, 8 << 40, 1 << 63, (1 << 63) + 1];
        assert_eq!(colliding_groups(&hashes), vec![vec![0, 3], vec![2, 5]]);
        let crowded: Vec<u64> = (0..5000).map(|i| i << 50).collect();
        assert!(colliding_groups(&crowded).is_empty());
    }

    /// Distinct hashes from a keyed-hash-like generator.
    fn scattered(count: u64) -> Vec<u64> {
        (1..=count)
            .map(|i| {
                let mixed = (i ^ (i >> 7)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                mixed ^ (mixed >> 31)
            })
            .collect()
    }

    fn sieved(hashes: &[u64]) -> Sieve {
        let mut sieve = Sieve::new(hashes.len());
        for &hash in hashes {
            sieve.take(hash);
        }
        sieve
    }

    fn colliding_groups(hashes: &[u64]) -> Vec<Vec<u32>> {
        sieved(hashes).colliding_groups(hashes, &mut Vec::new())
    }

    #[test]
    fn few_distinct_hashes_are_candidates_and_every_repeat_is() {
        let mut hashes = scattered(20_000);
        let mut sorted = hashes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), hashes.len());
        let sieve = sieved(&hashes);
        let again = sieve.again.len();
        let found = sieve.candidates(&hashes, &mut Vec::new());
        assert!(again > 0 && again < hashes.len() / 16, "{again}");
        assert!(
            found.len() >= 2 * again && found.len() < 4 * again,
            "{}",
            found.len()
        );
        assert!(colliding_groups(&hashes).is_empty());
        hashes[19_999] = hashes[3];
        let found = sieved(&hashes).candidates(&hashes, &mut Vec::new());
        assert!(found.contains(&(hashes[3], 3)) && found.contains(&(hashes[3], 19_999)));
        assert_eq!(colliding_groups(&hashes), vec![vec![3, 19_999]]);
    }

    #[test]
    fn the_bitmap_is_made_by_the_first_hash_taken() {
        let mut sieve = Sieve::new(1000);
        assert!(sieve.seen.is_empty());
        sieve.take(7);
        assert_eq!(sieve.seen.len(), (1 << 14) / 64);
        let marked: u32 = sieve.seen.iter().map(|word| word.count_ones()).sum();
        assert_eq!(marked, 1);
        sieve.take(8);
        sieve.take(7);
        assert_eq!(sieve.again, [7]);
    }

    #[test]
    fn bitmaps_are_sized_by_the_hashes_and_the_buffer_reused() {
        assert_eq!(slot_bits(1000, BITS_PER_HASH), 14);
        assert_eq!(slot_bits(1024, BITS_PER_HASH), 14);
        assert_eq!(slot_bits(1025, BITS_PER_HASH), 15);
        assert_eq!(slot_bits(0, BITS_PER_HASH), 6);
        assert_eq!(slot_bits(usize::MAX, BITS_PER_HASH), 32);
        assert_eq!(slot_bits(1 << 26, BITS_PER_REPEAT), 32);
        assert_eq!(sieved(&[1; 1000]).seen.len(), (1 << 14) / 64);
        let mut bits = vec![u64::MAX; 3];
        let hashes: Vec<u64> = (0..1000).collect();
        assert!(sieved(&hashes)
            .colliding_groups(&hashes, &mut bits)
            .is_empty());
        assert_eq!(
            sieved(&[7, 7]).colliding_groups(&[7, 7], &mut bits),
            vec![vec![0, 1]]
        );
        assert_eq!(bits.len(), 1);
        let repeats = vec![5; 3000];
        assert_eq!(
            sieved(&repeats).colliding_groups(&repeats, &mut bits).len(),
            1
        );
        assert_eq!(bits.len(), (1 << 18) / 64);
    }

    #[test]
    fn earliest_second_occurrence_wins() {
        let ids = ["a", "b", "x", "b", "a"];
        let groups = colliding_groups(&[1, 2, 3, 2, 1]);
        assert_eq!(first_duplicate(&groups, &ids), Some((1, 3)));
        let ids = ["b", "a", "a", "b", "b"];
        let groups = colliding_groups(&[9, 9, 9, 9, 9]);
        assert_eq!(first_duplicate(&groups, &ids), Some((1, 2)));
        let ids = ["z", "a", "z", "a", "z"];
        assert_eq!(first_duplicate(&groups, &ids), Some((0, 2)));
    }

    #[test]
    fn hash_collision_between_different_ids_is_not_a_duplicate() {
        let ids = ["a", "b", "c", "b"];
        let groups = colliding_groups(&[5, 5, 1, 5]);
        assert_eq!(first_duplicate(&groups, &ids), Some((1, 3)));
        assert_eq!(
            first_duplicate(&colliding_groups(&[5, 5]), &["x", "y"]),
            None
        );
    }

    #[test]
    fn many_different_ids_sharing_one_hash_are_sorted_not_paired() {
        let ids: Vec<String> = (0..20_000).map(|i| format!("id-{i}")).collect();
        let groups = vec![(0..20_000).collect::<Vec<u32>>()];
        assert_eq!(first_duplicate(&groups, &ids), None);
    }
}
