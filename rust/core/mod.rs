//! The whole compression on plain columns, with no Python in it: checks of single values,
//! duplicate ids, ranking and packing, driven by one entry point, [`compress`]; and token
//! counting ([`Encoding`], [`count_many`]); and the command line's records, read from JSON
//! text and written back as they came ([`compress_records`]).
#![deny(unsafe_code)]

#[macro_use]
mod named;

pub mod checks;
pub mod columns;
pub mod count_many;
pub mod driver;
pub mod duplicate_check;
pub mod duplicates;
pub mod errors;
pub mod groups;
pub mod ids;
pub mod input_order;
pub mod json_values;
pub mod key_ranges;
pub mod policy;
pub mod ranking;
pub mod record_compression;
pub mod record_fields;
pub mod record_stream;
pub mod records;
pub mod selection;
pub mod surrogates;
pub mod tokens;
pub mod tuning;
pub mod units;
pub mod workspace;

pub use checks::{check_relevance, check_token_count, check_unsigned_token_count, MAX_TOKEN_COUNT};
pub use columns::{Columns, MAX_FRAGMENTS};
pub use count_many::{count_many, count_one, CountTuning};
pub use driver::{compress, Compression, Detach, InPlace, Request};
pub use errors::{BudgetExceeded, Duplicate, ErrorKind, Refusal, TooMany};
pub use ids::FragmentIds;
pub use input_order::in_input_order;
pub use json_values::JsonType;
pub use policy::{Order, Overflow, Policy};
pub use record_compression::{
    compress_record_file, compress_records, kept_len, kept_spans, write_kept, FileCompression,
    RecordsCompression, RecordsRefusal,
};
pub use record_stream::StreamTuning;
pub use records::{Field, Form, Got, Problem, ReadError, RecordError, Span};
pub use selection::{Selection, Strategy};
pub use tokens::Encoding;
pub use tuning::Tuning;
pub use units::{Decision, Reason};
pub use workspace::Workspace;

#[cfg(test)]
mod driver_tests;
#[cfg(test)]
mod policy_tests;
