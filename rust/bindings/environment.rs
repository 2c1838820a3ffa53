//! The one environment variable the package reads on every module-level call.

use pyo3::prelude::*;

/// `SKELETON_COMPRESSOR_BACKEND` as the process environment holds it: `""` when unset,
/// `None` when it is not UTF-8 (Python decodes those bytes its own way, so the caller asks
/// `os.environ`). `os.environ.get` costs about a microsecond, more than a small call's own
/// work; writes to `os.environ` reach the process environment, where this reads them.
#[pyfunction]
pub fn backend_variable() -> Option<String> {
    match std::env::var_os("SKELETON_COMPRESSOR_BACKEND") {
        None => Some(String::new()),
        Some(value) => value.into_string().ok(),
    }
}
