//! Where long work runs: the caller decides (the Python bindings release the GIL there),
//! and how work is shared out among threads.

use std::sync::Mutex;

/// Runs long work the caller's way: the Python bindings release the GIL around it.
pub trait Detach {
    fn detach<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T;
}

/// Runs the work where it is.
pub struct InPlace;

impl Detach for InPlace {
    fn detach<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
        work()
    }
}

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
