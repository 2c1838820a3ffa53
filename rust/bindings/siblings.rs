//! `compress_siblings` in one call to the core: the parent read once, each child's scores
//! read from its mapping, and each child's result built with only its kept fragments
//! rescored. An input this path does not take (a mapping that is not a dict of exact `str`
//! ids, any fragment or score the reader or the core refuses, Python without slotted
//! classes) gives `None`, and the Python layer's general path decides it, wording every
//! error as `compress` does.

use pyo3::exceptions::PyException;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString, PyTuple};

use super::compress::{budget_value, fragment_reader, read_columns, read_fragments, ReleaseGil};
use super::errors::Failure;
use super::read::Read;
use super::results::{skeleton_result, Answer, Int};
use super::signals;
use super::text::IdText;
use crate::core::{self, ChildAsk, Columns, Cost, Pricing, Refusal, Request, RowsById, Share};

/// `CacheCost`'s fields: billed, uncached, cached and written tokens.
pub type CostFields = (f64, Int, Int, Int);

/// `(shared fragments, one SkeletonResult per child, cost, independent cost)`.
pub type Packed<'py> = (
    Bound<'py, PyTuple>,
    Bound<'py, PyTuple>,
    CostFields,
    CostFields,
);

/// One child's scores: the relevance of every fragment, and the objects it scored them with
/// (`None` where the child names no score, and the parent's fragment stands).
struct Scores<'py> {
    relevances: Vec<f64>,
    given: Vec<Option<Bound<'py, PyAny>>>,
}

/// The children of the parent `fragments` packed together, or `None` where the general
/// path must decide. `relevances` holds each child's mapping (or `None`) and `budgets`
/// its checked budget.
pub fn compress_siblings<'py>(
    fragments: &Bound<'py, PyTuple>,
    relevances: &Bound<'py, PyTuple>,
    budgets: &Bound<'py, PyTuple>,
    max_value_loss: Share,
    pricing: Pricing,
    request: Request<'_>,
) -> PyResult<Option<Packed<'py>>> {
    let py = fragments.py();
    let reader = fragment_reader(py)?;
    let Some(slots) = &reader.ctx.fragment else {
        return Ok(None);
    };
    let read = read_fragments(&reader, fragments);
    let columns = match read_columns(fragments.len(), read, request) {
        Ok(columns) => columns,
        Err(failure) => return general(failure.into_pyerr(py, reader.ctx)),
    };
    // `estimate_cost` reads every fragment's content, which `compress` does not check.
    for fragment in fragments.iter() {
        match fragment.getattr(intern!(py, "content")) {
            Ok(content) if content.is_instance_of::<PyString>() => {}
            Ok(_) => return Ok(None),
            Err(error) => return general(error),
        }
    }
    let rows = RowsById::new(&columns);
    let mut children = Vec::with_capacity(relevances.len());
    for mapping in relevances.iter() {
        match scores(&reader, &columns, &rows, &mapping) {
            Ok(Some(scores)) => children.push(scores),
            Ok(None) => return Ok(None),
            Err(failure) => return general(failure.into_pyerr(py, reader.ctx)),
        }
    }
    let budget_values = budgets
        .iter()
        .map(|budget| budget_value(&budget))
        .collect::<PyResult<Vec<u128>>>()?;
    let asks: Vec<ChildAsk<'_>> = children
        .iter()
        .zip(&budget_values)
        .map(|(scores, &budget)| ChildAsk {
            relevances: &scores.relevances,
            budget,
        })
        .collect();
    let packed = core::pack_siblings(
        columns,
        &asks,
        max_value_loss,
        &pricing,
        request,
        &ReleaseGil(py),
    );
    let siblings = match packed {
        Ok(siblings) => siblings,
        Err(Refusal::Interrupted) => return Err(signals::raised(py)),
        Err(_) => return Ok(None),
    };
    let shared = PyTuple::new(
        py,
        siblings
            .shared
            .iter()
            .map(|&row| fragments.get_item(row as usize))
            .collect::<PyResult<Vec<_>>>()?,
    )?;
    let mut results = Vec::with_capacity(children.len());
    for ((scores, (selection, relevance_kept)), budget) in
        children.iter().zip(&siblings.children).zip(budgets.iter())
    {
        let mut kept = Vec::with_capacity(selection.kept.len());
        for &row in &selection.kept {
            let parent = fragments.get_item(row as usize)?;
            kept.push(match &scores.given[row as usize] {
                None => parent,
                Some(score) => {
                    let Some(mut fields) = slots.fields(&parent) else {
                        return Ok(None);
                    };
                    fields[2] = score.clone();
                    let holds_atoms = fields.iter().all(is_atom);
                    let copy = slots.build(py, fields)?;
                    if holds_atoms {
                        // SAFETY: `copy` is a live object of a class the collector tracks,
                        // and the GIL is held.
                        unsafe { ffi::PyObject_GC_UnTrack(copy.as_ptr().cast()) };
                    }
                    copy
                }
            });
        }
        results.push(skeleton_result(
            py,
            Answer {
                kept: PyTuple::new(py, kept)?,
                fragments_total: fragments.len(),
                skeleton_budget: budget,
                original_tokens: siblings.original_tokens,
                compressed_tokens: selection.compressed_tokens,
                value_kept_units: selection.value_kept,
                value_bound_units: selection.value_bound,
                relevance_kept: *relevance_kept,
                exact: selection.exact,
            },
        )?);
    }
    Ok(Some((
        shared,
        PyTuple::new(py, results)?,
        cost_fields(&siblings.cost),
        cost_fields(&siblings.independent_cost),
    )))
}

/// Whether `value` is a str, int, float, bool or None exactly: it refers to no other object,
/// so a fragment holding only such values is in no reference cycle, and the cycle collector
/// need not visit it (as CPython untracks a tuple of them). A child's results are its kept
/// fragments made anew, and visiting them was a tenth of a call.
fn is_atom(value: &Bound<'_, PyAny>) -> bool {
    value.is_none()
        || value.is_exact_instance_of::<PyString>()
        || value.is_exact_instance_of::<PyFloat>()
        || value.is_exact_instance_of::<PyInt>()
        || value.is_exact_instance_of::<PyBool>()
}

fn cost_fields(cost: &Cost) -> CostFields {
    (
        cost.billed,
        Int(cost.uncached),
        Int(cost.cached),
        Int(cost.written),
    )
}

/// `None` for an error the general path words (any `Exception`); anything else (a
/// `KeyboardInterrupt`) is raised.
fn general<'py>(error: PyErr) -> PyResult<Option<Packed<'py>>> {
    Python::attach(|py| {
        if error.is_instance_of::<PyException>(py) {
            Ok(None)
        } else {
            Err(error)
        }
    })
}

/// A child's scores from its mapping: the parent's where it names none (`None` or an
/// empty dict); `None` for a mapping this path does not read.
fn scores<'py>(
    reader: &super::read::Reader<'py>,
    columns: &Columns,
    rows: &RowsById,
    mapping: &Bound<'py, PyAny>,
) -> Read<'py, Option<Scores<'py>>> {
    let mut relevances = columns.relevances();
    let mut given = vec![None; relevances.len()];
    if mapping.is_none() {
        return Ok(Some(Scores { relevances, given }));
    }
    let Ok(dict) = mapping.cast_exact::<PyDict>() else {
        return Ok(None);
    };
    if dict.is_empty() {
        return Ok(Some(Scores { relevances, given }));
    }
    for (key, value) in dict.iter() {
        let Ok(id) = key.cast_exact::<PyString>() else {
            return Ok(None);
        };
        let hash = id.hash().map_err(Failure::Python)? as u64;
        let text = IdText::new(id.clone()).map_err(Failure::Python)?;
        let Some(row) = rows.row(columns, text.as_bytes(), hash) else {
            return Ok(None);
        };
        relevances[row as usize] = reader.relevance(row as usize, id, &value)? + 0.0;
        given[row as usize] = Some(value);
    }
    Ok(Some(Scores { relevances, given }))
}
