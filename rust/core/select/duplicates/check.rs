//! The look for duplicate ids that every compression makes: the ids' hashes are sifted for
//! repeats, and only the ids whose hashes repeat are compared.

use crate::core::errors::Duplicate;
use crate::core::interrupt::{Interrupt, Interrupted};
use crate::core::select::duplicates::sieve::{first_duplicate, Sieve};
use crate::core::select::ids::FragmentIds;

/// Hashes sifted between two looks at the stop: a millisecond or less.
const HASHES_BETWEEN_STOPS: usize = 1 << 14;

/// The sieve and the bitmap of repeats one look needs, its own: the look borrows nothing
/// else, so that it can run on a second thread.
#[derive(Debug)]
pub struct DuplicateCheck {
    sieve: Sieve,
    bits: Vec<u64>,
}

impl DuplicateCheck {
    pub fn new(len: usize) -> Self {
        DuplicateCheck {
            sieve: Sieve::new(len),
            bits: Vec::new(),
        }
    }

    /// The earliest index whose id already appeared, with the first index holding that id
    /// (see [`first_duplicate`]); `id_hashes` are the ids' hashes in input order. Stops when
    /// `stop` says so, which it asks every [`HASHES_BETWEEN_STOPS`] hashes.
    pub fn run(
        &mut self,
        id_hashes: &[u64],
        ids: &impl FragmentIds,
        stop: &dyn Interrupt,
    ) -> Result<Option<Duplicate>, Interrupted> {
        for hashes in id_hashes.chunks(HASHES_BETWEEN_STOPS) {
            if stop.interrupted() {
                return Err(Interrupted);
            }
            for &hash in hashes {
                self.sieve.take(hash);
            }
        }
        let groups = self.sieve.colliding_groups(id_hashes, &mut self.bits);
        Ok(
            first_duplicate(&groups, ids).map(|(first, second)| Duplicate {
                first,
                second,
                id: ids.bytes(second).to_vec(),
            }),
        )
    }
}
