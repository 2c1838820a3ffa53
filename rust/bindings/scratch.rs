//! Each thread keeps the workspace of its last call, within a cap per thread and a cap
//! across all threads, so that a planner compressing again and again skips the cost of fresh
//! memory pages, while a thread pool cannot pile up buffers without bound.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};

use pyo3::prelude::*;

use crate::core::Workspace;

/// Enough for the buffers of a call on about a million fragments, with a selection policy
/// that groups half of them.
pub const KEEP_PER_THREAD: usize = 192 << 20;
pub const KEEP_IN_ALL: usize = 384 << 20;

static RETAINED: AtomicUsize = AtomicUsize::new(0);

#[derive(Default)]
struct Spare {
    workspace: RefCell<Workspace>,
    counted: Cell<usize>,
}

impl Drop for Spare {
    fn drop(&mut self) {
        RETAINED.fetch_sub(self.counted.get(), Ordering::Relaxed);
    }
}

thread_local! {
    static SPARE: Spare = Spare::default();
}

/// This thread's kept workspace (empty if none), now the caller's.
pub fn take() -> Workspace {
    SPARE
        .try_with(|spare| {
            RETAINED.fetch_sub(spare.counted.replace(0), Ordering::Relaxed);
            spare.workspace.take()
        })
        .unwrap_or_default()
}

/// Keeps `workspace` for this thread's next call, its largest buffers freed until it fits
/// the cap per thread; frees it all when the cap across threads has no room for it.
pub fn keep(mut workspace: Workspace) {
    workspace.trim_to(KEEP_PER_THREAD);
    let bytes = workspace.retained_bytes();
    let reserved = RETAINED.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| {
        (now + bytes <= KEEP_IN_ALL).then_some(now + bytes)
    });
    if reserved.is_err() {
        return;
    }
    let kept = SPARE.try_with(|spare| {
        // A call made from inside this one (user code run while reading) may have kept its
        // own workspace meanwhile: the one kept last replaces it.
        drop(spare.workspace.replace(workspace));
        RETAINED.fetch_sub(spare.counted.replace(bytes), Ordering::Relaxed);
    });
    if kept.is_err() {
        RETAINED.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// Bytes kept by all threads together.
pub fn retained_bytes() -> usize {
    RETAINED.load(Ordering::Relaxed)
}

/// Frees this thread's kept workspace.
pub fn release() {
    drop(take());
}

/// Bytes of working memory kept between calls, by all threads together.
#[pyfunction]
pub fn retained_scratch_bytes() -> usize {
    retained_bytes()
}

/// Frees the working memory this thread keeps between calls.
#[pyfunction]
pub fn release_scratch() {
    release();
}
