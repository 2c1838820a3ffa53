//! From checked columns to selections: duplicate ids, ranking, ties and packing, without the
//! GIL while large inputs are sorted and packed.

use std::cmp::Ordering;
use std::ops::Range;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::context::context;
use super::errors;
use super::ids::Ids;
use super::read::Checked;
use super::scratch;
use crate::core::{
    colliding_groups_with, first_duplicate, Entry, Packer, Ranking, Selection, Strategy,
};

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
    fragment_ids: Ids<'py>,
    original_tokens: u128,
    zero_token_fragments: usize,
}

impl<'py> Columns<'py> {
    pub fn with_capacity(
        len: usize,
        container: &'static str,
        slot: Option<(Bound<'py, PyTuple>, usize)>,
    ) -> PyResult<Self> {
        if u32::try_from(len).is_err() {
            return Err(PyValueError::new_err(format!(
                "at most {} fragments can be compressed at once, got {len}",
                u32::MAX
            )));
        }
        Ok(Columns {
            container,
            entries: scratch::entries(len),
            token_counts: scratch::words(len),
            id_hashes: scratch::words(len),
            fragment_ids: Ids::with_capacity(len, slot),
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

fn compare(a: *mut ffi::PyObject, b: *mut ffi::PyObject) -> Ordering {
    // Both are confirmed exact str: the comparison is by code point and cannot fail.
    unsafe { ffi::PyUnicode_Compare(a, b) }.cmp(&0)
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
    fragment_ids: Ids<'py>,
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
    let mut spread = scratch::words(id_hashes.len());
    let rank_first = |ranking: &mut Ranking| {
        if first > 0 {
            ranking.extend(first)
        } else {
            0..0
        }
    };
    let (groups, range) = maybe_detach(py, large, || {
        if !large {
            return (
                colliding_groups_with(&id_hashes, &mut spread),
                rank_first(&mut ranking),
            );
        }
        std::thread::scope(|scope| {
            let groups = scope.spawn(|| colliding_groups_with(&id_hashes, &mut spread));
            let range = rank_first(&mut ranking);
            match groups.join() {
                Ok(groups) => (groups, range),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    });
    scratch::give_words(id_hashes);
    scratch::give_words(spread);
    let ids = &fragment_ids;
    ids.confirm(groups.iter().flatten().copied())?;
    if let Some((first, second)) =
        first_duplicate(&groups, |a, b| compare(ids.get(a), ids.get(b)).is_eq())
    {
        let id = ids.bound(py, second);
        return Err(errors::duplicate(
            py,
            context(py)?,
            container,
            &id,
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
    ranked.resolve_ties(range)?;
    Ok(ranked)
}

impl Drop for Ranked<'_> {
    fn drop(&mut self) {
        let ranking = std::mem::replace(&mut self.ranking, Ranking::new(Vec::new()));
        scratch::give_entries(ranking.into_entries());
        scratch::give_words(std::mem::take(&mut self.token_counts));
    }
}

impl Ranked<'_> {
    fn resolve_ties(&mut self, range: Range<usize>) -> PyResult<()> {
        let ids = &self.fragment_ids;
        let ranked = self.ranking.ranked();
        let tied = self.ranking.tie_runs(range.clone()).into_iter().flatten();
        ids.confirm(tied.map(|position| ranked[position].index))?;
        self.ranking
            .resolve_ties(range, |a, b| compare(ids.get(a), ids.get(b)));
        Ok(())
    }

    /// Packs every budget, ranking the rest only if some budget is not done with the top.
    pub fn select(
        &mut self,
        py: Python<'_>,
        budgets: &[u128],
        strategy: Strategy,
    ) -> PyResult<Vec<Selection>> {
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
            self.resolve_ties(range)?;
        }
        Ok(packers.into_iter().map(Packer::finish).collect())
    }
}
