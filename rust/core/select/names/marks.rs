//! Names as read, one per marked fragment: the group names and the variant names
//! (`variant_of`) of the fragments that have one, with their hashes, kept side by side in
//! the order the fragments come.

/// The name bytes per mark that [`NameMarks::make_room`] makes room for: longer names grow
/// the names as they come.
pub const NAME_ROOM: usize = 32;

/// Names of the marked fragments (group names, or variant names), in the order they were
/// marked.
#[derive(Debug, Default)]
pub struct NameMarks {
    /// Per mark, its name's hash and its fragment, high bits to low.
    pub(super) keys: Vec<u128>,
    pub(super) names: Vec<u8>,
    /// Where each name ends in `names`.
    ends: Vec<usize>,
}

impl NameMarks {
    /// Marks `fragment` with `name` (its group's, or its variant set's); `hash` must be
    /// equal for equal names. Fragments are marked in ascending order.
    pub fn push(&mut self, fragment: u32, name: &[u8], hash: u64) {
        self.keys
            .push(u128::from(hash) << 64 | u128::from(fragment));
        self.names.extend_from_slice(name);
        self.ends.push(self.names.len());
    }

    /// Room for `marks` more marks, names of up to [`NAME_ROOM`] bytes. Room that is never
    /// written costs address space, not memory; room that cannot be had is done without.
    pub fn make_room(&mut self, marks: usize) {
        let _ = self.keys.try_reserve(marks);
        let _ = self.ends.try_reserve(marks);
        let _ = self.names.try_reserve(marks.saturating_mul(NAME_ROOM));
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Each mark's fragment and its name's hash, in the order they were marked.
    pub fn marks(&self) -> impl ExactSizeIterator<Item = (u32, u64)> + '_ {
        self.keys
            .iter()
            .map(|&key| (key as u32, (key >> 64) as u64))
    }

    /// The name of the `mark`-th mark.
    pub fn name(&self, mark: usize) -> &[u8] {
        &self.names[self.name_span(mark)]
    }

    pub(super) fn name_span(&self, mark: usize) -> std::ops::Range<usize> {
        let start = if mark == 0 { 0 } else { self.ends[mark - 1] };
        start..self.ends[mark]
    }

    /// The name `fragment` was marked with, if it was.
    pub fn name_of(&self, fragment: u32) -> Option<&[u8]> {
        // Marks are pushed by ascending fragment.
        let mark = self
            .keys
            .binary_search_by_key(&fragment, |&key| key as u32)
            .ok()?;
        Some(&self.names[self.name_span(mark)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_read_back_whole_past_the_room_made_and_without_it() {
        // Room for two marks, or room that cannot be had: names shorter and longer than the
        // room per mark, and more marks than there is room for.
        for room in [2, usize::MAX] {
            let mut marks = NameMarks::default();
            marks.make_room(room);
            let names: Vec<Vec<u8>> = [0, 1, NAME_ROOM, NAME_ROOM + 1, 3 * NAME_ROOM]
                .iter()
                .map(|&len| (0..len).map(|at| b'a' + (at % 26) as u8).collect())
                .collect();
            for (fragment, name) in names.iter().enumerate() {
                marks.push(fragment as u32 * 2, name, fragment as u64);
            }
            assert_eq!(marks.len(), names.len());
            for (fragment, name) in names.iter().enumerate() {
                assert_eq!(marks.name(fragment), &name[..]);
                assert_eq!(marks.name_of(fragment as u32 * 2), Some(&name[..]));
            }
            let hashes: Vec<(u32, u64)> = marks.marks().collect();
            assert_eq!(hashes, vec![(0, 0), (2, 1), (4, 2), (6, 3), (8, 4)]);
        }
    }
}
