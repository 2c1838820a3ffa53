//! The whole compression: duplicate ids, ranking and packing every budget, from checked
//! columns to selections.

use super::columns::Columns;
use super::duplicate_check::DuplicateCheck;
use super::errors::{BudgetExceeded, Refusal};
use super::ids::{tie_key, FragmentIds, IdArena};
use super::policy::Policy;
use super::ranking::{relevance_of_key, Entry, Ranking};
use super::selection::{Packer, Selection, Strategy};
use super::tuning::Tuning;
use super::units::{Decision, LeadIds, UnitPacker, Units, Walked};
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
    /// When explaining: one per fragment, in input order, for the first budget.
    pub decisions: Vec<Decision>,
}

/// What a compression is asked for. No budgets means only the checks (duplicate ids).
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub budgets: &'a [u128],
    pub strategy: Strategy,
    pub policy: &'a Policy,
    /// Whether to say why each fragment was kept or dropped (for the first budget).
    pub explain: bool,
    pub tuning: &'a Tuning,
}

/// Rejects duplicate ids, then ranks as far as the budgets need and packs each of them.
/// Large inputs run inside `detach`, whole.
pub fn compress(
    columns: Columns,
    request: Request<'_>,
    detach: &impl Detach,
    workspace: &mut Workspace,
) -> Result<Compression, Refusal> {
    let started = launch(columns, request, detach, workspace, Meanwhile::Nothing);
    started.finish_with(workspace, |compression| compression)
}

/// [`compress`], with the duplicate check of a large input still going on, on a second
/// thread, when the answer is at hand: the caller can build its result meanwhile, and
/// learns with [`Started::finish_with`] whether it stands.
pub fn start(
    columns: Columns,
    request: Request<'_>,
    detach: &impl Detach,
    workspace: &mut Workspace,
) -> Started {
    launch(columns, request, detach, workspace, Meanwhile::Build)
}

/// What the caller does between the answer and [`Started::finish_with`]: a check that can
/// go on while the result is built need not share the cores with a split first sort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meanwhile {
    Nothing,
    Build,
}

fn launch(
    columns: Columns,
    request: Request<'_>,
    detach: &impl Detach,
    workspace: &mut Workspace,
    meanwhile: Meanwhile,
) -> Started {
    if columns.len() >= request.tuning.detach_from {
        detach.detach(|| run(columns, request, workspace, meanwhile))
    } else {
        run(columns, request, workspace, meanwhile)
    }
}

/// A compression whose duplicate check may still be going on.
#[must_use]
#[derive(Debug)]
pub struct Started {
    outcome: Result<Compression, BudgetExceeded>,
    check: DuplicateCheck,
    ids: IdArena,
}

impl Started {
    /// `build` on the answer, while the duplicate check finishes; then the duplicate, if
    /// any, or else the answer's refusal, or else what was built.
    pub fn finish_with<T>(
        self,
        workspace: &mut Workspace,
        build: impl FnOnce(Compression) -> T,
    ) -> Result<T, Refusal> {
        let built = self.outcome.map(build);
        let duplicate = self.check.finish(&self.ids, workspace);
        self.ids.recycle(workspace);
        match duplicate {
            Some(duplicate) => Err(Refusal::Duplicate(duplicate)),
            None => built.map_err(Refusal::BudgetExceeded),
        }
    }
}

fn run(
    columns: Columns,
    request: Request<'_>,
    workspace: &mut Workspace,
    meanwhile: Meanwhile,
) -> Started {
    let plain = request.policy.is_plain() && !columns.has_units() && !request.explain;
    let Columns {
        mut entries,
        ids: arena,
        shared_prefix,
        token_counts,
        id_hashes,
        original_tokens,
        zero_token_fragments,
        required,
        groups,
        mut key_counts,
        ..
    } = columns;
    let ids: &IdArena = &arena;
    let (id_hashes, sieve) = id_hashes.finish();
    let len = entries.len();
    let in_parallel = len >= request.tuning.parallel_from;
    // Entries are still in input order: index i is at position i.
    let fresh_tie = |index: u32| tie_key(ids.bytes(index), shared_prefix.len());
    for index in shared_prefix.stale() {
        entries[index].tie = fresh_tie(index as u32);
    }
    for entry in key_counts.set_apart_below_index(shared_prefix.stale().end) {
        entry.tie = fresh_tie(entry.index);
    }
    let (packed, check) = if plain {
        groups.recycle(workspace);
        let first = request
            .tuning
            .first_sort_size(request.budgets, original_tokens, len);
        let split_from = request.tuning.parallel_from;
        let mut ranking = Ranking::counted(std::mem::take(&mut entries), key_counts, split_from);
        // The look for duplicates takes the second core while the first sort does not, or
        // else after it, while the answer is packed and built.
        let check = if meanwhile == Meanwhile::Build && ranking.splits_first_sort(first) {
            ranking.extend(first, ids);
            DuplicateCheck::start(id_hashes, sieve, in_parallel, workspace)
        } else {
            let check = DuplicateCheck::start(id_hashes, sieve, in_parallel, workspace);
            ranking.extend(first, ids);
            check
        };
        let selections = pack(
            &mut ranking,
            &token_counts,
            zero_token_fragments,
            ids,
            request,
        );
        ranking.recycle(workspace);
        (Ok((selections, Vec::new())), check)
    } else {
        let check = DuplicateCheck::start(id_hashes, sieve, in_parallel, workspace);
        key_counts.recycle(workspace);
        let per_bucket = request.tuning.members_per_bucket;
        let groups = groups.into_groups(&entries, &token_counts, ids, per_bucket, workspace);
        let units = Units::new(&entries, &token_counts, &required, groups, workspace);
        let unit_entries = workspace.entries(len);
        let mut unit_ranking = UnitRanking::new(units, unit_entries, request, ids, workspace);
        let packed = unit_ranking.pack(ids, request);
        unit_ranking.recycle(workspace);
        (packed, check)
    };
    workspace.give_entries(entries);
    workspace.give_words(token_counts);
    workspace.give(required);
    Started {
        outcome: packed.map(|(selections, decisions)| Compression {
            original_tokens,
            selections,
            decisions,
        }),
        check,
        ids: arena,
    }
}

/// Units ranked by their leads, as far as the budgets need (all of them when explaining,
/// since every unit's rank is told). The ranking's entries are numbered by unit.
struct UnitRanking {
    units: Units,
    ranking: Ranking,
    candidate: Vec<bool>,
    required_tokens: u128,
    zero_token_candidates: usize,
}

impl UnitRanking {
    fn new(
        units: Units,
        mut unit_entries: Vec<Entry>,
        request: Request<'_>,
        ids: &impl FragmentIds,
        workspace: &mut Workspace,
    ) -> Self {
        let floor = request.policy.min_relevance;
        let (mut required_tokens, mut candidate_tokens, mut zero_token_candidates) = (0, 0, 0);
        let mut candidate = workspace.buffer(units.len());
        unit_entries.clear();
        for unit in 0..units.len() as u32 {
            let lead = units.lead_entry(unit);
            let tokens = units.tokens(unit);
            let is_candidate = !units.is_required(unit) && relevance_of_key(lead.key) >= floor;
            if units.is_required(unit) {
                required_tokens += tokens;
            } else if is_candidate {
                candidate_tokens += tokens;
                zero_token_candidates += usize::from(tokens == 0);
            }
            if request.explain || is_candidate {
                unit_entries.push(units.ranking_entry(unit));
            }
            candidate.push(is_candidate);
        }
        let len = unit_entries.len();
        let first = if request.explain {
            len
        } else {
            request
                .tuning
                .first_sort_size(request.budgets, candidate_tokens, len)
        };
        let mut ranking = Ranking::new(unit_entries);
        ranking.extend(first, &LeadIds { units: &units, ids });
        UnitRanking {
            units,
            ranking,
            candidate,
            required_tokens,
            zero_token_candidates,
        }
    }

    /// The buffers back to `workspace`.
    fn recycle(self, workspace: &mut Workspace) {
        self.ranking.recycle(workspace);
        workspace.give(self.candidate);
        self.units.recycle(workspace);
    }

    /// Packs every budget; the first budget the overflow policy refuses is the answer.
    fn pack(
        &mut self,
        ids: &impl FragmentIds,
        request: Request<'_>,
    ) -> Result<(Vec<Selection>, Vec<Decision>), BudgetExceeded> {
        let walked = Walked {
            units: &self.units,
            policy: request.policy,
            strategy: request.strategy,
            candidate: &self.candidate,
            required_tokens: self.required_tokens,
            zero_token_candidates: self.zero_token_candidates,
        };
        let mut packers: Vec<UnitPacker> = request
            .budgets
            .iter()
            .map(|&budget| UnitPacker::new(budget, &walked, request.explain))
            .collect();
        let lead_ids = LeadIds {
            units: &self.units,
            ids,
        };
        self.ranking.feed_while_wanted(&lead_ids, |fresh| {
            packers.iter_mut().fold(false, |wanting, packer| {
                packer.feed(fresh, &walked) | wanting
            })
        });
        let units = &self.units;
        let key = |unit: u32| units.lead_entry(unit).sort_key();
        let rank_order = |a: u32, b: u32| units.lead_entry(a).rank_order(units.lead_entry(b), ids);
        let mut selections = Vec::with_capacity(packers.len());
        let mut decisions = Vec::new();
        for (at, packer) in packers.into_iter().enumerate() {
            let finished = packer.finish(&walked)?;
            selections.push(finished.selection(units, request.policy.order, key, rank_order));
            if request.explain && at == 0 {
                let mut ranks = vec![0u32; units.len()];
                for (rank, entry) in self.ranking.ranked().iter().enumerate() {
                    ranks[entry.index as usize] = rank as u32;
                }
                let by_unit = finished.decisions(&walked, &ranks);
                decisions = (0..units.fragments() as u32)
                    .map(|fragment| by_unit[units.unit_of(fragment) as usize])
                    .collect();
            }
        }
        Ok((selections, decisions))
    }
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
    ranking.feed_while_wanted(ids, |fresh| {
        packers.iter_mut().fold(false, |wanting, packer| {
            packer.feed(fresh, token_counts, zero_token_fragments) | wanting
        })
    });
    packers.into_iter().map(Packer::finish).collect()
}
