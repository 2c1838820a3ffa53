//! The groups that group names make: fragments that share a group name, kept or dropped
//! whole.
//!
//! Names are gathered as they come and grouped once: a hash table over all of them, looked up
//! per fragment, would jump all over memory. Instead the members are spread into buckets by
//! their names' hashes in one pass, each carrying its ranking entry and a copy of its name,
//! and each bucket is gathered by hash within the CPU caches, so a group's lead and tokens
//! are found from members lying side by side. Hashes only make this fast: names decide.

use crate::core::select::entry::{relevance_of_key, Entry};
use crate::core::select::ids::FragmentIds;
use crate::core::select::names::marks::NameMarks;
use crate::core::select::names::spread::SPREAD;
use crate::core::select::value::value_of;

/// Fragments that share a group name: group `g` is `members[starts[g]..starts[g + 1]]`,
/// ascending, led by `leads[g]` (the entry of its member that ranks first) and holding
/// `tokens[g]` tokens and `values[g]` units of value in all.
#[derive(Debug, Default)]
pub struct Groups {
    pub members: Vec<u32>,
    pub starts: Vec<u32>,
    pub leads: Vec<Entry>,
    pub tokens: Vec<u128>,
    pub values: Vec<u64>,
}

impl Groups {
    /// The groups the `marks` name, in no particular order. `entries` are the fragments'
    /// ranking entries in input order (entry `i` is fragment `i`), with their final tie keys.
    ///
    /// The marks are spread into buckets of about `members_per_bucket` by their hashes, in
    /// one pass in their own order (which is the order of the entries and of the names), each
    /// carrying its entry and a copy of its name; each bucket is then grouped where it lies,
    /// within the CPU caches.
    pub fn of(
        marks: &NameMarks,
        entries: &[Entry],
        token_counts: &[u64],
        ids: &(impl FragmentIds + ?Sized),
        members_per_bucket: usize,
    ) -> Groups {
        let buckets = (marks.keys.len() / members_per_bucket.max(1)).next_power_of_two();
        let bucket_bits = buckets.trailing_zeros();
        let bucket_of = |key: u128| {
            let spread = ((key >> 64) as u64).wrapping_mul(SPREAD);
            spread.checked_shr(64 - bucket_bits).unwrap_or(0) as usize
        };
        // Each bucket's names end with room for a whole short name past them, so that short
        // names are copied as one fixed-size block.
        let mut starts = vec![0usize; buckets + 1];
        let mut name_starts = vec![0usize; buckets + 1];
        for (mark, &key) in marks.keys.iter().enumerate() {
            let bucket = bucket_of(key);
            starts[bucket + 1] += 1;
            name_starts[bucket + 1] += marks.name_span(mark).len();
        }
        for at in 1..=buckets {
            starts[at] += starts[at - 1];
            name_starts[at] += name_starts[at - 1] + SHORT_NAME;
        }
        let mut members = vec![Member::NONE; marks.keys.len()];
        let mut names = vec![0u8; name_starts[buckets]];
        let (mut next, mut next_name) = (starts.clone(), name_starts.clone());
        for (mark, &key) in marks.keys.iter().enumerate() {
            let bucket = bucket_of(key);
            let span = marks.name_span(mark);
            let name_at = next_name[bucket];
            let short = marks.names.get(span.start..span.start + SHORT_NAME);
            match short {
                Some(block) if span.len() <= SHORT_NAME => {
                    names[name_at..name_at + SHORT_NAME].copy_from_slice(block);
                }
                _ => {
                    names[name_at..name_at + span.len()].copy_from_slice(&marks.names[span.clone()])
                }
            }
            members[next[bucket]] = Member {
                hash: (key >> 64) as u64,
                entry: entries[key as u32 as usize],
                name_at,
                name_len: span.len(),
            };
            next[bucket] += 1;
            next_name[bucket] += span.len();
        }
        let mut groups = Groups {
            members: Vec::with_capacity(members.len()),
            ..Groups::default()
        };
        groups.starts.push(0);
        let mut sharing = HashRuns::default();
        for bucket in starts.windows(2) {
            let bucket = &members[bucket[0]..bucket[1]];
            sharing.find(bucket);
            sharing.for_each_run(bucket, |same_hash| {
                let name = |member: &Member| &names[member.name_at..][..member.name_len];
                let first = name(&same_hash[0]);
                if same_hash[1..].iter().all(|member| name(member) == first) {
                    groups.add(same_hash, token_counts, ids);
                    return;
                }
                // Names that share a hash, rare: apart by name, each still ascending.
                same_hash.sort_unstable_by(|a, b| {
                    let by_name = name(a).cmp(name(b));
                    by_name.then(a.entry.index.cmp(&b.entry.index))
                });
                for same_name in same_hash.chunk_by(|a, b| name(a) == name(b)) {
                    groups.add(same_name, token_counts, ids);
                }
            });
        }
        groups
    }

    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn members(&self, group: usize) -> &[u32] {
        &self.members[self.starts[group] as usize..self.starts[group + 1] as usize]
    }

    fn add(&mut self, members: &[Member], token_counts: &[u64], ids: &(impl FragmentIds + ?Sized)) {
        let mut lead = members[0].entry;
        for member in &members[1..] {
            if member.entry.rank_order(&lead, ids).is_lt() {
                lead = member.entry;
            }
        }
        let (mut tokens, mut value) = (0, 0);
        for member in members {
            tokens += u128::from(member.entry.token_count(token_counts));
            value += value_of(relevance_of_key(member.entry.key));
            self.members.push(member.entry.index);
        }
        self.starts.push(self.members.len() as u32);
        self.leads.push(lead);
        self.tokens.push(tokens);
        self.values.push(value);
    }
}

/// A grouped fragment on its way to its group, with where its name lies among the names
/// of its bucket.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Member {
    hash: u64,
    entry: Entry,
    name_at: usize,
    name_len: usize,
}

impl Member {
    const NONE: Member = Member {
        hash: 0,
        entry: Entry::NONE,
        name_at: 0,
        name_len: 0,
    };
}

/// Names of at most this many bytes are copied as one block.
const SHORT_NAME: usize = 16;
const NONE: u32 = u32::MAX;

/// The members of one bucket gathered by hash: each run of members sharing a hash, in the
/// order its first member came, its members in their order (ascending fragment). A small
/// table per bucket, in place of a sort.
#[derive(Default)]
struct HashRuns {
    table: Vec<u32>,
    /// Per run, its first and last member.
    runs: Vec<(u32, u32)>,
    /// Per member, the next member of its run.
    next: Vec<u32>,
    gathered: Vec<Member>,
}

impl HashRuns {
    fn find(&mut self, bucket: &[Member]) {
        let size = (bucket.len() * 2).next_power_of_two().max(2);
        let slot_bits = size.trailing_zeros();
        self.table.clear();
        self.table.resize(size, NONE);
        self.runs.clear();
        self.next.clear();
        self.next.resize(bucket.len(), NONE);
        for (at, member) in (0u32..).zip(bucket) {
            let mixed = (member.hash ^ member.hash >> 29).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            let mut slot = (mixed >> (64 - slot_bits)) as usize;
            loop {
                match self.table[slot] {
                    NONE => {
                        self.table[slot] = self.runs.len() as u32;
                        self.runs.push((at, at));
                        break;
                    }
                    run if bucket[self.runs[run as usize].0 as usize].hash == member.hash => {
                        let run = &mut self.runs[run as usize];
                        self.next[run.1 as usize] = at;
                        run.1 = at;
                        break;
                    }
                    _ => slot = (slot + 1) & (size - 1),
                }
            }
        }
    }

    /// Calls `each` with every run found by [`HashRuns::find`], gathered.
    fn for_each_run(&mut self, bucket: &[Member], mut each: impl FnMut(&mut [Member])) {
        for &(first, _) in &self.runs {
            self.gathered.clear();
            let mut at = first;
            while at != NONE {
                self.gathered.push(bucket[at as usize]);
                at = self.next[at as usize];
            }
            each(&mut self.gathered);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::select::names::marks::NameMarks;

    fn grouped(marks: &[(u32, &str, u64)]) -> Vec<Vec<u32>> {
        let mut names = NameMarks::default();
        for &(fragment, name, hash) in marks {
            names.push(fragment, name.as_bytes(), hash);
        }
        assert_eq!(names.len(), marks.len());
        let entries: Vec<Entry> = (0..10).map(|i| Entry::new(0.5, i, i as u32, 1)).collect();
        let ids: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        let groups = Groups::of(&names, &entries, &[1; 10], &ids, 2);
        let mut all: Vec<Vec<u32>> = (0..groups.len())
            .map(|g| groups.members(g).to_vec())
            .collect();
        all.sort();
        all
    }

    #[test]
    fn equal_names_group_together_even_when_hashes_collide() {
        let marks = [
            (0, "tool", 7),
            (1, "other", 7),
            (2, "third", 9),
            (3, "tool", 7),
            (5, "other", 7),
            (6, "fourth", 7),
            (8, "other", 7),
        ];
        assert_eq!(
            grouped(&marks),
            vec![vec![0, 3], vec![1, 5, 8], vec![2], vec![6]]
        );
    }

    #[test]
    fn names_are_compared_whole() {
        let long = "a group name longer than sixteen bytes";
        let marks = [
            (0, long, 1),
            (1, "a group name longer than sixteen BYTES", 1),
            (2, "a group name longer than sixteen bytes, too", 1),
            (3, long, 1),
            (4, "short", 1),
            (5, "shorT", 1),
            (6, "short", 1),
        ];
        assert_eq!(
            grouped(&marks),
            vec![vec![0, 3], vec![1], vec![2], vec![4, 6], vec![5]]
        );
    }

    #[test]
    fn no_marks_make_no_groups() {
        let names = NameMarks::default();
        assert!(names.is_empty());
        let groups = Groups::of(&names, &[], &[], &[""; 0], 1);
        assert!(groups.is_empty() && groups.members.is_empty());
        assert!(groups.leads.is_empty() && groups.tokens.is_empty());
    }

    #[test]
    fn many_names_in_buckets_of_every_size() {
        // 600 names, five marks each, spread over 3,000 fragments; every 50th name shares
        // one hash, and the rest differ, so that runs collide in the buckets' tables.
        let fragments = 3000u32;
        let name_of = |fragment: u32| (fragment * 7919) % 600;
        let hash_of = |name: u32| {
            if name % 50 == 0 {
                42
            } else {
                u64::from(name).wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x5555
            }
        };
        let entries: Vec<Entry> = (0..fragments)
            .map(|i| Entry::new(0.5, u64::from(i), i, 1))
            .collect();
        let ids: Vec<String> = (0..fragments).map(|i| format!("{i:05}")).collect();
        let mut expected: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
        for fragment in 0..fragments {
            expected
                .entry(name_of(fragment))
                .or_default()
                .push(fragment);
        }
        let mut expected: Vec<Vec<u32>> = expected.into_values().collect();
        expected.sort();
        for per_bucket in [1, 3, 64, 1 << 20] {
            let mut marks = NameMarks::default();
            for fragment in 0..fragments {
                let name = format!("name number {}", name_of(fragment));
                marks.push(fragment, name.as_bytes(), hash_of(name_of(fragment)));
            }
            let groups = Groups::of(&marks, &entries, &[1; 3000], &ids, per_bucket);
            let mut found: Vec<Vec<u32>> = (0..groups.len())
                .map(|g| groups.members(g).to_vec())
                .collect();
            found.sort();
            assert_eq!(found, expected, "{per_bucket} per bucket");
            let leads: Vec<u32> = (0..groups.len()).map(|g| groups.leads[g].index).collect();
            let firsts: Vec<u32> = (0..groups.len()).map(|g| groups.members(g)[0]).collect();
            assert_eq!(leads, firsts, "equal scores: the lowest tie key leads");
            assert!(groups.tokens.iter().all(|&tokens| tokens == 5));
        }
    }

    #[test]
    fn each_group_is_led_by_its_best_member_and_sums_its_tokens() {
        // Fragment 2 ranks first on relevance; 0 and 3 tie whole, so their ids decide.
        let scores = [0.5, 0.2, 0.9, 0.5, 0.5];
        let ids = ["b", "z", "c", "a", "d"];
        let big = u64::from(u32::MAX) + 1;
        let token_counts = [1, 2, big, 4, 5];
        let entries: Vec<Entry> = (0..5)
            .map(|i| Entry::new(scores[i], 0, i as u32, token_counts[i]))
            .collect();
        let mut names = NameMarks::default();
        for (fragment, name) in [(0, "x"), (1, "y"), (2, "y"), (3, "x"), (4, "w")] {
            names.push(fragment, name.as_bytes(), 1);
        }
        let groups = Groups::of(&names, &entries, &token_counts, &ids, 1);
        let mut found: Vec<(Vec<u32>, u32, u128)> = (0..groups.len())
            .map(|g| {
                (
                    groups.members(g).to_vec(),
                    groups.leads[g].index,
                    groups.tokens[g],
                )
            })
            .collect();
        found.sort();
        assert_eq!(
            found,
            vec![
                (vec![0, 3], 3, 5),
                (vec![1, 2], 2, u128::from(big) + 2),
                (vec![4], 4, 5),
            ]
        );
        assert_eq!(groups.leads.len(), groups.len());
        assert!(!groups.is_empty());
    }
}
