//! Finding fragments that share an id: a sieve of their hashes sets apart the few that may
//! (`sieve.rs`), and the check run beside the ranking compares those ids (`check.rs`).

pub mod check;
pub mod sieve;
