//! `compress_arrays`: the same checks and selection on columns instead of fragment objects.

use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};

use super::compress::{compress_read, Reading};
use super::context::context;
use super::errors::Failure;
use super::read::{Checked, Read, Reader};
use super::signals;
use super::text::IdText;
use crate::core::{
    check_relevance, check_token_count, check_unsigned_token_count, Compression, ErrorKind, Request,
};

/// A column of Python objects: a list or a tuple (the Python layer passes nothing else),
/// read by position through its own storage, bounds-checked.
///
/// A list is read in place until user code may run (a value's `__index__` or `__float__`),
/// and from then on from a tuple of its items copied at that moment: user code that changes
/// the list cannot change what the call reads, which is every column as it was when the call
/// started, as the fallback reads it. A copy up front would cost every call the copy.
struct Objects<'py>(Bound<'py, PyAny>);

impl<'py> Objects<'py> {
    fn new(column: &Bound<'py, PyAny>) -> PyResult<Self> {
        if column.is_instance_of::<PyList>() || column.is_instance_of::<PyTuple>() {
            Ok(Objects(column.clone()))
        } else {
            Err(PyTypeError::new_err(format!(
                "expected a list or tuple column, got {}",
                column.get_type().name()?
            )))
        }
    }

    fn len(&self) -> usize {
        match self.0.cast::<PyList>() {
            Ok(list) => list.len(),
            Err(_) => self.0.cast::<PyTuple>().map_or(0, |tuple| tuple.len()),
        }
    }

    fn item(&self, index: usize) -> PyResult<Bound<'py, PyAny>> {
        match self.0.cast::<PyList>() {
            Ok(list) => list.get_item(index),
            Err(_) => self
                .0
                .cast::<PyTuple>()
                .map_err(PyErr::from)?
                .get_item(index),
        }
    }

    fn freeze(&mut self) {
        if let Ok(list) = self.0.cast::<PyList>() {
            self.0 = list.to_tuple().into_any();
        }
    }
}

/// A numeric column: Python objects, or a copy of the bytes of a one-dimensional buffer
/// whose format the Python layer has checked to be one native type code of `bBhHiIlLqQnNfd`.
enum Numbers<'py> {
    Objects(Objects<'py>),
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
            return Ok(Numbers::Objects(Objects::new(column)?));
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

    fn len(&self) -> usize {
        match self {
            Numbers::Objects(objects) => objects.len(),
            Numbers::Buffer { itemsize, data, .. } => data.as_bytes().len() / itemsize,
        }
    }

    fn freeze(&mut self) {
        if let Numbers::Objects(objects) = self {
            objects.freeze();
        }
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
            (Numbers::Objects(objects), _) => objects.item(index)?,
            (_, Some(Raw::Signed(value))) => PyInt::new(py, value).into_any(),
            (_, Some(Raw::Unsigned(value))) => PyInt::new(py, value).into_any(),
            (_, Some(Raw::Float(value))) => PyFloat::new(py, value).into_any(),
            (Numbers::Buffer { .. }, None) => {
                return Err(PyRuntimeError::new_err("a buffer column always decodes"))
            }
        })
    }
}

/// The columns of one call: `required`, `groups` and `variants` only when given.
struct Rows<'py> {
    ids: Objects<'py>,
    tokens: Numbers<'py>,
    scores: Numbers<'py>,
    required: Option<Objects<'py>>,
    groups: Option<Objects<'py>>,
    variants: Option<Objects<'py>>,
}

impl<'py> Rows<'py> {
    /// The number of rows, or the failure naming the columns' lengths when they differ.
    fn len(&self) -> Read<'py, usize> {
        let lengths = [
            Some(self.ids.len()),
            Some(self.tokens.len()),
            Some(self.scores.len()),
            self.required.as_ref().map(Objects::len),
            self.groups.as_ref().map(Objects::len),
            self.variants.as_ref().map(Objects::len),
        ];
        let rows = self.ids.len();
        if lengths.iter().flatten().all(|&length| length == rows) {
            Ok(rows)
        } else {
            Err(Failure::ColumnLengths(lengths))
        }
    }

    /// Called before a value's own code runs: from here on, every column is read as it is now.
    fn freeze(&mut self) {
        self.ids.freeze();
        self.tokens.freeze();
        self.scores.freeze();
        let optional = [&mut self.required, &mut self.groups, &mut self.variants];
        for column in optional.into_iter().flatten() {
            column.freeze();
        }
    }

    fn required(
        &mut self,
        reader: &Reader<'py>,
        index: usize,
        id: &Bound<'py, PyString>,
    ) -> Read<'py, bool> {
        let Some(column) = &self.required else {
            return Ok(false);
        };
        let value = column.item(index)?;
        if !value.is_instance_of::<PyBool>() {
            self.freeze();
        }
        reader.required(index, id, &value)
    }

    fn group(
        &mut self,
        reader: &Reader<'py>,
        index: usize,
        id: &Bound<'py, PyString>,
    ) -> Read<'py, Option<(IdText<'py>, u64)>> {
        let Some(value) = self.name_at(Self::groups, index)? else {
            return Ok(None);
        };
        reader.group(index, id, &value)
    }

    fn variant(
        &mut self,
        reader: &Reader<'py>,
        index: usize,
        id: &Bound<'py, PyString>,
    ) -> Read<'py, Option<(IdText<'py>, u64)>> {
        let Some(value) = self.name_at(Self::variants, index)? else {
            return Ok(None);
        };
        reader.variant(index, id, &value)
    }

    fn groups(&self) -> Option<&Objects<'py>> {
        self.groups.as_ref()
    }

    fn variants(&self) -> Option<&Objects<'py>> {
        self.variants.as_ref()
    }

    /// The value at `index` of a column of names (`None` when the column is not given),
    /// every column frozen first when it is neither `None` nor a `str`.
    fn name_at(
        &mut self,
        column: fn(&Self) -> Option<&Objects<'py>>,
        index: usize,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(column) = column(self) else {
            return Ok(None);
        };
        let value = column.item(index)?;
        if !value.is_none() && !value.is_instance_of::<PyString>() {
            self.freeze();
        }
        Ok(Some(value))
    }

    fn token_count(
        &mut self,
        reader: &Reader<'py>,
        index: usize,
        id: &Bound<'py, PyString>,
    ) -> Read<'py, u64> {
        let check = match self.tokens.raw(index)? {
            Some(Raw::Signed(value)) => check_token_count(value, 0),
            Some(Raw::Unsigned(value)) => check_unsigned_token_count(value),
            _ => {
                let value = self.tokens.object(reader.py, index)?;
                if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
                    self.freeze();
                }
                return reader.token_count(index, id, &value);
            }
        };
        check.map_err(|kind| row_problem(reader, kind, index, id, &self.tokens))
    }

    fn relevance(
        &mut self,
        reader: &Reader<'py>,
        index: usize,
        id: &Bound<'py, PyString>,
    ) -> Read<'py, f64> {
        let score = match self.scores.raw(index)? {
            Some(Raw::Float(value)) => Some(value),
            Some(Raw::Signed(value @ (0 | 1))) => Some(value as f64),
            Some(Raw::Unsigned(value @ (0 | 1))) => Some(value as f64),
            Some(_) => None,
            None => {
                let value = self.scores.object(reader.py, index)?;
                let plain = value.is_instance_of::<PyFloat>()
                    || (value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>());
                if !plain {
                    self.freeze();
                }
                return reader.relevance(index, id, &value);
            }
        };
        match score {
            Some(score) if check_relevance(score) => Ok(score),
            _ => Err(row_problem(
                reader,
                ErrorKind::RelevanceRange,
                index,
                id,
                &self.scores,
            )),
        }
    }
}

/// The failure for a value decoded from a buffer, shown as the Python number it is.
fn row_problem<'py>(
    reader: &Reader<'py>,
    kind: ErrorKind,
    index: usize,
    id: &Bound<'py, PyString>,
    column: &Numbers<'py>,
) -> Failure<'py> {
    match column.object(reader.py, index) {
        Ok(value) => reader.problem(kind, reader.place(index, Some(id)), &value, None),
        Err(error) => Failure::Python(error),
    }
}

/// `(kept_row_indices as array('q'), original_tokens, compressed_tokens, rows, value_kept,
/// value_bound, relevance_kept, reused_tokens, exact)`.
pub type KeptRows<'py> = (
    Bound<'py, PyAny>,
    u128,
    u128,
    usize,
    u128,
    u128,
    f64,
    u128,
    bool,
);

/// The columns compressed as `request` asks: see [`KeptRows`].
pub fn compress_arrays<'py>(
    py: Python<'py>,
    [fragment_ids, token_counts, relevance_scores]: [&Bound<'py, PyAny>; 3],
    [required, groups, variants]: [Option<&Bound<'py, PyAny>>; 3],
    request: Request<'_>,
) -> PyResult<KeptRows<'py>> {
    let reader = Reader {
        py,
        ctx: context(py)?,
        container: "rows",
    };
    let mut rows = Rows {
        ids: Objects::new(fragment_ids)?,
        tokens: Numbers::new(token_counts)?,
        scores: Numbers::new(relevance_scores)?,
        required: required.map(Objects::new).transpose()?,
        groups: groups.map(Objects::new).transpose()?,
        variants: variants.map(Objects::new).transpose()?,
    };
    let count = rows
        .len()
        .map_err(|failure| failure.into_pyerr(py, reader.ctx))?;
    let read = |reading: &mut Reading| {
        for index in 0..count {
            signals::check_now_and_then(py, index)?;
            let (fragment_id, id_hash) = reader.fragment_id(index, &rows.ids.item(index)?)?;
            let token_count = rows.token_count(&reader, index, fragment_id.string())?;
            let relevance = rows.relevance(&reader, index, fragment_id.string())?;
            let required = rows.required(&reader, index, fragment_id.string())?;
            let group = rows.group(&reader, index, fragment_id.string())?;
            let variant = rows.variant(&reader, index, fragment_id.string())?;
            reading.push(Checked {
                fragment_id,
                id_hash,
                token_count,
                relevance,
                required,
                group,
                variant,
            })?;
        }
        Ok(())
    };
    let build = |compression: Compression| {
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
            count,
            selection.value_kept,
            selection.value_bound,
            compression.relevance_kept[0],
            selection.reused_tokens,
            selection.exact,
        ))
    };
    compress_read(&reader, count, read, request, build)
}
