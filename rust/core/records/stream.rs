//! Records read from a file a piece at a time, so that a million of them never cost the
//! whole file in memory: the common case (JSON Lines or an array, every record good) read
//! here, and the kept records read back from the file afterwards. Anything else (an object
//! with `fragments`, a problem anywhere, a record larger than the tuning allows, a chunk the
//! memory limit refuses) is left to [`crate::core::records::read::read_records`] on the
//! whole input, which says exactly what is wrong.

use std::io::{self, Read, Seek, SeekFrom};

use crate::core::interrupt::Checkpoint;
use crate::core::records::fields::{flat_record, skip_space, value_at};
use crate::core::records::read::{fragments_first, read_record, Form, Records, Sink, Span};
use crate::core::select::columns::Columns;
use crate::core::tokens::encoding::Encoding;

const BOM: &[u8] = b"\xef\xbb\xbf";

/// How much of the file is held at a time.
#[derive(Debug, Clone, Copy)]
pub struct StreamTuning {
    /// Bytes read at a time.
    pub chunk_bytes: usize,
    /// A record (or line) longer than this is left to the whole-input reader.
    pub largest_record: usize,
    /// Records room is reserved for before reading, at most.
    pub reserve_records: usize,
}

impl Default for StreamTuning {
    fn default() -> Self {
        StreamTuning {
            chunk_bytes: 8 << 20,
            largest_record: 64 << 20,
            reserve_records: 1 << 22,
        }
    }
}

/// What streaming made of a file.
#[derive(Debug, PartialEq, Eq)]
pub enum Streamed {
    Read(Records),
    /// Not the common case, or no memory for a chunk: read the whole input instead (into
    /// fresh columns).
    Unsure,
    /// The checkpoint said to stop.
    Interrupted,
}

/// Where the array reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Open,
    First,
    Record,
    AfterRecord,
    Closed,
}

/// Reads the records of `source` into `columns`, a chunk at a time, asking `checkpoint`
/// whether to stop before each chunk and as its records are read.
pub fn stream_records(
    source: &mut impl Read,
    counting: Option<Encoding>,
    columns: &mut Columns,
    tuning: &StreamTuning,
    checkpoint: &mut Checkpoint<'_>,
) -> io::Result<Streamed> {
    let mut buffer: Vec<u8> = Vec::new();
    let mut base = 0; // where `buffer` starts in the file
    let mut starts = Vec::new();
    let mut form = None;
    let mut at_array = At::Open;
    let mut bom_checked = false;
    loop {
        if checkpoint.check().is_err() {
            return Ok(Streamed::Interrupted);
        }
        let end_of_file = match read_more(source, &mut buffer, tuning.chunk_bytes) {
            Ok(ended) => ended,
            Err(error) if is_out_of_memory(&error) => return Ok(Streamed::Unsure),
            Err(error) => return Err(error),
        };
        if !bom_checked {
            if buffer.len() < BOM.len() && !end_of_file {
                continue;
            }
            if buffer.starts_with(BOM) {
                buffer.drain(..BOM.len());
                base = BOM.len();
            }
            bom_checked = true;
        }
        let text = match std::str::from_utf8(&buffer) {
            Ok(text) => text,
            Err(error) if error.error_len().is_none() && !end_of_file => {
                std::str::from_utf8(&buffer[..error.valid_up_to()]).unwrap_or_default()
            }
            Err(_) => return Ok(Streamed::Unsure),
        };
        let form = match form {
            Some(form) => form,
            None => match form_of_start(text, end_of_file) {
                Some(Form::Wrapped) => return Ok(Streamed::Unsure),
                Some(found) => *form.insert(found),
                None if end_of_file => return Ok(Streamed::Unsure),
                None => continue,
            },
        };
        let mut sink = Sink::new(
            text.as_bytes(),
            counting,
            columns,
            std::mem::take(&mut starts),
            checkpoint,
        );
        let consumed = match form {
            Form::Lines => take_lines(text, base, end_of_file, &mut sink),
            _ => take_array(text, base, end_of_file, &mut at_array, &mut sink),
        };
        if sink.interrupted() {
            return Ok(Streamed::Interrupted);
        }
        starts = match sink.into_starts() {
            Ok(starts) => starts,
            Err(_) => return Ok(Streamed::Unsure),
        };
        let Some(consumed) = consumed else {
            return Ok(Streamed::Unsure);
        };
        if end_of_file {
            let done = form == Form::Lines || at_array == At::Closed;
            return Ok(
                if done && consumed == text.len() && text.len() == buffer.len() {
                    Streamed::Read(Records { form, starts })
                } else {
                    Streamed::Unsure
                },
            );
        }
        if buffer.len() - consumed > tuning.largest_record {
            return Ok(Streamed::Unsure);
        }
        buffer.drain(..consumed);
        base += consumed;
    }
}

fn read_fully(source: &mut impl Read, mut out: &mut [u8]) -> io::Result<usize> {
    let mut total = 0;
    while !out.is_empty() {
        match source.read(out) {
            Ok(0) => break,
            Ok(got) => {
                total += got;
                out = &mut out[got..];
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(total)
}

/// The form, once the text shows it.
fn form_of_start(text: &str, end_of_file: bool) -> Option<Form> {
    let bytes = text.as_bytes();
    let start = skip_space(bytes, 0);
    match bytes.get(start)? {
        b'[' => Some(Form::Array),
        b'{' => match fragments_first(&bytes[start + 1..]) {
            Some(true) => Some(Form::Wrapped),
            Some(false) => Some(Form::Lines),
            // Too little read to say whether the first key is `fragments`.
            None if !end_of_file => None,
            None => Some(Form::Lines),
        },
        _ => Some(Form::Lines),
    }
}

/// Takes every whole line of `text` (all of it at the end of the file); how much of it that
/// was, or `None` when a line is not one good record.
fn take_lines<'a>(
    text: &'a str,
    base: usize,
    end_of_file: bool,
    sink: &mut Sink<'a, '_, '_>,
) -> Option<usize> {
    let whole = if end_of_file {
        text.len()
    } else {
        text.rfind('\n').map_or(0, |newline| newline + 1)
    };
    let mut start = 0;
    for line in text[..whole].split_inclusive('\n') {
        let line_start = start;
        start += line.len();
        let bytes = line.as_bytes();
        let lead = skip_space(bytes, 0);
        if lead == bytes.len() {
            continue;
        }
        let end = read_record(line, lead, base + line_start, sink)?;
        if skip_space(bytes, end) != bytes.len() {
            return None;
        }
    }
    Some(whole)
}

/// Takes the array's records found whole in `text`; how much of it that was, or `None` when
/// something is not as a good array of records has it.
fn take_array<'a>(
    text: &'a str,
    base: usize,
    end_of_file: bool,
    at_array: &mut At,
    sink: &mut Sink<'a, '_, '_>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        at = skip_space(bytes, at);
        let Some(&next) = bytes.get(at) else {
            return Some(at);
        };
        match (*at_array, next) {
            (At::Open, b'[') => (at, *at_array) = (at + 1, At::First),
            (At::First, b']') | (At::AfterRecord, b']') => (at, *at_array) = (at + 1, At::Closed),
            (At::First | At::Record, b'{') => {
                let Some(end) = read_record(text, at, base, sink) else {
                    // Cut off by the chunk's end, or not JSON: more text tells which.
                    return (!end_of_file).then_some(at);
                };
                (at, *at_array) = (end, At::AfterRecord);
            }
            (At::AfterRecord, b',') => (at, *at_array) = (at + 1, At::Record),
            _ => return None,
        }
    }
}

/// What reading the kept records back made of a file.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadBack {
    /// Their bytes one after another, and where each is in them, in `kept`'s order.
    Read(Vec<u8>, Vec<Span>),
    /// The file no longer holds records where they were (or memory to read them could not
    /// be had).
    Gone,
    /// The checkpoint said to stop.
    Interrupted,
}

/// The records at `kept` (indices into `starts`), read back from `file` in one pass, asking
/// `checkpoint` whether to stop before each chunk.
pub fn read_kept(
    file: &mut (impl Read + Seek),
    starts: &[usize],
    kept: &[u32],
    tuning: &StreamTuning,
    checkpoint: &mut Checkpoint<'_>,
) -> io::Result<ReadBack> {
    let mut by_start: Vec<(usize, usize)> = kept
        .iter()
        .enumerate()
        .map(|(position, &index)| (starts[index as usize], position))
        .collect();
    by_start.sort_unstable();
    let mut bytes = Vec::new();
    let mut spans = vec![Span { start: 0, end: 0 }; kept.len()];
    let mut buffer: Vec<u8> = Vec::new();
    let mut base = 0; // where `buffer` starts in the file
    let mut end_of_file = false;
    file.seek(SeekFrom::Start(0))?;
    for (start, position) in by_start {
        while base + buffer.len() <= start && !end_of_file {
            base += buffer.len();
            buffer.clear();
            end_of_file = match read_on(file, &mut buffer, tuning, checkpoint)? {
                Ok(ended) => ended,
                Err(stopped) => return Ok(stopped),
            };
        }
        if start < base || start > base + buffer.len() {
            return Ok(ReadBack::Gone);
        }
        loop {
            let from = start - base;
            if let Some(len) = record_len(&buffer[from..]) {
                spans[position] = Span {
                    start: bytes.len(),
                    end: bytes.len() + len,
                };
                bytes.extend_from_slice(&buffer[from..from + len]);
                break;
            }
            if end_of_file || buffer.len() - from > tuning.largest_record {
                return Ok(ReadBack::Gone);
            }
            // Keep the record's beginning, and read on.
            buffer.drain(..from);
            base = start;
            end_of_file = match read_on(file, &mut buffer, tuning, checkpoint)? {
                Ok(ended) => ended,
                Err(stopped) => return Ok(stopped),
            };
        }
    }
    Ok(ReadBack::Read(bytes, spans))
}

fn is_out_of_memory(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::OutOfMemory
}

/// [`read_more`]: whether the file has ended; or why reading back stops here, the
/// checkpoint having said to stop, or no memory for the chunk (the input is then read whole).
fn read_on(
    file: &mut impl Read,
    buffer: &mut Vec<u8>,
    tuning: &StreamTuning,
    checkpoint: &mut Checkpoint<'_>,
) -> io::Result<Result<bool, ReadBack>> {
    if checkpoint.check().is_err() {
        return Ok(Err(ReadBack::Interrupted));
    }
    match read_more(file, buffer, tuning.chunk_bytes) {
        Ok(ended) => Ok(Ok(ended)),
        Err(error) if is_out_of_memory(&error) => Ok(Err(ReadBack::Gone)),
        Err(error) => Err(error),
    }
}

/// What reading a whole input made of it.
#[derive(Debug, PartialEq, Eq)]
pub enum Whole {
    Read(Vec<u8>),
    /// Memory for it could not be had.
    OutOfMemory,
    /// The checkpoint said to stop.
    Interrupted,
}

/// All that is left of `source`, read `chunk` bytes at a time with room for `expected` bytes
/// (a file's length; a chunk for 0) reserved first, asking `checkpoint` whether to stop
/// before each read, a read that a signal cut short included. Memory that cannot be had (a
/// device that never ends, a memory limit) is an answer, not an abort.
pub fn read_whole(
    source: &mut impl Read,
    expected: usize,
    chunk: usize,
    checkpoint: &mut Checkpoint<'_>,
) -> io::Result<Whole> {
    let mut bytes: Vec<u8> = Vec::new();
    // One byte past what is expected, to see the end without growing.
    let room = match expected {
        0 => chunk,
        expected => expected.saturating_add(1),
    };
    if bytes.try_reserve_exact(room).is_err() {
        return Ok(Whole::OutOfMemory);
    }
    loop {
        if checkpoint.check().is_err() {
            return Ok(Whole::Interrupted);
        }
        if bytes.len() == bytes.capacity() && bytes.try_reserve(chunk.max(bytes.len())).is_err() {
            return Ok(Whole::OutOfMemory);
        }
        let filled = bytes.len();
        // Only what one read may fill is zeroed, not all the room reserved.
        bytes.resize(bytes.capacity().min(filled + chunk), 0);
        let read = source.read(&mut bytes[filled..]);
        bytes.truncate(filled + read.as_ref().map_or(0, |&got| got));
        match read {
            Ok(0) => return Ok(Whole::Read(bytes)),
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
}

/// Appends up to `chunk` bytes of `file` to `buffer`; whether the file has ended. Memory that
/// cannot be had is an error of kind `OutOfMemory`, not an abort: the input is then read
/// whole, which says so if it cannot be had either.
fn read_more(file: &mut impl Read, buffer: &mut Vec<u8>, chunk: usize) -> io::Result<bool> {
    let filled = buffer.len();
    if buffer.try_reserve(chunk).is_err() {
        return Err(io::ErrorKind::OutOfMemory.into());
    }
    buffer.resize(filled + chunk, 0);
    let got = read_fully(file, &mut buffer[filled..])?;
    buffer.truncate(filled + got);
    Ok(got == 0)
}

/// The length of the object record `bytes` starts with, when they hold all of it. Looks at
/// a window that doubles until the record fits, not at everything after the record.
fn record_len(bytes: &[u8]) -> Option<usize> {
    let mut window = 4096;
    loop {
        let part = &bytes[..window.min(bytes.len())];
        let text = match std::str::from_utf8(part) {
            Ok(text) => text,
            Err(error) => std::str::from_utf8(&part[..error.valid_up_to()]).ok()?,
        };
        // Whatever parses is whole: an object's text is cut short of its closing brace.
        let found = match flat_record(text, 0) {
            Some((_, end)) => Some(end),
            None => value_at(text, 0).map(str::len),
        };
        if found.is_some() || part.len() == bytes.len() {
            return found;
        }
        window *= 2;
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
