//! `compress_siblings` in one call to the core: the parent read once, each child's scores
//! read from its mapping, and each child's result built with only its kept fragments
//! rescored. An input this path does not take (a mapping that is not a dict of exact `str`
//! ids, a score that is not an exact float or int, any fragment or score the reader or the
//! core refuses, a content that is not a `str`, a subclass of `ContextFragment` that a
//! child rescores, Python without slotted classes) gives `None`, and the Python layer's
//! general path decides it, wording every error as `compress` does.

use std::cell::OnceCell;

use pyo3::exceptions::PyException;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyInt, PyString, PyTuple};

use super::compress::{
    budget_value, fragment_reader, read_columns, read_fragments_and_ids, ReleaseGil,
};
use super::context::RELEVANCE_SCORE;
use super::read::Read;
use super::results::{skeleton_result, Answer, Int};
use super::signals;
use super::slotted::Slotted;
use super::text::IdText;
use crate::core::{
    self, ChildAsk, Columns, Cost, Pricing, Refusal, Request, RowsById, Share, Siblings,
};

/// `CacheCost`'s fields: billed, uncached, cached and written tokens.
pub type CostFields = (f64, Int, Int, Int);

/// `(shared fragments, one SkeletonResult per child, cost, independent cost, the text the
/// prefix key digests)`.
pub type Packed<'py> = (
    Bound<'py, PyTuple>,
    Bound<'py, PyTuple>,
    CostFields,
    CostFields,
    Bound<'py, PyBytes>,
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
    // The ids as the columns read them, to find a child's keys that are the very same
    // objects.
    let mut ids = Vec::with_capacity(fragments.len());
    let read = read_fragments_and_ids(&reader, fragments, &mut ids);
    let columns = match read_columns(fragments.len(), read, request) {
        Ok(columns) => columns,
        Err(failure) => return general(failure.into_pyerr(py, reader.ctx)),
    };
    // The contents, which `estimate_cost` reads and `compress` does not check.
    let mut contents = Vec::with_capacity(fragments.len());
    for fragment in fragments.iter() {
        let content = match slots.some_fields(&fragment, [3]) {
            Some([content]) => content,
            None => match fragment.getattr(intern!(py, "content")) {
                Ok(content) => content,
                Err(error) => return general(error),
            },
        };
        let Ok(content) = content.cast_into::<PyString>() else {
            return Ok(None);
        };
        contents.push(content);
    }
    let parent = Parent {
        columns: &columns,
        rows: OnceCell::new(),
        ids: &ids,
    };
    let mut children = Vec::with_capacity(relevances.len());
    for mapping in relevances.iter() {
        match scores(&reader, &parent, &mapping) {
            Ok(Some(scores)) => children.push(scores),
            Ok(None) => return Ok(None),
            Err(failure) => return general(failure.into_pyerr(py, reader.ctx)),
        }
    }
    // A subclass a child rescores is left to the general path, which makes every fragment a
    // child rescores before any is kept (a subclass's own checks may refuse the score), as
    // the Python backend does; this path makes only the kept ones.
    let rescored_rows = children.iter().flat_map(|child| {
        (child.given.iter().enumerate()).filter_map(|(row, given)| given.as_ref().map(|_| row))
    });
    for row in rescored_rows {
        if !slots.is_exactly(&fragments.get_borrowed_item(row)?.to_owned()) {
            return Ok(None);
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
        let Some(kept) = rescored(fragments, &selection.kept, &scores.given, slots)? else {
            return Ok(None);
        };
        results.push(skeleton_result(
            py,
            Answer {
                kept,
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
    let text = shared_text(&ids, &contents, &siblings)?;
    Ok(Some((
        shared,
        PyTuple::new(py, results)?,
        cost_fields(&siblings.cost),
        cost_fields(&siblings.independent_cost),
        PyBytes::new(py, &text),
    )))
}

/// The fragments at `kept` (rows of `fragments`), each one a child scored made anew with
/// that score; `None` where one cannot be (a fragment not of exactly the class).
fn rescored<'py>(
    fragments: &Bound<'py, PyTuple>,
    kept: &[u32],
    given: &[Option<Bound<'py, PyAny>>],
    slots: &Slotted<7>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let py = fragments.py();
    let mut items = Vec::with_capacity(kept.len());
    for (position, &row) in kept.iter().enumerate() {
        signals::check_now_and_then(py, position)?;
        let fragment = fragments.get_borrowed_item(row as usize)?;
        match &given[row as usize] {
            None => items.push(fragment.to_owned()),
            Some(score) => match slots.copy_with(&fragment, RELEVANCE_SCORE, score)? {
                Some(copy) => items.push(copy),
                None => return Ok(None),
            },
        }
    }
    Ok(Some(PyTuple::new(py, items)?))
}

/// The text the prefix key of the shared fragments digests: their ids and contents (as read
/// before, each a `str`) and token counts as read.
fn shared_text(
    ids: &[Bound<'_, PyString>],
    contents: &[Bound<'_, PyString>],
    siblings: &Siblings,
) -> PyResult<Vec<u8>> {
    let mut texts = Vec::with_capacity(siblings.shared.len());
    for &row in &siblings.shared {
        let row = row as usize;
        let id = ids[row].clone();
        let content = IdText::new(contents[row].clone())?;
        texts.push((IdText::new(id)?, siblings.token_counts[row], content));
    }
    Ok(core::prefix_text(texts.iter().map(
        |(id, tokens, content)| (id.as_bytes(), *tokens, content.as_bytes()),
    )))
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

/// The parent as the children's mappings are read against it.
struct Parent<'a, 'py> {
    columns: &'a Columns,
    /// Made at the first key that is not the very id object of the row it names.
    rows: OnceCell<RowsById>,
    /// Each fragment's `fragment_id` object.
    ids: &'a [Bound<'py, PyString>],
}

impl Parent<'_, '_> {
    /// The row whose id is `key`: the row after `after` when `key` is that row's very id
    /// object (a dict made from the parent's fragments in their order is read with no
    /// hash), else found by the id's text; `None` for a key that is no exact `str` or no id.
    fn row_of(&self, key: &Bound<'_, PyAny>, after: usize) -> PyResult<Option<u32>> {
        if self.ids.get(after).is_some_and(|id| id.is(key)) {
            return Ok(Some(after as u32));
        }
        let Ok(id) = key.cast_exact::<PyString>() else {
            return Ok(None);
        };
        let hash = id.hash()? as u64;
        let text = IdText::new(id.clone())?;
        let rows = self.rows.get_or_init(|| RowsById::new(self.columns));
        Ok(rows.row(self.columns, text.as_bytes(), hash))
    }
}

/// A child's scores from its mapping: the parent's where it names none (`None` or an
/// empty dict); `None` for a mapping this path does not read.
fn scores<'py>(
    reader: &super::read::Reader<'py>,
    parent: &Parent<'_, 'py>,
    mapping: &Bound<'py, PyAny>,
) -> Read<'py, Option<Scores<'py>>> {
    let mut relevances = parent.columns.relevances();
    let mut given = vec![None; relevances.len()];
    if mapping.is_none() {
        return Ok(Some(Scores { relevances, given }));
    }
    let Ok(dict) = mapping.cast_exact::<PyDict>() else {
        return Ok(None);
    };
    let mut after = 0;
    for (key, value) in dict.iter() {
        let Some(row) = parent.row_of(&key, after)? else {
            return Ok(None);
        };
        // A score of another kind is read through its own code, which could change the dict
        // being walked: the general path reads the dict whole first.
        if !(value.is_exact_instance_of::<PyFloat>() || value.is_exact_instance_of::<PyInt>()) {
            return Ok(None);
        }
        let row = row as usize;
        let id = key.cast::<PyString>().map_err(PyErr::from)?;
        relevances[row] = reader.relevance(row, id, &value)? + 0.0;
        given[row] = Some(value);
        after = row + 1;
    }
    Ok(Some(Scores { relevances, given }))
}
