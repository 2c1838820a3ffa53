//! Names the fragments carry beside their ids, and what they number: group names make
//! [`groups::Groups`] (fragments kept or dropped whole), variant names (`variant_of`) make
//! [`sets::VariantSets`] (of which at most one unit is kept). Both are read into
//! [`marks::NameMarks`]; names decide which fragments share one, hashes only make it fast.
//!
//! Three tables number hashes in this crate, each shaped by its own loop: the duplicate
//! sieve (`duplicates/sieve.rs`: a bitmap over every id, then a sort of the few met again,
//! since ids rarely repeat), the groups (`groups.rs`: members dealt into cache-sized buckets,
//! then a small table per bucket links each run of a hash in arrival order; it mixes the
//! hash another way, since the spread hash's top bits already chose the bucket) and the
//! variant sets (`sets.rs`: one table over all marks, numbering sets as they come, its slots
//! fetched ahead). What they share is [`spread::SPREAD`].

pub mod groups;
pub mod marks;
pub mod sets;
pub mod spread;
