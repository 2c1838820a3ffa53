//! The `skeleton_compressor._core` extension module: reads Python input into plain columns,
//! makes one call to `crate::core`, and builds the results. The GIL is released inside that
//! call for large inputs. `tokens.rs` holds `TokenCounter`, the core's token counts for `str`.

mod columns;
mod context;
mod errors;
mod read;
mod scratch;
mod text;
mod tokens;

use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::core::{
    self, Columns, Compression, Detach, ErrorKind, Request, Strategy, Tuning, Workspace,
};
use context::context;
use errors::Failure;
use read::{Checked, Read, Reader};
use text::id_from_bytes;

struct ReleaseGil<'py>(Python<'py>);

impl Detach for ReleaseGil<'_> {
    fn detach<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
        self.0.detach(work)
    }
}

/// The columns being filled.
pub struct Reading {
    columns: Columns,
}

impl Reading {
    pub fn push<'py>(&mut self, checked: Checked<'py>) -> Read<'py, ()> {
        self.columns.push(
            checked.fragment_id.as_bytes(),
            checked.id_hash,
            checked.token_count,
            checked.relevance,
        )?;
        Ok(())
    }
}

/// Reads `len` fragments with `read`, then compresses them for every budget.
fn compress_read<'py>(
    reader: &Reader<'py>,
    len: usize,
    read: impl FnOnce(&mut Reading) -> Read<'py, ()>,
    budgets: &[u128],
    strategy: Strategy,
) -> PyResult<Compression> {
    let mut workspace = scratch::take();
    let outcome = compress_in(reader, len, read, budgets, strategy, &mut workspace);
    scratch::keep(workspace);
    outcome.map_err(|failure| failure.into_pyerr(reader.py, reader.ctx))
}

fn compress_in<'py>(
    reader: &Reader<'py>,
    len: usize,
    read: impl FnOnce(&mut Reading) -> Read<'py, ()>,
    budgets: &[u128],
    strategy: Strategy,
    workspace: &mut Workspace,
) -> Read<'py, Compression> {
    let mut reading = Reading {
        columns: Columns::new(len, workspace)?,
    };
    if let Err(failure) = read(&mut reading) {
        reading.columns.recycle(workspace);
        return Err(failure);
    }
    let request = Request {
        budgets,
        strategy,
        tuning: &Tuning::default(),
    };
    let outcome = core::compress(reading.columns, request, &ReleaseGil(reader.py), workspace);
    outcome.map_err(|duplicate| match id_from_bytes(reader.py, &duplicate.id) {
        Ok(fragment_id) => Failure::Duplicate {
            container: reader.container,
            fragment_id,
            first: duplicate.first,
            second: duplicate.second,
        },
        Err(error) => Failure::Python(error),
    })
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

fn fragment_reader(py: Python<'_>) -> PyResult<Reader<'_>> {
    Ok(Reader {
        py,
        ctx: context(py)?,
        container: "fragments",
    })
}

fn read_fragments<'a, 'py>(
    reader: &'a Reader<'py>,
    fragments: &'a Bound<'py, PyTuple>,
) -> impl FnOnce(&mut Reading) -> Read<'py, ()> + 'a {
    move |reading| {
        for (index, item) in fragments.iter_borrowed().enumerate() {
            if !reader.ctx.push_plain(&item, &mut reading.columns)? {
                reading.push(reader.fragment(index, &item)?)?;
            }
        }
        Ok(())
    }
}

/// Inputs from this many fragments on are visited in input order when results are built.
const VISIT_IN_INPUT_ORDER_FROM: usize = 1 << 19;

/// The fragments at `kept`, the very objects of the input, as a new tuple.
fn kept_fragments<'py>(
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
    // tuple is handed to Python.
    unsafe {
        let tuple =
            Bound::from_owned_ptr_or_err(py, ffi::PyTuple_New(kept.len() as ffi::Py_ssize_t))?;
        let place = |index: u64, position: u64| {
            let item = ffi::PyTuple_GetItem(fragments.as_ptr(), index as ffi::Py_ssize_t);
            ffi::Py_INCREF(item);
            ffi::PyTuple_SetItem(tuple.as_ptr(), position as ffi::Py_ssize_t, item);
        };
        if len < VISIT_IN_INPUT_ORDER_FROM {
            for (position, &index) in (0u64..).zip(kept) {
                place(u64::from(index), position);
            }
        } else {
            // A large input does not fit the CPU caches: visit it in its own order, usually
            // the order its fragments sit in memory, and drop each into its ranking position
            // in the (much smaller) new tuple, instead of jumping all over the input.
            let mut by_input_order: Vec<u64> = (0u64..)
                .zip(kept)
                .map(|(position, &index)| u64::from(index) << 32 | position)
                .collect();
            by_input_order.sort_unstable();
            for &packed in &by_input_order {
                place(packed >> 32, packed & u64::from(u32::MAX));
            }
        }
        Ok(tuple.cast_into_unchecked())
    }
}

/// Kept fragments and their token sum, for one budget.
type Packed<'py> = (Bound<'py, PyTuple>, u128);

/// One strategy, chosen once; every call checks and compresses its input whole.
#[pyclass(frozen, module = "skeleton_compressor._core")]
struct Compressor {
    strategy: Strategy,
}

#[pymethods]
impl Compressor {
    #[new]
    fn new(strategy: &str) -> PyResult<Self> {
        match Strategy::from_name(strategy) {
            Some(strategy) => Ok(Compressor { strategy }),
            None => Err(PyValueError::new_err(format!(
                "strategy must be one of {}, got {strategy:?}",
                Strategy::ALL.map(Strategy::name).join(", ")
            ))),
        }
    }

    #[getter]
    fn strategy(&self) -> &'static str {
        self.strategy.name()
    }

    /// Runs every fragment check, raising the first failure.
    fn validate(&self, py: Python<'_>, fragments: &Bound<'_, PyTuple>) -> PyResult<()> {
        let reader = fragment_reader(py)?;
        let read = read_fragments(&reader, fragments);
        compress_read(&reader, fragments.len(), read, &[], self.strategy).map(drop)
    }

    /// Returns `(kept_fragments, original_tokens, compressed_tokens)`.
    fn compress<'py>(
        &self,
        py: Python<'py>,
        fragments: &Bound<'py, PyTuple>,
        skeleton_budget: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyTuple>, u128, u128)> {
        let budgets = [budget_value(skeleton_budget)?];
        let reader = fragment_reader(py)?;
        let read = read_fragments(&reader, fragments);
        let compression = compress_read(&reader, fragments.len(), read, &budgets, self.strategy)?;
        let [selection] = &compression.selections[..] else {
            return Err(PyRuntimeError::new_err("one selection per budget"));
        };
        Ok((
            kept_fragments(fragments, &selection.kept)?,
            compression.original_tokens,
            selection.compressed_tokens,
        ))
    }

    /// Ranks once and packs every budget: `(original_tokens, [(kept, compressed_tokens)])`.
    fn compress_many<'py>(
        &self,
        py: Python<'py>,
        fragments: &Bound<'py, PyTuple>,
        skeleton_budgets: &Bound<'py, PyList>,
    ) -> PyResult<(u128, Vec<Packed<'py>>)> {
        let budgets = skeleton_budgets
            .iter()
            .map(|budget| budget_value(&budget))
            .collect::<PyResult<Vec<_>>>()?;
        let reader = fragment_reader(py)?;
        let read = read_fragments(&reader, fragments);
        let compression = compress_read(&reader, fragments.len(), read, &budgets, self.strategy)?;
        let results = compression
            .selections
            .iter()
            .map(|selection| {
                Ok((
                    kept_fragments(fragments, &selection.kept)?,
                    selection.compressed_tokens,
                ))
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok((compression.original_tokens, results))
    }

    /// Returns `(kept_row_indices as array('q'), original_tokens, compressed_tokens)`.
    fn compress_arrays<'py>(
        &self,
        py: Python<'py>,
        fragment_ids: &Bound<'py, PyAny>,
        token_counts: &Bound<'py, PyAny>,
        relevance_scores: &Bound<'py, PyAny>,
        skeleton_budget: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, u128, u128)> {
        columns::compress_arrays(
            py,
            [fragment_ids, token_counts, relevance_scores],
            budget_value(skeleton_budget)?,
            self.strategy,
        )
    }
}

/// Bytes of working memory kept between calls, by all threads together.
#[pyfunction]
fn retained_scratch_bytes() -> usize {
    scratch::retained_bytes()
}

/// Frees the working memory this thread keeps between calls.
#[pyfunction]
fn release_scratch() {
    scratch::release();
}

#[pymodule(gil_used = true)]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Compressor>()?;
    tokens::register(module)?;
    module.add_function(wrap_pyfunction!(retained_scratch_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(release_scratch, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add(
        "ERROR_KINDS",
        PyTuple::new(module.py(), ErrorKind::ALL.map(ErrorKind::name))?,
    )?;
    module.add(
        "SCRATCH_LIMITS",
        (scratch::KEEP_PER_THREAD, scratch::KEEP_IN_ALL),
    )?;
    Ok(())
}
