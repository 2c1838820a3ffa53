//! Where long work runs: the caller decides (the Python bindings release the GIL there).

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
