//! Fragment records read from JSON text straight into [`Columns`], checked as the command
//! line's contract says, with each record's place in the text kept so that the kept ones can
//! be written back byte for byte.
//!
//! The text is a JSON array of records, JSON Lines (one record per line), or an object whose
//! first key is `fragments` (the command's own output). Only the problems that need no JSON
//! parser's wording are data here; for malformed JSON the reader says where to look.

use std::borrow::Cow;
use std::hash::Hasher;

use fnv::FnvHasher;
use serde::de::{self, Deserializer as _, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::core::checks::{check_relevance, MAX_TOKEN_COUNT};
use crate::core::detach::InPlace;
use crate::core::errors::ErrorKind;
use crate::core::interrupt::Checkpoint;
use crate::core::records::fields::{
    fields_of, flat_record, keys_of, skip_space, value_at, Fields, Key,
};
use crate::core::records::json_values::{
    depth, float, integer, is_integer, string_bytes, Integer, JsonType,
};
use crate::core::select::columns::Columns;
use crate::core::tokens::count_many::{count_one, CountTuning};
use crate::core::tokens::encoding::Encoding;

/// Values nested deeper than this are refused: Python's JSON reader recurses once per level
/// and stops far beyond it, so both readers agree on every input.
pub const MAX_DEPTH: usize = 256;

const BOM: &[u8] = b"\xef\xbb\xbf";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Array,
    Lines,
    Wrapped,
}

/// A record's bytes in the input: `input[start..end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// A field every record needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    FragmentId,
    TokenCount,
    RelevanceScore,
}

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Field::FragmentId => "fragment_id",
            Field::TokenCount => "token_count",
            Field::RelevanceScore => "relevance_score",
        }
    }
}

/// What is wrong with one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    NotObject,
    Missing(Field),
    /// A field's value, as the library words it for a fragment's attribute.
    Value(ErrorKind),
    /// No `token_count` to read, and no `content` to count.
    NoContent,
    /// No `token_count` to read, and a `content` that is not a string.
    ContentType,
}

impl Problem {
    /// One of each kind (a missing field stands for all three).
    pub const ALL: [Problem; 16] = [
        Problem::NotObject,
        Problem::Missing(Field::FragmentId),
        Problem::Value(ErrorKind::IdType),
        Problem::Value(ErrorKind::IdEmpty),
        Problem::Value(ErrorKind::TokenType),
        Problem::Value(ErrorKind::TokenNegative),
        Problem::Value(ErrorKind::TokenTooLarge),
        Problem::Value(ErrorKind::RelevanceType),
        Problem::Value(ErrorKind::RelevanceRange),
        Problem::Value(ErrorKind::RequiredType),
        Problem::Value(ErrorKind::GroupType),
        Problem::Value(ErrorKind::GroupEmpty),
        Problem::Value(ErrorKind::VariantType),
        Problem::Value(ErrorKind::VariantEmpty),
        Problem::NoContent,
        Problem::ContentType,
    ];

    /// The name `skeleton_compressor._records.errors` words the problem under.
    pub fn name(self) -> &'static str {
        match self {
            Problem::NotObject => "not_object",
            Problem::Missing(_) => "missing_field",
            Problem::Value(kind) => kind.name(),
            Problem::NoContent => "no_content",
            Problem::ContentType => "content_type",
        }
    }
}

/// The value a problem is about: its type, and a number's text as it is in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Got {
    pub json_type: JsonType,
    pub number: Option<String>,
}

impl Got {
    fn of(raw: &str) -> Got {
        let json_type = JsonType::of(raw);
        let number = (json_type == JsonType::Number).then(|| raw.to_owned());
        Got { json_type, number }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    pub index: usize,
    /// Where the record starts in the input.
    pub start: usize,
    /// The record's `fragment_id`, when it is a string.
    pub fragment_id: Option<Vec<u8>>,
    pub problem: Problem,
    pub got: Option<Got>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The input is not UTF-8 from byte `offset` on.
    NotUtf8 {
        offset: usize,
    },
    /// Nothing but white space (an empty set is written `[]`).
    NoRecords,
    /// Not JSON as the form needs it: malformed, nested deeper than [`MAX_DEPTH`], or a
    /// second `fragments`. The first problem is at or after `resume`, where a record (or
    /// line, or the input) starts; `line` is where this reader stopped.
    Malformed {
        form: Form,
        resume: usize,
        line: usize,
    },
    /// The `fragments` of an object is not an array.
    FragmentsNotArray(JsonType),
    Record {
        form: Form,
        error: RecordError,
    },
    /// More records than the ranking can index.
    TooMany,
    /// The caller asked to stop (see [`Checkpoint`]).
    Interrupted,
}

/// The records read: their form, and where each one starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Records {
    pub form: Form,
    pub starts: Vec<usize>,
}

/// A record's problem, and the value it is about.
type Wrong = (Problem, Option<Got>);

/// How a record was read, when it was read whole.
struct Checked<'a> {
    fragment_id: Cow<'a, [u8]>,
    token_count: u64,
    relevance: f64,
    required: bool,
    group: Option<Cow<'a, [u8]>>,
    variant_of: Option<Cow<'a, [u8]>>,
}

/// The form of a text: by its first character, and for `{`, by whether its first key is
/// `fragments`.
pub fn form_of(text: &[u8]) -> Option<Form> {
    let start = skip_space(text, 0);
    Some(match *text.get(start)? {
        b'[' => Form::Array,
        b'{' if first_key_is_fragments(&text[start + 1..]) => Form::Wrapped,
        _ => Form::Lines,
    })
}

fn first_key_is_fragments(rest: &[u8]) -> bool {
    fragments_first(rest) == Some(true)
}

/// Whether the object whose text follows its `{` in `rest` has `fragments` as its first key;
/// `None` when `rest` ends too soon to tell.
pub(super) fn fragments_first(rest: &[u8]) -> Option<bool> {
    const KEY: &[u8] = b"\"fragments\"";
    let rest = trim_start(rest);
    if rest.len() < KEY.len() {
        return if KEY.starts_with(rest) {
            None
        } else {
            Some(false)
        };
    }
    let Some(rest) = rest.strip_prefix(KEY) else {
        return Some(false);
    };
    trim_start(rest).first().map(|&byte| byte == b':')
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    &bytes[skip_space(bytes, 0)..]
}

/// Reads every record of `input` into `columns` (counting the `content` of records without a
/// `token_count` when `counting` names an encoding), asking `checkpoint` now and then whether
/// to stop. Malformed JSON anywhere is reported before any record's problem, and a record's
/// problem before any later record's.
pub fn read_records(
    input: &[u8],
    counting: Option<Encoding>,
    columns: &mut Columns,
    checkpoint: &mut Checkpoint<'_>,
) -> Result<Records, ReadError> {
    let skip = if input.starts_with(BOM) { BOM.len() } else { 0 };
    let text = std::str::from_utf8(&input[skip..]).map_err(|error| ReadError::NotUtf8 {
        offset: skip + error.valid_up_to(),
    })?;
    let form = form_of(text.as_bytes()).ok_or(ReadError::NoRecords)?;
    let mut sink = Sink::new(
        input,
        counting,
        columns,
        Vec::with_capacity(room_for(input.len())),
        checkpoint,
    );
    sink.resume = skip;
    let parsed = match form {
        Form::Array => read_array(text, skip, &mut sink),
        Form::Wrapped => read_document(text, |reader| reader.deserialize_map(Wrapper(&mut sink))),
        Form::Lines => read_lines(text, skip, &mut sink),
    };
    let line_of = |offset: usize| line_at(input, offset);
    match (sink.stop, parsed) {
        (Some(Stop::Interrupted), _) => Err(ReadError::Interrupted),
        (Some(Stop::TooMany), _) => Err(ReadError::TooMany),
        (Some(Stop::FragmentsNotArray(got)), _) => Err(ReadError::FragmentsNotArray(got)),
        (Some(Stop::Malformed { at }), _) => Err(ReadError::Malformed {
            form,
            resume: sink.resume,
            line: line_of(at),
        }),
        (None, Err(line)) => Err(ReadError::Malformed {
            form,
            resume: sink.resume,
            line,
        }),
        (None, Ok(())) => match sink.problem {
            Some(error) => Err(ReadError::Record { form, error }),
            None => Ok(Records {
                form,
                starts: sink.starts,
            }),
        },
    }
}

/// The `fragment_id` of each record that [`read_records`] read from `input`.
pub fn fragment_ids<'a>(text: &'a str, starts: &[usize]) -> Vec<Cow<'a, [u8]>> {
    starts
        .iter()
        .map(|&start| {
            let span = record_span(text, start);
            fields_of(&text[span.start..span.end])
                .fragment_id
                .map(string_bytes)
                .unwrap_or_default()
        })
        .collect()
}

/// The names a record carries: its id, group and `variant_of`, as their code points' bytes
/// (a name absent or `null` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordNames<'a> {
    pub fragment_id: Cow<'a, [u8]>,
    pub group: Option<Cow<'a, [u8]>>,
    pub variant_of: Option<Cow<'a, [u8]>>,
}

/// The names of the record that [`read_records`] read at `start` of its input (as `text`).
pub fn record_names(text: &str, start: usize) -> RecordNames<'_> {
    let span = record_span(text, start);
    let fields = fields_of(&text[span.start..span.end]);
    fn named(raw: Option<&str>) -> Option<Cow<'_, [u8]>> {
        raw.filter(|raw| JsonType::of(raw) == JsonType::String)
            .map(string_bytes)
    }
    RecordNames {
        fragment_id: named(fields.fragment_id).unwrap_or_default(),
        group: named(fields.group),
        variant_of: named(fields.variant_of),
    }
}

/// The keys of the record that [`read_records`] read at `start` of its input (as `text`), in
/// the order they first come, each once; none when `start` is not in `text`.
pub fn record_keys(text: &str, start: usize) -> Vec<Cow<'_, [u8]>> {
    if start >= text.len() {
        return Vec::new();
    }
    let span = record_span(text, start);
    keys_of(&text[span.start..span.end])
}

/// Where the record that [`read_records`] read at `start` of its input (as `text`) ends:
/// found again rather than kept, so that a million records cost a million numbers fewer, and
/// only the kept ones are looked at again.
pub fn record_span(text: &str, start: usize) -> Span {
    let len = match flat_record(text, start) {
        Some((_, end)) => end - start,
        None => value_at(text, start).map_or(text.len() - start, str::len),
    };
    Span {
        start,
        end: start + len,
    }
}

/// Room for as many records as an input of `len` bytes can hold: a record needs at least
/// this many bytes (`{"fragment_id":"x","relevance_score":0,...}`). Reserved, not touched.
pub fn room_for(len: usize) -> usize {
    const SMALLEST_RECORD: usize = 40;
    (len / SMALLEST_RECORD + 1).min(crate::core::select::columns::MAX_FRAGMENTS)
}

/// The line (from 1) that byte `offset` of `input` is on.
pub fn line_at(input: &[u8], offset: usize) -> usize {
    1 + input[..offset.min(input.len())]
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count()
}

/// Parses `text` as one document with `parse`; a syntax error is the line it is on.
fn read_document<'a>(
    text: &'a str,
    parse: impl FnOnce(
        &mut serde_json::Deserializer<serde_json::de::StrRead<'a>>,
    ) -> Result<(), serde_json::Error>,
) -> Result<(), usize> {
    let mut reader = serde_json::Deserializer::from_str(text);
    parse(&mut reader)
        .and_then(|()| reader.end())
        .map_err(|error| error.line())
}

/// The array of records opening at `text[0]` (after white space), read a record at a time.
fn read_array<'a>(text: &'a str, skip: usize, sink: &mut Sink<'a, '_, '_>) -> Result<(), usize> {
    let bytes = text.as_bytes();
    let line = |at: usize| line_at(bytes, at);
    let mut at = skip_space(bytes, skip_space(bytes, 0) + 1);
    if bytes.get(at) == Some(&b']') {
        return finish(bytes, at + 1);
    }
    loop {
        let end = read_record(text, at, skip, sink).ok_or_else(|| line(at))?;
        at = skip_space(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = skip_space(bytes, at + 1),
            Some(b']') => return finish(bytes, at + 1),
            _ => return Err(line(at)),
        }
    }
}

/// Nothing but white space from `at` on, or the line where something is.
fn finish(bytes: &[u8], at: usize) -> Result<(), usize> {
    let end = skip_space(bytes, at);
    if end == bytes.len() {
        Ok(())
    } else {
        Err(line_at(bytes, end))
    }
}

/// Reads the record at `text[at]` into the sink; where it ends, or `None` when it is not
/// JSON or the sink stopped.
pub(super) fn read_record<'a>(
    text: &'a str,
    at: usize,
    skip: usize,
    sink: &mut Sink<'a, '_, '_>,
) -> Option<usize> {
    let (raw, fields) = match flat_record(text, at) {
        Some((fields, end)) => (&text[at..end], Some(fields)),
        None => (value_at(text, at)?, None),
    };
    sink.record::<serde_json::Error>(raw, fields, skip + at)
        .ok()?;
    Some(at + raw.len())
}

fn read_lines<'a>(text: &'a str, skip: usize, sink: &mut Sink<'a, '_, '_>) -> Result<(), usize> {
    let mut start = 0;
    for (number, line) in text.split('\n').enumerate() {
        let line_start = start;
        start += line.len() + 1;
        let bytes = line.as_bytes();
        let lead = skip_space(bytes, 0);
        if lead == bytes.len() {
            continue;
        }
        sink.resume = skip + line_start;
        let end = read_record(line, lead, skip + line_start, sink).ok_or(number + 1)?;
        if skip_space(bytes, end) != bytes.len() {
            return Err(number + 1);
        }
    }
    Ok(())
}

/// Why reading stopped before the end.
#[derive(Debug, Clone, Copy)]
enum Stop {
    Malformed { at: usize },
    FragmentsNotArray(JsonType),
    TooMany,
    Interrupted,
}

/// Bytes of records read between two questions to the checkpoint: reading the clock per
/// record would cost more than the short records themselves.
const CHECK_EVERY_BYTES: usize = 64 << 10;

/// Where records go as they are read.
pub(super) struct Sink<'a, 'c, 'i> {
    input: &'a [u8],
    counting: Option<Encoding>,
    columns: &'c mut Columns,
    starts: Vec<usize>,
    /// The first record's problem: later records are still read, for malformed JSON.
    problem: Option<RecordError>,
    stop: Option<Stop>,
    /// Where the record (or line) being read starts.
    resume: usize,
    count_tuning: CountTuning,
    checkpoint: &'c mut Checkpoint<'i>,
    /// Bytes of records read since the checkpoint was last asked.
    unchecked: usize,
}

impl<'a, 'c, 'i> Sink<'a, 'c, 'i> {
    /// A sink for records read from `input` into `columns`, after those at `starts`.
    pub(super) fn new(
        input: &'a [u8],
        counting: Option<Encoding>,
        columns: &'c mut Columns,
        starts: Vec<usize>,
        checkpoint: &'c mut Checkpoint<'i>,
    ) -> Self {
        Sink {
            input,
            counting,
            columns,
            starts,
            problem: None,
            stop: None,
            resume: 0,
            count_tuning: CountTuning::default(),
            checkpoint,
            // The first record asks: the checkpoint itself says whether it is time.
            unchecked: CHECK_EVERY_BYTES,
        }
    }

    /// Whether reading stopped because the checkpoint said so.
    pub(super) fn interrupted(&self) -> bool {
        matches!(self.stop, Some(Stop::Interrupted))
    }

    /// Where the records taken start; `Err` with them when one had a problem or reading
    /// stopped.
    pub(super) fn into_starts(self) -> Result<Vec<usize>, Vec<usize>> {
        if self.problem.is_none() && self.stop.is_none() {
            Ok(self.starts)
        } else {
            Err(self.starts)
        }
    }
}

impl<'a> Sink<'a, '_, '_> {
    fn offset(&self, raw: &str) -> usize {
        raw.as_ptr() as usize - self.input.as_ptr() as usize
    }

    fn halt<E: de::Error>(&mut self, stop: Stop) -> E {
        self.stop = Some(stop);
        E::custom("stopped")
    }

    /// Takes the next record, its checked text `raw` at `start` in the input (and its
    /// fields, when they were found already); an error stops the reading.
    fn record<E: de::Error>(
        &mut self,
        raw: &'a str,
        fields: Option<Fields<'a>>,
        start: usize,
    ) -> Result<(), E> {
        self.resume = start;
        self.unchecked += raw.len();
        if self.unchecked >= CHECK_EVERY_BYTES {
            self.unchecked = 0;
            if self.checkpoint.check().is_err() {
                return Err(self.halt(Stop::Interrupted));
            }
        }
        let index = self.starts.len();
        self.starts.push(start);
        let fields = match (fields, JsonType::of(raw)) {
            (Some(fields), _) => Some(fields),
            (None, JsonType::Object) => Some(fields_of(raw)),
            (None, _) => None,
        };
        let deepest = match &fields {
            Some(fields) => 1 + fields.deepest,
            None => depth(raw),
        };
        if deepest > MAX_DEPTH {
            return Err(self.halt(Stop::Malformed { at: start }));
        }
        if self.problem.is_some() {
            return Ok(());
        }
        let checked = match &fields {
            Some(fields) => self.check(fields),
            None => Err((Problem::NotObject, Some(Got::of(raw)))),
        };
        match checked {
            Ok(checked) => self.push(checked),
            Err((problem, got)) => {
                let fragment_id = fields
                    .and_then(|fields| fields.fragment_id)
                    .filter(|raw| JsonType::of(raw) == JsonType::String)
                    .map(|raw| string_bytes(raw).into_owned());
                self.problem = Some(RecordError {
                    index,
                    start,
                    fragment_id,
                    problem,
                    got,
                });
                Ok(())
            }
        }
    }

    fn push<E: de::Error>(&mut self, checked: Checked<'_>) -> Result<(), E> {
        let pushed = self.columns.push(
            &checked.fragment_id,
            hash_of(&checked.fragment_id),
            checked.token_count,
            checked.relevance,
        );
        if pushed.is_err() {
            return Err(self.halt(Stop::TooMany));
        }
        if checked.required || checked.group.is_some() || checked.variant_of.is_some() {
            self.columns.mark_last(
                checked.required,
                hashed(checked.group.as_deref()),
                hashed(checked.variant_of.as_deref()),
            );
        }
        Ok(())
    }

    /// The record's values, or its first problem, in the order the contract checks them.
    fn check(&self, fields: &Fields<'a>) -> Result<Checked<'a>, Wrong> {
        let missing = |field| (Problem::Missing(field), None);
        let fragment_id = fields.fragment_id.ok_or(missing(Field::FragmentId))?;
        if fields.token_count.is_none() && self.counting.is_none() {
            return Err(missing(Field::TokenCount));
        }
        let relevance = fields
            .relevance_score
            .ok_or(missing(Field::RelevanceScore))?;
        let wrong = |kind, raw: &str| (Problem::Value(kind), Some(Got::of(raw)));

        if JsonType::of(fragment_id) != JsonType::String {
            return Err(wrong(ErrorKind::IdType, fragment_id));
        }
        let id = string_bytes(fragment_id);
        if id.is_empty() {
            return Err((Problem::Value(ErrorKind::IdEmpty), None));
        }
        let token_count = match (fields.token_count, self.counting) {
            (Some(raw), _) => token_count(raw).map_err(|kind| wrong(kind, raw))?,
            (None, Some(encoding)) => self.counted(encoding, fields.content)?,
            (None, None) => unreachable!("checked above"),
        };
        if JsonType::of(relevance) != JsonType::Number {
            return Err(wrong(ErrorKind::RelevanceType, relevance));
        }
        let score = float(relevance);
        if !check_relevance(score) {
            return Err(wrong(ErrorKind::RelevanceRange, relevance));
        }
        let required = match fields.required {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => {
                return Err(wrong(ErrorKind::RequiredType, fields.required.unwrap()));
            }
        };
        // Most records name neither: an absent field costs no call.
        let group = match fields.group {
            Some(raw) => name(raw, ErrorKind::GroupType, ErrorKind::GroupEmpty)?,
            None => None,
        };
        let variant_of = match fields.variant_of {
            Some(raw) => name(raw, ErrorKind::VariantType, ErrorKind::VariantEmpty)?,
            None => None,
        };
        Ok(Checked {
            fragment_id: id,
            token_count,
            relevance: score,
            required,
            group,
            variant_of,
        })
    }

    fn counted(&self, encoding: Encoding, content: Option<&str>) -> Result<u64, Wrong> {
        let content = content.ok_or((Problem::NoContent, None))?;
        if JsonType::of(content) != JsonType::String {
            return Err((Problem::ContentType, Some(Got::of(content))));
        }
        let count = count_one(
            encoding,
            &string_bytes(content),
            &self.count_tuning,
            &InPlace,
        );
        Ok(count as u64)
    }
}

/// A name field given (`group`, `variant_of`): `null` for none, else a non-empty string.
fn name(
    raw: &str,
    type_kind: ErrorKind,
    empty_kind: ErrorKind,
) -> Result<Option<Cow<'_, [u8]>>, Wrong> {
    match JsonType::of(raw) {
        JsonType::Null => Ok(None),
        JsonType::String => {
            let name = string_bytes(raw);
            if name.is_empty() {
                return Err((Problem::Value(empty_kind), None));
            }
            Ok(Some(name))
        }
        _ => Err((Problem::Value(type_kind), Some(Got::of(raw)))),
    }
}

fn token_count(text: &str) -> Result<u64, ErrorKind> {
    if JsonType::of(text) != JsonType::Number || !is_integer(text) {
        return Err(ErrorKind::TokenType);
    }
    match integer(text) {
        Integer::Fits(value) if value <= MAX_TOKEN_COUNT => Ok(value),
        Integer::Fits(_) | Integer::TooLarge => Err(ErrorKind::TokenTooLarge),
        Integer::Negative => Err(ErrorKind::TokenNegative),
    }
}

/// A hash of an id or group name that equal names share.
fn hash_of(bytes: &[u8]) -> u64 {
    let mut hasher = FnvHasher::default();
    hasher.write(bytes);
    hasher.finish()
}

/// A name with its [`hash_of`].
fn hashed(name: Option<&[u8]>) -> Option<(&[u8], u64)> {
    name.map(|bytes| (bytes, hash_of(bytes)))
}

/// The records of an array, each given to the sink as it is read.
struct RecordsOf<'s, 'a, 'c, 'i>(&'s mut Sink<'a, 'c, 'i>);

impl<'a> Visitor<'a> for RecordsOf<'_, 'a, '_, '_> {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("an array of records")
    }

    fn visit_seq<A: SeqAccess<'a>>(self, mut records: A) -> Result<(), A::Error> {
        while let Some(record) = records.next_element::<&'a RawValue>()? {
            let record = record.get();
            let start = self.0.offset(record);
            self.0.record(record, None, start)?;
        }
        Ok(())
    }
}

/// An object whose `fragments` holds the records; its other members are read past.
struct Wrapper<'s, 'a, 'c, 'i>(&'s mut Sink<'a, 'c, 'i>);

impl<'a> Visitor<'a> for Wrapper<'_, 'a, '_, '_> {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("an object with fragments")
    }

    fn visit_map<A: MapAccess<'a>>(self, mut members: A) -> Result<(), A::Error> {
        let sink = self.0;
        let mut seen = false;
        while let Some(key) = members.next_key_seed(Key)? {
            let value = members.next_value::<&'a RawValue>()?.get();
            let at = sink.offset(value);
            if &*key != b"fragments" {
                if depth(value) > MAX_DEPTH {
                    return Err(sink.halt(Stop::Malformed { at }));
                }
                continue;
            }
            if seen {
                return Err(sink.halt(Stop::Malformed { at }));
            }
            seen = true;
            let json_type = JsonType::of(value);
            if json_type != JsonType::Array {
                let stop = if depth(value) > MAX_DEPTH {
                    Stop::Malformed { at }
                } else {
                    Stop::FragmentsNotArray(json_type)
                };
                return Err(sink.halt(stop));
            }
            let mut reader = serde_json::Deserializer::from_str(value);
            reader
                .deserialize_seq(RecordsOf(sink))
                .map_err(|_| A::Error::custom("stopped"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "read_tests.rs"]
mod tests;
