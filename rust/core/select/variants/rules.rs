//! The rules a variant set's units keep, checked after duplicate ids: a group's members share
//! one `variant_of`, and a variant set has at most one required unit.

use crate::core::errors::{ErrorKind, VariantRule};
use crate::core::select::ids::FragmentIds;
use crate::core::select::names::groups::Groups;
use crate::core::select::names::marks::NameMarks;
use crate::core::select::names::sets::NO_SET;

/// The names a broken rule is told with.
pub struct Names<'a, I: ?Sized> {
    pub ids: &'a I,
    pub groups: &'a NameMarks,
    pub variants: &'a NameMarks,
}

impl<I: FragmentIds + ?Sized> Names<'_, I> {
    fn rule(&self, kind: ErrorKind, index: u32, first_index: u32) -> VariantRule {
        let variant = |fragment| self.variants.name_of(fragment).map(<[u8]>::to_vec);
        let mismatch = kind == ErrorKind::VariantGroupMismatch;
        VariantRule {
            kind,
            index,
            first_index,
            fragment_id: self.ids.bytes(index).to_vec(),
            variant: variant(index),
            group: mismatch
                .then(|| self.groups.name_of(index).map(<[u8]>::to_vec))
                .flatten(),
            first_variant: if mismatch { variant(first_index) } else { None },
        }
    }
}

/// The first member, in input order, of a group whose variant set (`set_of_fragment`)
/// differs from its group's first member's, against that first member.
pub fn group_mismatch(
    groups: &Groups,
    set_of_fragment: &[u32],
    names: &Names<'_, impl FragmentIds + ?Sized>,
) -> Option<VariantRule> {
    let mut first_break: Option<(u32, u32)> = None;
    for group in 0..groups.len() {
        let members = groups.members(group);
        let first = members[0];
        let set = set_of_fragment[first as usize];
        let differs = members[1..]
            .iter()
            .find(|&&member| set_of_fragment[member as usize] != set);
        if let Some(&member) = differs {
            if first_break.is_none_or(|(earliest, _)| member < earliest) {
                first_break = Some((member, first));
            }
        }
    }
    let (index, first) = first_break?;
    Some(names.rule(ErrorKind::VariantGroupMismatch, index, first))
}

/// A second required unit in a variant set: its first required member (`required` are the
/// required fragments, ascending) against the set's first required fragment. `unit_of` gives
/// a fragment's unit.
pub fn required_twice(
    required: &[u32],
    set_of_fragment: &[u32],
    sets: usize,
    unit_of: impl Fn(u32) -> u32,
    names: &Names<'_, impl FragmentIds + ?Sized>,
) -> Option<VariantRule> {
    // Per set, its first required fragment and that fragment's unit.
    let mut settled: Vec<Option<(u32, u32)>> = vec![None; sets];
    for &fragment in required {
        let set = set_of_fragment[fragment as usize];
        if set == NO_SET {
            continue;
        }
        let unit = unit_of(fragment);
        match settled[set as usize] {
            None => settled[set as usize] = Some((fragment, unit)),
            Some((first, first_unit)) if first_unit != unit => {
                return Some(names.rule(ErrorKind::VariantRequiredTwice, fragment, first));
            }
            Some(_) => {}
        }
    }
    None
}
