//! Counting many texts: in place when they are short, inside the caller's [`Detach`] (the
//! Python bindings release the GIL there) when they are long, and on several threads when
//! there is enough to share.

use std::convert::Infallible;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use crate::core::detach::Detach;
use crate::core::interrupt::{Checkpoint, Interrupt, Interrupted, Stop};
use crate::core::tokens::encoding::Encoding;
use crate::core::work_queue::WorkQueue;

/// The numbers that decide how texts are counted, not what they count; tests shrink them to
/// cross every threshold with a few short texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountTuning {
    /// From this many bytes of text on, counting runs inside the caller's `Detach`: below it
    /// (about a millisecond of work), handing the interpreter to other threads and waiting to
    /// take it back costs more than it frees. Loading a table always runs there.
    pub detach_from_bytes: usize,
    /// From this many bytes of text on, spread over more than one text, counting runs on
    /// several threads.
    pub parallel_from_bytes: usize,
    /// Threads take texts in blocks of about this many bytes (a long text is a block alone).
    pub block_bytes: usize,
    /// At most this many threads; `0` means as many as the machine runs at once.
    pub max_threads: usize,
    /// Counting asks the caller's interrupt at most this often.
    pub interrupt_every: Duration,
}

impl Default for CountTuning {
    fn default() -> Self {
        CountTuning {
            detach_from_bytes: 32 << 10,
            parallel_from_bytes: 256 << 10,
            block_bytes: 64 << 10,
            max_threads: 0,
            interrupt_every: Duration::from_millis(20),
        }
    }
}

impl CountTuning {
    /// How many threads count `texts` texts of `bytes` bytes in all, on a machine that runs
    /// `available` at once: one below the threshold, and never more than there are texts.
    pub fn threads_for(&self, texts: usize, bytes: usize, available: usize) -> usize {
        if bytes < self.parallel_from_bytes {
            return 1;
        }
        let most = match self.max_threads {
            0 => available,
            most => most.min(available),
        };
        most.min(texts).max(1)
    }
}

/// The token count of one text, given as [`Encoding::count_bytes`] takes it.
pub fn count_one(
    encoding: Encoding,
    text: &[u8],
    tuning: &CountTuning,
    detach: &impl Detach,
) -> usize {
    let Ok(count) = count_one_with(encoding, text, tuning, detach, || Ok::<(), Infallible>(()));
    count
}

/// [`count_one`], stopped when `interrupt` says so.
pub fn count_one_until(
    encoding: Encoding,
    text: &[u8],
    tuning: &CountTuning,
    detach: &impl Detach,
    interrupt: &dyn Interrupt,
) -> Result<usize, Interrupted> {
    let mut checkpoint = Checkpoint::new(interrupt, tuning.interrupt_every);
    count_one_with(encoding, text, tuning, detach, move || checkpoint.tick())
}

fn count_one_with<E: Send>(
    encoding: Encoding,
    text: &[u8],
    tuning: &CountTuning,
    detach: &impl Detach,
    go_on: impl FnMut() -> Result<(), E> + Send,
) -> Result<usize, E> {
    let work = || encoding.count_bytes_with(text, go_on);
    if text.len() >= tuning.detach_from_bytes || !encoding.is_loaded() {
        detach.detach(work)
    } else {
        work()
    }
}

/// The token count of every text, in order, each given as [`Encoding::count_bytes`] takes it;
/// stopped when `interrupt` says so.
pub fn count_many(
    encoding: Encoding,
    texts: &[&[u8]],
    tuning: &CountTuning,
    detach: &impl Detach,
    interrupt: &dyn Interrupt,
) -> Result<Vec<usize>, Interrupted> {
    let bytes: usize = texts.iter().map(|text| text.len()).sum();
    let work = || {
        let available = thread::available_parallelism().map_or(1, |n| n.get());
        let threads = tuning.threads_for(texts.len(), bytes, available);
        let mut checkpoint = Checkpoint::new(interrupt, tuning.interrupt_every);
        if threads > 1 {
            count_on_threads(
                encoding,
                texts,
                tuning.block_bytes,
                threads,
                &mut checkpoint,
            )
        } else {
            texts
                .iter()
                .map(|text| encoding.count_bytes_with(text, || checkpoint.tick()))
                .collect()
        }
    };
    if bytes >= tuning.detach_from_bytes || !encoding.is_loaded() {
        detach.detach(work)
    } else {
        work()
    }
}

/// Consecutive texts, and the place of their counts.
type Block<'t, 'c> = (&'t [&'t [u8]], &'c mut [usize]);

/// Cuts `texts` into blocks of at least `block_bytes` bytes (or one text), each with the
/// part of `counts` its counts go to.
fn blocks<'t, 'c>(
    texts: &'t [&'t [u8]],
    mut counts: &'c mut [usize],
    block_bytes: usize,
) -> Vec<Block<'t, 'c>> {
    let mut blocks = Vec::new();
    let mut rest = texts;
    while !rest.is_empty() {
        let mut len = 0;
        let mut bytes = 0;
        while len < rest.len() && (len == 0 || bytes < block_bytes) {
            bytes += rest[len].len();
            len += 1;
        }
        let (block, after) = rest.split_at(len);
        let (place, later) = std::mem::take(&mut counts).split_at_mut(len);
        blocks.push((block, place));
        rest = after;
        counts = later;
    }
    blocks
}

/// Counts on `threads` threads, this one among them: only this one asks `checkpoint` (the
/// caller's interrupt may answer on its own thread alone), and tells the others to stop.
fn count_on_threads(
    encoding: Encoding,
    texts: &[&[u8]],
    block_bytes: usize,
    threads: usize,
    checkpoint: &mut Checkpoint,
) -> Result<Vec<usize>, Interrupted> {
    // Loaded before the threads start, so that they do not all wait on one of them.
    encoding.load();
    let mut counts = vec![0; texts.len()];
    let queue = WorkQueue::new(blocks(texts, &mut counts, block_bytes).into_iter());
    let take = || queue.take();
    let stop = Stop::default();
    let work = |go_on: &mut dyn FnMut() -> Result<(), Interrupted>| {
        // Memory of its own for each thread: the pre-tokenizer's shared pool would take a
        // lock for every piece on all threads but one.
        let mut scratch = encoding.scratch();
        while let Some((block, place)) = take() {
            for (count, text) in place.iter_mut().zip(block) {
                *count = encoding.count_bytes_in(&mut scratch, text, &mut *go_on)?;
            }
        }
        Ok(())
    };
    let stopped = || match stop.interrupted() {
        true => Err(Interrupted),
        false => Ok(()),
    };
    let here = thread::scope(|scope| {
        let (finished, finishing) = mpsc::channel();
        for _ in 1..threads {
            let (finished, work, stopped) = (finished.clone(), &work, &stopped);
            scope.spawn(move || {
                // Errors only when stopped, which this thread knows.
                let _ = work(&mut || stopped());
                // This thread may no longer wait: a word no one receives is no error.
                let _ = finished.send(());
            });
        }
        drop(finished);
        let here = work(&mut || {
            checkpoint.tick().inspect_err(|_| stop.stop())?;
            stopped()
        });
        // Once this thread has no block left, it waits for the others' last blocks while
        // still answering the interrupt: woken as each one ends, or now and then to ask.
        let mut others = threads - 1;
        while here.is_ok() && others > 0 && !stop.interrupted() {
            match finishing.recv_timeout(checkpoint.every()) {
                Ok(()) => others -= 1,
                Err(RecvTimeoutError::Timeout) => {
                    if checkpoint.check().is_err() {
                        stop.stop();
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        here
    });
    here.and(if stop.interrupted() {
        Err(Interrupted)
    } else {
        Ok(counts)
    })
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::core::test_support::InterruptAt;
    use crate::core::{InPlace, Uninterrupted};

    /// Counts the calls that ran detached.
    #[derive(Default)]
    struct Detached(Cell<usize>);

    impl Detach for Detached {
        fn detach<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
            self.0.set(self.0.get() + 1);
            work()
        }
    }

    fn texts() -> Vec<String> {
        let mut texts: Vec<String> = (0..40)
            .map(|i| format!("text number {i}: {}", "word ".repeat(i % 7)))
            .collect();
        texts.push(String::new());
        texts.push("a long one ".repeat(300));
        texts
    }

    fn one_by_one(encoding: Encoding, texts: &[&[u8]]) -> Vec<usize> {
        texts
            .iter()
            .map(|text| encoding.count_bytes(text))
            .collect()
    }

    #[test]
    fn every_way_of_counting_gives_the_same_counts() {
        let owned = texts();
        let texts: Vec<&[u8]> = owned.iter().map(|text| text.as_bytes()).collect();
        let tiny = CountTuning {
            detach_from_bytes: 1,
            parallel_from_bytes: 1,
            block_bytes: 50,
            max_threads: 3,
            ..CountTuning::default()
        };
        let ways = [
            CountTuning::default(),
            tiny,
            CountTuning {
                block_bytes: 1,
                ..tiny
            },
            CountTuning {
                block_bytes: usize::MAX,
                ..tiny
            },
            CountTuning {
                max_threads: 1,
                ..tiny
            },
        ];
        for encoding in Encoding::ALL {
            let expected = one_by_one(encoding, &texts);
            assert!(expected.iter().sum::<usize>() > 600);
            for tuning in &ways {
                let many =
                    |texts: &[&[u8]]| count_many(encoding, texts, tuning, &InPlace, &Uninterrupted);
                assert_eq!(many(&texts), Ok(expected.clone()));
                assert_eq!(many(&[]), Ok(Vec::new()));
            }
        }
    }

    #[test]
    fn an_interruption_stops_every_way_of_counting() {
        let long = "many words make many pieces ".repeat(400);
        // Enough that this thread counts pieces of its own, however soon the others start.
        let owned = [texts(), vec![long.clone(); 300]].concat();
        let texts: Vec<&[u8]> = owned.iter().map(|text| text.as_bytes()).collect();
        let asked_at_once = CountTuning {
            interrupt_every: Duration::ZERO,
            ..CountTuning::default()
        };
        let on_threads = CountTuning {
            parallel_from_bytes: 1,
            block_bytes: 50,
            max_threads: 3,
            ..asked_at_once
        };
        let encoding = Encoding::O200kBase;
        for tuning in [asked_at_once, on_threads] {
            let first = InterruptAt::new(1);
            assert_eq!(
                count_many(encoding, &texts, &tuning, &InPlace, &first),
                Err(Interrupted)
            );
            let never = InterruptAt::new(usize::MAX);
            let counted = count_many(encoding, &texts, &tuning, &InPlace, &never);
            assert_eq!(counted, Ok(one_by_one(encoding, &texts)));
            assert!(never.asked.load(Ordering::Relaxed) >= 1);
        }
        let one = |interrupt: &InterruptAt| {
            count_one_until(
                encoding,
                long.as_bytes(),
                &asked_at_once,
                &InPlace,
                interrupt,
            )
        };
        assert_eq!(one(&InterruptAt::new(1)), Err(Interrupted));
        // Asked once a checkpoint's ticks are up: 2,800 pieces ask ten times.
        let third = InterruptAt::new(3);
        assert_eq!(one(&third), Err(Interrupted));
        assert_eq!(third.asked.load(Ordering::Relaxed), 3);
        let never = InterruptAt::new(usize::MAX);
        assert_eq!(one(&never), Ok(encoding.count(&long)));
        assert_eq!(
            never.asked.load(Ordering::Relaxed),
            encoding.count(&long) / 256
        );
    }

    #[test]
    fn long_work_and_first_loads_are_detached() {
        let tuning = CountTuning {
            detach_from_bytes: 10,
            ..CountTuning::default()
        };
        let encoding = Encoding::O200kBase;
        encoding.load();
        let count = |text: &str| encoding.count(text);
        let detached = Detached::default();
        assert_eq!(
            count_one(encoding, b"nine byte", &tuning, &detached),
            count("nine byte")
        );
        let short: [&[u8]; 2] = [b"four", b"five!"];
        assert_eq!(
            count_many(encoding, &short, &tuning, &detached, &Uninterrupted),
            Ok(vec![count("four"), count("five!")])
        );
        assert_eq!(detached.0.get(), 0);
        assert_eq!(
            count_one(encoding, b"ten bytes!", &tuning, &detached),
            count("ten bytes!")
        );
        assert_eq!(detached.0.get(), 1);
        let ten: [&[u8]; 2] = [b"five!", b"five?"];
        assert_eq!(
            count_many(encoding, &ten, &tuning, &detached, &Uninterrupted),
            Ok(vec![count("five!"), count("five?")])
        );
        assert_eq!(detached.0.get(), 2);
    }

    #[test]
    fn threads_only_for_enough_text_and_no_more_than_asked() {
        let tuning = CountTuning {
            parallel_from_bytes: 100,
            max_threads: 0,
            ..CountTuning::default()
        };
        assert_eq!(tuning.threads_for(50, 99, 8), 1);
        assert_eq!(tuning.threads_for(50, 100, 8), 8);
        assert_eq!(tuning.threads_for(3, 100, 8), 3);
        assert_eq!(tuning.threads_for(0, 100, 8), 1);
        assert_eq!(tuning.threads_for(50, 100, 1), 1);
        let capped = CountTuning {
            max_threads: 2,
            ..tuning
        };
        assert_eq!(capped.threads_for(50, 1000, 8), 2);
        assert_eq!(capped.threads_for(50, 1000, 1), 1);
        assert_eq!(capped.threads_for(1, 1000, 8), 1);
    }

    #[test]
    fn blocks_cover_every_text_once_in_order() {
        let owned = texts();
        let texts: Vec<&[u8]> = owned.iter().map(|text| text.as_bytes()).collect();
        for block_bytes in [0, 1, 30, 100, 5000, usize::MAX] {
            let mut counts = vec![0; texts.len()];
            let cut = blocks(&texts, &mut counts, block_bytes);
            let mut next = 0;
            for (block, place) in &cut {
                assert_eq!(block.len(), place.len());
                assert!(!block.is_empty());
                assert_eq!(*block, &texts[next..next + block.len()]);
                let bytes: usize = block.iter().map(|text| text.len()).sum();
                let without_last = bytes - block[block.len() - 1].len();
                // Each block stops at the first text that brings it to `block_bytes`.
                assert!(without_last < block_bytes.max(1));
                next += block.len();
            }
            assert_eq!(next, texts.len());
            match block_bytes {
                0 => assert_eq!(cut.len(), texts.len()),
                // The empty text is short of a byte, and takes the next one with it.
                1 => assert_eq!(cut.len(), texts.len() - 1),
                _ => {}
            }
        }
    }
}
