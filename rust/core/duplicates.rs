//! Finding fragments that may share an id, from the ids' hashes alone.

/// Hashes per bucket when spreading them out: a bucket is checked within the CPU cache.
const BUCKET: usize = 1024;

/// Groups of indices whose hashes are equal, each group ascending, groups ordered by their
/// first index. Equal ids always land in one group; the caller compares the ids themselves,
/// since different ids may share a hash.
pub fn colliding_groups(hashes: &[u64]) -> Vec<Vec<u32>> {
    colliding_groups_with(hashes, &mut Vec::new())
}

/// [`colliding_groups`], spreading the hashes into `spread`, a buffer the caller may reuse.
pub fn colliding_groups_with(hashes: &[u64], spread: &mut Vec<u64>) -> Vec<Vec<u32>> {
    let mut shared = shared_hashes(hashes, spread);
    if shared.is_empty() {
        return Vec::new();
    }
    shared.sort_unstable();
    shared.dedup();
    let mut members: Vec<(u64, u32)> = hashes
        .iter()
        .enumerate()
        .filter(|(_, hash)| shared.binary_search(hash).is_ok())
        .map(|(index, &hash)| (hash, index as u32))
        .collect();
    members.sort_unstable();
    let mut groups: Vec<Vec<u32>> = members
        .chunk_by(|a, b| a.0 == b.0)
        .map(|group| group.iter().map(|&(_, index)| index).collect())
        .collect();
    groups.sort_unstable_by_key(|group| group[0]);
    groups
}

/// Hash values that occur more than once. The hashes are spread into buckets by their top
/// bits (they come from a keyed hash, so the buckets are even), then each bucket is checked
/// on its own.
fn shared_hashes(hashes: &[u64], spread: &mut Vec<u64>) -> Vec<u64> {
    let bits = (hashes.len() / BUCKET).next_power_of_two().trailing_zeros();
    spread.clear();
    spread.resize(hashes.len(), 0);
    let bucket_of = |hash: u64| {
        if bits == 0 {
            0
        } else {
            (hash >> (64 - bits)) as usize
        }
    };
    let mut starts = vec![0usize; (1 << bits) + 1];
    for &hash in hashes {
        starts[bucket_of(hash) + 1] += 1;
    }
    for bucket in 1..starts.len() {
        starts[bucket] += starts[bucket - 1];
    }
    let mut next = starts.clone();
    for &hash in hashes {
        let slot = &mut next[bucket_of(hash)];
        spread[*slot] = hash;
        *slot += 1;
    }
    // Within a bucket, a small open-addressing table (cache-sized too) finds repeats in one
    // pass. 0 marks an empty slot, so a hash of 0 is counted on the side.
    let mut table: Vec<u64> = Vec::new();
    let mut shared = Vec::new();
    let mut zero_hashes = 0usize;
    for bucket in starts.windows(2) {
        let slice = &spread[bucket[0]..bucket[1]];
        let size = (slice.len() * 2).next_power_of_two().max(8);
        table.clear();
        table.resize(size, 0);
        let mask = size - 1;
        for &hash in slice {
            if hash == 0 {
                zero_hashes += 1;
                continue;
            }
            let mut slot = hash as usize & mask;
            loop {
                match table[slot] {
                    0 => {
                        table[slot] = hash;
                        break;
                    }
                    there if there == hash => {
                        shared.push(hash);
                        break;
                    }
                    _ => slot = (slot + 1) & mask,
                }
            }
        }
    }
    if zero_hashes > 1 {
        shared.push(0);
    }
    shared
}

/// The duplicate reported to the user: the earliest index `j` whose id already appeared,
/// with the first index `i` holding that id.
pub fn first_duplicate(
    groups: &[Vec<u32>],
    mut same_id: impl FnMut(u32, u32) -> bool,
) -> Option<(u32, u32)> {
    let mut found: Option<(u32, u32)> = None;
    for group in groups {
        for (position, &later) in group.iter().enumerate().skip(1) {
            if found.is_some_and(|(_, j)| j <= later) {
                break;
            }
            if let Some(&earlier) = group[..position].iter().find(|&&e| same_id(e, later)) {
                found = Some((earlier, later));
                break;
            }
        }
    }
    found
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
    fn zero_and_colliding_probe_chains() {
        // Equal low bits force probing; 0 is a hash like any other.
        let hashes = [0, 8, 16, 0, 24, 16, 8 << 40];
        assert_eq!(colliding_groups(&hashes), vec![vec![0, 3], vec![2, 5]]);
    }

    #[test]
    fn earliest_second_occurrence_wins() {
        let ids = ["a", "b", "x", "b", "a"];
        let hashes = [1, 2, 3, 2, 1];
        let groups = colliding_groups(&hashes);
        assert_eq!(
            first_duplicate(&groups, |a, b| ids[a as usize] == ids[b as usize]),
            Some((1, 3))
        );
    }

    #[test]
    fn hash_collision_between_different_ids_is_not_a_duplicate() {
        let ids = ["a", "b", "c", "b"];
        let hashes = [5, 5, 1, 5];
        let groups = colliding_groups(&hashes);
        let same = |a: u32, b: u32| ids[a as usize] == ids[b as usize];
        assert_eq!(first_duplicate(&groups, same), Some((1, 3)));
        assert_eq!(
            first_duplicate(&colliding_groups(&[5, 5]), |_, _| false),
            None
        );
    }
}
