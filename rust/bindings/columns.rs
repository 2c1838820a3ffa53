//! `compress_arrays`: the same checks and selection on columns instead of fragment objects.

use pyo3::exceptions::{PyIndexError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};

use super::context::context;
use super::errors::Failure;
use super::read::{Checked, Read, Reader};
use super::{compress_read, Reading};
use crate::core::{
    check_relevance, check_token_count, check_unsigned_token_count, ErrorKind, Strategy,
};

/// Item `index` of a column, by position: lists and tuples (the Python layer passes nothing
/// else) through their own storage, bounds-checked.
fn sequence_item<'py>(sequence: &Bound<'py, PyAny>, index: usize) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(list) = sequence.cast::<PyList>() {
        list.get_item(index)
    } else if let Ok(tuple) = sequence.cast::<PyTuple>() {
        tuple.get_item(index)
    } else {
        sequence.get_item(index)
    }
}

/// A numeric column: Python objects, or a copy of the bytes of a one-dimensional buffer
/// whose format the Python layer has checked to be one native type code of `bBhHiIlLqQnNfd`.
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
        let itemsize: usize = column.getattr("itemsize")?.extract()?;
        if !(1..=8).contains(&itemsize) {
            return Err(PyRuntimeError::new_err(format!(
                "unexpected item size {itemsize}"
            )));
        }
        Ok(Numbers::Buffer {
            format: *format.as_bytes().first().unwrap_or(&b'?'),
            itemsize,
            data: column.call_method0("tobytes")?.cast_into()?,
        })
    }

    /// The decoded value at `index` of a buffer column; `None` for an object column.
    fn raw(&self, index: usize) -> PyResult<Option<Raw>> {
        let Numbers::Buffer {
            format,
            itemsize,
            data,
        } = self
        else {
            return Ok(None);
        };
        let bytes = index
            .checked_mul(*itemsize)
            .and_then(|start| data.as_bytes().get(start..start + itemsize))
            .ok_or_else(|| PyIndexError::new_err(format!("no row {index} in a column")))?;
        let mut word = [0u8; 8];
        word[..*itemsize].copy_from_slice(bytes);
        let unsigned = u64::from_ne_bytes(word);
        let shift = 64 - 8 * *itemsize as u32;
        Ok(Some(match (format, <[u8; 4]>::try_from(bytes)) {
            (b'f', Ok(four)) => Raw::Float(f64::from(f32::from_ne_bytes(four))),
            (b'd', _) => Raw::Float(f64::from_ne_bytes(word)),
            (b'b' | b'h' | b'i' | b'l' | b'q' | b'n', _) => {
                Raw::Signed(((unsigned << shift) as i64) >> shift)
            }
            _ => Raw::Unsigned(unsigned),
        }))
    }

    fn object(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyAny>> {
        Ok(match (self, self.raw(index)?) {
            (Numbers::Objects(sequence), _) => sequence_item(sequence, index)?,
            (_, Some(Raw::Signed(value))) => PyInt::new(py, value).into_any(),
            (_, Some(Raw::Unsigned(value))) => PyInt::new(py, value).into_any(),
            (_, Some(Raw::Float(value))) => PyFloat::new(py, value).into_any(),
            (Numbers::Buffer { .. }, None) => {
                return Err(PyRuntimeError::new_err("a buffer column always decodes"))
            }
        })
    }
}

impl<'py> Reader<'py> {
    fn row_token_count(
        &self,
        index: usize,
        id: &Bound<'py, PyString>,
        column: &Numbers<'py>,
    ) -> Read<'py, u64> {
        let check = match column.raw(index)? {
            Some(Raw::Signed(value)) => check_token_count(value, 0),
            Some(Raw::Unsigned(value)) => check_unsigned_token_count(value),
            _ => return self.token_count(index, id, &column.object(self.py, index)?),
        };
        check.map_err(|kind| self.row_problem(kind, index, id, column))
    }

    fn row_relevance(
        &self,
        index: usize,
        id: &Bound<'py, PyString>,
        column: &Numbers<'py>,
    ) -> Read<'py, f64> {
        let score = match column.raw(index)? {
            Some(Raw::Float(value)) => Some(value),
            Some(Raw::Signed(value @ (0 | 1))) => Some(value as f64),
            Some(Raw::Unsigned(value @ (0 | 1))) => Some(value as f64),
            Some(_) => None,
            None => return self.relevance(index, id, &column.object(self.py, index)?),
        };
        match score {
            Some(score) if check_relevance(score) => Ok(score),
            _ => Err(self.row_problem(ErrorKind::RelevanceRange, index, id, column)),
        }
    }

    /// The failure for a value decoded from a buffer, shown as the Python number it is.
    fn row_problem(
        &self,
        kind: ErrorKind,
        index: usize,
        id: &Bound<'py, PyString>,
        column: &Numbers<'py>,
    ) -> Failure<'py> {
        match column.object(self.py, index) {
            Ok(value) => self.problem(kind, self.place(index, Some(id)), &value, None),
            Err(error) => Failure::Python(error),
        }
    }
}

/// Returns `(kept_row_indices as array('q'), original_tokens, compressed_tokens)`.
pub fn compress_arrays<'py>(
    py: Python<'py>,
    [fragment_ids, token_counts, relevance_scores]: [&Bound<'py, PyAny>; 3],
    budget: u128,
    strategy: Strategy,
) -> PyResult<(Bound<'py, PyAny>, u128, u128)> {
    let reader = Reader {
        py,
        ctx: context(py)?,
        container: "rows",
    };
    let tokens = Numbers::new(token_counts)?;
    let scores = Numbers::new(relevance_scores)?;
    let rows = fragment_ids.len()?;
    let read = |reading: &mut Reading| {
        for index in 0..rows {
            let (fragment_id, id_hash) =
                reader.fragment_id(index, &sequence_item(fragment_ids, index)?)?;
            let token_count = reader.row_token_count(index, fragment_id.string(), &tokens)?;
            let relevance = reader.row_relevance(index, fragment_id.string(), &scores)?;
            reading.push(Checked {
                fragment_id,
                id_hash,
                token_count,
                relevance,
            })?;
        }
        Ok(())
    };
    let compression = compress_read(&reader, rows, read, &[budget], strategy)?;
    let [selection] = &compression.selections[..] else {
        return Err(PyRuntimeError::new_err("one selection per budget"));
    };
    let bytes: Vec<u8> = selection
        .kept
        .iter()
        .flat_map(|&index| i64::from(index).to_ne_bytes())
        .collect();
    let array = reader
        .ctx
        .array
        .bind(py)
        .call1(("q", PyBytes::new(py, &bytes)))?;
    Ok((
        array,
        compression.original_tokens,
        selection.compressed_tokens,
    ))
}
