//! `Slotted`: a class whose fields are `__slots__`, instances of which the bindings make and
//! fill as its member descriptors would, with no Python code run: every `compress` returns a
//! `SkeletonResult` and a `SkeletonMetadata`, and setting their thirteen fields through the
//! descriptors cost more than the compression of a small input.

use std::mem::size_of;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// Where the instances of one exact class keep the fields named when it was located.
pub struct Slotted<const N: usize> {
    class: Py<PyType>,
    /// The class's `tp_alloc`: what `object.__new__` calls to make an instance, every slot
    /// empty.
    alloc: ffi::allocfunc,
    offsets: [usize; N],
    /// Whether the class's instances carry the cycle collector's header.
    collected: bool,
}

impl<const N: usize> Slotted<N> {
    /// Finds where an instance of `class` keeps each of `names`, by setting a sentinel
    /// through each name's member descriptor on an instance made empty by `object.__new__`
    /// and looking for it within the instance. `None` on any surprise (a field that is not
    /// a slot of the class's own, as on Pythons whose dataclasses have no slots): instances
    /// are then made by Python.
    pub fn locate(class: &Bound<'_, PyType>, names: [&str; N]) -> PyResult<Option<Self>> {
        let py = class.py();
        let object = py.import("builtins")?.getattr("object")?;
        // SAFETY: `class` is a live type and the GIL is held.
        let flags = unsafe { ffi::PyType_GetFlags(class.as_type_ptr()) };
        if flags & ffi::Py_TPFLAGS_HEAPTYPE == 0 {
            return Ok(None);
        }
        // SAFETY: as above; `PyType_GetSlot` reads any slot of a heap type (a class made in
        // Python), null for none.
        let alloc = unsafe { ffi::PyType_GetSlot(class.as_type_ptr(), ffi::Py_tp_alloc) };
        if alloc.is_null() {
            return Ok(None);
        }
        // SAFETY: the `Py_tp_alloc` slot holds an `allocfunc`.
        let alloc: ffi::allocfunc = unsafe { std::mem::transmute(alloc) };
        let probe = allocated(py, alloc, class)?;
        // The instance `object.__new__` makes comes from the same function.
        let made = object.getattr("__new__")?.call1((class,))?;
        if !probe.get_type().is(class) || !made.get_type().is(class) {
            return Ok(None);
        }
        let member = py
            .import("types")?
            .getattr("MemberDescriptorType")?
            .cast_into::<PyType>()?;
        let size: usize = class.getattr("__basicsize__")?.extract()?;
        let word = size_of::<*mut ffi::PyObject>();
        let base = probe.as_ptr() as *const u8;
        // SAFETY: the probe is alive and `size` bytes long, its type's basic size.
        let word_at = |start: usize| unsafe {
            (base.add(start) as *const *mut ffi::PyObject).read_unaligned()
        };
        let words = || {
            (size_of::<ffi::PyObject>()..size)
                .step_by(word)
                .filter(move |start| start + word <= size)
        };
        // Made empty: `build` relies on every slot starting empty.
        if words().any(|start| !word_at(start).is_null()) {
            return Ok(None);
        }
        let mut offsets = [0usize; N];
        for (offset, name) in offsets.iter_mut().zip(names) {
            let descriptor = match class.getattr(name) {
                Ok(descriptor) if descriptor.get_type().is(&member) => descriptor,
                _ => return Ok(None),
            };
            let sentinel = object.call0()?;
            descriptor.call_method1("__set__", (&probe, &sentinel))?;
            match words().find(|&start| word_at(start) == sentinel.as_ptr()) {
                Some(start) => *offset = start,
                None => return Ok(None),
            }
        }
        Ok(Some(Slotted {
            class: class.clone().unbind(),
            alloc,
            offsets,
            collected: flags & ffi::Py_TPFLAGS_HAVE_GC != 0,
        }))
    }

    /// Whether `instance` is an instance of exactly the class.
    pub fn is_exactly(&self, instance: &Bound<'_, PyAny>) -> bool {
        instance.get_type().is(self.class.bind(instance.py()))
    }

    /// The fields of `instance` named `at`, when it is an instance of exactly the class and
    /// they are set; `None` otherwise.
    pub fn some_fields<'py, const K: usize>(
        &self,
        instance: &Bound<'py, PyAny>,
        at: [usize; K],
    ) -> Option<[Bound<'py, PyAny>; K]> {
        if !instance.get_type().is(self.class.bind(instance.py())) {
            return None;
        }
        // SAFETY: `instance` is of exactly the class located, with the GIL held.
        let fields =
            at.map(|at| unsafe { slot(instance.as_ptr(), self.offsets[at]).read_unaligned() });
        if fields.iter().any(|field| field.is_null()) {
            return None;
        }
        // SAFETY: each is a live object the instance holds; a new reference is taken before
        // any Python code can run.
        Some(fields.map(|field| unsafe { Bound::from_borrowed_ptr(instance.py(), field) }))
    }

    /// A new instance of the class with `values` as its fields, in the order of the names.
    pub fn build<'py>(
        &self,
        py: Python<'py>,
        values: [Bound<'py, PyAny>; N],
    ) -> PyResult<Bound<'py, PyAny>> {
        let instance = allocated(py, self.alloc, self.class.bind(py))?;
        // SAFETY: each value is alive and the GIL is held.
        let atomic = values
            .iter()
            .all(|value| unsafe { holds_nothing(value.as_ptr()) });
        for (offset, value) in self.offsets.into_iter().zip(values) {
            // SAFETY: `instance` is a new instance of exactly the class `locate` probed, made
            // as the probe was (every slot empty, as `locate` checked), so it holds an
            // object-pointer slot at `offset`, empty: it takes the new reference as the
            // member descriptor's setter would, and nothing held before is lost.
            unsafe { slot(instance.as_ptr(), offset).write_unaligned(value.into_ptr()) };
        }
        if atomic {
            self.leave_to_refcounts(&instance);
        }
        Ok(instance)
    }

    /// A new instance of the class with the fields of `instance`, but `value` as the field
    /// named `at`; `None` when `instance` is not of exactly the class or a field is unset.
    pub fn copy_with<'py>(
        &self,
        instance: &Bound<'py, PyAny>,
        at: usize,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = instance.py();
        if !instance.get_type().is(self.class.bind(py)) {
            return Ok(None);
        }
        let copy = allocated(py, self.alloc, self.class.bind(py))?;
        let mut atomic = true;
        for (index, &offset) in self.offsets.iter().enumerate() {
            let field = if index == at {
                value.as_ptr()
            } else {
                // SAFETY: `instance` is of exactly the class located, with the GIL held.
                unsafe { slot(instance.as_ptr(), offset).read_unaligned() }
            };
            if field.is_null() {
                // `copy` is dropped with the fields set so far, as an instance of the class
                // with some slots empty is.
                return Ok(None);
            }
            // SAFETY: `field` is a live object (`value`, or one `instance` holds), the GIL is
            // held; `copy` is new, of the class, made with every slot empty: the slot at
            // `offset` takes the new reference.
            unsafe {
                atomic &= holds_nothing(field);
                ffi::Py_IncRef(field);
                slot(copy.as_ptr(), offset).write_unaligned(field);
            }
        }
        if atomic {
            self.leave_to_refcounts(&copy);
        }
        Ok(Some(copy))
    }

    /// Leaves `instance` out of the cycle collector's visits: an instance that holds only
    /// objects that hold nothing cannot be part of a cycle (a frozen class's fields are not
    /// set again), as CPython leaves out tuples of such objects. Thousands of rescored
    /// fragments otherwise make the collector run several times a call.
    fn leave_to_refcounts(&self, instance: &Bound<'_, PyAny>) {
        if self.collected {
            // SAFETY: the instance's type has the collector's header, and the GIL is held.
            unsafe { ffi::PyObject_GC_UnTrack(instance.as_ptr().cast()) };
        }
    }
}

/// Where the object-pointer slot at `offset` of `instance` lies.
///
/// # Safety
/// `instance` is a live instance of a class located by `Slotted::locate`, and `offset` one
/// of the offsets found.
unsafe fn slot(instance: *mut ffi::PyObject, offset: usize) -> *mut *mut ffi::PyObject {
    // SAFETY: as the caller promises, the slot lies within the instance.
    unsafe {
        instance
            .cast::<u8>()
            .add(offset)
            .cast::<*mut ffi::PyObject>()
    }
}

/// Whether `object` is `None`, a `bool`, or an exact `str`, `int` or `float`: objects that
/// refer to no other.
///
/// # Safety
/// `object` is alive and the GIL is held.
unsafe fn holds_nothing(object: *mut ffi::PyObject) -> bool {
    // SAFETY: as the caller promises.
    unsafe {
        object == ffi::Py_None()
            || ffi::PyUnicode_CheckExact(object) != 0
            || ffi::PyLong_CheckExact(object) != 0
            || ffi::PyFloat_CheckExact(object) != 0
            || ffi::PyBool_Check(object) != 0
    }
}

/// A new instance of `class` made by its `alloc`, every slot empty.
fn allocated<'py>(
    py: Python<'py>,
    alloc: ffi::allocfunc,
    class: &Bound<'py, PyType>,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `alloc` is `class`'s own `tp_alloc`, called as `object.__new__` calls it, with
    // the GIL held; it returns a new reference, or null with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, alloc(class.as_type_ptr(), 0)) }
}
