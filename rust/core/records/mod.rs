//! The command line's records: JSON text read into columns with the contract's checks,
//! compressed, and the kept records written back as they came ([`compress_records`]).

pub mod compression;
pub mod fields;
pub mod json_values;
pub mod read;
pub mod stream;

pub use compression::compress_records;
