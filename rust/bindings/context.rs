//! Python objects the bindings need on every call, looked up once per interpreter.

use std::mem::size_of;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyModule, PyType};

pub struct Context {
    pub fragment_type: Py<PyType>,
    /// Byte offsets of the `fragment_id`, `token_count` and `relevance_score` slots inside a
    /// `ContextFragment`, when they could be located.
    pub slot_offsets: Option<[usize; 3]>,
    pub integral: Py<PyAny>,
    pub real: Py<PyAny>,
    pub messages: Py<PyModule>,
    pub array: Py<PyAny>,
}

static CONTEXT: PyOnceLock<Context> = PyOnceLock::new();

pub fn context(py: Python<'_>) -> PyResult<&'static Context> {
    CONTEXT.get_or_try_init(py, || {
        let fragment_type = py
            .import("skeleton_compressor.types")?
            .getattr("ContextFragment")?
            .cast_into::<PyType>()?;
        let numbers = py.import("numbers")?;
        Ok(Context {
            slot_offsets: locate_slots(py, &fragment_type)?,
            fragment_type: fragment_type.unbind(),
            integral: numbers.getattr("Integral")?.unbind(),
            real: numbers.getattr("Real")?.unbind(),
            messages: py.import("skeleton_compressor._messages")?.unbind(),
            array: py.import("array")?.getattr("array")?.unbind(),
        })
    })
}

/// Finds where a `ContextFragment` keeps its three fields by building one from sentinel
/// objects and looking for them within the instance, so that reading an exact
/// `ContextFragment` needs no attribute lookup. `None` (any surprise) means every fragment is
/// read with `getattr`, which gives the same values, more slowly.
fn locate_slots(py: Python<'_>, fragment_type: &Bound<'_, PyType>) -> PyResult<Option<[usize; 3]>> {
    let object = py.import("builtins")?.getattr("object")?;
    let sentinels = [object.call0()?, object.call0()?, object.call0()?];
    let probe = fragment_type.call1((&sentinels[0], &sentinels[1], &sentinels[2]))?;
    let names = ["fragment_id", "token_count", "relevance_score"];
    for (name, sentinel) in names.iter().zip(&sentinels) {
        if !probe.getattr(*name)?.is(sentinel) {
            return Ok(None);
        }
    }
    let instance_size: usize = fragment_type.getattr("__basicsize__")?.extract()?;
    let word = size_of::<*mut ffi::PyObject>();
    let base = probe.as_ptr() as *const u8;
    let mut offsets = [0usize; 3];
    for (offset, sentinel) in offsets.iter_mut().zip(&sentinels) {
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
