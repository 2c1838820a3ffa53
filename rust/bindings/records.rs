//! `Compressor.compress_records`: the command line's input bytes in, the kept records' bytes
//! out, with no Python object per record. Problems become `RecordsError`s carrying their data;
//! `skeleton_compressor._records.errors` words them.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use pyo3::exceptions::{PyMemoryError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use super::context::context;
use super::results::{decision_columns, int_of, Rooms};
use super::signals;
use super::text::id_from_bytes;
use crate::core::records::read::{fragment_ids, record_keys, record_names};
use crate::core::{
    compress_record_file as compress_record_file_in_core, compress_records as compress_in_core,
    kept_len, kept_spans, read_whole_file, write_kept, Encoding, FileCompression, Form, Got,
    Problem, ReadError, RecordError, RecordsCompression, RecordsRefusal, Request, Span,
    StreamTuning,
};

fn form_name(form: Form) -> &'static str {
    match form {
        Form::Array => "array",
        Form::Lines => "lines",
        Form::Wrapped => "wrapped",
    }
}

/// Returns a `CompressedRecords`: the kept records, original_tokens, compressed_tokens, the
/// records read and kept, the form, and decisions, `None` unless `explain`, else the ids and
/// the four decision columns.
pub fn compress_records<'py>(
    py: Python<'py>,
    request: Request<'_>,
    data: &Bound<'py, PyBytes>,
    skeleton_budget: &Bound<'py, PyAny>,
    encoding: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let counting = counting_with(encoding)?;
    let input = data.as_bytes();
    let outcome = py.detach(|| compress_in_core(input, counting, request));
    let done = outcome.map_err(|refusal| refused(py, refusal, input))?;
    let selection = &done.compression.selections[0];
    let kept = KeptRecords {
        input: Input::Python(data.clone().unbind()),
        spans: kept_spans(input, &done.starts, &selection.kept),
    };
    let decisions = if request.explain {
        let text =
            std::str::from_utf8(input).map_err(|error| PyValueError::new_err(error.to_string()))?;
        let ids = fragment_ids(text, &done.starts)
            .iter()
            .map(|id| id_from_bytes(py, id))
            .collect::<PyResult<Vec<_>>>()?;
        let columns = decision_columns(
            py,
            &done.compression,
            Rooms::of(request.budgets[0], skeleton_budget),
        )?;
        Some((PyList::new(py, ids)?, columns))
    } else {
        None
    };
    result(py, &done, kept, decisions)
}

/// The `CompressedRecords` both methods return.
fn result<'py>(
    py: Python<'py>,
    done: &RecordsCompression,
    kept: KeptRecords,
    decisions: Option<(Bound<'py, PyList>, Bound<'py, PyTuple>)>,
) -> PyResult<Bound<'py, PyAny>> {
    let selection = &done.compression.selections[0];
    let fields = (
        kept,
        int_of(py, done.compression.original_tokens)?,
        int_of(py, selection.compressed_tokens)?,
        done.starts.len(),
        selection.kept.len(),
        form_name(done.form),
        decisions,
        int_of(py, selection.value_kept)?,
        int_of(py, selection.value_bound)?,
        done.compression.relevance_kept[0],
        selection.exact,
    );
    let named = context(py)?
        .for_core
        .bind(py)
        .getattr("CompressedRecords")?;
    named.call1(fields)
}

/// Where kept records' bytes are: in the input, or read back from a file.
enum Input {
    Python(Py<PyBytes>),
    Owned(Vec<u8>),
}

/// The kept records of an input, to be written as a JSON array of their bytes.
#[pyclass(frozen, module = "skeleton_compressor._core")]
pub struct KeptRecords {
    input: Input,
    spans: Vec<Span>,
}

/// Bytes handed to `write` at a time: the output never costs much more memory than this.
const WRITE_CHUNK: usize = 1 << 20;

#[pymethods]
impl KeptRecords {
    /// The array's length in bytes.
    fn __len__(&self) -> usize {
        kept_len(&self.spans)
    }

    /// Writes the array to `out` (anything with a `write(bytes)`), about a megabyte at a time.
    fn write_to(&self, py: Python<'_>, out: &Bound<'_, PyAny>) -> PyResult<()> {
        let input = match &self.input {
            Input::Python(bytes) => bytes.bind(py).as_bytes(),
            Input::Owned(bytes) => bytes,
        };
        let mut writer = PythonWriter { out, error: None };
        let written = {
            let mut buffered = BufWriter::with_capacity(WRITE_CHUNK, &mut writer);
            write_kept(input, &self.spans, &mut buffered).and_then(|()| buffered.flush())
        };
        match (written, writer.error) {
            (_, Some(error)) => Err(error),
            (Err(error), None) => Err(error.into()),
            (Ok(()), None) => Ok(()),
        }
    }
}

/// Python's `out.write`, as Rust writes; the first error it raises is kept to raise again.
struct PythonWriter<'a, 'py> {
    out: &'a Bound<'py, PyAny>,
    error: Option<PyErr>,
}

impl Write for PythonWriter<'_, '_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let chunk = PyBytes::new(self.out.py(), bytes);
        match self.out.call_method1("write", (chunk,)) {
            // A raw stream may take part of it, and says how much; a buffered one takes all.
            Ok(written) => Ok(written.extract::<usize>().unwrap_or(bytes.len())),
            Err(error) => {
                self.error = Some(error);
                Err(std::io::Error::other("write failed"))
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// `compress_records` on the file at `path`, opened once and read from that handle only: a
/// regular file of the common kind (JSON Lines or an array, every record good) a chunk at a
/// time, any other input whole. Returns the `CompressedRecords`, or, for input with a
/// problem, its bytes, for `compress_records` to word with the text at hand.
pub fn compress_record_file<'py>(
    py: Python<'py>,
    request: Request<'_>,
    path: PathBuf,
    encoding: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let counting = counting_with(encoding)?;
    let tuning = StreamTuning::default();
    let outcome = py.detach(|| {
        let mut file = File::open(&path)?;
        if file.metadata()?.is_file() {
            compress_record_file_in_core(&mut file, counting, request, &tuning)
        } else {
            // A pipe or a device gives its bytes once.
            read_whole_file(&mut file, request, &tuning)
        }
    });
    let outcome = outcome.map_err(|error| os_error(py, error, &path))?;
    // A refusal naming records (a duplicate, a broken variant rule) comes as `Whole` bytes.
    match outcome.map_err(|refusal| refused(py, refusal, &[]))? {
        FileCompression::Compressed {
            records,
            kept: (bytes, spans),
        } => {
            let kept = KeptRecords {
                input: Input::Owned(bytes),
                spans,
            };
            result(py, &records, kept, None)
        }
        FileCompression::Whole(bytes) => compress_whole(py, request, bytes, counting),
    }
}

/// A file's bytes, read whole, compressed as `compress_records` compresses them; for input
/// with a problem, the bytes themselves.
fn compress_whole<'py>(
    py: Python<'py>,
    request: Request<'_>,
    bytes: Vec<u8>,
    counting: Option<Encoding>,
) -> PyResult<Bound<'py, PyAny>> {
    match py.detach(|| compress_in_core(&bytes, counting, request)) {
        Ok(done) => {
            let spans = kept_spans(&bytes, &done.starts, &done.compression.selections[0].kept);
            let kept = KeptRecords {
                input: Input::Owned(bytes),
                spans,
            };
            result(py, &done, kept, None)
        }
        // Its wording needs the text: lines, and malformed JSON as Python's reader says it.
        Err(
            RecordsRefusal::Read(_)
            | RecordsRefusal::Duplicate { .. }
            | RecordsRefusal::VariantRule { .. },
        ) => {
            let copy = PyBytes::new_with(py, bytes.len(), |buffer| {
                buffer.copy_from_slice(&bytes);
                Ok(())
            })?;
            Ok(copy.into_any())
        }
        Err(refusal) => Err(refused(py, refusal, &bytes)),
    }
}

/// An I/O error as Python's `open` raises it: the `OSError` subclass its errno picks, with
/// the C library's words for it (`os.strerror`), which PyO3's conversion does not keep.
fn os_error(py: Python<'_>, error: io::Error, path: &Path) -> PyErr {
    let Some(errno) = error.raw_os_error() else {
        return error.into();
    };
    let made = py
        .import("os")
        .and_then(|os| os.getattr("strerror")?.call1((errno,)))
        .and_then(|strerror| {
            py.get_type::<PyOSError>()
                .call1((errno, strerror, path.as_os_str()))
        });
    match made {
        Ok(raised) => PyErr::from_value(raised),
        Err(failed) => failed,
    }
}

fn counting_with(encoding: Option<&str>) -> PyResult<Option<Encoding>> {
    encoding
        .map(|name| {
            Encoding::from_name(name)
                .ok_or_else(|| PyValueError::new_err(format!("unknown encoding {name:?}")))
        })
        .transpose()
}

/// The refusal of the records read from `input` as the Python exception that carries it.
fn refused(py: Python<'_>, refusal: RecordsRefusal, input: &[u8]) -> PyErr {
    records_error(py, refusal, input).unwrap_or_else(|error| error)
}

fn records_error(py: Python<'_>, refusal: RecordsRefusal, input: &[u8]) -> PyResult<PyErr> {
    let fields = PyDict::new(py);
    let kind = match refusal {
        RecordsRefusal::BudgetExceeded(exceeded) => {
            let made = context(py)?.for_core.bind(py).call_method1(
                "budget_exceeded_error",
                (exceeded.budget, exceeded.needed, exceeded.required),
            )?;
            return Ok(PyErr::from_value(made));
        }
        RecordsRefusal::Interrupted | RecordsRefusal::Read(ReadError::Interrupted) => {
            return Ok(signals::raised(py))
        }
        RecordsRefusal::OutOfMemory => return Ok(PyMemoryError::new_err(())),
        RecordsRefusal::Changed => "changed",
        RecordsRefusal::Duplicate {
            form,
            duplicate,
            starts,
        } => {
            fields.set_item("form", form_name(form))?;
            fields.set_item("fragment_id", id_from_bytes(py, &duplicate.id)?)?;
            fields.set_item("first_index", duplicate.first)?;
            fields.set_item("first_start", starts[0])?;
            fields.set_item("index", duplicate.second)?;
            fields.set_item("start", starts[1])?;
            "duplicate"
        }
        RecordsRefusal::VariantRule {
            form,
            kind,
            index,
            first_index,
            starts,
        } => {
            // The records were read from `input`, so it is UTF-8 (a byte order mark included).
            let text = std::str::from_utf8(input).unwrap_or_default();
            let name =
                |bytes: Option<&[u8]>| bytes.map(|bytes| id_from_bytes(py, bytes)).transpose();
            let record = record_names(text, starts[0]);
            let first = record_names(text, starts[1]);
            fields.set_item("form", form_name(form))?;
            fields.set_item("index", index)?;
            fields.set_item("start", starts[0])?;
            fields.set_item("first_index", first_index)?;
            fields.set_item("first_start", starts[1])?;
            fields.set_item("fragment_id", id_from_bytes(py, &record.fragment_id)?)?;
            fields.set_item("group", name(record.group.as_deref())?)?;
            fields.set_item("variant_of", name(record.variant_of.as_deref())?)?;
            fields.set_item("first_variant_of", name(first.variant_of.as_deref())?)?;
            kind.name()
        }
        RecordsRefusal::Read(ReadError::NotUtf8 { offset }) => {
            fields.set_item("start", offset)?;
            "not_utf8"
        }
        RecordsRefusal::Read(ReadError::NoRecords) => "no_records",
        RecordsRefusal::Read(ReadError::TooMany) => "too_many",
        RecordsRefusal::Read(ReadError::Malformed { form, resume, line }) => {
            fields.set_item("form", form_name(form))?;
            fields.set_item("start", resume)?;
            fields.set_item("line", line)?;
            "malformed"
        }
        RecordsRefusal::Read(ReadError::FragmentsNotArray(json_type)) => {
            fields.set_item("json_type", json_type.name())?;
            "fragments_not_array"
        }
        RecordsRefusal::Read(ReadError::Record { form, error }) => {
            let RecordError {
                index,
                start,
                fragment_id,
                problem,
                got,
            } = error;
            fields.set_item("form", form_name(form))?;
            fields.set_item("index", index)?;
            fields.set_item("start", start)?;
            if let Some(id) = fragment_id {
                fields.set_item("fragment_id", id_from_bytes(py, &id)?)?;
            }
            if let Problem::Missing(field) = problem {
                fields.set_item("field", field.name())?;
                // The keys the record has, for the hint that names one it may mean.
                let text = std::str::from_utf8(input).unwrap_or_default();
                let keys = record_keys(text, start)
                    .iter()
                    .map(|key| id_from_bytes(py, key))
                    .collect::<PyResult<Vec<_>>>()?;
                fields.set_item("keys", PyTuple::new(py, keys)?)?;
            }
            if let Some(Got { json_type, number }) = got {
                fields.set_item("json_type", json_type.name())?;
                fields.set_item("number", number)?;
            }
            problem.name()
        }
    };
    let class = context(py)?.for_core.bind(py).getattr("RecordsError")?;
    Ok(PyErr::from_value(class.call((kind,), Some(&fields))?))
}
