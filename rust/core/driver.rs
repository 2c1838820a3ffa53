//! The whole compression: duplicate ids, ranking and packing every budget, from checked
//! columns to selections.

use std::thread;

use super::columns::Columns;
use super::duplicates::{bitmap_words, colliding_groups_with, first_duplicate};
use super::errors::Duplicate;
use super::ids::{tie_key, FragmentIds, IdArena};
use super::ranking::{Entry, Ranking};
use super::selection::{Packer, Selection, Strategy};
use super::tuning::Tuning;
use super::workspace::Workspace;

/// Runs long work the caller's way: the Python bindings release the GIL around it.
pub trait Detach {
    fn detach<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T;
}

/// Runs the work where it is.
pub struct InPlace;

impl Detach for InPlace {
    fn detach<T: Send>(&self, work: impl FnOnce() -> T + Send) -> T {
        work()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compression {
    pub original_tokens: u128,
    /// One per budget, in the budgets' order.
    pub selections: Vec<Selection>,
}

/// What a compression is asked for. No budgets means only the checks (duplicate ids).
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub budgets: &'a [u128],
    pub strategy: Strategy,
    pub tuning: &'a Tuning,
}

/// Rejects duplicate ids, then ranks as far as the budgets need and packs each of them.
/// Large inputs run inside `detach`, whole.
pub fn compress(
    columns: Columns,
    request: Request<'_>,
    detach: &impl Detach,
    workspace: &mut Workspace,
) -> Result<Compression, Duplicate> {
    if columns.len() >= request.tuning.detach_from {
        detach.detach(|| run(columns, request, workspace))
    } else {
        run(columns, request, workspace)
    }
}

fn run(
    columns: Columns,
    request: Request<'_>,
    workspace: &mut Workspace,
) -> Result<Compression, Duplicate> {
    let Columns {
        mut entries,
        ids: arena,
        shared_prefix,
        token_counts,
        id_hashes,
        original_tokens,
        zero_token_fragments,
    } = columns;
    let ids: &IdArena = &arena;
    let len = entries.len();
    let set_tie_keys = |entries: &mut [Entry]| {
        // Entries are still in input order: index i is at position i.
        for index in shared_prefix.stale() {
            entries[index].tie = tie_key(ids.bytes(index as u32), shared_prefix.len());
        }
    };
    let first = request
        .tuning
        .first_sort_size(request.budgets, original_tokens, len);
    let mut bits = workspace.words(bitmap_words(len));
    let scan = |bits: &mut Vec<u64>| colliding_groups_with(&id_hashes, bits);
    let (groups, ranking) = if len >= request.tuning.parallel_from {
        thread::scope(|scope| {
            let bits = &mut bits;
            let on_second_thread = thread::Builder::new().spawn_scoped(scope, || scan(bits));
            set_tie_keys(&mut entries);
            let mut ranking = Ranking::new(entries);
            ranking.extend(first, ids);
            let groups = match on_second_thread {
                Ok(scanned) => scanned
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                // No second thread to be had: scan on this one.
                Err(_) => scan(&mut Vec::new()),
            };
            (groups, ranking)
        })
    } else {
        let groups = scan(&mut bits);
        set_tie_keys(&mut entries);
        let mut ranking = Ranking::new(entries);
        ranking.extend(first, ids);
        (groups, ranking)
    };
    let mut ranking = ranking;
    workspace.give_words(id_hashes);
    workspace.give_words(bits);
    let duplicate = first_duplicate(&groups, ids);
    let outcome = match duplicate {
        Some((first, second)) => Err(Duplicate {
            first,
            second,
            id: ids.bytes(second).to_vec(),
        }),
        None => Ok(pack(
            &mut ranking,
            &token_counts,
            zero_token_fragments,
            ids,
            request,
        )),
    };
    workspace.give_entries(ranking.into_entries());
    workspace.give_words(token_counts);
    arena.recycle(workspace);
    outcome.map(|selections| Compression {
        original_tokens,
        selections,
    })
}

/// Packs every budget along the ranked top, and ranks the rest only if some budget is not
/// done with the top.
fn pack(
    ranking: &mut Ranking,
    token_counts: &[u64],
    zero_token_fragments: usize,
    ids: &impl FragmentIds,
    request: Request<'_>,
) -> Vec<Selection> {
    let mut packers: Vec<Packer> = request
        .budgets
        .iter()
        .map(|&budget| Packer::new(budget, request.strategy))
        .collect();
    let mut fed = 0;
    loop {
        let fresh = &ranking.ranked()[fed..];
        let wanting = packers.iter_mut().fold(false, |wanting, packer| {
            packer.feed(fresh, token_counts, zero_token_fragments) | wanting
        });
        fed = ranking.ranked().len();
        if !wanting || ranking.is_complete() {
            break;
        }
        ranking.extend(ranking.len(), ids);
    }
    packers.into_iter().map(Packer::finish).collect()
}
