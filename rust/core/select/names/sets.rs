//! Variant sets numbered from their names, and units grouped by them.

use std::collections::HashMap;

use crate::core::select::names::marks::NameMarks;
use crate::core::select::names::spread::SPREAD;

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
    /// The sets the marks name, among `fragments` fragments. Each mark is looked up by its
    /// name's hash in a table asked for the marks ahead before it is needed (at a million
    /// fragments the table is past the caches); a name that meets an earlier one's hash is
    /// compared with it afterwards, and one whose hash another name took first (rare) is
    /// looked up by its bytes.
    pub fn new(marks: &NameMarks, fragments: usize) -> VariantSets {
        let mut set_of_fragment = vec![NO_SET; fragments];
        let mut table = SetsByHash::with_room(marks.len());
        // (fragment, mark, the mark that named its set first), checked by name below.
        let mut met = Vec::new();
        let mut ahead = marks.marks().skip(LOOK_AHEAD);
        for (mark, (fragment, hash)) in (0u32..).zip(marks.marks()) {
            if let Some((_, later)) = ahead.next() {
                table.look_ahead(later);
            }
            let (set, first) = table.set_of(hash, mark);
            if first != mark {
                met.push((fragment, mark, first));
            }
            set_of_fragment[fragment as usize] = set;
        }
        let mut count = table.count;
        let mut by_name: HashMap<&[u8], u32> = HashMap::new();
        for &(fragment, mark, first) in &met {
            let name = marks.name(mark as usize);
            if name != marks.name(first as usize) {
                let set = by_name.entry(name).or_insert_with(|| {
                    count += 1;
                    count - 1
                });
                set_of_fragment[fragment as usize] = *set;
            }
        }
        VariantSets {
            set_of_fragment,
            count: count as usize,
        }
    }
}

/// How many marks ahead the table is asked for a mark's slot.
const LOOK_AHEAD: usize = 16;

/// Each hash met, with the set it numbered and the mark that met it first: open addressing,
/// each hash from its home slot on to the first free one.
struct SetsByHash {
    slots: Vec<Slot>,
    /// How far a hash is shifted down to its home slot: 64 less the bits of a slot's number.
    shift: u32,
    count: u32,
}

#[derive(Clone, Copy)]
struct Slot {
    hash: u64,
    /// [`NO_SET`] for a free slot.
    set: u32,
    first: u32,
}

impl SetsByHash {
    /// Room for `marks` hashes: half as many slots again, or more, so that probes stay short.
    fn with_room(marks: usize) -> Self {
        let len = (marks + marks / 2).next_power_of_two().max(2);
        let free = Slot {
            hash: 0,
            set: NO_SET,
            first: 0,
        };
        SetsByHash {
            slots: vec![free; len],
            shift: 64 - len.trailing_zeros(),
            count: 0,
        }
    }

    /// Spreads the hash's bits over the slot numbers: the marks' hashes may be small numbers.
    fn home(&self, hash: u64) -> usize {
        (hash.wrapping_mul(SPREAD) >> self.shift) as usize
    }

    fn look_ahead(&self, hash: u64) {
        // A load whose value is not waited for: the slot is on its way into the caches
        // when its mark comes.
        std::hint::black_box(self.slots[self.home(hash)].set);
    }

    /// The set of `hash` and the mark that met it first: `mark`, numbering a new set, if
    /// none did.
    fn set_of(&mut self, hash: u64, mark: u32) -> (u32, u32) {
        let last = self.slots.len() - 1;
        let mut at = self.home(hash);
        for _ in 0..self.slots.len() {
            let slot = &mut self.slots[at];
            if slot.set == NO_SET {
                *slot = Slot {
                    hash,
                    set: self.count,
                    first: mark,
                };
                self.count += 1;
                return (slot.set, mark);
            }
            if slot.hash == hash {
                return (slot.set, slot.first);
            }
            at = (at + 1) & last;
        }
        unreachable!("a table with room for every mark always has a free slot")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first `count` hashes whose home is slot `home` of `table`.
    fn homed_at(table: &SetsByHash, home: usize, count: usize) -> Vec<u64> {
        let found: Vec<u64> = (0u64..1 << 16)
            .filter(|&hash| table.home(hash) == home)
            .take(count)
            .collect();
        assert_eq!(found.len(), count, "hashes spread over every slot");
        found
    }

    #[test]
    fn hashes_that_share_a_home_take_the_next_free_slots_round_the_end() {
        let mut table = SetsByHash::with_room(5);
        assert_eq!(table.slots.len(), 8);
        let last = homed_at(&table, 7, 3);
        let first = homed_at(&table, 0, 1)[0];
        // Past the last slot a hash goes on at the first, then the second, not too far.
        assert_eq!(table.set_of(last[0], 0), (0, 0));
        assert_eq!(table.set_of(last[1], 1), (1, 1));
        assert_eq!(table.set_of(last[2], 2), (2, 2));
        assert_eq!(table.set_of(first, 3), (3, 3));
        assert_eq!(table.count, 4);
        let taken: Vec<(usize, u64)> = (0..8)
            .filter(|&at| table.slots[at].set != NO_SET)
            .map(|at| (at, table.slots[at].hash))
            .collect();
        assert_eq!(
            taken,
            [(0, last[1]), (1, last[2]), (2, first), (7, last[0])]
        );
        // A hash met again finds its set and who met it first, wherever it went.
        assert_eq!(table.set_of(last[2], 9), (2, 2));
        assert_eq!(table.set_of(first, 10), (3, 3));
        assert_eq!(table.set_of(last[0], 11), (0, 0));
        assert_eq!(table.count, 4);
    }

    #[test]
    fn a_table_has_room_for_half_again_its_marks_or_two_slots() {
        for (marks, len) in [
            (0, 2),
            (1, 2),
            (2, 4),
            (3, 4),
            (6, 16),
            (10, 16),
            (11, 16),
            (12, 32),
        ] {
            let table = SetsByHash::with_room(marks);
            assert_eq!(table.slots.len(), len, "{marks} marks");
            assert_eq!(1usize << (64 - table.shift), len);
            assert!(table.slots.iter().all(|slot| slot.set == NO_SET));
        }
    }

    #[test]
    fn every_mark_is_a_set_when_no_two_names_meet() {
        let mut marks = NameMarks::default();
        for fragment in 0..300u32 {
            let name = format!("thing-{fragment}");
            // Hashes in a narrow range: their homes must still spread over the table.
            marks.push(fragment * 2, name.as_bytes(), u64::from(fragment));
        }
        let sets = VariantSets::new(&marks, 600);
        assert_eq!(sets.count, 300);
        let mut seen: Vec<u32> = (0..300).map(|f| sets.set_of_fragment[f * 2]).collect();
        assert!((0..300).all(|f| sets.set_of_fragment[f * 2 + 1] == NO_SET));
        seen.sort_unstable();
        assert_eq!(seen, (0..300).collect::<Vec<u32>>());
    }

    #[test]
    fn sets_are_told_apart_by_name_where_hashes_meet() {
        let mut marks = NameMarks::default();
        // "a" and "b" share a hash, as do "c" and "d"; "e" has its own.
        for (fragment, name, hash) in [
            (0, "a", 7),
            (2, "b", 7),
            (3, "a", 7),
            (4, "e", 9),
            (5, "c", 8),
            (6, "d", 8),
            (7, "b", 7),
            (8, "d", 8),
            (9, "c", 8),
        ] {
            marks.push(fragment, name.as_bytes(), hash);
        }
        let sets = VariantSets::new(&marks, 11);
        assert_eq!(sets.count, 5);
        let of = |fragment: usize| sets.set_of_fragment[fragment];
        assert_eq!([of(1), of(10)], [NO_SET, NO_SET]);
        assert_eq!(of(0), of(3));
        assert_eq!(of(2), of(7));
        assert_eq!(of(5), of(9));
        assert_eq!(of(6), of(8));
        let mut distinct = vec![of(0), of(2), of(4), of(5), of(6)];
        distinct.sort_unstable();
        assert_eq!(distinct, vec![0, 1, 2, 3, 4]);
    }
}
