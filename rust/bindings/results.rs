//! Results built from the core's answer: the kept fragments (the input's own objects), ints,
//! and the decisions of an explanation.

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyString, PyTuple};

use super::context::context;
use super::signals;
use crate::core::{self, Compression, Placement, Reason, Tuning, UNITS_PER_RELEVANCE};

/// A Python int: through the quick 64-bit conversion when the value fits, as it nearly
/// always does (the 128-bit one is slow under the stable ABI).
pub fn int_of(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    match u64::try_from(value) {
        Ok(small) => Ok(small.into_pyobject(py)?.into_any()),
        Err(_) => Ok(value.into_pyobject(py)?.into_any()),
    }
}

/// An exact int that Python receives through `int_of`.
pub struct Int(pub u128);

impl<'py> IntoPyObject<'py> for Int {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        int_of(py, self.0)
    }
}

/// Up to this, an int converts to a float exactly, so that a float division of two rounds
/// once, as Python's division of two ints does.
const EXACT_IN_FLOAT: u128 = 1 << 53;

/// One budget's answer, as `compress` returns it: `SkeletonResult(kept, metadata)`, with
/// the metadata's fields as `SkeletonMetadata.of` computes them.
pub struct Answer<'py> {
    pub kept: Bound<'py, PyTuple>,
    pub fragments_total: usize,
    pub skeleton_budget: Bound<'py, PyAny>,
    pub original_tokens: u128,
    pub compressed_tokens: u128,
    pub value_kept_units: u128,
    pub value_bound_units: u128,
    pub relevance_kept: f64,
    pub exact: bool,
}

/// `a / b` rounded once, 1.0 when `b` is 0; `None` where only Python's ints divide exactly.
fn quotient(a: u128, b: u128) -> Option<f64> {
    match b {
        0 => Some(1.0),
        _ if a <= EXACT_IN_FLOAT && b <= EXACT_IN_FLOAT => Some(a as f64 / b as f64),
        _ => None,
    }
}

/// The `SkeletonResult` of `answer`, made and filled here when the classes' slots were
/// located and every field is a float division rounded once; otherwise by
/// `SkeletonMetadata.of` and `SkeletonResult` in Python.
pub fn skeleton_result<'py>(py: Python<'py>, answer: Answer<'py>) -> PyResult<Bound<'py, PyAny>> {
    let ctx = context(py)?;
    let kept_len = answer.kept.len();
    let ratio = quotient(answer.compressed_tokens, answer.original_tokens);
    let share = quotient(answer.value_kept_units, answer.value_bound_units);
    let (Some(metadata), Some(result), Some(ratio), Some(share)) =
        (&ctx.metadata, &ctx.result, ratio, share)
    else {
        let metadata = ctx.metadata_type.bind(py).call_method1(
            "of",
            (
                int_of(py, answer.original_tokens)?,
                int_of(py, answer.compressed_tokens)?,
                answer.skeleton_budget,
                answer.fragments_total,
                kept_len,
                int_of(py, answer.value_kept_units)?,
                int_of(py, answer.value_bound_units)?,
                0,
                answer.relevance_kept,
                answer.exact,
            ),
        )?;
        return ctx.result_type.bind(py).call1((answer.kept, metadata));
    };
    // Dividing by a power of two is exact, so the bound is rounded once, by `as`.
    let value_bound = answer.value_bound_units as f64 / UNITS_PER_RELEVANCE;
    let metadata = metadata.build(
        py,
        [
            int_of(py, answer.original_tokens)?,
            int_of(py, answer.compressed_tokens)?,
            PyFloat::new(py, ratio).into_any(),
            answer.skeleton_budget,
            answer.fragments_total.into_pyobject(py)?.into_any(),
            kept_len.into_pyobject(py)?.into_any(),
            PyFloat::new(py, answer.relevance_kept).into_any(),
            PyFloat::new(py, value_bound).into_any(),
            0u32.into_pyobject(py)?.into_any(),
            PyFloat::new(py, share).into_any(),
            PyBool::new(py, answer.exact).to_owned().into_any(),
        ],
    )?;
    result.build(py, [answer.kept.into_any(), metadata])
}

/// How many fragments ahead of the one being placed a large result's build asks for.
const PREFETCH_AHEAD: usize = 16;

/// Asks the CPU to start loading the memory at `object`, whose reference count is about to be
/// changed: the kept fragments of a large input are rarely in the caches.
#[inline]
fn prefetch(object: *const ffi::PyObject) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86_64, and a prefetch is a hint that reads nothing and cannot
    // fault, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(object.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = object;
}

/// The fragments at `kept`, the very objects of the input, as a new tuple.
pub fn kept_fragments<'py>(
    fragments: &Bound<'py, PyTuple>,
    kept: &[u32],
) -> PyResult<Bound<'py, PyTuple>> {
    let py = fragments.py();
    let len = fragments.len();
    if kept.iter().any(|&index| index as usize >= len) {
        return Err(PyRuntimeError::new_err("kept fragment out of range"));
    }
    // SAFETY: the new tuple has `kept.len()` slots and each is set once, to an item of
    // `fragments` (a live tuple, indices checked above) with a new reference, before the
    // tuple is handed to Python. A tuple left part-filled by Ctrl-C is only dropped, which
    // skips the empty slots.
    unsafe {
        let tuple =
            Bound::from_owned_ptr_or_err(py, ffi::PyTuple_New(kept.len() as ffi::Py_ssize_t))?;
        let place = |index: u32, position: u32| {
            let item = ffi::PyTuple_GetItem(fragments.as_ptr(), index as ffi::Py_ssize_t);
            ffi::Py_INCREF(item);
            ffi::PyTuple_SetItem(tuple.as_ptr(), position as ffi::Py_ssize_t, item);
        };
        match core::placement(kept, len, &Tuning::DEFAULT) {
            Placement::Ranking => {
                for (position, &index) in (0u32..).zip(kept) {
                    place(index, position);
                }
            }
            // Each dropped into its ranking position in the (much smaller) new tuple.
            Placement::Input(order) => {
                for (at, &(index, position)) in order.iter().enumerate() {
                    signals::check_now_and_then(py, at)?;
                    if let Some(&(later, _)) = order.get(at + PREFETCH_AHEAD) {
                        prefetch(ffi::PyTuple_GetItem(
                            fragments.as_ptr(),
                            later as ffi::Py_ssize_t,
                        ));
                    }
                    place(index, position);
                }
            }
        }
        Ok(tuple.cast_into_unchecked())
    }
}

/// Kept fragments, their token sum, the value kept and its bound (in units), the relevance
/// kept (summed exactly), and whether the selection is exact, for one budget.
pub type Packed<'py> = (Bound<'py, PyTuple>, Int, Int, Int, f64, bool);

/// Kept fragments, original and compressed tokens, the value kept and its bound (in units),
/// the relevance kept (summed exactly), the decision columns, and whether the selection is
/// exact.
pub type Explained<'py> = (
    Bound<'py, PyTuple>,
    Int,
    Int,
    Int,
    Int,
    f64,
    Bound<'py, PyTuple>,
    bool,
);

/// The room a turn's headroom left of a budget past `u128::MAX`: what the core was given
/// (at most `u128::MAX / 2`, below every budget_left counted down from the whole budget),
/// and the real one.
pub struct HeadroomRoom<'py> {
    pub given: u128,
    pub real: Bound<'py, PyAny>,
}

/// The room the decisions' budget_left count down from: `budget` as the core read it,
/// `skeleton_budget` as given, and the room a turn's headroom left of a budget past
/// `u128::MAX`.
pub struct Rooms<'a, 'py> {
    pub budget: u128,
    pub skeleton_budget: &'a Bound<'py, PyAny>,
    pub headroom: Option<&'a HeadroomRoom<'py>>,
}

impl<'a, 'py> Rooms<'a, 'py> {
    pub fn of(budget: u128, skeleton_budget: &'a Bound<'py, PyAny>) -> Self {
        Rooms {
            budget,
            skeleton_budget,
            headroom: None,
        }
    }

    /// What is left of the real room where the core counted `left`.
    fn shown(&self, py: Python<'py>, left: u128) -> PyResult<Bound<'py, PyAny>> {
        match self.headroom {
            Some(room) if left <= room.given => room.real.sub(room.given - left),
            // A budget past u128::MAX was read as u128::MAX: what is left of the real one
            // is that budget less what the walk spent, in Python's exact ints.
            _ if self.budget == u128::MAX => self.skeleton_budget.sub(u128::MAX - left),
            _ => int_of(py, left),
        }
    }
}

/// The decisions as four lists (kept, reason, rank, budget_left), of values that need no
/// tracking by Python's garbage collector (bools, interned names, ints): the caller pairs them
/// with the fragments.
pub fn decision_columns<'py>(
    py: Python<'py>,
    compression: &Compression,
    rooms: Rooms<'_, 'py>,
) -> PyResult<Bound<'py, PyTuple>> {
    let reasons = Reason::ALL.map(|reason| PyString::intern(py, reason.name()));
    let count = compression.decisions.len();
    let (mut kept, mut why, mut ranks, mut left) = (
        Vec::with_capacity(count),
        Vec::with_capacity(count),
        Vec::with_capacity(count),
        Vec::with_capacity(count),
    );
    for (at, d) in compression.decisions.iter().enumerate() {
        signals::check_now_and_then(py, at)?;
        kept.push(d.kept);
        why.push(reasons[d.reason as usize].clone());
        ranks.push(d.rank);
        let shown = match d.budget_left {
            Some(value) => Some(rooms.shown(py, value)?),
            None => None,
        };
        left.push(shown);
    }
    (kept, why, ranks, left).into_pyobject(py)
}
