//! Python objects the bindings need on every call, looked up once per interpreter.

use std::mem::size_of;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyModule, PyTuple, PyType};

use super::slotted::Slotted;
use super::text::utf8_of_str;
use crate::core::{check_relevance, check_token_count, Columns, TooMany};

/// The fields the compression reads, in the order they are checked.
pub const FIELDS: usize = 6;
pub const FIELD_NAMES: [&str; FIELDS] = [
    "fragment_id",
    "token_count",
    "relevance_score",
    "required",
    "group",
    "variant_of",
];

pub struct Context {
    pub fragment_type: Py<PyType>,
    /// Byte offsets of the `fragment_id`, `token_count`, `relevance_score`, `required`,
    /// `group` and `variant_of` slots inside a `ContextFragment`, when they could be located.
    pub slot_offsets: Option<[usize; FIELDS]>,
    pub integral: Py<PyAny>,
    pub real: Py<PyAny>,
    /// `skeleton_compressor._backends.rust`: the one Python module the bindings import.
    pub for_core: Py<PyModule>,
    pub array: Py<PyAny>,
    /// `SkeletonMetadata` and `SkeletonResult`, and where their instances keep their fields
    /// when that could be located.
    pub metadata_type: Py<PyType>,
    pub metadata: Option<Slotted<METADATA_FIELDS>>,
    pub result_type: Py<PyType>,
    pub result: Option<Slotted<2>>,
    /// Where a `ContextFragment` keeps its fields (all seven, in `FRAGMENT_NAMES` order),
    /// when that could be located: siblings' results are copies with another relevance.
    pub fragment: Option<Slotted<7>>,
}

/// `ContextFragment`'s fields, in its constructor's order.
pub const FRAGMENT_NAMES: [&str; 7] = [
    "fragment_id",
    "token_count",
    "relevance_score",
    "content",
    "required",
    "group",
    "variant_of",
];

/// Where `relevance_score` stands in `FRAGMENT_NAMES`.
pub const RELEVANCE_SCORE: usize = 2;

/// `SkeletonMetadata`'s fields, in the order `build_metadata` gives them.
pub const METADATA_FIELDS: usize = 11;
const METADATA_NAMES: [&str; METADATA_FIELDS] = [
    "original_tokens",
    "compressed_tokens",
    "ratio",
    "skeleton_budget",
    "fragments_total",
    "fragments_kept",
    "value_kept",
    "value_bound",
    "reused_tokens",
    "kept_share",
    "exact",
];

static CONTEXT: PyOnceLock<Context> = PyOnceLock::new();

pub fn context(py: Python<'_>) -> PyResult<&'static Context> {
    CONTEXT.get_or_try_init(py, || {
        let for_core = py.import("skeleton_compressor._backends.rust")?;
        let fragment_type = for_core.getattr("ContextFragment")?.cast_into::<PyType>()?;
        let numbers = py.import("numbers")?;
        let metadata_type = for_core
            .getattr("SkeletonMetadata")?
            .cast_into::<PyType>()?;
        let result_type = for_core.getattr("SkeletonResult")?.cast_into::<PyType>()?;
        Ok(Context {
            metadata: Slotted::locate(&metadata_type, METADATA_NAMES)?,
            metadata_type: metadata_type.unbind(),
            result: Slotted::locate(&result_type, ["fragments", "metadata"])?,
            result_type: result_type.unbind(),
            slot_offsets: locate_slots(py, &fragment_type)?,
            fragment: Slotted::locate(&fragment_type, FRAGMENT_NAMES)?,
            fragment_type: fragment_type.unbind(),
            integral: numbers.getattr("Integral")?.unbind(),
            real: numbers.getattr("Real")?.unbind(),
            for_core: for_core.unbind(),
            array: py.import("array")?.getattr("array")?.unbind(),
        })
    })
}

impl Context {
    /// The common case, read with no lookup, no new reference and no user code: an exact
    /// `ContextFragment` holding a non-empty exact `str`, an exact `int` in range, an exact
    /// `float` in `[0, 1]`, `True` or `False`, and `None` or a non-empty exact `str` for each
    /// of `group` and `variant_of`, pushed
    /// onto `columns`. Anything else, valid or not, is left for the general path: `Ok(false)`,
    /// with nothing pushed.
    #[inline]
    pub fn push_plain(
        &self,
        item: &Bound<'_, PyAny>,
        columns: &mut Columns,
    ) -> Result<bool, TooMany> {
        let Some([id, tokens, score, required, group, variant]) = self.raw_slots(item) else {
            return Ok(false);
        };
        // SAFETY: the slot values are borrowed from `item`, which holds them; they are used
        // only within this block, where no Python code runs (the conversions of an exact int
        // and float, and the hash and UTF-8 of an exact str, call none), so they stay alive.
        // What leaves the block is copied into `columns`, which holds no Python object.
        unsafe {
            if id.is_null()
                || tokens.is_null()
                || score.is_null()
                || ffi::PyUnicode_CheckExact(id) == 0
                || ffi::PyLong_CheckExact(tokens) == 0
                || ffi::PyFloat_CheckExact(score) == 0
            {
                return Ok(false);
            }
            let pinned = if required == ffi::Py_False() {
                false
            } else if required == ffi::Py_True() {
                true
            } else {
                return Ok(false);
            };
            let mut overflow = 0;
            let count = ffi::PyLong_AsLongLongAndOverflow(tokens, &mut overflow);
            let Ok(token_count) = check_token_count(count, overflow) else {
                return Ok(false);
            };
            let relevance = ffi::PyFloat_AsDouble(score);
            if !check_relevance(relevance) {
                return Ok(false);
            }
            let Some(bytes) = utf8_of_str(id) else {
                return Ok(false);
            };
            if bytes.is_empty() {
                return Ok(false);
            }
            // Most fragments name neither: that is told here, with no call.
            let none = ffi::Py_None();
            let group = if group == none {
                None
            } else {
                let Some(name) = plain_name(group) else {
                    return Ok(false);
                };
                Some(name)
            };
            let variant = if variant == none {
                None
            } else {
                let Some(name) = plain_name(variant) else {
                    return Ok(false);
                };
                Some(name)
            };
            // A str's hash is cached on the object and cannot fail.
            let hash = ffi::PyObject_Hash(id) as u64;
            columns.push(bytes, hash, token_count, relevance)?;
            if pinned || group.is_some() || variant.is_some() {
                columns.mark_last(pinned, group, variant);
            }
        }
        Ok(true)
    }

    /// The fields of an exact `ContextFragment` (see [`FIELD_NAMES`]), read straight from its
    /// slots (`None` where a slot is empty: the attribute was deleted); `None` for any other
    /// object, or when the slots could not be located.
    #[inline]
    pub fn slots<'py>(
        &self,
        item: &Bound<'py, PyAny>,
    ) -> Option<[Option<Bound<'py, PyAny>>; FIELDS]> {
        Some(self.raw_slots(item)?.map(|value| {
            // SAFETY: a slot value is a live object or NULL, read just now with no Python
            // code run since; the new reference is counted on its own.
            unsafe { Bound::from_borrowed_ptr_or_opt(item.py(), value) }
        }))
    }

    /// The slot values of an exact `ContextFragment` (NULL where an attribute was deleted),
    /// borrowed: they stay alive only until Python code runs. `None` for any other object, or
    /// when the slots could not be located.
    #[inline]
    fn raw_slots(&self, item: &Bound<'_, PyAny>) -> Option<[*mut ffi::PyObject; FIELDS]> {
        let offsets = self.slot_offsets?;
        if item.get_type_ptr() != self.fragment_type.as_ptr().cast() {
            return None;
        }
        // SAFETY: `item` is exactly `ContextFragment`, whose instances hold an object slot at
        // each offset, located by `locate_slots` on this very type.
        Some(offsets.map(|offset| unsafe { read_slot(item.as_ptr(), offset) }))
    }
}

/// A name read from a slot holding a non-empty exact `str`: its UTF-8 and hash; `None` for
/// anything else (left for the general path).
///
/// # Safety
/// `name` is NULL or a live object, and the GIL is held; the bytes borrowed from it are used
/// while it stays alive.
#[inline]
unsafe fn plain_name<'a>(name: *mut ffi::PyObject) -> Option<(&'a [u8], u64)> {
    // SAFETY: as the caller promises; an exact str's UTF-8 and hash call no Python code.
    unsafe {
        if name.is_null() || ffi::PyUnicode_CheckExact(name) == 0 {
            return None;
        }
        match utf8_of_str(name) {
            Some(bytes) if !bytes.is_empty() => Some((bytes, ffi::PyObject_Hash(name) as u64)),
            _ => None,
        }
    }
}

/// The object pointer stored `offset` bytes into `object`: a strong reference held by the
/// object, or NULL.
///
/// # Safety
/// `object` is alive and its type has an object-pointer slot at `offset`.
#[inline]
unsafe fn read_slot(object: *mut ffi::PyObject, offset: usize) -> *mut ffi::PyObject {
    // SAFETY: as the caller promises.
    unsafe {
        object
            .cast::<u8>()
            .add(offset)
            .cast::<*mut ffi::PyObject>()
            .read()
    }
}

/// Finds where a `ContextFragment` keeps the fields it reads by building one from sentinel
/// objects and looking for them within the instance, so that reading an exact
/// `ContextFragment` needs no attribute lookup. `None` (any surprise) means every fragment is
/// read with `getattr`, which gives the same values, more slowly.
fn locate_slots(
    py: Python<'_>,
    fragment_type: &Bound<'_, PyType>,
) -> PyResult<Option<[usize; FIELDS]>> {
    let object = py.import("builtins")?.getattr("object")?;
    // The constructor's positional order: fragment_id, token_count, relevance_score,
    // content, required, group, variant_of.
    let sentinels = (0..7)
        .map(|_| object.call0())
        .collect::<PyResult<Vec<_>>>()?;
    let probe = fragment_type.call1(PyTuple::new(py, &sentinels)?)?;
    let read = [
        &sentinels[0],
        &sentinels[1],
        &sentinels[2],
        &sentinels[4],
        &sentinels[5],
        &sentinels[6],
    ];
    for (name, sentinel) in FIELD_NAMES.iter().zip(read) {
        if !probe.getattr(*name)?.is(sentinel) {
            return Ok(None);
        }
    }
    let instance_size: usize = fragment_type.getattr("__basicsize__")?.extract()?;
    let word = size_of::<*mut ffi::PyObject>();
    let base = probe.as_ptr() as *const u8;
    let mut offsets = [0usize; FIELDS];
    for (offset, sentinel) in offsets.iter_mut().zip(read) {
        let found = (size_of::<ffi::PyObject>()..instance_size)
            .step_by(word)
            .filter(|start| start + word <= instance_size)
            // SAFETY: the probe is alive and `instance_size` bytes long, its type's basic size.
            .find(|&start| unsafe {
                (base.add(start) as *const *mut ffi::PyObject).read_unaligned() == sentinel.as_ptr()
            });
        match found {
            Some(start) => *offset = start,
            None => return Ok(None),
        }
    }
    Ok(Some(offsets))
}
