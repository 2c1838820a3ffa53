//! The bytes of a `str`, in the order-keeping form the core compares: UTF-8, extended to lone
//! surrogates (each encoded as the three bytes of its code point), which no plain UTF-8 has.

use std::os::raw::c_char;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

extern "C" {
    // Part of the stable ABI from Python 3.10, and exported by every CPython 3 before it;
    // the abi3 declarations of PyO3 only offer it from 3.10.
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut ffi::PyObject,
        size: *mut ffi::Py_ssize_t,
    ) -> *const c_char;
}

/// An id and its bytes.
pub struct IdText<'py> {
    string: Bound<'py, PyString>,
    bytes: Bytes<'py>,
}

enum Bytes<'py> {
    /// The UTF-8 that CPython keeps with the string: address and length.
    Utf8(*const u8, usize),
    /// A string with lone surrogates, encoded with `surrogatepass`.
    Encoded(Bound<'py, PyBytes>),
}

/// The UTF-8 that CPython keeps with a string, or `None` for a string with lone surrogates.
///
/// # Safety
/// `string` is a live `str`, the GIL is held, and the bytes are not used after the
/// string may have been freed: CPython keeps a str's UTF-8 unchanged for the string's life.
pub unsafe fn utf8_of_str<'a>(string: *mut ffi::PyObject) -> Option<&'a [u8]> {
    let mut length: ffi::Py_ssize_t = 0;
    // SAFETY: as the caller promises.
    let data = unsafe { PyUnicode_AsUTF8AndSize(string, &mut length) };
    if data.is_null() {
        // The only failure for a str: a lone surrogate cannot be encoded.
        // SAFETY: the GIL is held.
        unsafe { ffi::PyErr_Clear() };
        return None;
    }
    // SAFETY: CPython's UTF-8 of the string: `length` bytes at `data`.
    Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length as usize) })
}

impl<'py> IdText<'py> {
    pub fn new(string: Bound<'py, PyString>) -> PyResult<Self> {
        // SAFETY: `string` is a live `str`, the GIL is held, and `IdText` holds the string
        // while it lends the bytes.
        if let Some(utf8) = unsafe { utf8_of_str(string.as_ptr()) } {
            let bytes = Bytes::Utf8(utf8.as_ptr(), utf8.len());
            return Ok(IdText { string, bytes });
        }
        // SAFETY: `string` is a live `str`, the GIL is held, and both names are
        // NUL-terminated; the result is a new reference.
        let encoded = unsafe {
            Bound::from_owned_ptr_or_err(
                string.py(),
                ffi::PyUnicode_AsEncodedString(
                    string.as_ptr(),
                    c"utf-8".as_ptr(),
                    c"surrogatepass".as_ptr(),
                ),
            )?
        };
        Ok(IdText {
            string,
            bytes: Bytes::Encoded(encoded.cast_into::<PyBytes>()?),
        })
    }

    pub fn string(&self) -> &Bound<'py, PyString> {
        &self.string
    }

    pub fn as_bytes(&self) -> &[u8] {
        match &self.bytes {
            // SAFETY: made in `new` from this very string, which `self` holds: CPython keeps
            // a str's UTF-8 unchanged until the string is freed.
            Bytes::Utf8(data, length) => unsafe { std::slice::from_raw_parts(*data, *length) },
            Bytes::Encoded(encoded) => encoded.as_bytes(),
        }
    }
}

/// The `str` whose bytes these are.
pub fn id_from_bytes<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyString>> {
    // SAFETY: the pointer and length describe `bytes`, the GIL is held, and the error
    // handler's name is NUL-terminated; the result is a new reference.
    let decoded = unsafe {
        Bound::from_owned_ptr_or_err(
            py,
            ffi::PyUnicode_DecodeUTF8(
                bytes.as_ptr().cast(),
                bytes.len() as ffi::Py_ssize_t,
                c"surrogatepass".as_ptr(),
            ),
        )?
    };
    Ok(decoded.cast_into::<PyString>()?)
}
