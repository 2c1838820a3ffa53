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
        }))
    }

    /// The fields of `instance` in the order of the names, when it is an instance of exactly
    /// the class and every one is set; `None` otherwise.
    pub fn fields<'py>(&self, instance: &Bound<'py, PyAny>) -> Option<[Bound<'py, PyAny>; N]> {
        self.some_fields(instance, std::array::from_fn(|at| at))
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
        let mut fields = Vec::with_capacity(K);
        for at in at {
            // SAFETY: `instance` is of exactly the class located, with the GIL held.
            fields.push(unsafe { read_slot(instance, self.offsets[at]) }?);
        }
        fields.try_into().ok()
    }

    /// A new instance of the class with `values` as its fields, in the order of the names.
    pub fn build<'py>(
        &self,
        py: Python<'py>,
        values: [Bound<'py, PyAny>; N],
    ) -> PyResult<Bound<'py, PyAny>> {
        let instance = allocated(py, self.alloc, self.class.bind(py))?;
        for (offset, value) in self.offsets.into_iter().zip(values) {
            // SAFETY: `instance` is a new instance of exactly the class `locate` probed, made
            // as the probe was (every slot empty, as `locate` checked), so it holds an
            // object-pointer slot at `offset`, empty: it takes the new reference as the
            // member descriptor's setter would, and nothing held before is lost.
            unsafe {
                instance
                    .as_ptr()
                    .cast::<u8>()
                    .add(offset)
                    .cast::<*mut ffi::PyObject>()
                    .write_unaligned(value.into_ptr());
            }
        }
        Ok(instance)
    }
}

/// The object in the slot at `offset` of `instance`, or `None` where it is empty.
///
/// # Safety
/// `instance` is a live instance of a class located by `Slotted::locate`, `offset` one of
/// the offsets found, and the GIL is held.
unsafe fn read_slot<'py>(instance: &Bound<'py, PyAny>, offset: usize) -> Option<Bound<'py, PyAny>> {
    // SAFETY: as the caller promises, an object-pointer slot lies at `offset`.
    let field = unsafe {
        instance
            .as_ptr()
            .cast::<u8>()
            .add(offset)
            .cast::<*mut ffi::PyObject>()
            .read_unaligned()
    };
    // SAFETY: a set slot holds a live object the instance keeps; a new reference is taken
    // before any Python code can run.
    (!field.is_null()).then(|| unsafe { Bound::from_borrowed_ptr(instance.py(), field) })
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
