//! Finding fragments that share an id: hashes sift out the few that may, and the ids
//! themselves decide.

use super::ids::FragmentIds;

/// Bits per hash in each of the two bitmaps that sift out the hashes seen only once.
const BITS_PER_HASH: usize = 16;
/// Fibonacci hashing: spreads any hash over the top bits, which pick the bitmap slot (and,
/// in `groups`, the bucket).
pub(super) const SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;

/// Groups of indices whose hashes are equal, each group ascending, groups ordered by their
/// first index. Equal ids always land in one group; the caller compares the ids themselves,
/// since different ids may share a hash.
pub fn colliding_groups(hashes: &[u64]) -> Vec<Vec<u32>> {
    colliding_groups_with(hashes, &mut Vec::new())
}

/// Words of the bitmaps that [`colliding_groups_with`] uses for `len` hashes.
pub fn bitmap_words(len: usize) -> usize {
    2 << (slot_bits(len) - 6)
}

fn slot_bits(len: usize) -> u32 {
    // At most 2^32 slots: the hashes of the largest input fill them once.
    (len.min(1 << 28) * BITS_PER_HASH)
        .next_power_of_two()
        .trailing_zeros()
        .clamp(6, 32)
}

/// [`colliding_groups`], with bitmaps in `bits`, a buffer the caller may reuse.
pub fn colliding_groups_with(hashes: &[u64], bits: &mut Vec<u64>) -> Vec<Vec<u32>> {
    let mut members = candidates(hashes, bits);
    members.sort_unstable();
    let mut groups: Vec<Vec<u32>> = members
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|group| group.len() > 1)
        .map(|group| group.iter().map(|&(_, index)| index).collect())
        .collect();
    groups.sort_unstable_by_key(|group| group[0]);
    groups
}

/// The hashes that may occur more than once, with their indices: every repeated hash, and a
/// few others. One pass marks each hash's slot in a bitmap, and a second bitmap the slots met
/// twice; only hashes in those slots (a few percent of all, when hashes differ) are kept.
fn candidates(hashes: &[u64], bits: &mut Vec<u64>) -> Vec<(u64, u32)> {
    let slot_bits = slot_bits(hashes.len());
    bits.clear();
    bits.resize(bitmap_words(hashes.len()), 0);
    let (seen, twice) = bits.split_at_mut(1 << (slot_bits - 6));
    let slot = |hash: u64| {
        let slot = (hash.wrapping_mul(SPREAD) >> (64 - slot_bits)) as usize;
        (slot / 64, 1u64 << (slot % 64))
    };
    for &hash in hashes {
        let (word, bit) = slot(hash);
        if seen[word] & bit != 0 {
            twice[word] |= bit;
        }
        seen[word] |= bit;
    }
    (0u32..)
        .zip(hashes)
        .filter(|&(_, &hash)| {
            let (word, bit) = slot(hash);
            twice[word] & bit != 0
        })
        .map(|(index, &hash)| (hash, index))
        .collect()
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

    #[test]
    fn few_distinct_hashes_are_candidates_and_every_repeat_is() {
        let mut hashes = scattered(20_000);
        let mut sorted = hashes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), hashes.len());
        let found = candidates(&hashes, &mut Vec::new());
        assert!(
            !found.is_empty() && found.len() < hashes.len() / 8,
            "{}",
            found.len()
        );
        assert!(colliding_groups(&hashes).is_empty());
        hashes[19_999] = hashes[3];
        let found = candidates(&hashes, &mut Vec::new());
        assert!(found.contains(&(hashes[3], 3)) && found.contains(&(hashes[3], 19_999)));
        assert_eq!(colliding_groups(&hashes), vec![vec![3, 19_999]]);
    }

    #[test]
    fn the_bitmap_buffer_is_sized_and_reused() {
        let mut bits = vec![u64::MAX; 3];
        let hashes: Vec<u64> = (0..1000).collect();
        assert!(colliding_groups_with(&hashes, &mut bits).is_empty());
        assert_eq!(bits.len(), 2 * 16 * 1024 / 64);
        assert_eq!(bitmap_words(1000), bits.len());
        assert_eq!(bitmap_words(0), 2);
        assert_eq!(bitmap_words(usize::MAX), 2 << 26);
        assert!(colliding_groups_with(&[7], &mut bits).is_empty());
        assert_eq!(bits.len(), 2);
        assert_eq!(colliding_groups_with(&[7, 7], &mut bits), vec![vec![0, 1]]);
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
