//! Writes each encoding's table in compact form (see `rust/core/tokens/table.rs`) from the
//! `bpe-openai` crate's, into `OUT_DIR`, after checking that it rebuilds the crate's.

use std::env;
use std::fs;
use std::path::PathBuf;

use bpe_openai::byte_pair_encoding::BytePairEncoding;

#[allow(dead_code)]
#[path = "rust/core/tokens/table.rs"]
mod table;

use table::BpeFields;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let one_byte = fields(&BytePairEncoding::from_dictionary(
        (0..=u8::MAX).map(|byte| vec![byte]),
        None,
    ));
    let stand_ins = [
        &one_byte.overlapping_searcher,
        &one_byte.overlapping_searcher_rev,
    ];
    for (name, tokenizer) in [
        ("o200k_base", bpe_openai::o200k_base()),
        ("cl100k_base", bpe_openai::cl100k_base()),
    ] {
        let crates = fields(&tokenizer.bpe);
        let compact = table::write(&crates, stand_ins);
        check_rebuilds(name, &crates, &table::read(&compact).0);
        fs::write(out.join(format!("{name}.table")), compact).expect("OUT_DIR is writable");
    }
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=rust/core/tokens/table.rs");
}

fn fields(bpe: &BytePairEncoding) -> BpeFields {
    let bytes = rmp_serde::to_vec(bpe).expect("the crate's encoder serializes");
    rmp_serde::from_slice(&bytes).expect("the crate's fields are as table.rs lists them")
}

/// Every field the compact form derives again, equal to the crate's; the two automata of all
/// matches are stand-ins by design.
fn check_rebuilds(name: &str, crates: &BpeFields, rebuilt: &BpeFields) {
    let same = [
        ("all_tokens", crates.all_tokens == rebuilt.all_tokens),
        ("token_starts", crates.token_starts == rebuilt.token_starts),
        (
            "bytes_hash_to_token",
            crates.bytes_hash_to_token == rebuilt.bytes_hash_to_token,
        ),
        ("split_table", crates.split_table == rebuilt.split_table),
        ("pair_lookup", crates.pair_lookup == rebuilt.pair_lookup),
        (
            "longest_searcher",
            crates.longest_searcher == rebuilt.longest_searcher,
        ),
        (
            "next_prefix_match",
            crates.next_prefix_match == rebuilt.next_prefix_match,
        ),
        ("hash_factor", crates.hash_factor == rebuilt.hash_factor),
    ];
    for (field, same) in same {
        assert!(same, "{name}: the compact table rebuilds another {field}");
    }
}
