//! Fragment ids kept for the few comparisons the ranking needs after reading.
//!
//! An id read straight from a `ContextFragment` slot is not referenced again: the fragment,
//! held by the caller's tuple, keeps it alive. Before such an id is used, the slot is read
//! again, because user code (another thread while the GIL is released, or a later fragment's
//! `__float__`) may have replaced it; a replaced id is reported instead of being read after
//! it was freed. Ids that came any other way are owned here.

use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use super::scratch;

/// A checked id as the reader hands it over.
pub enum IdRef<'py> {
    /// The exact `str` stored in slot `offset` of the exact `ContextFragment` being read.
    InSlot(*mut ffi::PyObject),
    Owned(Bound<'py, PyString>),
}

pub struct Ids<'py> {
    /// Raw pointers; bit 0 set marks one owned by `owned` rather than borrowed from a slot.
    pointers: Vec<u64>,
    owned: Vec<Bound<'py, PyString>>,
    slot: Option<(Bound<'py, PyTuple>, usize)>,
}

const OWNED: u64 = 1;

impl<'py> Ids<'py> {
    /// `slot` is the input tuple and the id slot's offset, for ids borrowed from slots.
    pub fn with_capacity(len: usize, slot: Option<(Bound<'py, PyTuple>, usize)>) -> Self {
        Ids {
            pointers: scratch::words(len),
            owned: Vec::new(),
            slot,
        }
    }

    pub fn push(&mut self, id: IdRef<'py>) {
        match id {
            IdRef::InSlot(pointer) => self.pointers.push(pointer as u64),
            IdRef::Owned(id) => {
                self.pointers.push(id.as_ptr() as u64 | OWNED);
                self.owned.push(id);
            }
        }
    }

    /// Confirms that each of `indices` still holds the id that was read, so that
    /// [`Ids::get`] may be used on them until user code runs again.
    pub fn confirm(&self, indices: impl IntoIterator<Item = u32>) -> PyResult<()> {
        for index in indices {
            let tagged = self.pointers[index as usize];
            if tagged & OWNED != 0 {
                continue;
            }
            let still_there = self
                .slot
                .as_ref()
                .is_some_and(|(fragments, offset)| unsafe {
                    let item = ffi::PyTuple_GetItem(fragments.as_ptr(), index as ffi::Py_ssize_t);
                    // SAFETY: only exact `ContextFragment`s lend their slot, and a tuple's items
                    // cannot change; the slot holds a live object or NULL.
                    let current = item
                        .cast::<u8>()
                        .add(*offset)
                        .cast::<*mut ffi::PyObject>()
                        .read();
                    current as u64 == tagged && ffi::PyUnicode_CheckExact(current) != 0
                });
            if !still_there {
                return Err(PyRuntimeError::new_err(format!(
                    "fragments[{index}] had its fragment_id replaced while it was being compressed"
                )));
            }
        }
        Ok(())
    }

    /// The id at `index`, which [`Ids::confirm`] has confirmed.
    pub fn get(&self, index: u32) -> *mut ffi::PyObject {
        (self.pointers[index as usize] & !OWNED) as *mut ffi::PyObject
    }

    pub fn bound(&self, py: Python<'py>, index: u32) -> Bound<'py, PyString> {
        // SAFETY: a confirmed id is a live exact str.
        unsafe { Bound::from_borrowed_ptr(py, self.get(index)).cast_into_unchecked() }
    }
}

impl Drop for Ids<'_> {
    fn drop(&mut self) {
        scratch::give_words(std::mem::take(&mut self.pointers));
    }
}
