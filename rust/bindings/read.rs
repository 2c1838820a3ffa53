//! Reading and checking fragment fields, in the contract's order, first failure returned.

use pyo3::exceptions::{PyAttributeError, PyException, PyOverflowError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

use super::context::{Context, FIELDS, FIELD_NAMES};
use super::errors::{is_ordinary, Failure, Place};
use super::text::IdText;
use crate::core::{check_relevance, check_token_count, ErrorKind};

/// The first of the fields a fragment may lack (`required`, `group`, then `variant_of`).
const OPTIONAL_FIELDS: usize = 3;

/// One fragment's checked values: its id as an exact `str`, the id's hash, tokens, relevance,
/// whether it is required, its group's name and hash, and the name and hash of the thing
/// it renders.
pub struct Checked<'py> {
    pub fragment_id: IdText<'py>,
    pub id_hash: u64,
    pub token_count: u64,
    pub relevance: f64,
    pub required: bool,
    pub group: Option<(IdText<'py>, u64)>,
    pub variant: Option<(IdText<'py>, u64)>,
}

pub type Read<'py, T> = Result<T, Failure<'py>>;

pub struct Reader<'py> {
    pub py: Python<'py>,
    pub ctx: &'static Context,
    pub container: &'static str,
}

impl<'py> Reader<'py> {
    pub fn place(&self, index: usize, fragment_id: Option<&Bound<'py, PyString>>) -> Place<'py> {
        Place {
            container: self.container,
            index,
            fragment_id: fragment_id.cloned(),
        }
    }

    pub fn problem(
        &self,
        kind: ErrorKind,
        place: Place<'py>,
        value: &Bound<'py, PyAny>,
        cause: Option<PyErr>,
    ) -> Failure<'py> {
        Failure::Problem {
            kind,
            place,
            value: value.clone(),
            cause,
        }
    }

    /// `isinstance` whose own failure (a `__class__` property that raises) counts as "no".
    fn is_instance(&self, value: &Bound<'py, PyAny>, class: &Bound<'py, PyAny>) -> PyResult<bool> {
        match value.is_instance(class) {
            Ok(answer) => Ok(answer),
            Err(error) if is_ordinary(self.py, &error) => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// A fragment that `Context::push_plain` did not take.
    pub fn fragment(&self, index: usize, item: &Bound<'py, PyAny>) -> Read<'py, Checked<'py>> {
        self.any_fragment(index, item, self.ctx.slots(item))
    }

    fn any_fragment(
        &self,
        index: usize,
        item: &Bound<'py, PyAny>,
        slots: Option<[Option<Bound<'py, PyAny>>; FIELDS]>,
    ) -> Read<'py, Checked<'py>> {
        let fragment_type = self.ctx.fragment_type.bind(self.py);
        if slots.is_none() && !self.is_instance(item, fragment_type.as_any())? {
            return Err(self.problem(ErrorKind::NotFragment, self.place(index, None), item, None));
        }
        // Slots were read before any user code ran; a field read later is read again, since
        // user code may have changed it meanwhile.
        let mut first_slot = slots.and_then(|[id, ..]| id);
        let mut field = |which: usize, fragment_id: Option<&Bound<'py, PyString>>| {
            let from_slot = if which == 0 {
                first_slot.take()
            } else {
                self.ctx
                    .slots(item)
                    .and_then(|mut values| values[which].take())
            };
            match from_slot {
                Some(value) => Ok(value),
                None => match item.getattr(PyString::intern(self.py, FIELD_NAMES[which])) {
                    Ok(value) => Ok(value),
                    // Fragments made before `required`, `group` and `variant_of` existed (objects that
                    // pass for one, subclass instances with unset slots) have their defaults.
                    Err(cause)
                        if which >= OPTIONAL_FIELDS
                            && cause.is_instance_of::<PyAttributeError>(self.py) =>
                    {
                        Ok(if which == OPTIONAL_FIELDS {
                            PyBool::new(self.py, false).to_owned().into_any()
                        } else {
                            self.py.None().into_bound(self.py)
                        })
                    }
                    Err(cause) => Err({
                        if is_ordinary(self.py, &cause) {
                            Failure::Unreadable {
                                place: self.place(index, fragment_id),
                                attribute: FIELD_NAMES[which],
                                cause,
                            }
                        } else {
                            Failure::Python(cause)
                        }
                    }),
                },
            }
        };
        let (fragment_id, id_hash) = self.fragment_id(index, &field(0, None)?)?;
        let id = fragment_id.string();
        let token_count = self.token_count(index, id, &field(1, Some(id))?)?;
        let relevance = self.relevance(index, id, &field(2, Some(id))?)?;
        let required = self.required(index, id, &field(3, Some(id))?)?;
        let group = self.group(index, id, &field(4, Some(id))?)?;
        let variant = self.variant(index, id, &field(5, Some(id))?)?;
        Ok(Checked {
            fragment_id,
            id_hash,
            token_count,
            relevance,
            required,
            group,
            variant,
        })
    }

    /// `True`, `False` or a numpy bool.
    pub fn required(
        &self,
        index: usize,
        fragment_id: &Bound<'py, PyString>,
        value: &Bound<'py, PyAny>,
    ) -> Read<'py, bool> {
        if let Ok(flag) = value.cast::<pyo3::types::PyBool>() {
            return Ok(flag.is_true());
        }
        let kind = value.get_type();
        let is = |name: PyResult<Bound<'py, PyString>>, expected: &[&str]| {
            name.and_then(|name| Ok(expected.contains(&&*name.to_cow()?)))
                .unwrap_or(false)
        };
        let numpy_bool = is(kind.module(), &["numpy"]) && is(kind.name(), &["bool_", "bool"]);
        if numpy_bool {
            return Ok(value.is_truthy()?);
        }
        Err(self.problem(
            ErrorKind::RequiredType,
            self.place(index, Some(fragment_id)),
            value,
            None,
        ))
    }

    /// A group's name: `None`, or a non-empty `str` (a subclass read as the str it holds)
    /// and its hash.
    pub fn group(
        &self,
        index: usize,
        fragment_id: &Bound<'py, PyString>,
        value: &Bound<'py, PyAny>,
    ) -> Read<'py, Option<(IdText<'py>, u64)>> {
        let kinds = (ErrorKind::GroupType, ErrorKind::GroupEmpty);
        self.name(index, fragment_id, value, kinds)
    }

    /// What a fragment renders (`variant_of`), read as a group's name is.
    pub fn variant(
        &self,
        index: usize,
        fragment_id: &Bound<'py, PyString>,
        value: &Bound<'py, PyAny>,
    ) -> Read<'py, Option<(IdText<'py>, u64)>> {
        let kinds = (ErrorKind::VariantType, ErrorKind::VariantEmpty);
        self.name(index, fragment_id, value, kinds)
    }

    /// `None`, or a non-empty `str` and its hash; else the problem of kind `wrong_type` or
    /// `empty`.
    fn name(
        &self,
        index: usize,
        fragment_id: &Bound<'py, PyString>,
        value: &Bound<'py, PyAny>,
        (wrong_type, empty): (ErrorKind, ErrorKind),
    ) -> Read<'py, Option<(IdText<'py>, u64)>> {
        if value.is_none() {
            return Ok(None);
        }
        let place = || self.place(index, Some(fragment_id));
        let Some(name) = exact_str(value)? else {
            return Err(self.problem(wrong_type, place(), value, None));
        };
        let hash = name.hash()? as u64;
        let text = IdText::new(name)?;
        if text.as_bytes().is_empty() {
            return Err(self.problem(empty, place(), value, None));
        }
        Ok(Some((text, hash)))
    }

    /// The id as an exact `str` (a subclass's own `__eq__`, `__hash__` and `__lt__` are not
    /// consulted) and its hash.
    pub fn fragment_id(
        &self,
        index: usize,
        value: &Bound<'py, PyAny>,
    ) -> Read<'py, (IdText<'py>, u64)> {
        let Some(exact) = exact_str(value)? else {
            return Err(self.problem(ErrorKind::IdType, self.place(index, None), value, None));
        };
        let hash = exact.hash()?;
        let text = IdText::new(exact)?;
        if text.as_bytes().is_empty() {
            return Err(self.problem(ErrorKind::IdEmpty, self.place(index, None), value, None));
        }
        Ok((text, hash as u64))
    }

    pub fn token_count(
        &self,
        index: usize,
        fragment_id: &Bound<'py, PyString>,
        value: &Bound<'py, PyAny>,
    ) -> Read<'py, u64> {
        let wrong_type = |cause| {
            self.problem(
                ErrorKind::TokenType,
                self.place(index, Some(fragment_id)),
                value,
                cause,
            )
        };
        let is_bool = value.is_instance_of::<pyo3::types::PyBool>();
        let integer = if value.is_instance_of::<PyInt>() && !is_bool {
            value.clone()
        } else if !is_bool && self.is_instance(value, self.ctx.integral.bind(self.py))? {
            // SAFETY: `value` is live and the GIL is held; the result is a new reference.
            match unsafe {
                Bound::from_owned_ptr_or_err(self.py, ffi::PyNumber_Index(value.as_ptr()))
            } {
                Ok(integer) => integer,
                Err(error) if is_ordinary(self.py, &error) => return Err(wrong_type(Some(error))),
                Err(error) => return Err(error.into()),
            }
        } else {
            return Err(wrong_type(None));
        };
        let (number, overflow) = as_i64(integer.cast::<PyInt>().map_err(PyErr::from)?);
        check_token_count(number, overflow)
            .map_err(|kind| self.problem(kind, self.place(index, Some(fragment_id)), value, None))
    }

    pub fn relevance(
        &self,
        index: usize,
        fragment_id: &Bound<'py, PyString>,
        value: &Bound<'py, PyAny>,
    ) -> Read<'py, f64> {
        let problem =
            |kind, cause| self.problem(kind, self.place(index, Some(fragment_id)), value, cause);
        let score = if let Ok(float) = value.cast::<PyFloat>() {
            float.value()
        } else if value.is_instance_of::<pyo3::types::PyBool>() {
            return Err(problem(ErrorKind::RelevanceType, None));
        } else if let Ok(integer) = value.cast::<PyInt>() {
            match as_i64(integer) {
                (number @ (0 | 1), 0) => number as f64,
                _ => return Err(problem(ErrorKind::RelevanceRange, None)),
            }
        } else if self.is_instance(value, self.ctx.real.bind(self.py))? {
            // SAFETY: `value` is live and the GIL is held; the result is a new reference.
            match unsafe {
                Bound::from_owned_ptr_or_err(self.py, ffi::PyNumber_Float(value.as_ptr()))
            } {
                Ok(float) => float.cast::<PyFloat>().map_err(PyErr::from)?.value(),
                Err(error) if error.is_instance_of::<PyOverflowError>(self.py) => {
                    return Err(problem(ErrorKind::RelevanceRange, Some(error)))
                }
                Err(error) if error.is_instance_of::<PyException>(self.py) => {
                    return Err(problem(ErrorKind::RelevanceType, Some(error)))
                }
                Err(error) => return Err(error.into()),
            }
        } else {
            return Err(problem(ErrorKind::RelevanceType, None));
        };
        if check_relevance(score) {
            Ok(score)
        } else {
            Err(problem(ErrorKind::RelevanceRange, None))
        }
    }
}

/// A `str` as an exact `str` (a subclass's own `__eq__`, `__hash__` and `__lt__` are not
/// consulted); `None` for anything else.
pub fn exact_str<'py>(value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyString>>> {
    if value.is_exact_instance_of::<PyString>() {
        return Ok(Some(value.clone().cast_into::<PyString>()?));
    }
    let Ok(subclass) = value.cast::<PyString>() else {
        return Ok(None);
    };
    let length = str_length(subclass);
    // SAFETY: `subclass` is a live `str` and the GIL is held; the result is new.
    let exact = unsafe {
        Bound::from_owned_ptr_or_err(
            value.py(),
            ffi::PyUnicode_Substring(subclass.as_ptr(), 0, length),
        )?
    };
    Ok(Some(exact.cast_into::<PyString>()?))
}

fn str_length(text: &Bound<'_, PyString>) -> ffi::Py_ssize_t {
    // SAFETY: `text` is a live `str` and the GIL is held; a str's length cannot fail.
    unsafe { ffi::PyUnicode_GetLength(text.as_ptr()) }
}

/// The value of a Python int as `i64`, with the sign of any overflow. Never calls user code:
/// an int subclass is read as the int it is.
pub fn as_i64(integer: &Bound<'_, PyInt>) -> (i64, i32) {
    let mut overflow = 0;
    // SAFETY: `integer` is a live `int` (a subclass included) and the GIL is held; for an
    // int, the conversion runs no user code and cannot fail.
    let value = unsafe { ffi::PyLong_AsLongLongAndOverflow(integer.as_ptr(), &mut overflow) };
    (value, overflow)
}
