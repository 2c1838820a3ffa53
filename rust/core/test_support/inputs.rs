//! Generated inputs for the whole compression, and what the tests compare it with.

use std::cell::Cell;

use crate::core::detach::Detach;
use crate::core::errors::{Duplicate, Refusal};
use crate::core::select::exact_sum::exact_sum;
use crate::core::select::packing::Selection;
use crate::core::select::tuning::Tuning;
use crate::core::test_support::random::Lcg;

/// Runs long work in place and counts how often it was asked to, so that a test sees when
/// the compression detached.
pub(crate) struct Counting(pub(crate) Cell<usize>);

impl Detach for Counting {
    fn detach<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
        self.0.set(self.0.get() + 1);
        work()
    }
}

/// One generated input: ids, token counts and relevance scores, by fragment.
pub(crate) struct Input {
    pub(crate) ids: Vec<String>,
    pub(crate) tokens: Vec<u64>,
    pub(crate) scores: Vec<f64>,
}

/// A stand-in for Python's str hash: equal ids, equal hashes; few values, so that different
/// ids collide too.
pub(crate) fn weak_hash(id: &str) -> u64 {
    id.bytes().map(u64::from).sum::<u64>() % 7
}

/// The earliest id that repeats one before it, as the refusal the driver gives.
pub(crate) fn first_repeat(input: &Input) -> Option<Refusal> {
    (0..input.ids.len()).find_map(|second| {
        let first = input.ids[..second]
            .iter()
            .position(|id| *id == input.ids[second])?;
        Some(Refusal::Duplicate(Duplicate {
            first: first as u32,
            second: second as u32,
            id: input.ids[second].as_bytes().to_vec(),
        }))
    })
}

/// Up to 120 fragments: ids from a few pieces (now and then with a shared prefix, and one
/// repeated), a few relevance levels, and token counts that are sometimes zero or past
/// `u32::MAX`.
pub(crate) fn generated(rng: &mut Lcg) -> Input {
    const PIECES: [&str; 7] = ["a", "b", "\u{e9}", "\u{1F600}", "\0", "zz", "fragment-"];
    let len = rng.below(120) as usize;
    let shared = if rng.below(2) == 0 { "src/module/" } else { "" };
    let mut ids: Vec<String> = Vec::new();
    while ids.len() < len {
        let mut id = shared.to_string();
        for _ in 0..rng.below(6) {
            id.push_str(PIECES[rng.below(PIECES.len() as u64) as usize]);
        }
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if len > 1 && rng.below(4) == 0 {
        let from = rng.below(len as u64 - 1) as usize;
        let to = from + 1 + rng.below((len - from - 1) as u64) as usize;
        ids[to] = ids[from].clone();
    }
    let levels = 1 + rng.below(6);
    let scores = (0..len)
        .map(|_| match rng.below(levels + 1) {
            0 => -0.0,
            level => (level - 1) as f64 / levels as f64,
        })
        .collect();
    let heavy = rng.below(3) == 0;
    let tokens = (0..len)
        .map(|_| match rng.below(10) {
            0 => 0,
            1 if heavy => u64::from(u32::MAX) + rng.below(5),
            _ => rng.below(40),
        })
        .collect();
    Input {
        ids,
        tokens,
        scores,
    }
}

/// Thresholds small enough that a few fragments cross every one.
pub(crate) fn tiny_tuning(rng: &mut Lcg) -> Tuning {
    let tuning = Tuning {
        detach_from: rng.below(40) as usize,
        parallel_from: rng.below(40) as usize,
        first_sort_margin: rng.below(300) as f64 / 100.0,
        first_sort_extra: rng.below(4) as usize,
        count_keys_from: rng.below(40) as usize,
        whole_sort_share: rng.below(120) as f64 / 100.0,
        members_per_bucket: rng.below(4) as usize,
        interrupt_every: std::time::Duration::ZERO,
        sort_piece: rng.below(20) as usize,
        // Not drawn, so that the cases generated after it stay as they were.
        collect_slack: 0,
        work_per_state: 1,
        visit_in_input_order_from: 0,
        narrow_states: true,
        detach_optimal_from: 0,
    };
    // Both widths of states, and detached optimal or not, without a draw of its own (see
    // above).
    Tuning {
        narrow_states: tuning.sort_piece % 2 == 0,
        detach_optimal_from: tuning.detach_from / 2,
        ..tuning
    }
}

/// Each selection's kept relevance, added up as a caller would (`exact_sum` is checked
/// against exact arithmetic on its own).
pub(crate) fn relevance_of(input: &Input, selections: &[Selection]) -> Vec<f64> {
    selections
        .iter()
        .map(|selection| {
            exact_sum(
                selection
                    .kept
                    .iter()
                    .map(|&index| input.scores[index as usize]),
            )
        })
        .collect()
}
