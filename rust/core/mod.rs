//! The whole work on plain data, with no Python in it, in three domains: selection
//! ([`select`]: checked columns to one selection per budget), token counting ([`tokens`])
//! and the command line's records ([`records`], which reads JSON text and uses the other
//! two). What they share sits here: errors, value checks, named enums, where long work
//! runs and how it is interrupted, and how work is shared between threads (two pieces of
//! work at once, a value either thread makes, a queue of pieces, a sort in pieces).
#![deny(unsafe_code)]

#[macro_use]
mod named;

pub mod beside;
pub mod checks;
pub mod detach;
pub mod errors;
pub mod interrupt;
pub mod made_once;
pub mod records;
pub mod select;
pub mod sort_in_pieces;
pub mod tokens;
pub mod work_queue;

#[cfg(test)]
pub(crate) mod test_support;

pub use checks::{check_relevance, check_token_count, check_unsigned_token_count, MAX_TOKEN_COUNT};
pub use detach::{Detach, InPlace};
pub use errors::{BudgetExceeded, Duplicate, ErrorKind, Refusal, TooMany, VariantRule};
pub use interrupt::{Interrupt, Interrupted, Uninterrupted};
pub use records::compression::{
    compress_record_file, compress_records, kept_len, kept_spans, read_whole_file, write_kept,
    FileCompression, RecordsCompression, RecordsRefusal,
};
pub use records::json_values::JsonType;
pub use records::read::{Field, Form, Got, Problem, ReadError, RecordError, Span};
pub use records::stream::StreamTuning;
pub use select::columns::{Columns, MAX_FRAGMENTS};
pub use select::compress::{compress, Compression};
pub use select::ids::FragmentIds;
pub use select::input_order::{placement, Placement};
pub use select::packing::{Selection, Strategy};
pub use select::policy::units::{Decision, Reason};
pub use select::policy::{OnOverflow, Order, Policy};
pub use select::request::{Request, Reuse};
pub use select::share::Share;
pub use select::siblings::prefix_text::prefix_text;
pub use select::siblings::pricing::{Cost, Pricing};
pub use select::siblings::{pack_siblings, ChildAsk, Siblings};
pub use select::tuning::Tuning;
pub use select::turns::rows_by_id::RowsById;
pub use select::value::UNITS_PER_RELEVANCE;
pub use tokens::count_many::{count_many, count_one, count_one_until, CountTuning};
pub use tokens::encoding::Encoding;
