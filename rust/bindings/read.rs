//! Reading and checking fragment fields, in the contract's order, first failure raised.

use pyo3::exceptions::{PyException, PyOverflowError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::context::Context;
use super::errors::{self, Place};
use super::ids::IdRef;
use crate::core::{check_relevance, check_token_count, TokenCheck};

const FIELDS: [&str; 3] = ["fragment_id", "token_count", "relevance_score"];

pub struct Checked<'py> {
    pub fragment_id: IdRef<'py>,
    pub id_hash: u64,
    pub token_count: u64,
    pub relevance: f64,
}

pub struct Reader<'py> {
    pub py: Python<'py>,
    pub ctx: &'static Context,
    pub container: &'static str,
}

impl<'py> Reader<'py> {
    pub(super) fn place<'a>(
        &self,
        index: usize,
        fragment_id: Option<&'a Bound<'py, PyString>>,
    ) -> Place<'a, 'py> {
        Place {
            container: self.container,
            index,
            fragment_id,
        }
    }

    pub(super) fn problem(
        &self,
        kind: &str,
        place: Place<'_, 'py>,
        value: &Bound<'py, PyAny>,
        cause: Option<PyErr>,
    ) -> PyErr {
        errors::problem(self.py, self.ctx, kind, place, value, cause)
    }

    /// `isinstance` whose own failure (a `__class__` property that raises) counts as "no".
    fn is_instance(&self, value: &Bound<'py, PyAny>, class: &Bound<'py, PyAny>) -> PyResult<bool> {
        match value.is_instance(class) {
            Ok(answer) => Ok(answer),
            Err(error) if errors::is_ordinary(self.py, &error) => Ok(false),
            Err(error) => Err(error),
        }
    }

    pub fn fragment(&self, index: usize, item: &Bound<'py, PyAny>) -> PyResult<Checked<'py>> {
        match self.plain_fragment(item) {
            Some(checked) => Ok(checked),
            None => self.any_fragment(index, item),
        }
    }

    /// The common case, read straight from the slots with no lookup and no user code: an
    /// exact `ContextFragment` holding a non-empty `str`, an `int` in range and a `float` in
    /// `[0, 1]`. Anything else, valid or not, is left to `any_fragment`.
    #[inline]
    fn plain_fragment(&self, item: &Bound<'py, PyAny>) -> Option<Checked<'py>> {
        let offsets = self.ctx.slot_offsets?;
        let raw = item.as_ptr();
        // SAFETY: the type is checked before the slots are read; see `context::locate_slots`.
        unsafe {
            if ffi::Py_TYPE(raw) != self.ctx.fragment_type.as_ptr().cast() {
                return None;
            }
            let slot = |offset: usize| {
                raw.cast::<u8>()
                    .add(offset)
                    .cast::<*mut ffi::PyObject>()
                    .read()
            };
            let (id, tokens, score) = (slot(offsets[0]), slot(offsets[1]), slot(offsets[2]));
            if id.is_null() || tokens.is_null() || score.is_null() {
                return None;
            }
            if ffi::Py_TYPE(id) != &raw mut ffi::PyUnicode_Type
                || ffi::PyLong_CheckExact(tokens) == 0
                || ffi::PyFloat_CheckExact(score) == 0
                || ffi::PyUnicode_GetLength(id) == 0
            {
                return None;
            }
            let mut overflow = 0;
            let TokenCheck::Valid(token_count) = check_token_count(
                ffi::PyLong_AsLongLongAndOverflow(tokens, &mut overflow),
                overflow,
            ) else {
                return None;
            };
            let relevance = ffi::PyFloat_AsDouble(score);
            if !check_relevance(relevance) {
                return None;
            }
            // A str's hash is cached on the object and never fails.
            let id_hash = ffi::PyObject_Hash(id) as u64;
            Some(Checked {
                fragment_id: IdRef::InSlot(id),
                id_hash,
                token_count,
                relevance,
            })
        }
    }

    fn any_fragment(&self, index: usize, item: &Bound<'py, PyAny>) -> PyResult<Checked<'py>> {
        let fragment_type = self.ctx.fragment_type.bind(self.py);
        let exact = item.get_type().is(fragment_type);
        if !exact && !self.is_instance(item, fragment_type.as_any())? {
            return Err(self.problem("not_fragment", self.place(index, None), item, None));
        }
        let slots = if exact { self.ctx.slot_offsets } else { None };
        let field = |which: usize, fragment_id: Option<&Bound<'py, PyString>>| {
            self.field(
                index,
                item,
                slots.map(|offsets| offsets[which]),
                FIELDS[which],
                fragment_id,
            )
        };
        let (fragment_id, id_hash) = self.fragment_id(index, &field(0, None)?)?;
        let token_count = self.token_count(index, &fragment_id, &field(1, Some(&fragment_id))?)?;
        let relevance = self.relevance(index, &fragment_id, &field(2, Some(&fragment_id))?)?;
        Ok(Checked {
            fragment_id: IdRef::Owned(fragment_id),
            id_hash,
            token_count,
            relevance,
        })
    }

    fn field(
        &self,
        index: usize,
        item: &Bound<'py, PyAny>,
        slot_offset: Option<usize>,
        name: &str,
        fragment_id: Option<&Bound<'py, PyString>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(offset) = slot_offset {
            // SAFETY: `item` is exactly `ContextFragment`, whose slot lies at `offset`; the
            // slot holds a strong reference or NULL when the attribute was deleted.
            let value = unsafe {
                (item.as_ptr().cast::<u8>().add(offset) as *const *mut ffi::PyObject).read()
            };
            if !value.is_null() {
                return Ok(unsafe { Bound::from_borrowed_ptr(self.py, value) });
            }
        }
        item.getattr(PyString::intern(self.py, name))
            .map_err(|error| {
                errors::unreadable(
                    self.py,
                    self.ctx,
                    self.place(index, fragment_id),
                    name,
                    error,
                )
            })
    }

    /// The id as an exact `str` (a subclass's own `__eq__`, `__hash__` and `__lt__` are not
    /// consulted) and its hash.
    pub fn fragment_id(
        &self,
        index: usize,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyString>, u64)> {
        let raw = value.as_ptr();
        let exact = unsafe {
            if ffi::PyUnicode_CheckExact(raw) != 0 {
                value.clone()
            } else if ffi::PyUnicode_Check(raw) != 0 {
                let length = ffi::PyUnicode_GetLength(raw);
                Bound::from_owned_ptr_or_err(self.py, ffi::PyUnicode_Substring(raw, 0, length))?
            } else {
                return Err(self.problem("id_type", self.place(index, None), value, None));
            }
        };
        let exact = exact.cast_into::<PyString>()?;
        if unsafe { ffi::PyUnicode_GetLength(exact.as_ptr()) } == 0 {
            return Err(self.problem("id_empty", self.place(index, None), value, None));
        }
        let hash = exact.hash()?;
        Ok((exact, hash as u64))
    }

    pub fn token_count(
        &self,
        index: usize,
        fragment_id: &Bound<'py, PyString>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<u64> {
        let place = self.place(index, Some(fragment_id));
        let wrong_type = |cause| self.problem("token_type", place, value, cause);
        let raw = value.as_ptr();
        let integer = unsafe {
            if ffi::PyLong_CheckExact(raw) != 0
                || (ffi::PyLong_Check(raw) != 0 && ffi::PyBool_Check(raw) == 0)
            {
                value.clone()
            } else if ffi::PyBool_Check(raw) == 0
                && self.is_instance(value, self.ctx.integral.bind(self.py))?
            {
                match Bound::from_owned_ptr_or_err(self.py, ffi::PyNumber_Index(raw)) {
                    Ok(integer) => integer,
                    Err(error) if errors::is_ordinary(self.py, &error) => {
                        return Err(wrong_type(Some(error)))
                    }
                    Err(error) => return Err(error),
                }
            } else {
                return Err(wrong_type(None));
            }
        };
        let (number, overflow) = as_i64(&integer);
        match check_token_count(number, overflow) {
            TokenCheck::Valid(count) => Ok(count),
            TokenCheck::Negative => Err(self.problem("token_negative", place, value, None)),
            TokenCheck::TooLarge => Err(self.problem("token_too_large", place, value, None)),
        }
    }

    pub fn relevance(
        &self,
        index: usize,
        fragment_id: &Bound<'py, PyString>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<f64> {
        let place = self.place(index, Some(fragment_id));
        let problem = |kind, cause| self.problem(kind, place, value, cause);
        let raw = value.as_ptr();
        let score = unsafe {
            if ffi::PyFloat_Check(raw) != 0 {
                ffi::PyFloat_AsDouble(raw)
            } else if ffi::PyBool_Check(raw) != 0 {
                return Err(problem("relevance_type", None));
            } else if ffi::PyLong_Check(raw) != 0 {
                match as_i64(value) {
                    (number @ (0 | 1), 0) => number as f64,
                    _ => return Err(problem("relevance_range", None)),
                }
            } else if self.is_instance(value, self.ctx.real.bind(self.py))? {
                match Bound::from_owned_ptr_or_err(self.py, ffi::PyNumber_Float(raw)) {
                    Ok(float) => ffi::PyFloat_AsDouble(float.as_ptr()),
                    Err(error) if error.is_instance_of::<PyOverflowError>(self.py) => {
                        return Err(problem("relevance_range", Some(error)))
                    }
                    Err(error) if error.is_instance_of::<PyException>(self.py) => {
                        return Err(problem("relevance_type", Some(error)))
                    }
                    Err(error) => return Err(error),
                }
            } else {
                return Err(problem("relevance_type", None));
            }
        };
        if check_relevance(score) {
            Ok(score)
        } else {
            Err(problem("relevance_range", None))
        }
    }
}

/// The value of a Python int as `i64`, with the sign of any overflow. Never calls user code:
/// an int subclass is read as the int it is.
pub fn as_i64(integer: &Bound<'_, PyAny>) -> (i64, i32) {
    let mut overflow = 0;
    let value = unsafe { ffi::PyLong_AsLongLongAndOverflow(integer.as_ptr(), &mut overflow) };
    (value, overflow)
}
