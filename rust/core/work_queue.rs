//! Work shared out among threads: the sort in pieces and the counting of many texts hand
//! out their pieces from one queue, so that a thread that finishes early takes more.

use std::sync::Mutex;

/// Work shared out among threads: each takes the next item until none is left.
pub struct WorkQueue<I>(Mutex<I>);

impl<I: Iterator> WorkQueue<I> {
    pub fn new(items: I) -> Self {
        WorkQueue(Mutex::new(items))
    }

    pub fn take(&self) -> Option<I::Item> {
        // A thread that panicked holding the lock left the iterator whole.
        self.0
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .next()
    }
}
