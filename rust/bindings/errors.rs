//! Turning a failed check into the Python exception users see.
//!
//! The wording lives in `skeleton_compressor._messages`, which the Python fallback uses too,
//! so both backends raise the same message for the same input.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::context::Context;

/// Where a failing value sits: `fragments[3]` or `rows[3]`, with its id once it has a valid one.
#[derive(Clone, Copy)]
pub struct Place<'a, 'py> {
    pub container: &'static str,
    pub index: usize,
    pub fragment_id: Option<&'a Bound<'py, PyString>>,
}

/// Errors raised by user code (a property, `__index__`, `__float__`) are reported as the
/// problem they caused, with the original as `__cause__`; `KeyboardInterrupt` and other
/// non-`Exception` errors pass through untouched.
pub fn is_ordinary(py: Python<'_>, error: &PyErr) -> bool {
    error.is_instance_of::<PyException>(py)
}

pub fn problem(
    py: Python<'_>,
    ctx: &Context,
    kind: &str,
    place: Place<'_, '_>,
    value: &Bound<'_, PyAny>,
    cause: Option<PyErr>,
) -> PyErr {
    let made = ctx.messages.bind(py).call_method1(
        "fragment_error",
        (kind, place.index, place.fragment_id, value, place.container),
    );
    with_cause(py, made, cause)
}

pub fn unreadable(
    py: Python<'_>,
    ctx: &Context,
    place: Place<'_, '_>,
    attribute: &str,
    cause: PyErr,
) -> PyErr {
    if !is_ordinary(py, &cause) {
        return cause;
    }
    let made = ctx.messages.bind(py).call_method1(
        "unreadable_error",
        (
            place.index,
            place.fragment_id,
            attribute,
            cause.value(py),
            place.container,
        ),
    );
    with_cause(py, made, Some(cause))
}

pub fn duplicate(
    py: Python<'_>,
    ctx: &Context,
    container: &'static str,
    fragment_id: &Bound<'_, PyString>,
    first: u32,
    second: u32,
) -> PyErr {
    let made = ctx
        .messages
        .bind(py)
        .call_method1("duplicate_error", (fragment_id, first, second, container));
    with_cause(py, made, None)
}

fn with_cause(py: Python<'_>, made: PyResult<Bound<'_, PyAny>>, cause: Option<PyErr>) -> PyErr {
    match made {
        Ok(exception) => {
            let error = PyErr::from_value(exception);
            error.set_cause(py, cause);
            error
        }
        Err(error) => error,
    }
}
