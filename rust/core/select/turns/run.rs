//! The reusable run of a turn: the leading units of what the previous call sent that this
//! call may send again first, unchanged.

use crate::core::select::entry::relevance_of_key;
use crate::core::select::names::sets::NO_SET;
use crate::core::select::policy::units::Units;

/// The units the previous output leads with, as far as this call may keep them all:
/// `matched` holds this call's fragments that the previous output sent, in its order, up
/// to the first it sent that this call does not have. The run ends before the first unit
/// that is not whole and in member order there, or is already in it, or is not eligible
/// (neither required nor at `floor`), or is in a variant set that has a unit in it or a
/// required unit other than itself, or whose tokens with the run's and those of the
/// required units would pass `budget`. A zero budget, or required units that alone pass
/// it, leave no run.
pub fn reusable_run(units: &Units, matched: &[u32], budget: u128, floor: f64) -> Vec<u32> {
    let required_tokens = units.required_tokens();
    let mut run = Vec::new();
    if budget == 0 || required_tokens > budget || matched.is_empty() {
        return run;
    }
    let mut in_run = vec![false; units.len()];
    let mut set_taken = vec![false; units.sets()];
    let required_of_set = required_of_set(units);
    let mut tokens = required_tokens;
    let mut rest = matched;
    while let Some(&fragment) = rest.first() {
        if fragment as usize >= units.fragments() {
            break;
        }
        let unit = units.unit_of(fragment);
        let members = units.members(unit);
        if !rest.starts_with(members) || in_run[unit as usize] {
            break;
        }
        let required = units.is_required(unit);
        if !required && relevance_of_key(units.lead_entry(unit).key) < floor {
            break;
        }
        let set = units.set_of(unit);
        if set != NO_SET {
            let other_required = required_of_set[set as usize].is_some_and(|of| of != unit);
            if set_taken[set as usize] || other_required {
                break;
            }
            set_taken[set as usize] = true;
        }
        if !required {
            tokens += units.tokens(unit);
            if tokens > budget {
                break;
            }
        }
        in_run[unit as usize] = true;
        run.push(unit);
        rest = &rest[members.len()..];
    }
    run
}

/// Each variant set's required unit, if it has one (the variant rules allow at most one).
fn required_of_set(units: &Units) -> Vec<Option<u32>> {
    let mut required = vec![None; units.sets()];
    if units.has_variants() {
        for unit in (0..units.len() as u32).filter(|&unit| units.is_required(unit)) {
            let set = units.set_of(unit);
            if set != NO_SET {
                required[set as usize] = Some(unit);
            }
        }
    }
    required
}
