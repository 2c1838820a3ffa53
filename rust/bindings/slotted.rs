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
    make: Py<PyAny>,
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
        let make = object.getattr("__new__")?;
        let probe = make.call1((class,))?;
        if !probe.get_type().is(class) {
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
            make: make.unbind(),
            offsets,
        }))
    }

    /// A new instance of the class with `values` as its fields, in the order of the names.
    pub fn build<'py>(
        &self,
        py: Python<'py>,
        values: [Bound<'py, PyAny>; N],
    ) -> PyResult<Bound<'py, PyAny>> {
        let instance = self.make.bind(py).call1((self.class.bind(py),))?;
        if !instance.get_type().is(self.class.bind(py)) {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "object.__new__ made another class",
            ));
        }
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
