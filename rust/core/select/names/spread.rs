//! The one constant the tables that number names share.

/// Fibonacci hashing: spreads any hash over the top bits, which pick the duplicate sieve's
/// bitmap slot, a group's bucket, and a variant set's home slot.
pub(crate) const SPREAD: u64 = 0x9E37_79B9_7F4A_7C15;
