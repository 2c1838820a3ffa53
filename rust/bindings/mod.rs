//! The `skeleton_compressor._core` extension module: reads Python input into plain columns,
//! makes one call to `crate::core`, and builds the results. The GIL is released inside that
//! call for large inputs. `tokens.rs` holds `TokenCounter`, the core's token counts for `str`.

mod columns;
mod context;
mod errors;
mod read;
mod records;
mod scratch;
mod text;
mod tokens;

use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::core::{
    self, Columns, Compression, Detach, ErrorKind, Order, Overflow, Policy, Reason, Refusal,
    Request, Strategy, Tuning, Workspace,
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
        if checked.required || checked.group.is_some() {
            let group = checked
                .group
                .as_ref()
                .map(|(name, hash)| (name.as_bytes(), *hash));
            self.columns.mark_last(checked.required, group);
        }
        Ok(())
    }
}

/// How a compressor selects: its strategy and policy, chosen once.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    strategy: Strategy,
    policy: Policy,
}

/// What a call asks of the compression: its budgets, and whether to explain the first.
#[derive(Clone, Copy)]
struct Asked<'a> {
    budgets: &'a [u128],
    settings: Settings,
    explain: bool,
}

/// Reads `len` fragments with `read`, compresses them as `asked`, and builds the result with
/// `build`.
fn compress_read<'py, T>(
    reader: &Reader<'py>,
    len: usize,
    read: impl FnOnce(&mut Reading) -> Read<'py, ()>,
    asked: Asked<'_>,
    build: impl FnOnce(Compression) -> PyResult<T>,
) -> PyResult<T> {
    let mut workspace = scratch::take();
    let outcome = compress_in(reader, len, read, asked, build, &mut workspace);
    scratch::keep(workspace);
    outcome.map_err(|failure| failure.into_pyerr(reader.py, reader.ctx))
}

fn compress_in<'py, T>(
    reader: &Reader<'py>,
    len: usize,
    read: impl FnOnce(&mut Reading) -> Read<'py, ()>,
    asked: Asked<'_>,
    build: impl FnOnce(Compression) -> PyResult<T>,
    workspace: &mut Workspace,
) -> Read<'py, T> {
    let tuning = Tuning::default();
    let request = Request {
        budgets: asked.budgets,
        strategy: asked.settings.strategy,
        policy: &asked.settings.policy,
        explain: asked.explain,
        tuning: &tuning,
    };
    let mut reading = Reading {
        columns: Columns::new(len, &tuning, workspace)?,
    };
    if let Err(failure) = read(&mut reading) {
        reading.columns.recycle(workspace);
        return Err(failure);
    }
    match core::compress(reading.columns, request, &ReleaseGil(reader.py), workspace) {
        Ok(compression) => Ok(build(compression)?),
        Err(Refusal::Duplicate(duplicate)) => match id_from_bytes(reader.py, &duplicate.id) {
            Ok(fragment_id) => Err(Failure::Duplicate {
                container: reader.container,
                fragment_id,
                first: duplicate.first,
                second: duplicate.second,
            }),
            Err(error) => Err(Failure::Python(error)),
        },
        Err(Refusal::BudgetExceeded(exceeded)) => Err(Failure::BudgetExceeded(exceeded)),
    }
}

/// A Python int: through the quick 64-bit conversion when the value fits, as it nearly
/// always does (the 128-bit one is slow under the stable ABI).
fn int_of(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    match u64::try_from(value) {
        Ok(small) => Ok(small.into_pyobject(py)?.into_any()),
        Err(_) => Ok(value.into_pyobject(py)?.into_any()),
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
        let place = |index: u32, position: u32| {
            let item = ffi::PyTuple_GetItem(fragments.as_ptr(), index as ffi::Py_ssize_t);
            ffi::Py_INCREF(item);
            ffi::PyTuple_SetItem(tuple.as_ptr(), position as ffi::Py_ssize_t, item);
        };
        if len < VISIT_IN_INPUT_ORDER_FROM {
            for (position, &index) in (0u32..).zip(kept) {
                place(index, position);
            }
        } else {
            // A large input does not fit the CPU caches: visit it in its own order, usually
            // the order its fragments sit in memory, and drop each into its ranking position
            // in the (much smaller) new tuple, instead of jumping all over the input.
            let order = core::in_input_order(kept);
            for (at, &(index, position)) in order.iter().enumerate() {
                if let Some(&(later, _)) = order.get(at + PREFETCH_AHEAD) {
                    prefetch(ffi::PyTuple_GetItem(
                        fragments.as_ptr(),
                        later as ffi::Py_ssize_t,
                    ));
                }
                place(index, position);
            }
        }
        Ok(tuple.cast_into_unchecked())
    }
}

/// Kept fragments and their token sum, for one budget.
type Packed<'py> = (Bound<'py, PyTuple>, u128);

/// One strategy and policy, chosen once; every call checks and compresses its input whole.
#[pyclass(frozen, module = "skeleton_compressor._core")]
struct Compressor {
    settings: Settings,
}

/// The value of `name` among `choices` by name, or the error naming them.
fn named<T: Copy>(
    what: &str,
    name: &str,
    choices: &[T],
    name_of: fn(T) -> &'static str,
) -> PyResult<T> {
    choices
        .iter()
        .copied()
        .find(|&choice| name_of(choice) == name)
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|&choice| name_of(choice)).collect();
            PyValueError::new_err(format!(
                "{what} must be one of {}, got {name:?}",
                names.join(", ")
            ))
        })
}

#[pymethods]
impl Compressor {
    #[new]
    #[pyo3(signature = (strategy, min_relevance = 0.0, on_overflow = "keep_top", order = "ranking"))]
    fn new(strategy: &str, min_relevance: f64, on_overflow: &str, order: &str) -> PyResult<Self> {
        if !(0.0..=1.0).contains(&min_relevance) {
            return Err(PyValueError::new_err(format!(
                "min_relevance must be in [0, 1], got {min_relevance}"
            )));
        }
        Ok(Compressor {
            settings: Settings {
                strategy: named("strategy", strategy, &Strategy::ALL, Strategy::name)?,
                policy: Policy {
                    min_relevance: min_relevance + 0.0,
                    overflow: named("on_overflow", on_overflow, &Overflow::ALL, Overflow::name)?,
                    order: named("order", order, &Order::ALL, Order::name)?,
                },
            },
        })
    }

    #[getter]
    fn strategy(&self) -> &'static str {
        self.settings.strategy.name()
    }

    /// Runs every fragment check, raising the first failure.
    fn validate(&self, py: Python<'_>, fragments: &Bound<'_, PyTuple>) -> PyResult<()> {
        let reader = fragment_reader(py)?;
        let read = read_fragments(&reader, fragments);
        compress_read(
            &reader,
            fragments.len(),
            read,
            self.asked(&[], false),
            |_| Ok(()),
        )
    }

    /// Returns `(kept_fragments, original_tokens, compressed_tokens)`.
    fn compress<'py>(
        &self,
        py: Python<'py>,
        fragments: &Bound<'py, PyTuple>,
        skeleton_budget: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyTuple>, u128, u128)> {
        let (kept, original, compressed, _) = self.run(py, fragments, skeleton_budget, false)?;
        Ok((kept, original, compressed))
    }

    /// `compress`, and the decisions as four lists (kept, reason, rank, budget_left), one
    /// item per fragment, in input order.
    fn explain<'py>(
        &self,
        py: Python<'py>,
        fragments: &Bound<'py, PyTuple>,
        skeleton_budget: &Bound<'py, PyAny>,
    ) -> PyResult<Explained<'py>> {
        self.run(py, fragments, skeleton_budget, true)
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
        let build = |compression: Compression| {
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
        };
        let asked = self.asked(&budgets, false);
        compress_read(&reader, fragments.len(), read, asked, build)
    }

    /// Returns `(kept_row_indices as array('q'), original_tokens, compressed_tokens, rows)`.
    // One argument per column, as Python passes them.
    #[allow(clippy::too_many_arguments)]
    fn compress_arrays<'py>(
        &self,
        py: Python<'py>,
        fragment_ids: &Bound<'py, PyAny>,
        token_counts: &Bound<'py, PyAny>,
        relevance_scores: &Bound<'py, PyAny>,
        required: Option<&Bound<'py, PyAny>>,
        groups: Option<&Bound<'py, PyAny>>,
        skeleton_budget: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, u128, u128, usize)> {
        columns::compress_arrays(
            py,
            [fragment_ids, token_counts, relevance_scores],
            [required, groups],
            budget_value(skeleton_budget)?,
            self.settings,
        )
    }

    /// The command line's job on an input file's bytes: see `records.rs`.
    #[pyo3(signature = (data, skeleton_budget, explain = false, encoding = None))]
    fn compress_records<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyBytes>,
        skeleton_budget: &Bound<'py, PyAny>,
        explain: bool,
        encoding: Option<&str>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        records::compress_records(py, self.settings, data, skeleton_budget, explain, encoding)
    }

    /// `compress_records` on the file at `path`, read a chunk at a time; `None` when the
    /// file is not of the common kind: see `records.rs`.
    #[pyo3(signature = (path, skeleton_budget, encoding = None))]
    fn compress_record_file<'py>(
        &self,
        py: Python<'py>,
        path: std::path::PathBuf,
        skeleton_budget: &Bound<'py, PyAny>,
        encoding: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        records::compress_record_file(py, self.settings, path, skeleton_budget, encoding)
    }
}

type Explained<'py> = (Bound<'py, PyTuple>, u128, u128, Bound<'py, PyTuple>);

impl Compressor {
    fn run<'py>(
        &self,
        py: Python<'py>,
        fragments: &Bound<'py, PyTuple>,
        skeleton_budget: &Bound<'py, PyAny>,
        explain: bool,
    ) -> PyResult<Explained<'py>> {
        let budgets = [budget_value(skeleton_budget)?];
        let reader = fragment_reader(py)?;
        let read = read_fragments(&reader, fragments);
        let build = |compression: Compression| {
            let [selection] = &compression.selections[..] else {
                return Err(PyRuntimeError::new_err("one selection per budget"));
            };
            let decisions = decision_columns(py, &compression, budgets[0], skeleton_budget)?;
            Ok((
                kept_fragments(fragments, &selection.kept)?,
                compression.original_tokens,
                selection.compressed_tokens,
                decisions,
            ))
        };
        let asked = self.asked(&budgets, explain);
        compress_read(&reader, fragments.len(), read, asked, build)
    }

    fn asked<'a>(&self, budgets: &'a [u128], explain: bool) -> Asked<'a> {
        Asked {
            budgets,
            settings: self.settings,
            explain,
        }
    }
}

/// The decisions as four lists (kept, reason, rank, budget_left), of values that need no
/// tracking by Python's garbage collector (bools, interned names, ints): the caller pairs them
/// with the fragments.
fn decision_columns<'py>(
    py: Python<'py>,
    compression: &Compression,
    budget: u128,
    skeleton_budget: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let reasons = Reason::ALL.map(|reason| PyString::intern(py, reason.name()));
    let count = compression.decisions.len();
    let (mut kept, mut why, mut ranks, mut left) = (
        Vec::with_capacity(count),
        Vec::with_capacity(count),
        Vec::with_capacity(count),
        Vec::with_capacity(count),
    );
    for d in &compression.decisions {
        kept.push(d.kept);
        why.push(reasons[d.reason as usize].clone());
        ranks.push(d.rank);
        let shown = match d.budget_left {
            // A budget past u128::MAX was read as u128::MAX: what is left of the real one
            // is that budget less what the walk spent, in Python's exact ints.
            Some(value) if budget == u128::MAX => Some(
                skeleton_budget
                    .call_method1("__sub__", (u128::MAX - value,))?
                    .into_any(),
            ),
            Some(value) => Some(int_of(py, value)?),
            None => None,
        };
        left.push(shown);
    }
    (kept, why, ranks, left).into_pyobject(py)
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
    module.add_class::<records::KeptRecords>()?;
    tokens::register(module)?;
    module.add_function(wrap_pyfunction!(retained_scratch_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(release_scratch, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add(
        "ERROR_KINDS",
        PyTuple::new(module.py(), ErrorKind::ALL.map(ErrorKind::name))?,
    )?;
    let problems = crate::core::Problem::ALL.map(crate::core::Problem::name);
    module.add("RECORD_PROBLEMS", PyTuple::new(module.py(), problems)?)?;
    module.add(
        "SCRATCH_LIMITS",
        (scratch::KEEP_PER_THREAD, scratch::KEEP_IN_ALL),
    )?;
    Ok(())
}
