//! Checked fragments as plain columns, filled one fragment at a time by whoever reads them.

use crate::core::errors::TooMany;
use crate::core::select::entry::{relevance_of_key, Entry};
use crate::core::select::ids::{IdArena, SharedPrefix};
use crate::core::select::key_ranges::KeyCounts;
use crate::core::select::names::marks::NameMarks;
use crate::core::select::tuning::Tuning;

/// Fragment indices are `u32` in the ranking.
pub const MAX_FRAGMENTS: usize = u32::MAX as usize;

/// The index of the fragment after `len` of them: below `u32::MAX`, which the ranking's
/// walks read as "no fragment".
fn next_index(len: usize) -> Result<u32, TooMany> {
    if len >= MAX_FRAGMENTS {
        return Err(TooMany {
            limit: MAX_FRAGMENTS,
        });
    }
    Ok(len as u32)
}

#[derive(Debug)]
pub struct Columns {
    pub(super) entries: Vec<Entry>,
    pub(super) ids: IdArena,
    pub(super) shared_prefix: SharedPrefix,
    pub(super) token_counts: Vec<u64>,
    pub(super) id_hashes: Vec<u64>,
    pub(super) original_tokens: u128,
    pub(super) zero_token_fragments: usize,
    /// Required fragments, by ascending index.
    pub(super) required: Vec<u32>,
    /// The group names of fragments in a group.
    pub(super) groups: NameMarks,
    /// The `variant_of` names of fragments that render one thing among others.
    pub(super) variants: NameMarks,
    /// The relevance keys' counts, for inputs of `tuning.count_keys_from` fragments on.
    pub(super) key_counts: KeyCounts,
}

impl Columns {
    /// Room for `len` fragments, read for a compression tuned by `tuning`.
    pub fn new(len: usize, tuning: &Tuning) -> Result<Self, TooMany> {
        if len > MAX_FRAGMENTS {
            return Err(TooMany {
                limit: MAX_FRAGMENTS,
            });
        }
        Ok(Columns {
            entries: Vec::with_capacity(len),
            ids: IdArena::new(len),
            shared_prefix: SharedPrefix::default(),
            token_counts: Vec::with_capacity(len),
            id_hashes: Vec::with_capacity(len),
            original_tokens: 0,
            zero_token_fragments: 0,
            required: Vec::new(),
            groups: NameMarks::default(),
            variants: NameMarks::default(),
            key_counts: if len >= tuning.count_keys_from {
                KeyCounts::new()
            } else {
                KeyCounts::default()
            },
        })
    }

    /// Adds the next fragment. `id` is its id's bytes, which must order as the ids' code
    /// points do (see [`crate::core::select::ids::FragmentIds`]), and `id_hash` a hash of the id that equal ids
    /// share (the bindings pass the one Python keeps with each `str`).
    pub fn push(
        &mut self,
        id: &[u8],
        id_hash: u64,
        token_count: u64,
        relevance: f64,
    ) -> Result<(), TooMany> {
        let index = next_index(self.entries.len())?;
        self.ids.push(id);
        let tie = self.shared_prefix.key(id);
        let entry = Entry::new(relevance, tie, index, token_count);
        self.key_counts.add(&entry);
        self.entries.push(entry);
        self.token_counts.push(token_count);
        self.id_hashes.push(id_hash);
        self.original_tokens += u128::from(token_count);
        self.zero_token_fragments += usize::from(token_count == 0);
        Ok(())
    }

    /// Marks the fragment added last as required, as a member of the group named `group`, as
    /// a rendering of the thing named `variant` (names as their bytes, and a hash that equal
    /// names share), or any of those.
    pub fn mark_last(
        &mut self,
        required: bool,
        group: Option<(&[u8], u64)>,
        variant: Option<(&[u8], u64)>,
    ) {
        let Some(last) = self.entries.len().checked_sub(1) else {
            return;
        };
        let last = last as u32;
        if required {
            self.required.push(last);
        }
        // Room for the rest of the input at the first mark: marks that most fragments carry
        // are then never moved as they grow.
        let left = self.entries.capacity().saturating_sub(self.entries.len()) + 1;
        if let Some((name, hash)) = group {
            if self.groups.is_empty() {
                self.groups.make_room(left);
            }
            self.groups.push(last, name, hash);
        }
        if let Some((name, hash)) = variant {
            if self.variants.is_empty() {
                self.variants.make_room(left);
            }
            self.variants.push(last, name, hash);
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// One number per fragment, in input order, that changes whenever its id, token count,
    /// relevance, `required`, group or `variant_of` does alone (and otherwise but for a 64-bit collision):
    /// to tell whether fragments read twice are the same.
    pub fn fingerprints(&self) -> Vec<u64> {
        let mut prints: Vec<u64> = self
            .entries
            .iter()
            .zip(&self.id_hashes)
            .zip(&self.token_counts)
            .map(|((entry, &id_hash), &tokens)| mixed(mixed(id_hash, tokens), entry.key))
            .collect();
        for &index in &self.required {
            let print = &mut prints[index as usize];
            *print = mixed(*print, 1);
        }
        for (index, name_hash) in self.groups.marks() {
            let print = &mut prints[index as usize];
            *print = mixed(*print, name_hash);
        }
        // Salted, so that a group and a variant of one name change a fingerprint differently.
        for (index, name_hash) in self.variants.marks() {
            let print = &mut prints[index as usize];
            *print = mixed(mixed(*print, 2), name_hash);
        }
        prints
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Each fragment's relevance as the ranking reads it (`-0.0` as `0.0`), in input order.
    pub fn relevances(&self) -> Vec<f64> {
        self.entries
            .iter()
            .map(|entry| relevance_of_key(entry.key))
            .collect()
    }
}

/// `a` and `b` in one number that changes whenever either does alone: every step is a
/// bijection of the one that changed.
fn mixed(a: u64, b: u64) -> u64 {
    let x = (a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_max_fragments_are_numbered_and_none_as_u32_max() {
        assert_eq!(next_index(0), Ok(0));
        assert_eq!(next_index(MAX_FRAGMENTS - 1), Ok(u32::MAX - 1));
        assert_eq!(
            next_index(MAX_FRAGMENTS),
            Err(TooMany {
                limit: MAX_FRAGMENTS
            })
        );
    }

    #[test]
    fn keys_are_counted_from_the_tuned_size() {
        for (count_keys_from, counted) in [(3, Some((95, 3))), (4, None)] {
            let tuning = Tuning {
                count_keys_from,
                ..Tuning::default()
            };
            let mut columns = Columns::new(3, &tuning).unwrap();
            for (id, score) in [("a", 1.0), ("b", 0.75), ("c", 0.75)] {
                columns.push(id.as_bytes(), 0, 1, score).unwrap();
            }
            assert_eq!(columns.key_counts.cover(3), counted);
        }
    }

    #[test]
    fn a_fingerprint_changes_with_any_one_field_and_only_then() {
        // (id hash, tokens, relevance, required, group hash, variant hash) of the second of
        // two fragments.
        type Fields = (u64, u64, f64, bool, Option<u64>, Option<u64>);
        let print = |(id, tokens, score, required, group, variant): Fields| {
            let mut columns = Columns::new(2, &Tuning::default()).unwrap();
            columns.push(b"first", 7, 3, 0.5).unwrap();
            columns.mark_last(true, Some((b"g", 9)), Some((b"v", 9)));
            columns.push(b"second", id, tokens, score).unwrap();
            let group = group.map(|hash| (&b"g"[..], hash));
            columns.mark_last(required, group, variant.map(|hash| (&b"v"[..], hash)));
            let prints = columns.fingerprints();
            assert_eq!(prints.len(), 2);
            prints[1]
        };
        let base = (1, 2, 0.25, false, None, None);
        let changed = [
            (5, 2, 0.25, false, None, None),
            (1, 3, 0.25, false, None, None),
            (1, 2, 0.5, false, None, None),
            (1, 2, 0.25, true, None, None),
            (1, 2, 0.25, false, Some(4), None),
            (1, 2, 0.25, false, None, Some(4)),
        ];
        for fields in changed {
            assert_ne!(print(fields), print(base), "{fields:?}");
        }
        assert_eq!(print(base), print(base));
        assert_ne!(
            print((1, 2, 0.25, false, Some(4), None)),
            print((1, 2, 0.25, false, None, Some(4)))
        );
        assert_eq!(
            print((1, 2, -0.0, false, None, None)),
            print((1, 2, 0.0, false, None, None))
        );
    }
}
