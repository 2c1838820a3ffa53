//! A value the two threads of a compression may each need first: whichever asks first makes
//! it, and the other waits for it instead of making it again.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;
use std::thread;

use crate::core::interrupt::{Checkpoint, Interrupted};

const FREE: u8 = 0;
const MAKING: u8 = 1;
/// The maker gave up or panicked: a waiter makes the value itself rather than wait forever.
const ABANDONED: u8 = 2;

#[derive(Debug)]
pub struct MadeOnce<T> {
    state: AtomicU8,
    value: OnceLock<T>,
}

impl<T> Default for MadeOnce<T> {
    fn default() -> Self {
        MadeOnce {
            state: AtomicU8::new(FREE),
            value: OnceLock::new(),
        }
    }
}

impl<T> MadeOnce<T> {
    /// Makes the value with `make`, unless it was begun already.
    pub fn make(&self, make: impl FnOnce() -> Result<T, Interrupted>) {
        if self.claim() {
            let abandon = Abandon(&self.state);
            if let Ok(value) = make() {
                let _ = self.value.set(value);
                std::mem::forget(abandon);
            }
        }
    }

    /// The value, if it is made.
    pub fn value(&self) -> Option<&T> {
        self.value.get()
    }

    /// The value: made here with `make` if it was not begun (or its maker gave up), else
    /// waited for, `checkpoint` asked as this thread waits.
    pub fn get(
        &self,
        make: impl FnOnce(&mut Checkpoint) -> Result<T, Interrupted>,
        checkpoint: &mut Checkpoint,
    ) -> Result<&T, Interrupted> {
        if !self.claim() {
            loop {
                if let Some(value) = self.value.get() {
                    return Ok(value);
                }
                if self.state.load(Ordering::Acquire) == ABANDONED {
                    break;
                }
                checkpoint.check()?;
                thread::yield_now();
            }
        }
        let value = make(checkpoint)?;
        Ok(self.value.get_or_init(|| value))
    }

    fn claim(&self) -> bool {
        self.state
            .compare_exchange(FREE, MAKING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

/// Marks a value abandoned when its maker gives up or unwinds.
struct Abandon<'a>(&'a AtomicU8);

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        self.0.store(ABANDONED, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::time::Duration;

    use super::*;
    use crate::core::interrupt::Uninterrupted;
    use crate::core::test_support::InterruptAt;

    #[test]
    fn the_first_to_ask_makes_it_and_the_other_does_not() {
        let shared = MadeOnce::default();
        let mut checkpoint = Checkpoint::new(&Uninterrupted, Duration::ZERO);
        assert_eq!(shared.get(|_| Ok(1), &mut checkpoint), Ok(&1));
        shared.make(|| panic!("made twice"));
        assert_eq!(shared.get(|_| Ok(2), &mut checkpoint), Ok(&1));
        assert_eq!(shared.value(), Some(&1));
    }

    #[test]
    fn a_value_made_on_another_thread_is_waited_for() {
        let shared = MadeOnce::default();
        thread::scope(|scope| {
            let (begun, beginning) = std::sync::mpsc::channel();
            let shared = &shared;
            scope.spawn(move || {
                shared.make(|| {
                    begun.send(()).unwrap();
                    thread::sleep(Duration::from_millis(50));
                    Ok(7)
                })
            });
            beginning.recv().unwrap();
            let mut checkpoint = Checkpoint::new(&Uninterrupted, Duration::ZERO);
            assert_eq!(shared.get(|_| Ok(8), &mut checkpoint), Ok(&7));
        });
    }

    #[test]
    fn a_wait_answers_an_interruption() {
        let shared: MadeOnce<u32> = MadeOnce::default();
        shared.state.store(MAKING, Ordering::Release);
        let interrupt = InterruptAt::new(3);
        let mut checkpoint = Checkpoint::new(&interrupt, Duration::ZERO);
        assert_eq!(shared.get(|_| Ok(8), &mut checkpoint), Err(Interrupted));
        assert_eq!(shared.value(), None);
    }

    #[test]
    fn a_value_whose_maker_panicked_is_made_by_the_waiter() {
        let shared = MadeOnce::default();
        let panicked = catch_unwind(AssertUnwindSafe(|| shared.make(|| panic!("maker fails"))));
        assert!(panicked.is_err());
        let mut checkpoint = Checkpoint::new(&Uninterrupted, Duration::ZERO);
        assert_eq!(shared.get(|_| Ok(9), &mut checkpoint), Ok(&9));
    }

    #[test]
    fn a_value_whose_maker_gave_up_is_made_by_the_waiter() {
        let shared = MadeOnce::default();
        shared.make(|| Err(Interrupted));
        assert_eq!(shared.value(), None);
        let mut checkpoint = Checkpoint::new(&Uninterrupted, Duration::ZERO);
        assert_eq!(shared.get(|_| Ok(9), &mut checkpoint), Ok(&9));
    }
}
