//! What can be wrong with an input, as data: the kind of problem and where it is.
//!
//! The names are the keys under which `skeleton_compressor._messages` words each problem;
//! a Python test checks that the two lists are equal.

use crate::core::interrupt::Interrupted;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    NotFragment,
    IdType,
    IdEmpty,
    TokenType,
    TokenNegative,
    TokenTooLarge,
    RelevanceType,
    RelevanceRange,
    RequiredType,
    GroupType,
    GroupEmpty,
    VariantType,
    VariantEmpty,
    Unreadable,
    Duplicate,
    VariantGroupMismatch,
    VariantRequiredTwice,
}

named!(ErrorKind {
    NotFragment => "not_fragment",
    IdType => "id_type",
    IdEmpty => "id_empty",
    TokenType => "token_type",
    TokenNegative => "token_negative",
    TokenTooLarge => "token_too_large",
    RelevanceType => "relevance_type",
    RelevanceRange => "relevance_range",
    RequiredType => "required_type",
    GroupType => "group_type",
    GroupEmpty => "group_empty",
    VariantType => "variant_type",
    VariantEmpty => "variant_empty",
    Unreadable => "unreadable",
    Duplicate => "duplicate",
    VariantGroupMismatch => "variant_group_mismatch",
    VariantRequiredTwice => "variant_required_twice",
});

/// Two fragments with one id: the earliest index whose id appeared before, where it did, and
/// the id's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    pub first: u32,
    pub second: u32,
    pub id: Vec<u8>,
}

/// A variant rule broken at fragment `index` (kind [`ErrorKind::VariantGroupMismatch`] or
/// [`ErrorKind::VariantRequiredTwice`]), against the fragment at `first_index`: the group's
/// first member, or the first required member of the variant set's other required unit.
/// Names are their bytes: the fragment's id and `variant_of`, and for a mismatch the group's
/// name and its first member's `variant_of` (`None`: no `variant_of`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantRule {
    pub kind: ErrorKind,
    pub index: u32,
    pub first_index: u32,
    pub fragment_id: Vec<u8>,
    pub variant: Option<Vec<u8>>,
    pub group: Option<Vec<u8>>,
    pub first_variant: Option<Vec<u8>>,
}

/// A budget the overflow policy refuses to go over: the required fragments need `needed`
/// tokens (`required`), or nothing fits and `needed` is the smallest budget with which the
/// walk would have kept something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetExceeded {
    pub budget: u128,
    pub needed: u128,
    pub required: bool,
}

/// Why a compression was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Duplicate(Duplicate),
    VariantRule(VariantRule),
    BudgetExceeded(BudgetExceeded),
    /// The caller asked the work to stop.
    Interrupted,
}

impl From<Interrupted> for Refusal {
    fn from(Interrupted: Interrupted) -> Self {
        Refusal::Interrupted
    }
}

/// More fragments than the ranking can index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooMany {
    pub limit: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_snake_case() {
        let names: Vec<&str> = ErrorKind::ALL.iter().map(|kind| kind.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        assert!(names
            .iter()
            .all(|name| name.chars().all(|c| c.is_ascii_lowercase() || c == '_')));
        assert_eq!(ErrorKind::TokenNegative.name(), "token_negative");
    }
}
