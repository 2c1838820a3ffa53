//! skeleton-compressor: choose which context fragments a child plan inherits.
//!
//! `core` is plain Rust and knows nothing of Python; `bindings` converts at the boundary.

#![warn(clippy::undocumented_unsafe_blocks)]

pub mod core;

#[cfg(feature = "python")]
mod bindings;

// Pages a call frees are reused by the next call instead of being faulted in fresh.
#[cfg(feature = "python")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
