//! `Compressor`: one strategy and policy, chosen once by name, and the calls that compress
//! with them.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple, PyType};

use super::columns;
use super::compress::{budget_value, compress_read, fragment_reader, read_fragments};
use super::records;
use super::results::{
    decision_columns, kept_fragments, skeleton_result, Answer, Explained, Int, Packed, Rooms,
};
use super::siblings;
use super::signals::PythonSignals;
use super::turn::{self, Turned};
use crate::core::{
    Compression, OnOverflow, Order, Policy, Pricing, Request, Reuse, Strategy, Tuning,
};

/// One strategy and policy, chosen once; every call checks and compresses its input whole.
#[pyclass(frozen, module = "skeleton_compressor._core")]
pub struct Compressor {
    strategy: Strategy,
    policy: Policy,
    /// The most work `optimal` may do per budget (`None`: no limit).
    max_work: Option<u64>,
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

/// What `compress` returns: the kept fragments, original and compressed tokens, the value
/// kept and its bound (in units), the relevance kept (summed exactly), and whether exact.
type Compressed<'py> = (Bound<'py, PyTuple>, Int, Int, Int, Int, f64, bool);

#[pymethods]
impl Compressor {
    #[new]
    #[pyo3(signature = (
        strategy, min_relevance = 0.0, on_overflow = "keep_top", order = "ranking", max_work = None
    ))]
    fn new(
        strategy: &str,
        min_relevance: f64,
        on_overflow: &str,
        order: &str,
        max_work: Option<u64>,
    ) -> PyResult<Self> {
        if max_work == Some(0) {
            return Err(PyValueError::new_err(
                "max_work must be >= 1 or None, got 0",
            ));
        }
        if !(0.0..=1.0).contains(&min_relevance) {
            return Err(PyValueError::new_err(format!(
                "min_relevance must be in [0, 1], got {min_relevance}"
            )));
        }
        Ok(Compressor {
            strategy: named("strategy", strategy, &Strategy::ALL, Strategy::name)?,
            policy: Policy {
                min_relevance: min_relevance + 0.0,
                on_overflow: named(
                    "on_overflow",
                    on_overflow,
                    &OnOverflow::ALL,
                    OnOverflow::name,
                )?,
                order: named("order", order, &Order::ALL, Order::name)?,
            },
            max_work,
        })
    }

    #[getter]
    fn strategy(&self) -> &'static str {
        self.strategy.name()
    }

    /// Pickled and copied as the call that makes it: `Compressor(strategy, min_relevance,
    /// on_overflow, order, max_work)`, so that a service can be sent to another process.
    // The tuple is what pickle's protocol takes; a named type would not say more.
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (
        Bound<'py, PyType>,
        (&'static str, f64, &'static str, &'static str, Option<u64>),
    ) {
        let this = slf.get();
        let policy = &this.policy;
        (
            slf.get_type(),
            (
                this.strategy.name(),
                policy.min_relevance,
                policy.on_overflow.name(),
                policy.order.name(),
                this.max_work,
            ),
        )
    }

    #[getter]
    fn max_work(&self) -> Option<u64> {
        self.max_work
    }

    /// Runs every fragment check, raising the first failure.
    fn validate(&self, py: Python<'_>, fragments: &Bound<'_, PyTuple>) -> PyResult<()> {
        let reader = fragment_reader(py)?;
        let read = read_fragments(&reader, fragments);
        compress_read(
            &reader,
            fragments.len(),
            read,
            self.request(&[], false),
            |_| Ok(()),
        )
    }

    /// Returns `(kept_fragments, original_tokens, compressed_tokens, value_kept, value_bound,
    /// relevance_kept, exact)`: the value and its bound in units, the relevance summed exactly.
    fn compress<'py>(
        &self,
        py: Python<'py>,
        fragments: &Bound<'py, PyTuple>,
        skeleton_budget: &Bound<'py, PyAny>,
    ) -> PyResult<Compressed<'py>> {
        let (kept, original, compressed, value_kept, value_bound, relevance_kept, _, exact) =
            self.run(py, fragments, skeleton_budget, false)?;
        Ok((
            kept,
            original,
            compressed,
            value_kept,
            value_bound,
            relevance_kept,
            exact,
        ))
    }

    /// `compress`'s answer as the `SkeletonResult` the service returns.
    fn compress_result<'py>(
        &self,
        py: Python<'py>,
        fragments: &Bound<'py, PyTuple>,
        skeleton_budget: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (kept, original, compressed, value_kept, value_bound, relevance_kept, _, exact) =
            self.run(py, fragments, skeleton_budget, false)?;
        skeleton_result(
            py,
            Answer {
                kept,
                fragments_total: fragments.len(),
                skeleton_budget: skeleton_budget.clone(),
                original_tokens: original.0,
                compressed_tokens: compressed.0,
                value_kept_units: value_kept.0,
                value_bound_units: value_bound.0,
                relevance_kept,
                exact,
            },
        )
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

    /// `compress` (or `explain`) reusing what `previous` sent first: see `turn.rs`.
    #[pyo3(signature = (fragments, skeleton_budget, previous, max_value_loss, headroom, explain))]
    // One argument per thing Python passes.
    #[allow(clippy::too_many_arguments)]
    fn compress_turn<'py>(
        &self,
        fragments: &Bound<'py, PyTuple>,
        skeleton_budget: &Bound<'py, PyAny>,
        previous: &Bound<'py, PyTuple>,
        max_value_loss: f64,
        headroom: f64,
        explain: bool,
    ) -> PyResult<Turned<'py>> {
        let budgets = [budget_value(skeleton_budget)?];
        let request = self.request(&budgets, explain);
        let shares = [max_value_loss, headroom];
        turn::compress_turn(fragments, skeleton_budget, previous, shares, request)
    }

    /// The children of the parent `fragments` packed together in one call to the core, or
    /// `None` where the general path must decide: see `siblings.rs`.
    #[pyo3(signature = (
        fragments, relevances, skeleton_budgets, max_value_loss, write, read, min_prefix
    ))]
    // One argument per thing Python passes.
    #[allow(clippy::too_many_arguments)]
    fn compress_siblings<'py>(
        &self,
        fragments: &Bound<'py, PyTuple>,
        relevances: &Bound<'py, PyTuple>,
        skeleton_budgets: &Bound<'py, PyTuple>,
        max_value_loss: f64,
        write: f64,
        read: f64,
        min_prefix: u128,
    ) -> PyResult<Option<siblings::Packed<'py>>> {
        let pricing = Pricing {
            write,
            read,
            min_prefix,
        };
        let share = turn::share(max_value_loss, "max_value_loss")?;
        let request = self.request(&[], false);
        siblings::compress_siblings(
            fragments,
            relevances,
            skeleton_budgets,
            share,
            pricing,
            request,
        )
    }

    /// Ranks once and packs every budget:
    /// `(original_tokens, [(kept, compressed_tokens, value_kept, value_bound, relevance_kept,
    /// exact)])`.
    fn compress_many<'py>(
        &self,
        py: Python<'py>,
        fragments: &Bound<'py, PyTuple>,
        skeleton_budgets: &Bound<'py, PyList>,
    ) -> PyResult<(Int, Vec<Packed<'py>>)> {
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
                .zip(&compression.relevance_kept)
                .map(|(selection, &relevance_kept)| {
                    Ok((
                        kept_fragments(fragments, &selection.kept)?,
                        Int(selection.compressed_tokens),
                        Int(selection.value_kept),
                        Int(selection.value_bound),
                        relevance_kept,
                        selection.exact,
                    ))
                })
                .collect::<PyResult<Vec<_>>>()?;
            Ok((Int(compression.original_tokens), results))
        };
        compress_read(
            &reader,
            fragments.len(),
            read,
            self.request(&budgets, false),
            build,
        )
    }

    /// Returns `(kept_row_indices as array('q'), original_tokens, compressed_tokens, rows,
    /// value_kept, value_bound, relevance_kept, reused_tokens, exact)`. `previous`: rows of
    /// these columns that an earlier call kept, in its order.
    // One argument per column, as Python passes them.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (
        fragment_ids, token_counts, relevance_scores, required, groups, skeleton_budget,
        variants = None, previous = None, max_value_loss = 0.0, headroom = 0.0
    ))]
    fn compress_arrays<'py>(
        &self,
        py: Python<'py>,
        fragment_ids: &Bound<'py, PyAny>,
        token_counts: &Bound<'py, PyAny>,
        relevance_scores: &Bound<'py, PyAny>,
        required: Option<&Bound<'py, PyAny>>,
        groups: Option<&Bound<'py, PyAny>>,
        skeleton_budget: &Bound<'py, PyAny>,
        variants: Option<&Bound<'py, PyAny>>,
        previous: Option<Vec<u64>>,
        max_value_loss: f64,
        headroom: f64,
    ) -> PyResult<columns::KeptRows<'py>> {
        let budgets = [budget_value(skeleton_budget)?];
        let reuse = match previous {
            Some(rows) => {
                let max_value_loss = turn::share(max_value_loss, "max_value_loss")?;
                let headroom = turn::share(headroom, "headroom")?;
                let past = turn::headroom_past_u128(skeleton_budget, budgets[0], headroom)?;
                Some(Reuse {
                    // A row past u32 is no row of these columns: the run ends there.
                    matched: rows
                        .into_iter()
                        .map(|row| u32::try_from(row).unwrap_or(u32::MAX))
                        .collect(),
                    max_value_loss,
                    headroom,
                    headroom_room: past.map(|room| room.given),
                })
            }
            None => None,
        };
        let request = Request {
            reuse: reuse.as_ref(),
            ..self.request(&budgets, false)
        };
        columns::compress_arrays(
            py,
            [fragment_ids, token_counts, relevance_scores],
            [required, groups, variants],
            request,
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
    ) -> PyResult<Bound<'py, PyAny>> {
        let budgets = [budget_value(skeleton_budget)?];
        let request = self.request(&budgets, explain);
        records::compress_records(py, request, data, skeleton_budget, encoding)
    }

    /// `compress_records` on the file at `path`, opened once; its bytes instead when they
    /// have a problem for `compress_records` to word: see `records.rs`.
    #[pyo3(signature = (path, skeleton_budget, encoding = None))]
    fn compress_record_file<'py>(
        &self,
        py: Python<'py>,
        path: std::path::PathBuf,
        skeleton_budget: &Bound<'py, PyAny>,
        encoding: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let budgets = [budget_value(skeleton_budget)?];
        records::compress_record_file(py, self.request(&budgets, false), path, encoding)
    }
}

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
            // `compress` has no decisions to give back.
            let decisions = if explain {
                decision_columns(py, &compression, Rooms::of(budgets[0], skeleton_budget))?
            } else {
                PyTuple::empty(py)
            };
            Ok((
                kept_fragments(fragments, &selection.kept)?,
                Int(compression.original_tokens),
                Int(selection.compressed_tokens),
                Int(selection.value_kept),
                Int(selection.value_bound),
                compression.relevance_kept[0],
                decisions,
                selection.exact,
            ))
        };
        compress_read(
            &reader,
            fragments.len(),
            read,
            self.request(&budgets, explain),
            build,
        )
    }

    /// What a call asks of the core: this compressor's strategy and policy for `budgets`.
    pub fn request<'a>(&'a self, budgets: &'a [u128], explain: bool) -> Request<'a> {
        Request {
            budgets,
            strategy: self.strategy,
            policy: &self.policy,
            explain,
            tuning: &Tuning::DEFAULT,
            max_work: self.max_work,
            interrupt: &PythonSignals,
            reuse: None,
        }
    }
}
