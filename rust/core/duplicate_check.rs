//! The look for duplicate ids that every compression makes: on a second thread for large
//! inputs, which goes on while the answer is ranked, packed, and handed over, and is joined
//! before the answer counts.

use std::thread::{self, JoinHandle};

use super::duplicates::{first_duplicate, Sieve};
use super::errors::Duplicate;
use super::ids::FragmentIds;
use super::workspace::Workspace;

/// The id hashes of all fragments, in input order, the sieve they went through, and a
/// buffer for its bitmap of repeats.
#[derive(Debug)]
struct Hashes {
    id_hashes: Vec<u64>,
    sieve: Sieve,
    bits: Vec<u64>,
}

impl Hashes {
    /// Groups of indices whose hashes are equal (see [`Sieve::colliding_groups`]).
    fn scan(mut self) -> (Vec<Vec<u32>>, Hashes) {
        let groups = self.sieve.colliding_groups(&self.id_hashes, &mut self.bits);
        (groups, self)
    }

    fn recycle(self, workspace: &mut Workspace) {
        workspace.give_words(self.id_hashes);
        workspace.give_words(self.bits);
        self.sieve.recycle(workspace);
    }
}

#[derive(Debug)]
pub struct DuplicateCheck(Check);

#[derive(Debug)]
enum Check {
    Done(Vec<Vec<u32>>, Hashes),
    Running(JoinHandle<(Vec<Vec<u32>>, Hashes)>),
}

impl DuplicateCheck {
    /// Looks for repeated hashes among `id_hashes` (sifted by `sieve`): on a second thread
    /// when `in_parallel` and one can be had, or else here and now.
    pub fn start(
        id_hashes: Vec<u64>,
        sieve: Sieve,
        in_parallel: bool,
        workspace: &mut Workspace,
    ) -> Self {
        let bits = workspace.words(0);
        let hashes = Hashes {
            id_hashes,
            sieve,
            bits,
        };
        if !in_parallel {
            let (groups, hashes) = hashes.scan();
            return DuplicateCheck(Check::Done(groups, hashes));
        }
        // The hashes reach the thread through a channel once it runs: a closure holding them
        // would drop them with it if the spawn failed, and they could not be scanned here.
        let (sender, receiver) = std::sync::mpsc::sync_channel::<Hashes>(1);
        let spawned = thread::Builder::new().spawn(move || {
            let hashes = receiver
                .recv()
                .expect("the hashes are sent once the thread runs");
            hashes.scan()
        });
        match spawned {
            Ok(running) => {
                // Cannot fail: the channel has room, and its receiver is with the thread.
                let _ = sender.send(hashes);
                DuplicateCheck(Check::Running(running))
            }
            Err(_) => {
                let (groups, hashes) = hashes.scan();
                DuplicateCheck(Check::Done(groups, hashes))
            }
        }
    }

    /// The duplicate to report, once the look is over: the earliest index whose id already
    /// appeared, with the first index holding that id (see [`first_duplicate`]).
    pub fn finish(self, ids: &impl FragmentIds, workspace: &mut Workspace) -> Option<Duplicate> {
        let (groups, hashes) = match self.0 {
            Check::Done(groups, hashes) => (groups, hashes),
            Check::Running(running) => running
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
        };
        hashes.recycle(workspace);
        first_duplicate(&groups, ids).map(|(first, second)| Duplicate {
            first,
            second,
            id: ids.bytes(second).to_vec(),
        })
    }
}
