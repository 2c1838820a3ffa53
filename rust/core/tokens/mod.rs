//! Exact token counts of text, offline: the encodings ([`Encoding`]), text with lone
//! surrogates, and many texts at once ([`count_many`]).

mod ascii_pieces;
pub mod count_many;
pub mod encoding;
pub mod surrogates;
pub mod table;

pub use count_many::count_many;
pub use encoding::Encoding;
