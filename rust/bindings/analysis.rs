//! From checked columns to a ranking: duplicate ids, sort, ties, without the GIL when large.

use std::cmp::Ordering;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::context::context;
use super::errors;
use super::read::Checked;
use crate::core::{colliding_groups, first_duplicate, rank, relevance_key, select, Ranking, Selection, Strategy};

/// Below this many fragments the work is too short to be worth releasing the GIL (and waiting
/// to take it back) or starting a second thread.
const DETACH_FROM: usize = 20_000;

pub struct Columns<'py> {
    container: &'static str,
    entries: Vec<(u64, u32)>,
    token_counts: Vec<u64>,
    id_hashes: Vec<u64>,
    fragment_ids: Vec<Bound<'py, PyString>>,
    original_tokens: u128,
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
        })
    }

    pub fn push(&mut self, checked: Checked<'py>) {
        let index = self.entries.len() as u32;
        self.entries.push((relevance_key(checked.relevance), index));
        self.token_counts.push(checked.token_count);
        self.original_tokens += u128::from(checked.token_count);
        self.id_hashes.push(checked.id_hash);
        self.fragment_ids.push(checked.fragment_id);
    }
}

pub struct Ranked {
    ranking: Ranking,
    token_counts: Vec<u64>,
    pub original_tokens: u128,
}

impl Ranked {
    pub fn select(&self, py: Python<'_>, budget: u128, strategy: Strategy) -> Selection {
        let run = || select(self.ranking.indices(), &self.token_counts, budget, strategy);
        if self.ranking.len() >= DETACH_FROM {
            py.detach(run)
        } else {
            run()
        }
    }
}

fn compare(a: &Bound<'_, PyString>, b: &Bound<'_, PyString>) -> Ordering {
    // Both are exact str: the comparison is by code point and cannot fail.
    unsafe { ffi::PyUnicode_Compare(a.as_ptr(), b.as_ptr()) }.cmp(&0)
}

/// Rejects duplicate ids and, when `ranked` is asked for, ranks the fragments.
pub fn analyse(py: Python<'_>, columns: Columns<'_>, ranked: bool) -> PyResult<Ranked> {
    let Columns { container, entries, token_counts, id_hashes, fragment_ids, original_tokens } = columns;
    let large = entries.len() >= DETACH_FROM;
    let work = move || {
        if !ranked {
            return (None, colliding_groups(&id_hashes));
        }
        if !large {
            return (Some(rank(entries)), colliding_groups(&id_hashes));
        }
        std::thread::scope(|scope| {
            let groups = scope.spawn(|| colliding_groups(&id_hashes));
            let ranking = rank(entries);
            match groups.join() {
                Ok(groups) => (Some(ranking), groups),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    };
    let (ranking, groups) = if large { py.detach(work) } else { work() };
    let ids = &fragment_ids;
    if let Some((first, second)) = first_duplicate(&groups, |a, b| compare(&ids[a as usize], &ids[b as usize]).is_eq()) {
        let ctx = context(py)?;
        return Err(errors::duplicate(py, ctx, container, &ids[second as usize], first, second));
    }
    let mut ranking = ranking.unwrap_or_else(|| rank(Vec::new()));
    ranking.resolve_ties(|a, b| compare(&ids[a as usize], &ids[b as usize]));
    Ok(Ranked { ranking, token_counts, original_tokens })
}
