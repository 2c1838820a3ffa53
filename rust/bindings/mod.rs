//! The `skeleton_compressor._core` extension module. It only converts at the boundary: reads
//! Python input into the core's columns, makes one call to `crate::core`, and builds the
//! results; `errors.rs` is the one place failures become Python exceptions.

mod columns;
mod compress;
mod compressor;
mod context;
mod environment;
mod errors;
mod read;
mod records;
mod results;
mod siblings;
mod signals;
mod slotted;
mod text;
mod tokens;
mod turn;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::core::{ErrorKind, Problem};

/// `mi_option_purge_delay` in mimalloc.h (libmimalloc-sys names no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[pymodule(gil_used = true)]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    // Freed memory is kept, never handed back to the system: a call on many fragments frees
    // tens of megabytes, and pages faulted in fresh by the next call cost about as much as
    // its work. mimalloc purges freed memory after a delay by default.
    // SAFETY: sets an option by its index, which mimalloc reads atomically; no memory is
    // touched.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    module.add_class::<compressor::Compressor>()?;
    module.add_class::<records::KeptRecords>()?;
    module.add_function(wrap_pyfunction!(environment::backend_variable, module)?)?;
    tokens::register(module)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add(
        "ERROR_KINDS",
        PyTuple::new(module.py(), ErrorKind::ALL.map(ErrorKind::name))?,
    )?;
    let problems = Problem::ALL.map(Problem::name);
    module.add("RECORD_PROBLEMS", PyTuple::new(module.py(), problems)?)?;
    Ok(())
}
