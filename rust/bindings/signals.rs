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

/// The exception a signal handler raised while the work ran.
pub fn raised(py: Python<'_>) -> PyErr {
    PyErr::take(py).unwrap_or_else(|| PyKeyboardInterrupt::new_err(()))
}
