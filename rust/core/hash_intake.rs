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
    /// Chunks handed over so far.
    handed_over: usize,
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
                handed_over: 0,
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
        self.handed_over += 1;
        // The second thread only stops early by panicking, which `finish` passes on.
        let _ = self.full.send(chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hash_arrives_in_order_whatever_the_chunks() {
        let hashes: Vec<u64> = (0..1000u64).map(|i| (i * 7919) % 997).collect();
        for (parallel_from, per_handoff) in [(0, 1), (0, 3), (10, 64), (999, 1000), (1001, 2)] {
            let tuning = Tuning {
                parallel_from,
                hashes_per_handoff: per_handoff,
                ..Tuning::default()
            };
            let mut workspace = Workspace::default();
            let mut intake = HashIntake::new(hashes.len(), &tuning, &mut workspace);
            assert_eq!(
                matches!(intake.0, Intake::Helped(_)),
                hashes.len() >= parallel_from
            );
            for &hash in &hashes {
                intake.push(hash);
            }
            if let Intake::Helped(helper) = &intake.0 {
                // Whole chunks are handed over as they fill, the last part when finished.
                assert_eq!(helper.handed_over, hashes.len() / per_handoff);
            }
            let (taken, sieve) = intake.finish();
            assert_eq!(taken, hashes);
            // 997 distinct values in 1000: the first three repeat, at 997, 998 and 999.
            assert_eq!(
                sieve.colliding_groups(&taken, &mut Vec::new()),
                vec![vec![0, 997], vec![1, 998], vec![2, 999]],
                "{parallel_from} {per_handoff}"
            );
        }
    }

    #[test]
    fn an_unfinished_intake_lets_its_thread_go() {
        let tuning = Tuning {
            parallel_from: 0,
            hashes_per_handoff: 2,
            ..Tuning::default()
        };
        let mut intake = HashIntake::new(10, &tuning, &mut Workspace::default());
        for hash in 0..7 {
            intake.push(hash);
        }
        drop(intake);
        let (taken, _) = HashIntake::new(0, &tuning, &mut Workspace::default()).finish();
        assert!(taken.is_empty());
    }
}
