//! The `skeleton_compressor._core` extension module: converts at the boundary, releases the
//! GIL while it sorts large inputs, and leaves the algorithm to `crate::core`.

mod analysis;
mod columns;
mod context;
mod errors;
mod ids;
mod read;
mod scratch;

use pyo3::exceptions::PyOverflowError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::core::Strategy;
use analysis::{analyse, Columns};
use context::context;
use read::Reader;

fn strategy(prefix: bool) -> Strategy {
    if prefix {
        Strategy::Prefix
    } else {
        Strategy::Greedy
    }
}

/// A budget the Python layer has checked to be an int >= 0. Past `u128::MAX` it behaves as
/// unlimited: no sum of token counts gets that far.
fn budget_value(budget: &Bound<'_, PyAny>) -> PyResult<u128> {
    match budget.extract::<u128>() {
        Ok(value) => Ok(value),
        Err(error) if error.is_instance_of::<PyOverflowError>(budget.py()) => Ok(u128::MAX),
        Err(error) => Err(error),
    }
}

fn read_fragments<'py>(py: Python<'py>, fragments: &Bound<'py, PyTuple>) -> PyResult<Columns<'py>> {
    let reader = Reader {
        py,
        ctx: context(py)?,
        container: "fragments",
    };
    let slot = reader
        .ctx
        .slot_offsets
        .map(|offsets| (fragments.clone(), offsets[0]));
    let mut columns = Columns::with_capacity(fragments.len(), reader.container, slot)?;
    for (index, item) in fragments.iter_borrowed().enumerate() {
        columns.push(reader.fragment(index, &item)?);
    }
    Ok(columns)
}

/// Inputs from this many fragments on are visited in input order when results are built.
const VISIT_IN_INPUT_ORDER_FROM: usize = 1 << 19;

/// The fragments at `kept`, the very objects of the input, as a new tuple.
fn kept_fragments<'py>(
    fragments: &Bound<'py, PyTuple>,
    kept: &[u32],
) -> PyResult<Bound<'py, PyTuple>> {
    let py = fragments.py();
    unsafe {
        let tuple =
            Bound::from_owned_ptr_or_err(py, ffi::PyTuple_New(kept.len() as ffi::Py_ssize_t))?;
        let place = |index: u64, position: u64| {
            let item = ffi::PyTuple_GetItem(fragments.as_ptr(), index as ffi::Py_ssize_t);
            ffi::Py_INCREF(item);
            ffi::PyTuple_SetItem(tuple.as_ptr(), position as ffi::Py_ssize_t, item);
        };
        if fragments.len() < VISIT_IN_INPUT_ORDER_FROM {
            for (position, &index) in (0u64..).zip(kept) {
                place(u64::from(index), position);
            }
        } else {
            // A large input does not fit the CPU caches: visit it in its own order, usually
            // the order its fragments sit in memory, and drop each into its ranking position
            // in the (much smaller) new tuple, instead of jumping all over the input.
            let mut by_input_order = scratch::words(kept.len());
            by_input_order.extend(
                (0u64..)
                    .zip(kept)
                    .map(|(position, &index)| u64::from(index) << 32 | position),
            );
            by_input_order.sort_unstable();
            for &packed in &by_input_order {
                place(packed >> 32, packed & u64::from(u32::MAX));
            }
            scratch::give_words(by_input_order);
        }
        Ok(tuple.cast_into_unchecked())
    }
}

/// Runs every fragment check, raising the first failure.
#[pyfunction]
fn validate(py: Python<'_>, fragments: &Bound<'_, PyTuple>) -> PyResult<()> {
    analyse(py, read_fragments(py, fragments)?, &[]).map(drop)
}

/// Returns `(kept_fragments, original_tokens, compressed_tokens)`.
#[pyfunction]
fn compress<'py>(
    py: Python<'py>,
    fragments: &Bound<'py, PyTuple>,
    skeleton_budget: &Bound<'py, PyAny>,
    prefix: bool,
) -> PyResult<(Bound<'py, PyTuple>, u128, u128)> {
    let budgets = [budget_value(skeleton_budget)?];
    let mut ranked = analyse(py, read_fragments(py, fragments)?, &budgets)?;
    let [selection] = &ranked.select(py, &budgets, strategy(prefix))?[..] else {
        unreachable!("one budget")
    };
    Ok((
        kept_fragments(fragments, &selection.kept)?,
        ranked.original_tokens,
        selection.compressed_tokens,
    ))
}

/// Kept fragments and their token sum, for one budget.
type Packed<'py> = (Bound<'py, PyTuple>, u128);

/// Ranks once and packs for every budget: `(original_tokens, [(kept, compressed_tokens)])`.
#[pyfunction]
fn compress_many<'py>(
    py: Python<'py>,
    fragments: &Bound<'py, PyTuple>,
    skeleton_budgets: &Bound<'py, PyList>,
    prefix: bool,
) -> PyResult<(u128, Vec<Packed<'py>>)> {
    let budgets = skeleton_budgets
        .iter()
        .map(|b| budget_value(&b))
        .collect::<PyResult<Vec<_>>>()?;
    let mut ranked = analyse(py, read_fragments(py, fragments)?, &budgets)?;
    let results = ranked
        .select(py, &budgets, strategy(prefix))?
        .into_iter()
        .map(|selection| {
            Ok((
                kept_fragments(fragments, &selection.kept)?,
                selection.compressed_tokens,
            ))
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok((ranked.original_tokens, results))
}

#[pymodule(gil_used = true)]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(validate, module)?)?;
    module.add_function(wrap_pyfunction!(compress, module)?)?;
    module.add_function(wrap_pyfunction!(compress_many, module)?)?;
    module.add_function(wrap_pyfunction!(columns::compress_arrays, module)?)?;
    Ok(())
}
