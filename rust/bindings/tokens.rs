//! `TokenCounter`: the core's token counts for Python strings. Each `str` is read where it
//! lies (CPython's own UTF-8 of it, no copy), and long work runs with the GIL released.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple, PyType};

use super::compress::ReleaseGil;
use super::errors::{text_type_error, texts_type_error, unknown_encoding_error};
use super::signals::{self, PythonSignals};
use super::text::IdText;
use crate::core::{self, CountTuning, Encoding, Interrupted};

fn encoding_named(py: Python<'_>, name: &str) -> PyResult<Encoding> {
    Encoding::from_name(name).ok_or_else(|| unknown_encoding_error(py, name))
}

/// The text of a `str` (a subclass is read as the `str` it holds), or the TypeError naming
/// the value's place.
fn text_of<'py>(
    value: &Bound<'py, PyAny>,
    place: impl FnOnce() -> String,
) -> PyResult<IdText<'py>> {
    match value.cast::<PyString>() {
        Ok(string) => IdText::new(string.clone()),
        Err(_) => Err(text_type_error(value.py(), &place(), value)),
    }
}

/// `TokenCounter`'s argument as given: a value that is not a `str` is this library's
/// TypeError, worded as the stand-in words it, not PyO3's.
enum EncodingArgument<'py> {
    Name(String),
    /// A str with no UTF-8 form (a lone surrogate): it names no encoding.
    Unreadable(Bound<'py, PyAny>),
    Other(Bound<'py, PyAny>),
}

impl<'a, 'py> FromPyObject<'a, 'py> for EncodingArgument<'py> {
    type Error = PyErr;

    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        match value.cast::<PyString>() {
            Ok(name) => Ok(match name.to_cow() {
                Ok(text) => EncodingArgument::Name(text.into_owned()),
                Err(_) => EncodingArgument::Unreadable(value.to_owned()),
            }),
            Err(_) => Ok(EncodingArgument::Other(value.to_owned())),
        }
    }
}

/// Counts tokens exactly as tiktoken's `encode_ordinary` does, offline: `encoding` is
/// "o200k_base" (the default) or "cl100k_base". Raises ValueError for an unknown encoding
/// (naming the known ones) and TypeError for one that is not a str. A counter pickles.
#[pyclass(frozen, module = "skeleton_compressor._core")]
pub struct TokenCounter {
    encoding: Encoding,
}

#[pymethods]
impl TokenCounter {
    #[new]
    #[pyo3(
        signature = (encoding = EncodingArgument::Name(Encoding::ALL[0].name().into())),
        text_signature = "(encoding='o200k_base')"
    )]
    fn new(py: Python<'_>, encoding: EncodingArgument<'_>) -> PyResult<Self> {
        let encoding = match encoding {
            EncodingArgument::Name(name) => encoding_named(py, &name)?,
            EncodingArgument::Unreadable(name) => return Err(unknown_encoding_error(py, name)),
            EncodingArgument::Other(value) => return Err(text_type_error(py, "encoding", &value)),
        };
        Ok(TokenCounter { encoding })
    }

    /// The encoding's name.
    #[getter]
    fn encoding(&self) -> &'static str {
        self.encoding.name()
    }

    /// The number of tokens in `text`. Raises TypeError if `text` is not a str.
    fn count(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<usize> {
        let text = text_of(text, || "text".to_owned())?;
        let tuning = CountTuning::default();
        let counted = core::count_one_until(
            self.encoding,
            text.as_bytes(),
            &tuning,
            &ReleaseGil(py),
            &PythonSignals,
        );
        counted.map_err(|Interrupted| signals::raised(py))
    }

    /// The number of tokens in each text of `texts` (any iterable of str, not a str itself),
    /// as a list in the same order. Raises TypeError naming `texts[i]` for one that is not a
    /// str.
    fn count_many<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        // A str is an iterable of str, but counting its characters one by one is a mistake.
        if texts.is_instance_of::<PyString>() {
            return Err(texts_type_error(py, texts));
        }
        // Not an iterable is this library's TypeError; what `__iter__` itself raises (a
        // Ctrl-C, a MemoryError) is passed on, as on the Python backend.
        let items = match texts.try_iter() {
            Ok(items) => items,
            Err(error) if error.is_instance_of::<PyTypeError>(py) => {
                return Err(texts_type_error(py, texts))
            }
            Err(error) => return Err(error),
        };
        // The strings are held (and so their UTF-8 kept alive) while the GIL is released.
        let texts = items
            .enumerate()
            .map(|(index, item)| text_of(&item?, || format!("texts[{index}]")))
            .collect::<PyResult<Vec<_>>>()?;
        let bytes: Vec<&[u8]> = texts.iter().map(IdText::as_bytes).collect();
        let tuning = CountTuning::default();
        let counted = core::count_many(
            self.encoding,
            &bytes,
            &tuning,
            &ReleaseGil(py),
            &PythonSignals,
        );
        PyList::new(py, counted.map_err(|Interrupted| signals::raised(py))?)
    }

    fn __repr__(&self) -> String {
        format!("TokenCounter('{}')", self.encoding.name())
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        Ok((
            slf.get_type(),
            PyTuple::new(py, [slf.get().encoding.name()])?,
        ))
    }
}

/// The bytes of every token of an encoding, by rank: the table the extension was built with.
#[pyfunction]
fn _encoding_tokens<'py>(py: Python<'py>, encoding: &str) -> PyResult<Bound<'py, PyList>> {
    let encoding = encoding_named(py, encoding)?;
    let tokens = py.detach(|| encoding.tokens());
    PyList::new(py, tokens.into_iter().map(|token| PyBytes::new(py, token)))
}

/// The encodings whose tables have been loaded in this process, in `ENCODINGS` order.
#[pyfunction]
fn _loaded_encodings() -> Vec<&'static str> {
    Encoding::ALL
        .into_iter()
        .filter(|encoding| encoding.is_loaded())
        .map(Encoding::name)
        .collect()
}

pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add_class::<TokenCounter>()?;
    module.add_function(wrap_pyfunction!(_encoding_tokens, module)?)?;
    module.add_function(wrap_pyfunction!(_loaded_encodings, module)?)?;
    module.add(
        "ENCODINGS",
        PyTuple::new(py, Encoding::ALL.map(Encoding::name))?,
    )?;
    let tuning = CountTuning::default();
    module.add(
        "COUNT_THRESHOLDS",
        (tuning.detach_from_bytes, tuning.parallel_from_bytes),
    )?;
    Ok(())
}
