//! Ctrl-C during long work: the core asks now and then, and the interpreter's signal
//! handlers answer.

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;

use crate::core::Interrupt;

/// Runs the interpreter's signal handlers (they run only on its main thread). One that
/// raises, as Ctrl-C's does, interrupts the work; its exception is left set on this thread,
/// as the C API leaves it, for [`raised`] to take once the work has stopped.
pub struct PythonSignals;

impl Interrupt for PythonSignals {
    fn interrupted(&self) -> bool {
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(error) => {
                error.restore(py);
                true
            }
        })
    }
}

/// Items a loop that holds the GIL reads between two runs of the signal handlers: a
/// fragment takes well under a microsecond, and asking costs one atomic read.
const ITEMS_BETWEEN_CHECKS: usize = 1 << 10;

/// Runs the interpreter's signal handlers at the loop's `index`-th item, once every
/// [`ITEMS_BETWEEN_CHECKS`]: a loop over millions of Python objects, the GIL held, answers
/// Ctrl-C as it goes.
pub fn check_now_and_then(py: Python<'_>, index: usize) -> PyResult<()> {
    if index % ITEMS_BETWEEN_CHECKS == 0 {
        py.check_signals()
    } else {
        Ok(())
    }
}

/// The exception a signal handler raised while the work ran.
pub fn raised(py: Python<'_>) -> PyErr {
    PyErr::take(py).unwrap_or_else(|| PyKeyboardInterrupt::new_err(()))
}
