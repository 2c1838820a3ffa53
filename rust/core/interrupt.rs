//! Long work asks the caller, now and then, whether to stop: the Python bindings check for
//! signals there, so that Ctrl-C stops a long call.

use std::time::{Duration, Instant};

/// Whether the caller wants the work stopped. Asked from the thread that runs the work.
pub trait Interrupt: Sync {
    fn interrupted(&self) -> bool;
}

/// Never stops the work.
pub struct Uninterrupted;

impl Interrupt for Uninterrupted {
    fn interrupted(&self) -> bool {
        false
    }
}

/// The work stopped because the caller asked it to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted;

/// Asks an [`Interrupt`] at most once per `every`: asking may cost the caller a lock.
pub struct Checkpoint<'a> {
    interrupt: &'a dyn Interrupt,
    every: Duration,
    next: Instant,
}

impl<'a> Checkpoint<'a> {
    pub fn new(interrupt: &'a dyn Interrupt, every: Duration) -> Self {
        Checkpoint {
            interrupt,
            every,
            next: Instant::now() + every,
        }
    }

    pub fn check(&mut self) -> Result<(), Interrupted> {
        let now = Instant::now();
        if now < self.next {
            return Ok(());
        }
        self.next = now + self.every;
        if self.interrupt.interrupted() {
            Err(Interrupted)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Says yes from its `from`-th question on, and counts the questions.
    pub struct InterruptAt {
        pub from: usize,
        pub asked: AtomicUsize,
    }

    impl InterruptAt {
        pub fn new(from: usize) -> Self {
            InterruptAt {
                from,
                asked: AtomicUsize::new(0),
            }
        }
    }

    impl Interrupt for InterruptAt {
        fn interrupted(&self) -> bool {
            self.asked.fetch_add(1, Ordering::Relaxed) + 1 >= self.from
        }
    }

    #[test]
    fn a_checkpoint_asks_once_its_time_is_up() {
        let interrupt = InterruptAt::new(3);
        let mut every_time = Checkpoint::new(&interrupt, Duration::ZERO);
        assert_eq!(every_time.check(), Ok(()));
        assert_eq!(every_time.check(), Ok(()));
        assert_eq!(every_time.check(), Err(Interrupted));
        assert_eq!(interrupt.asked.load(Ordering::Relaxed), 3);

        let patient = InterruptAt::new(1);
        let mut hourly = Checkpoint::new(&patient, Duration::from_secs(3600));
        for _ in 0..100 {
            assert_eq!(hourly.check(), Ok(()));
        }
        assert_eq!(patient.asked.load(Ordering::Relaxed), 0);
    }
}
