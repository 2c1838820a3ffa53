//! Long work asks the caller, now and then, whether to stop: the Python bindings check for
//! signals there, so that Ctrl-C stops a long call.

use std::sync::atomic::{AtomicBool, Ordering};
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

/// Tells work on other threads to stop: the thread that asks the caller's interrupt (which
/// may answer on its own thread alone) raises it for them.
#[derive(Debug, Default)]
pub struct Stop(AtomicBool);

impl Stop {
    pub fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Interrupt for Stop {
    fn interrupted(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The work stopped because the caller asked it to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted;

/// [`Checkpoint::tick`]s between two looks at the clock: steps of well under a microsecond
/// (a piece of text counted, a record read) then cost the clock nothing that shows.
const TICKS_PER_CHECK: u32 = 256;

/// Asks an [`Interrupt`] at most once per `every`, the first time `every` after its first
/// check: asking may cost the caller a lock. The clock starts there, not when it is made, so
/// a call too short to check reads no clock (a tenth of a microsecond on some machines).
pub struct Checkpoint<'a> {
    interrupt: &'a dyn Interrupt,
    every: Duration,
    next: Option<Instant>,
    ticks: u32,
}

impl<'a> Checkpoint<'a> {
    pub fn new(interrupt: &'a dyn Interrupt, every: Duration) -> Self {
        Checkpoint {
            interrupt,
            every,
            next: None,
            ticks: 0,
        }
    }

    /// How often the interrupt is asked, at most.
    pub fn every(&self) -> Duration {
        self.every
    }

    /// [`Checkpoint::check`] once every [`TICKS_PER_CHECK`] calls: for a loop of quick steps.
    #[inline]
    pub fn tick(&mut self) -> Result<(), Interrupted> {
        self.advance(1)
    }

    /// [`Checkpoint::tick`] for a step worth `ticks` of them (one per item it walks): a
    /// step over a few items reads no clock, one over thousands checks at once.
    #[inline]
    pub fn advance(&mut self, ticks: usize) -> Result<(), Interrupted> {
        self.ticks = self
            .ticks
            .saturating_add(u32::try_from(ticks).unwrap_or(u32::MAX));
        if self.ticks < TICKS_PER_CHECK {
            return Ok(());
        }
        self.ticks = 0;
        self.check()
    }

    pub fn check(&mut self) -> Result<(), Interrupted> {
        let now = Instant::now();
        if now < *self.next.get_or_insert(now + self.every) {
            return Ok(());
        }
        self.next = Some(now + self.every);
        if self.interrupt.interrupted() {
            Err(Interrupted)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::core::test_support::InterruptAt;

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

    #[test]
    fn once_asked_a_checkpoint_waits_its_time_again() {
        let interrupt = InterruptAt::new(2);
        let every = Duration::from_millis(300);
        let mut checkpoint = Checkpoint::new(&interrupt, every);
        std::thread::sleep(every);
        // The clock starts at the first check.
        assert_eq!(checkpoint.check(), Ok(()));
        assert_eq!(interrupt.asked.load(Ordering::Relaxed), 0);
        std::thread::sleep(every);
        assert_eq!(checkpoint.check(), Ok(()));
        for _ in 0..100 {
            assert_eq!(checkpoint.check(), Ok(()));
        }
        assert_eq!(interrupt.asked.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_step_over_many_items_checks_at_once_and_small_ones_add_up() {
        let interrupt = InterruptAt::new(2);
        let mut checkpoint = Checkpoint::new(&interrupt, Duration::ZERO);
        assert_eq!(checkpoint.advance(TICKS_PER_CHECK as usize - 2), Ok(()));
        assert_eq!(checkpoint.advance(1), Ok(()));
        assert_eq!(interrupt.asked.load(Ordering::Relaxed), 0);
        assert_eq!(checkpoint.advance(1), Ok(()));
        assert_eq!(interrupt.asked.load(Ordering::Relaxed), 1);
        assert_eq!(checkpoint.advance(usize::MAX), Err(Interrupted));
        assert_eq!(interrupt.asked.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn ticks_ask_once_every_ticks_per_check() {
        let interrupt = InterruptAt::new(2);
        let mut checkpoint = Checkpoint::new(&interrupt, Duration::ZERO);
        for _ in 1..TICKS_PER_CHECK {
            assert_eq!(checkpoint.tick(), Ok(()));
        }
        assert_eq!(interrupt.asked.load(Ordering::Relaxed), 0);
        assert_eq!(checkpoint.tick(), Ok(()));
        assert_eq!(interrupt.asked.load(Ordering::Relaxed), 1);
        for _ in 1..TICKS_PER_CHECK {
            assert_eq!(checkpoint.tick(), Ok(()));
        }
        assert_eq!(checkpoint.tick(), Err(Interrupted));
        assert_eq!(interrupt.asked.load(Ordering::Relaxed), 2);
    }
}
