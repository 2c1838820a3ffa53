//! One compression call: fragments read into the core's columns, one call to the core (with
//! the GIL released for large inputs), and the result built from its answer.

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use super::context::context;
use super::errors::Failure;
use super::read::{Checked, Read, Reader};
use super::signals;
use super::text::{id_from_bytes, IdText};
use crate::core::{self, Columns, Compression, Detach, Refusal, Request};

pub struct ReleaseGil<'py>(pub Python<'py>);

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
        if checked.required || checked.group.is_some() || checked.variant.is_some() {
            let (group, variant) = (named(&checked.group), named(&checked.variant));
            self.columns.mark_last(checked.required, group, variant);
        }
        Ok(())
    }
}

/// A name's bytes and hash, as the columns take them.
fn named<'a>(name: &'a Option<(IdText<'_>, u64)>) -> Option<(&'a [u8], u64)> {
    name.as_ref().map(|(name, hash)| (name.as_bytes(), *hash))
}

/// Reads `len` fragments with `read`, compresses them as `request` asks, and builds the result with
/// `build`.
pub fn compress_read<'py, T>(
    reader: &Reader<'py>,
    len: usize,
    read: impl FnOnce(&mut Reading) -> Read<'py, ()>,
    request: Request<'_>,
    build: impl FnOnce(Compression) -> PyResult<T>,
) -> PyResult<T> {
    compress_in(reader, len, read, request, build)
        .map_err(|failure| failure.into_pyerr(reader.py, reader.ctx))
}

fn compress_in<'py, T>(
    reader: &Reader<'py>,
    len: usize,
    read: impl FnOnce(&mut Reading) -> Read<'py, ()>,
    request: Request<'_>,
    build: impl FnOnce(Compression) -> PyResult<T>,
) -> Read<'py, T> {
    let columns = read_columns(len, read, request)?;
    compress_columns(reader, columns, request, build)
}

/// `len` fragments read with `read` into columns.
pub fn read_columns<'py>(
    len: usize,
    read: impl FnOnce(&mut Reading) -> Read<'py, ()>,
    request: Request<'_>,
) -> Read<'py, Columns> {
    let mut reading = Reading {
        columns: Columns::new(len, request.tuning)?,
    };
    read(&mut reading)?;
    Ok(reading.columns)
}

/// The columns compressed as `request` asks, and the result built with `build`.
pub fn compress_columns<'py, T>(
    reader: &Reader<'py>,
    columns: Columns,
    request: Request<'_>,
    build: impl FnOnce(Compression) -> PyResult<T>,
) -> Read<'py, T> {
    match core::compress(columns, request, &ReleaseGil(reader.py)) {
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
        Err(Refusal::VariantRule(rule)) => Err(Failure::VariantRule {
            container: reader.container,
            rule: Box::new(rule),
        }),
        Err(Refusal::BudgetExceeded(exceeded)) => Err(Failure::BudgetExceeded(exceeded)),
        Err(Refusal::Interrupted) => Err(Failure::Python(signals::raised(reader.py))),
    }
}

/// A budget the Python layer has checked to be an int >= 0. Past `u128::MAX` it behaves as
/// unlimited: no sum of token counts gets that far.
pub fn budget_value(budget: &Bound<'_, PyAny>) -> PyResult<u128> {
    match budget.extract::<u128>() {
        Ok(value) => Ok(value),
        Err(error) if error.is_instance_of::<PyOverflowError>(budget.py()) => Ok(u128::MAX),
        Err(error) => Err(error),
    }
}

pub fn fragment_reader(py: Python<'_>) -> PyResult<Reader<'_>> {
    Ok(Reader {
        py,
        ctx: context(py)?,
        container: "fragments",
    })
}

pub fn read_fragments<'a, 'py>(
    reader: &'a Reader<'py>,
    fragments: &'a Bound<'py, PyTuple>,
) -> impl FnOnce(&mut Reading) -> Read<'py, ()> + 'a {
    move |reading| {
        for (index, item) in fragments.iter_borrowed().enumerate() {
            signals::check_now_and_then(reader.py, index)?;
            if !reader.ctx.push_plain(&item, &mut reading.columns)? {
                reading.push(reader.fragment(index, &item)?)?;
            }
        }
        Ok(())
    }
}

/// As [`read_fragments`], keeping each fragment's id as it was read: user code that runs
/// while a later fragment is read (a score's `__float__`) may replace an earlier one's id,
/// and the columns hold the id read first. The id is the fragment's own object (a child's
/// mapping made from the fragments holds the very same keys), or, should it read otherwise
/// than the columns hold it, the plain `str` they hold.
pub fn read_fragments_and_ids<'a, 'py>(
    reader: &'a Reader<'py>,
    fragments: &'a Bound<'py, PyTuple>,
    ids: &'a mut Vec<Bound<'py, PyString>>,
) -> impl FnOnce(&mut Reading) -> Read<'py, ()> + 'a {
    move |reading| {
        for (index, item) in fragments.iter_borrowed().enumerate() {
            signals::check_now_and_then(reader.py, index)?;
            // Read before any code runs; a plain fragment is read from the same slots.
            let slot_id = (reader.ctx.fragment.as_ref())
                .and_then(|slots| slots.some_fields(&item, [0]))
                .and_then(|[id]| id.cast_into::<PyString>().ok());
            match slot_id {
                Some(id) if reader.ctx.push_plain(&item, &mut reading.columns)? => ids.push(id),
                slot_id => {
                    let checked = reader.fragment(index, &item)?;
                    let same = |id: &Bound<'py, PyString>| {
                        IdText::new(id.clone())
                            .is_ok_and(|text| text.as_bytes() == checked.fragment_id.as_bytes())
                    };
                    ids.push(match slot_id {
                        Some(id) if same(&id) => id,
                        _ => checked.fragment_id.string().clone(),
                    });
                    reading.push(checked)?;
                }
            }
        }
        Ok(())
    }
}
