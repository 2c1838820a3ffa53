//! `compress_arrays`: the same checks and selection on columns instead of fragment objects.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};

use super::analysis::{analyse, Columns};
use super::context::context;
use super::ids::IdRef;
use super::read::{Checked, Reader};
use super::{budget_value, strategy};
use crate::core::{check_relevance, check_token_count, TokenCheck};

/// Item `index` of a list or tuple (the Python layer passes nothing else), by position.
fn sequence_item<'py>(sequence: &Bound<'py, PyAny>, index: usize) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(list) = sequence.cast::<PyList>() {
        list.get_item(index)
    } else if let Ok(tuple) = sequence.cast::<PyTuple>() {
        tuple.get_item(index)
    } else {
        sequence.get_item(index)
    }
}

/// A numeric column: Python objects, or the bytes of a one-dimensional buffer whose format
/// the Python layer has already checked to be one of `bBhHiIlLqQnNfd`.
enum Numbers<'py> {
    Objects(Bound<'py, PyAny>),
    Buffer {
        format: u8,
        itemsize: usize,
        data: Bound<'py, PyBytes>,
    },
}

/// One value decoded from a buffer.
#[derive(Clone, Copy)]
enum Raw {
    Signed(i64),
    Unsigned(u64),
    Float(f64),
}

impl<'py> Numbers<'py> {
    fn new(column: &Bound<'py, PyAny>) -> PyResult<Self> {
        if column.is_instance_of::<PyList>() || column.is_instance_of::<PyTuple>() {
            return Ok(Numbers::Objects(column.clone()));
        }
        let format: String = column.getattr("format")?.extract()?;
        let format = *format.as_bytes().first().unwrap_or(&b'?');
        Ok(Numbers::Buffer {
            format,
            itemsize: column.getattr("itemsize")?.extract()?,
            data: column.call_method0("tobytes")?.cast_into()?,
        })
    }

    fn raw(&self, index: usize) -> Option<Raw> {
        let Numbers::Buffer {
            format,
            itemsize,
            data,
        } = self
        else {
            return None;
        };
        let bytes = &data.as_bytes()[index * itemsize..(index + 1) * itemsize];
        let mut word = [0u8; 8];
        word[..*itemsize].copy_from_slice(bytes);
        let unsigned = u64::from_ne_bytes(word);
        let shift = 64 - 8 * *itemsize as u32;
        Some(match format {
            b'f' => Raw::Float(f64::from(f32::from_ne_bytes(bytes.try_into().ok()?))),
            b'd' => Raw::Float(f64::from_ne_bytes(word)),
            b'b' | b'h' | b'i' | b'l' | b'q' | b'n' => {
                Raw::Signed(((unsigned << shift) as i64) >> shift)
            }
            _ => Raw::Unsigned(unsigned),
        })
    }

    fn object(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyAny>> {
        match (self, self.raw(index)) {
            (Numbers::Objects(sequence), _) => sequence_item(sequence, index),
            (_, Some(Raw::Signed(value))) => Ok(PyInt::new(py, value).into_any()),
            (_, Some(Raw::Unsigned(value))) => Ok(PyInt::new(py, value).into_any()),
            (_, Some(Raw::Float(value))) => Ok(PyFloat::new(py, value).into_any()),
            (_, None) => unreachable!("a buffer column always decodes"),
        }
    }
}

impl<'py> Reader<'py> {
    fn row_token_count(
        &self,
        index: usize,
        id: &Bound<'py, PyString>,
        column: &Numbers<'py>,
    ) -> PyResult<u64> {
        let check = match column.raw(index) {
            Some(Raw::Signed(value)) => check_token_count(value, 0),
            Some(Raw::Unsigned(value)) => match i64::try_from(value) {
                Ok(value) => check_token_count(value, 0),
                Err(_) => TokenCheck::TooLarge,
            },
            _ => return self.token_count(index, id, &column.object(self.py, index)?),
        };
        match check {
            TokenCheck::Valid(count) => Ok(count),
            TokenCheck::Negative => Err(self.row_problem("token_negative", index, id, column)),
            TokenCheck::TooLarge => Err(self.row_problem("token_too_large", index, id, column)),
        }
    }

    fn row_relevance(
        &self,
        index: usize,
        id: &Bound<'py, PyString>,
        column: &Numbers<'py>,
    ) -> PyResult<f64> {
        let score = match column.raw(index) {
            Some(Raw::Float(value)) => Some(value),
            Some(Raw::Signed(value @ (0 | 1))) => Some(value as f64),
            Some(Raw::Unsigned(value @ (0 | 1))) => Some(value as f64),
            Some(_) => None,
            None => return self.relevance(index, id, &column.object(self.py, index)?),
        };
        match score {
            Some(score) if check_relevance(score) => Ok(score),
            _ => Err(self.row_problem("relevance_range", index, id, column)),
        }
    }

    /// The error for a value decoded from a buffer, shown as the Python number it is.
    fn row_problem(
        &self,
        kind: &str,
        index: usize,
        id: &Bound<'py, PyString>,
        column: &Numbers<'py>,
    ) -> PyErr {
        match column.object(self.py, index) {
            Ok(value) => self.problem(kind, self.place(index, Some(id)), &value, None),
            Err(error) => error,
        }
    }
}

/// Returns `(kept_row_indices as array('q'), original_tokens, compressed_tokens)`.
#[pyfunction]
pub fn compress_arrays<'py>(
    py: Python<'py>,
    fragment_ids: &Bound<'py, PyAny>,
    token_counts: &Bound<'py, PyAny>,
    relevance_scores: &Bound<'py, PyAny>,
    skeleton_budget: &Bound<'py, PyAny>,
    prefix: bool,
) -> PyResult<(Bound<'py, PyAny>, u128, u128)> {
    let budgets = [budget_value(skeleton_budget)?];
    let reader = Reader {
        py,
        ctx: context(py)?,
        container: "rows",
    };
    let tokens = Numbers::new(token_counts)?;
    let scores = Numbers::new(relevance_scores)?;
    let rows = fragment_ids.len()?;
    let mut columns = Columns::with_capacity(rows, reader.container, None)?;
    for index in 0..rows {
        let (fragment_id, id_hash) =
            reader.fragment_id(index, &sequence_item(fragment_ids, index)?)?;
        let token_count = reader.row_token_count(index, &fragment_id, &tokens)?;
        let relevance = reader.row_relevance(index, &fragment_id, &scores)?;
        columns.push(Checked {
            fragment_id: IdRef::Owned(fragment_id),
            id_hash,
            token_count,
            relevance,
        });
    }
    let mut ranked = analyse(py, columns, &budgets)?;
    let [selection] = &ranked.select(py, &budgets, strategy(prefix))?[..] else {
        unreachable!("one budget")
    };
    let indices: Vec<i64> = selection
        .kept
        .iter()
        .map(|&index| i64::from(index))
        .collect();
    let bytes: Vec<u8> = indices
        .iter()
        .flat_map(|index| index.to_ne_bytes())
        .collect();
    let array = reader
        .ctx
        .array
        .bind(py)
        .call1(("q", PyBytes::new(py, &bytes)))?;
    Ok((array, ranked.original_tokens, selection.compressed_tokens))
}
