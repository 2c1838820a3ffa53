//! Failed checks as data, and the one place that turns them into the Python exceptions users
//! see.
//!
//! The wording lives in `skeleton_compressor._messages`, which the Python fallback uses too,
//! so both backends raise the same exception, with the same fields and message.

use pyo3::call::PyCallArgs;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyModule, PyString};

use super::context::Context;
use super::text::id_from_bytes;
use crate::core::{BudgetExceeded, Encoding, ErrorKind, TooMany, VariantRule};

/// Where a failing value sits: `fragments[3]` or `rows[3]`, with its id once it has a valid one.
#[derive(Clone)]
pub struct Place<'py> {
    pub container: &'static str,
    pub index: usize,
    pub fragment_id: Option<Bound<'py, PyString>>,
}

/// A failed check on one value, or an error that passes through untouched.
pub enum Failure<'py> {
    Problem {
        kind: ErrorKind,
        place: Place<'py>,
        value: Bound<'py, PyAny>,
        cause: Option<PyErr>,
    },
    /// An attribute whose access raised; `cause` is an `Exception`.
    Unreadable {
        place: Place<'py>,
        attribute: &'static str,
        cause: PyErr,
    },
    Duplicate {
        container: &'static str,
        fragment_id: Bound<'py, PyString>,
        first: u32,
        second: u32,
    },
    /// A variant rule broken, as the core found it.
    VariantRule {
        container: &'static str,
        rule: Box<VariantRule>,
    },
    /// The overflow policy refused to go over the budget.
    BudgetExceeded(BudgetExceeded),
    /// Columns of `compress_arrays` whose lengths differ: ids, token counts, scores, and
    /// `required`, `groups` and `variants` when given.
    ColumnLengths([Option<usize>; 6]),
    Python(PyErr),
}

impl From<PyErr> for Failure<'_> {
    fn from(error: PyErr) -> Self {
        Failure::Python(error)
    }
}

impl From<TooMany> for Failure<'_> {
    fn from(too_many: TooMany) -> Self {
        Failure::Python(PyValueError::new_err(format!(
            "at most {} fragments can be compressed at once",
            too_many.limit
        )))
    }
}

/// Errors raised by user code (a property, `__index__`, `__float__`) are reported as the
/// problem they caused, with the original as `__cause__`; `KeyboardInterrupt` and other
/// non-`Exception` errors pass through untouched.
pub fn is_ordinary(py: Python<'_>, error: &PyErr) -> bool {
    error.is_instance_of::<PyException>(py)
}

impl Failure<'_> {
    pub fn into_pyerr(self, py: Python<'_>, ctx: &Context) -> PyErr {
        let messages = ctx.for_core.bind(py);
        let (made, cause) = match self {
            Failure::Python(error) => return error,
            Failure::BudgetExceeded(exceeded) => (
                messages.call_method1(
                    "budget_exceeded_error",
                    (exceeded.budget, exceeded.needed, exceeded.required),
                ),
                None,
            ),
            Failure::ColumnLengths([ids, tokens, scores, required, groups, variants]) => (
                messages.call_method1(
                    "column_lengths_error",
                    (ids, tokens, scores, required, groups, variants),
                ),
                None,
            ),
            Failure::Problem {
                kind,
                place,
                value,
                cause,
            } => (
                messages.call_method1(
                    "fragment_error",
                    (
                        kind.name(),
                        place.index,
                        place.fragment_id,
                        value,
                        place.container,
                    ),
                ),
                cause,
            ),
            Failure::Unreadable {
                place,
                attribute,
                cause,
            } => (
                messages.call_method1(
                    "unreadable_error",
                    (
                        place.index,
                        place.fragment_id,
                        attribute,
                        cause.value(py),
                        place.container,
                    ),
                ),
                Some(cause),
            ),
            Failure::VariantRule { container, rule } => {
                (variant_rule_error(py, messages, container, &rule), None)
            }
            Failure::Duplicate {
                container,
                fragment_id,
                first,
                second,
            } => (
                messages.call_method1("duplicate_error", (fragment_id, first, second, container)),
                None,
            ),
        };
        match made {
            Ok(exception) => {
                let error = PyErr::from_value(exception);
                error.set_cause(py, cause);
                error
            }
            Err(error) => error,
        }
    }
}

/// The exception for a broken variant rule, its names decoded from the core's bytes.
fn variant_rule_error<'py>(
    py: Python<'py>,
    messages: &Bound<'py, PyModule>,
    container: &'static str,
    rule: &VariantRule,
) -> PyResult<Bound<'py, PyAny>> {
    let text = |bytes: &Option<Vec<u8>>| -> PyResult<Option<Bound<'py, PyString>>> {
        bytes
            .as_deref()
            .map(|bytes| id_from_bytes(py, bytes))
            .transpose()
    };
    let fragment_id = id_from_bytes(py, &rule.fragment_id)?;
    let variant = text(&rule.variant)?;
    if rule.kind == ErrorKind::VariantGroupMismatch {
        let names = (text(&rule.group)?, text(&rule.first_variant)?);
        messages.call_method1(
            "variant_group_mismatch_error",
            (
                fragment_id,
                rule.index,
                variant,
                names.0,
                rule.first_index,
                names.1,
                container,
            ),
        )
    } else {
        messages.call_method1(
            "variant_required_twice_error",
            (
                fragment_id,
                rule.index,
                variant,
                rule.first_index,
                container,
            ),
        )
    }
}

/// The error that `skeleton_compressor._backends.rust.<function>(*args)` words; or the error that
/// wording it raised.
fn worded<'py>(py: Python<'py>, function: &str, args: impl PyCallArgs<'py>) -> PyErr {
    match py
        .import("skeleton_compressor._backends.rust")
        .and_then(|messages| messages.call_method1(function, args))
    {
        Ok(exception) => PyErr::from_value(exception),
        Err(error) => error,
    }
}

/// A text to count is not a `str`; `place` is how the caller calls it (`text`, `texts[3]`).
pub fn text_type_error(py: Python<'_>, place: &str, value: &Bound<'_, PyAny>) -> PyErr {
    worded(py, "text_type_error", (place, value))
}

/// The texts to count are not an iterable of `str`.
pub fn texts_type_error(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyErr {
    worded(py, "texts_type_error", (value,))
}

/// `name` is a str naming no encoding (any str: one with a lone surrogate has no UTF-8 form).
pub fn unknown_encoding_error<'py>(py: Python<'py>, name: impl IntoPyObject<'py>) -> PyErr {
    let known = Encoding::ALL.map(Encoding::name);
    worded(py, "unknown_encoding_error", (name, known))
}
