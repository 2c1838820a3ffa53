//! The command line's whole job on an input's bytes: read and check its records, compress
//! them, and write the kept ones back exactly as they came in.

use std::io::{self, Read, Seek, SeekFrom, Write};

use crate::core::detach::InPlace;
use crate::core::errors::{BudgetExceeded, Duplicate, ErrorKind, Refusal};
use crate::core::interrupt::{Checkpoint, Interrupted};
use crate::core::records::read::{read_records, record_span, room_for, Form, ReadError, Span};
use crate::core::records::stream::{
    read_kept, read_whole, stream_records, ReadBack, StreamTuning, Streamed, Whole,
};
use crate::core::select::columns::Columns;
use crate::core::select::compress::{compress, Compression};
use crate::core::select::request::Request;
use crate::core::tokens::encoding::Encoding;

#[derive(Debug, Clone, PartialEq)]
pub struct RecordsCompression {
    pub form: Form,
    /// Where each record starts in the input, in input order.
    pub starts: Vec<usize>,
    pub compression: Compression,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordsRefusal {
    Read(ReadError),
    /// Two records share a `fragment_id`; `starts` are where they start in the input.
    Duplicate {
        form: Form,
        duplicate: Duplicate,
        starts: [usize; 2],
    },
    /// A variant rule broken (kind [`ErrorKind::VariantGroupMismatch`] or
    /// [`ErrorKind::VariantRequiredTwice`]) by the record at `index`, against the one at
    /// `first_index`; `starts` are where the two start in the input.
    VariantRule {
        form: Form,
        kind: ErrorKind,
        index: u32,
        first_index: u32,
        starts: [usize; 2],
    },
    BudgetExceeded(BudgetExceeded),
    Interrupted,
    /// The kept records read back from a file are not those ranked: it changed while it was
    /// read.
    Changed,
    /// The whole input did not fit in memory.
    OutOfMemory,
}

/// Reads the records of `input` (see [`read_records`]) and compresses them as `request` asks.
pub fn compress_records(
    input: &[u8],
    counting: Option<Encoding>,
    request: Request<'_>,
) -> Result<RecordsCompression, RecordsRefusal> {
    let mut columns = Columns::new(room_for(input.len()), request.tuning)
        .map_err(|_| RecordsRefusal::Read(ReadError::TooMany))?;
    let records = read_records(input, counting, &mut columns, &mut checkpoint(request))
        .map_err(read_refused)?;
    let starts = records.starts;
    let compression = compress(columns, request, &InPlace)
        .map_err(|refusal| refused(records.form, &starts, refusal))?;
    Ok(RecordsCompression {
        form: records.form,
        starts,
        compression,
    })
}

fn checkpoint<'a>(request: Request<'a>) -> Checkpoint<'a> {
    Checkpoint::new(request.interrupt, request.tuning.interrupt_every)
}

fn read_refused(error: ReadError) -> RecordsRefusal {
    match error {
        ReadError::Interrupted => RecordsRefusal::Interrupted,
        error => RecordsRefusal::Read(error),
    }
}

fn refused(form: Form, starts: &[usize], refusal: Refusal) -> RecordsRefusal {
    match refusal {
        Refusal::Duplicate(duplicate) => RecordsRefusal::Duplicate {
            form,
            starts: [
                starts[duplicate.first as usize],
                starts[duplicate.second as usize],
            ],
            duplicate,
        },
        Refusal::BudgetExceeded(exceeded) => RecordsRefusal::BudgetExceeded(exceeded),
        Refusal::Interrupted => RecordsRefusal::Interrupted,
        Refusal::VariantRule(rule) => {
            variant_rule_refused(form, starts, rule.kind, rule.index, rule.first_index)
        }
    }
}

/// The refusal for a variant rule (`kind`) broken by the record at `index` against the one
/// at `first_index` (indices into `starts`), as the core reports it.
pub fn variant_rule_refused(
    form: Form,
    starts: &[usize],
    kind: ErrorKind,
    index: u32,
    first_index: u32,
) -> RecordsRefusal {
    RecordsRefusal::VariantRule {
        form,
        kind,
        index,
        first_index,
        starts: [starts[index as usize], starts[first_index as usize]],
    }
}

const SEPARATOR: &[u8] = b", ";

/// Where the records at `kept` (indices into `starts`) are in `input`, in that order.
pub fn kept_spans(input: &[u8], starts: &[usize], kept: &[u32]) -> Vec<Span> {
    // The records were read from it, so `input` is UTF-8 (a byte order mark included).
    let text = std::str::from_utf8(input).unwrap_or_default();
    kept.iter()
        .map(|&index| record_span(text, starts[index as usize]))
        .collect()
}

/// The length of [`write_kept`]'s array.
pub fn kept_len(spans: &[Span]) -> usize {
    let records: usize = spans.iter().map(|span| span.end - span.start).sum();
    2 + records + SEPARATOR.len() * spans.len().saturating_sub(1)
}

/// Writes the records at `spans` of `input`, in that order, as a JSON array, to `out`.
pub fn write_kept(input: &[u8], spans: &[Span], out: &mut impl Write) -> io::Result<()> {
    out.write_all(b"[")?;
    for (position, span) in spans.iter().enumerate() {
        if position > 0 {
            out.write_all(SEPARATOR)?;
        }
        out.write_all(&input[span.start..span.end])?;
    }
    out.write_all(b"]")
}

/// What [`compress_record_file`] made of a file.
#[derive(Debug)]
pub enum FileCompression {
    Compressed {
        records: RecordsCompression,
        /// The kept records' bytes one after another, and where each is in them.
        kept: (Vec<u8>, Vec<Span>),
    },
    /// Not the common case: the file's bytes, read whole from the same handle, for
    /// [`compress_records`].
    Whole(Vec<u8>),
}

/// [`compress_records`] on a file, read a chunk at a time (see [`stream_records`]): the whole
/// file is never in memory, and the kept records are read back from it afterwards and
/// checked against what was ranked. A file of any other kind, or with a duplicate or a broken
/// variant rule (whose lines are found in its text), is read whole from the same handle
/// instead: a file is opened once.
pub fn compress_record_file(
    file: &mut (impl Read + Seek),
    counting: Option<Encoding>,
    request: Request<'_>,
    tuning: &StreamTuning,
) -> io::Result<Result<FileCompression, RecordsRefusal>> {
    let len = usize::try_from(file.seek(SeekFrom::End(0))?).unwrap_or(usize::MAX);
    file.seek(SeekFrom::Start(0))?;
    let mut checkpoint = checkpoint(request);
    match streamed(file, len, counting, request, tuning, &mut checkpoint)? {
        // A refusal naming records is worded with their lines, found in the whole text.
        None | Some(Err(RecordsRefusal::Duplicate { .. } | RecordsRefusal::VariantRule { .. })) => {
        }
        Some(done) => return Ok(done),
    }
    file.seek(SeekFrom::Start(0))?;
    let whole = read_whole(file, len, tuning.chunk_bytes, &mut checkpoint)?;
    Ok(whole_input(whole))
}

/// What [`compress_record_file`] makes of an input that cannot be read twice (a pipe, a
/// device): its bytes, read whole.
pub fn read_whole_file(
    source: &mut impl Read,
    request: Request<'_>,
    tuning: &StreamTuning,
) -> io::Result<Result<FileCompression, RecordsRefusal>> {
    let whole = read_whole(source, 0, tuning.chunk_bytes, &mut checkpoint(request))?;
    Ok(whole_input(whole))
}

fn whole_input(whole: Whole) -> Result<FileCompression, RecordsRefusal> {
    match whole {
        Whole::Read(bytes) => Ok(FileCompression::Whole(bytes)),
        Whole::OutOfMemory => Err(RecordsRefusal::OutOfMemory),
        Whole::Interrupted => Err(RecordsRefusal::Interrupted),
    }
}

/// The file of `len` bytes compressed as it streams; `None` when it is not of the common kind
/// (or changed so that a kept record is no longer where it was, or a chunk could not be
/// had), to be read whole instead.
fn streamed(
    file: &mut (impl Read + Seek),
    len: usize,
    counting: Option<Encoding>,
    request: Request<'_>,
    tuning: &StreamTuning,
    checkpoint: &mut Checkpoint<'_>,
) -> io::Result<Option<Result<FileCompression, RecordsRefusal>>> {
    // Room reserved up front, never touched unless filled (but for the bitmap that sifts the
    // ids, two bytes a record); past it the columns grow as needed, so that no length (a huge
    // file, or what a device reports) asks for too much.
    let room = room_for(len).min(tuning.reserve_records);
    let Ok(mut columns) = Columns::new(room, request.tuning) else {
        return Ok(None);
    };
    let records = match stream_records(file, counting, &mut columns, tuning, checkpoint)? {
        Streamed::Read(records) => records,
        Streamed::Unsure => return Ok(None),
        Streamed::Interrupted => return Ok(Some(Err(RecordsRefusal::Interrupted))),
    };
    // Taken before `compress` consumes the columns, to check what is read back.
    let fingerprints = columns.fingerprints();
    let starts = records.starts;
    let compression = match compress(columns, request, &InPlace) {
        Ok(compression) => compression,
        Err(refusal) => return Ok(Some(Err(refused(records.form, &starts, refusal)))),
    };
    let kept = compression
        .selections
        .first()
        .map_or(&[][..], |selection| &selection.kept);
    let (bytes, spans) = match read_kept(file, &starts, kept, tuning, checkpoint)? {
        ReadBack::Read(bytes, spans) => (bytes, spans),
        ReadBack::Gone => return Ok(None),
        ReadBack::Interrupted => return Ok(Some(Err(RecordsRefusal::Interrupted))),
    };
    match read_back_as_ranked(
        &bytes,
        &spans,
        kept,
        &fingerprints,
        counting,
        request,
        checkpoint,
    ) {
        Ok(true) => {}
        Ok(false) => return Ok(Some(Err(RecordsRefusal::Changed))),
        Err(Interrupted) => return Ok(Some(Err(RecordsRefusal::Interrupted))),
    }
    Ok(Some(Ok(FileCompression::Compressed {
        records: RecordsCompression {
            form: records.form,
            starts,
            compression,
        },
        kept: (bytes, spans),
    })))
}

/// Whether `bytes` at `spans` (a record for each of `kept`, in its order) are the records
/// ranked: read again as they were read, each has the fingerprint (see
/// [`Columns::fingerprints`]) its record had.
fn read_back_as_ranked(
    bytes: &[u8],
    spans: &[Span],
    kept: &[u32],
    fingerprints: &[u64],
    counting: Option<Encoding>,
    request: Request<'_>,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<bool, Interrupted> {
    let mut array = Vec::with_capacity(kept_len(spans));
    let Ok(mut columns) = Columns::new(kept.len(), request.tuning) else {
        return Ok(false);
    };
    if write_kept(bytes, spans, &mut array).is_err() {
        return Ok(false);
    }
    match read_records(&array, counting, &mut columns, checkpoint) {
        Ok(records) if records.starts.len() == kept.len() => {}
        Err(ReadError::Interrupted) => return Err(Interrupted),
        _ => return Ok(false),
    }
    let again = columns.fingerprints();
    Ok(kept
        .iter()
        .zip(again)
        .all(|(&index, print)| fingerprints[index as usize] == print))
}
