//! Interrupts for tests: one that says yes from a given question on and counts the
//! questions, and a checkpoint that never stops.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::core::interrupt::{Checkpoint, Interrupt, Uninterrupted};

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

/// A checkpoint that never stops the work.
pub(crate) fn unasked() -> Checkpoint<'static> {
    Checkpoint::new(&Uninterrupted, std::time::Duration::ZERO)
}
