//! Id hashes taken in as fragments are read. With many fragments, a second thread sifts them
//! for repeats while the reader goes on: the reader only hands them over, a chunk at a time,
//! and the random accesses of the sieve's bitmap stay off its path.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::{self, JoinHandle};

use super::duplicates::Sieve;
use super::tuning::Tuning;
use super::workspace::Workspace;

/// Chunks in flight between the reader and the second thread.
const CHUNKS: usize = 4;

#[derive(Debug)]
pub struct HashIntake(Intake);

#[derive(Debug)]
enum Intake {
    Here { hashes: Vec<u64>, sieve: Sieve },
    Helped(Helper),
}

#[derive(Debug)]
struct Helper {
    chunk: Vec<u64>,
    full: SyncSender<Vec<u64>>,
    empty: Receiver<Vec<u64>>,
    thread: JoinHandle<(Vec<u64>, Sieve)>,
}

impl HashIntake {
    /// Room for `len` hashes; sifted on a second thread from `tuning.parallel_from` on, when
    /// one can be had.
    pub fn new(len: usize, tuning: &Tuning, workspace: &mut Workspace) -> Self {
        let mut hashes = workspace.words(len);
        let mut sieve = Sieve::new(len, workspace);
        if len < tuning.parallel_from {
            return HashIntake(Intake::Here { hashes, sieve });
        }
        let chunk_len = tuning.hashes_per_handoff.max(1);
        let (full, full_chunks) = sync_channel::<Vec<u64>>(CHUNKS);
        let (empty_chunks, empty) = sync_channel::<Vec<u64>>(CHUNKS);
        for _ in 1..CHUNKS {
            // Cannot fail: the channel has room for them all and its receiver is here.
            let _ = empty_chunks.send(Vec::with_capacity(chunk_len));
        }
        let spawned = thread::Builder::new().spawn(move || {
            for mut chunk in full_chunks {
                hashes.extend_from_slice(&chunk);
                for &hash in &chunk {
                    sieve.take(hash);
                }
                chunk.clear();
                // The reader may be gone already; the chunk is simply dropped then.
                let _ = empty_chunks.send(chunk);
            }
            (hashes, sieve)
        });
        match spawned {
            Ok(thread) => HashIntake(Intake::Helped(Helper {
                chunk: Vec::with_capacity(chunk_len),
                full,
                empty,
                thread,
            })),
            // No second thread to be had: sift here, in new buffers (the closure that held
            // the lent ones is gone).
            Err(_) => HashIntake(Intake::Here {
                hashes: Vec::with_capacity(len),
                sieve: Sieve::new(len, workspace),
            }),
        }
    }

    #[inline]
    pub fn push(&mut self, hash: u64) {
        match &mut self.0 {
            Intake::Here { hashes, sieve } => {
                hashes.push(hash);
                sieve.take(hash);
            }
            Intake::Helped(helper) => {
                helper.chunk.push(hash);
                if helper.chunk.len() == helper.chunk.capacity() {
                    helper.hand_over();
                }
            }
        }
    }

    /// Every hash taken in, in order, and the sieve they went through.
    pub fn finish(self) -> (Vec<u64>, Sieve) {
        match self.0 {
            Intake::Here { hashes, sieve } => (hashes, sieve),
            Intake::Helped(mut helper) => {
                if !helper.chunk.is_empty() {
                    helper.hand_over();
                }
                let Helper { full, thread, .. } = helper;
                drop(full);
                thread
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }
        }
    }
}

impl Helper {
    /// Sends the chunk to the second thread, and takes an empty one to go on with.
    fn hand_over(&mut self) {
        let capacity = self.chunk.capacity();
        let next = self
            .empty
            .recv()
            .unwrap_or_else(|_| Vec::with_capacity(capacity));
        let chunk = std::mem::replace(&mut self.chunk, next);
        // The second thread only stops early by panicking, which `finish` passes on.
        let _ = self.full.send(chunk);
    }
}
