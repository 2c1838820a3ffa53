//! From checked columns to selections: duplicate ids, ranking, ties and packing, without the
//! GIL while large inputs are sorted and packed.

use std::cmp::Ordering;
use std::ops::Range;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::context::context;
use super::errors;
use super::read::Checked;
use crate::core::{colliding_groups, first_duplicate, Entry, Packer, Ranking, Selection, Strategy};

/// Below this many fragments the work is too short to be worth releasing the GIL (and waiting
/// to take it back) or starting a second thread.
const DETACH_FROM: usize = 20_000;

/// How far down the ranking a budget is first sorted, beyond its share of all tokens: enough
/// that greedy packing rarely needs a second, complete sort.
const FIRST_SORT_MARGIN: f64 = 1.25;
const FIRST_SORT_EXTRA: usize = 1024;

pub struct Columns<'py> {
    container: &'static str,
    entries: Vec<Entry>,
    token_counts: Vec<u64>,
    id_hashes: Vec<u64>,
    fragment_ids: Vec<Bound<'py, PyString>>,
    original_tokens: u128,
    zero_token_fragments: usize,
}

impl<'py> Columns<'py> {
    pub fn with_capacity(len: usize, container: &'static str) -> PyResult<Self> {
        if u32::try_from(len).is_err() {
            return Err(PyValueError::new_err(format!(
                "at most {} fragments can be compressed at once, got {len}",
                u32::MAX
            )));
        }
        Ok(Columns {
            container,
            entries: Vec::with_capacity(len),
            token_counts: Vec::with_capacity(len),
            id_hashes: Vec::with_capacity(len),
            fragment_ids: Vec::with_capacity(len),
            original_tokens: 0,
            zero_token_fragments: 0,
        })
    }

    pub fn push(&mut self, checked: Checked<'py>) {
        let index = self.entries.len() as u32;
        self.entries
            .push(Entry::new(checked.relevance, index, checked.token_count));
        self.token_counts.push(checked.token_count);
        self.original_tokens += u128::from(checked.token_count);
        self.zero_token_fragments += usize::from(checked.token_count == 0);
        self.id_hashes.push(checked.id_hash);
        self.fragment_ids.push(checked.fragment_id);
    }
}

fn compare(a: &Bound<'_, PyString>, b: &Bound<'_, PyString>) -> Ordering {
    // Both are exact str: the comparison is by code point and cannot fail.
    unsafe { ffi::PyUnicode_Compare(a.as_ptr(), b.as_ptr()) }.cmp(&0)
}

fn maybe_detach<T: Send>(py: Python<'_>, large: bool, work: impl FnOnce() -> T + Send) -> T {
    if large {
        py.detach(work)
    } else {
        work()
    }
}

/// How many entries to rank first for these budgets: the share of all tokens the largest
/// budget covers, with a margin, or everything when that share is large.
fn first_sort_size(budgets: &[u128], original_tokens: u128, len: usize) -> usize {
    let Some(&largest) = budgets.iter().max() else {
        return 0;
    };
    if largest == 0 {
        return 0;
    }
    let share = largest as f64 / original_tokens.max(1) as f64 * FIRST_SORT_MARGIN;
    if share >= 0.5 {
        return len;
    }
    ((len as f64 * share) as usize + FIRST_SORT_EXTRA).min(len)
}

pub struct Ranked<'py> {
    ranking: Ranking,
    token_counts: Vec<u64>,
    fragment_ids: Vec<Bound<'py, PyString>>,
    zero_token_fragments: usize,
    large: bool,
    pub original_tokens: u128,
}

/// Rejects duplicate ids, then ranks as much as `budgets` are likely to need.
pub fn analyse<'py>(
    py: Python<'py>,
    columns: Columns<'py>,
    budgets: &[u128],
) -> PyResult<Ranked<'py>> {
    let Columns {
        container,
        entries,
        token_counts,
        id_hashes,
        fragment_ids,
        original_tokens,
        zero_token_fragments,
    } = columns;
    let large = entries.len() >= DETACH_FROM;
    let mut ranking = Ranking::new(entries);
    let first = first_sort_size(budgets, original_tokens, ranking.len());
    let (groups, range) = maybe_detach(py, large, || {
        if !large {
            return (colliding_groups(&id_hashes), ranking.extend(first));
        }
        std::thread::scope(|scope| {
            let groups = scope.spawn(|| colliding_groups(&id_hashes));
            let range = ranking.extend(first);
            match groups.join() {
                Ok(groups) => (groups, range),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    });
    let ids = &fragment_ids;
    if let Some((first, second)) = first_duplicate(&groups, |a, b| {
        compare(&ids[a as usize], &ids[b as usize]).is_eq()
    }) {
        return Err(errors::duplicate(
            py,
            context(py)?,
            container,
            &ids[second as usize],
            first,
            second,
        ));
    }
    let mut ranked = Ranked {
        ranking,
        token_counts,
        fragment_ids,
        zero_token_fragments,
        large,
        original_tokens,
    };
    ranked.resolve_ties(range);
    Ok(ranked)
}

impl Ranked<'_> {
    fn resolve_ties(&mut self, range: Range<usize>) {
        let ids = &self.fragment_ids;
        self.ranking
            .resolve_ties(range, |a, b| compare(&ids[a as usize], &ids[b as usize]));
    }

    /// Packs every budget, ranking the rest only if some budget is not done with the top.
    pub fn select(
        &mut self,
        py: Python<'_>,
        budgets: &[u128],
        strategy: Strategy,
    ) -> Vec<Selection> {
        let mut packers: Vec<Packer> = budgets
            .iter()
            .map(|&budget| Packer::new(budget, strategy))
            .collect();
        let mut fed = 0;
        loop {
            let (ranking, token_counts, zeros) =
                (&self.ranking, &self.token_counts, self.zero_token_fragments);
            let wanting = maybe_detach(py, self.large, || {
                let fresh = &ranking.ranked()[fed..];
                packers.iter_mut().fold(false, |wanting, packer| {
                    packer.feed(fresh, token_counts, zeros) | wanting
                })
            });
            fed = self.ranking.ranked().len();
            if !wanting || self.ranking.is_complete() {
                break;
            }
            let len = self.ranking.len();
            let ranking = &mut self.ranking;
            let range = maybe_detach(py, self.large, || ranking.extend(len));
            self.resolve_ties(range);
        }
        packers.into_iter().map(Packer::finish).collect()
    }
}
