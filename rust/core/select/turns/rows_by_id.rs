//! This call's fragments found by id: where the fragments a previous output sent are now.

use crate::core::select::columns::Columns;
use crate::core::select::ids::FragmentIds;

const EMPTY: u32 = u32::MAX;

/// An open-addressed table of row numbers by id hash; ids are compared in full on lookup,
/// so any hash that equal ids share will do (the bindings pass Python's).
pub struct RowsById {
    slots: Vec<u32>,
    /// How far a mixed hash is shifted down to pick a slot.
    shift: u32,
}

impl RowsById {
    pub fn new(columns: &Columns) -> Self {
        let size = (columns.len() * 2).next_power_of_two().max(2);
        let mut table = RowsById {
            slots: vec![EMPTY; size],
            shift: 64 - size.trailing_zeros(),
        };
        for (row, &hash) in columns.id_hashes.iter().enumerate() {
            let mut slot = table.slot_of(hash);
            while table.slots[slot] != EMPTY {
                slot = (slot + 1) & (size - 1);
            }
            table.slots[slot] = row as u32;
        }
        table
    }

    /// Fibonacci hashing: the high bits of the product, so that a hash whose low bits
    /// repeat still spreads.
    fn slot_of(&self, hash: u64) -> usize {
        (hash.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The row of the fragment whose id is `id` (with hash `hash`), if this call has one;
    /// the first such row if ids repeat.
    pub fn row(&self, columns: &Columns, id: &[u8], hash: u64) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut slot = self.slot_of(hash);
        loop {
            let row = self.slots[slot];
            if row == EMPTY {
                return None;
            }
            if columns.id_hashes[row as usize] == hash && columns.ids.bytes(row) == id {
                return Some(row);
            }
            slot = (slot + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::select::tuning::Tuning;

    #[test]
    fn every_id_is_found_at_its_row_and_others_are_not() {
        for len in [0usize, 1, 2, 3, 100, 1000] {
            let mut columns = Columns::new(len, &Tuning::DEFAULT).unwrap();
            // A hash that many ids share, as a weak one would: the ids tell them apart.
            let hash = |row: usize| (row % 7) as u64;
            for row in 0..len {
                let id = format!("id-{row}");
                columns.push(id.as_bytes(), hash(row), 1, 0.5).unwrap();
            }
            let table = RowsById::new(&columns);
            for row in 0..len {
                let id = format!("id-{row}");
                assert_eq!(
                    table.row(&columns, id.as_bytes(), hash(row)),
                    Some(row as u32)
                );
                assert_eq!(table.row(&columns, id.as_bytes(), hash(row) + 7), None);
            }
            assert_eq!(table.row(&columns, b"id-missing", 3), None);
        }
    }
}
