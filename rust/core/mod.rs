//! The sort-and-pack algorithm on plain columns: relevance keys, token counts, id hashes.

pub mod checks;
pub mod duplicates;
pub mod ranking;
pub mod selection;

pub use checks::{check_relevance, check_token_count, TokenCheck, MAX_TOKEN_COUNT};
pub use duplicates::{colliding_groups, colliding_groups_with, first_duplicate};
pub use ranking::{relevance_key, Entry, Ranking};
pub use selection::{select, Packer, Selection, Strategy};
