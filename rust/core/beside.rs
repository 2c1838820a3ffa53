//! Two pieces of work at once: one on a second thread, the other on the caller's, which
//! alone asks the caller's interrupt (it may answer on its own thread alone) and tells the
//! second thread to stop.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;

use crate::core::errors::Refusal;
use crate::core::interrupt::{Checkpoint, Interrupted, Stop};

/// `side` on a second thread while `main` runs here, when `in_parallel` and a thread can be
/// had; else one after the other, here. Only this thread asks `checkpoint` (the caller's
/// interrupt may answer on its own thread alone): `main` as it works, then this loop while it
/// waits for `side`. `side` is told to stop by the [`Stop`] it is given, and an interruption
/// seen here is its answer.
pub fn beside<A: Send, T>(
    in_parallel: bool,
    checkpoint: &mut Checkpoint,
    mut side: impl FnMut(&Stop) -> Result<A, Interrupted> + Send,
    main: impl FnOnce(&mut Checkpoint) -> Result<T, Refusal>,
) -> (Result<A, Interrupted>, Result<T, Refusal>) {
    let stop = Stop::default();
    let mut main = Some(main);
    if in_parallel {
        let both = thread::scope(|scope| {
            let (finished, finishing) = mpsc::channel();
            let (side, stop) = (&mut side, &stop);
            let running = thread::Builder::new()
                .spawn_scoped(scope, move || {
                    let found = side(stop);
                    // This thread may no longer wait: a word no one receives is no error.
                    let _ = finished.send(());
                    found
                })
                .ok()?;
            let done_here = main.take()?(checkpoint);
            let mut interrupted = matches!(done_here, Err(Refusal::Interrupted));
            // Woken as soon as `side` is done, or now and then to ask the checkpoint.
            while !interrupted {
                match finishing.recv_timeout(checkpoint.every()) {
                    Err(RecvTimeoutError::Timeout) => interrupted = checkpoint.check().is_err(),
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                }
            }
            if interrupted {
                stop.stop();
            }
            let done_there = running
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            Some((
                done_there.and_then(|found| match interrupted {
                    true => Err(Interrupted),
                    false => Ok(found),
                }),
                done_here,
            ))
        });
        if let Some(both) = both {
            return both;
        }
    }
    let main = main.expect("main runs once: here when it did not run beside");
    let done_here = main(checkpoint);
    if let Err(Refusal::Interrupted) = done_here {
        return (Err(Interrupted), done_here);
    }
    (side(&stop), done_here)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::interrupt::{Interrupt, Uninterrupted};
    use crate::core::test_support::InterruptAt;

    #[test]
    fn waiting_for_the_second_thread_still_answers_an_interruption() {
        // The side work runs until it is told to stop; the main work is done at once.
        let endless = |stop: &Stop| {
            while !stop.interrupted() {
                std::thread::yield_now();
            }
            Err::<(), _>(Interrupted)
        };
        let interrupt = InterruptAt::new(1);
        let mut checkpoint = Checkpoint::new(&interrupt, std::time::Duration::ZERO);
        let (side, main) = beside(true, &mut checkpoint, endless, |_| Ok::<_, Refusal>(7));
        assert_eq!((side, main), (Err(Interrupted), Ok(7)));
        // Interrupted here while the side work had finished: the interruption is the answer.
        let done = |_: &Stop| Ok::<_, Interrupted>(3);
        let slow = |checkpoint: &mut Checkpoint| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            checkpoint.check().map_err(Refusal::from)
        };
        let interrupt = InterruptAt::new(1);
        let mut checkpoint = Checkpoint::new(&interrupt, std::time::Duration::ZERO);
        let (side, main) = beside(true, &mut checkpoint, done, slow);
        assert_eq!((side, main), (Err(Interrupted), Err(Refusal::Interrupted)));
        // One after the other: an interrupted main work skips the side work.
        let interrupt = InterruptAt::new(1);
        let mut checkpoint = Checkpoint::new(&interrupt, std::time::Duration::ZERO);
        let (side, main) = beside(false, &mut checkpoint, done, slow);
        assert_eq!((side, main), (Err(Interrupted), Err(Refusal::Interrupted)));
        let never = Uninterrupted;
        let mut checkpoint = Checkpoint::new(&never, std::time::Duration::ZERO);
        let (side, main) = beside(true, &mut checkpoint, done, |_| Ok::<_, Refusal>(7));
        assert_eq!((side, main), (Ok(3), Ok(7)));
    }
}
