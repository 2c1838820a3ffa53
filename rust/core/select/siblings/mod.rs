//! Children of one parent packed together (docs/siblings.md): each child's own selection,
//! what every child keeps put first in the parent's input order, and with `max_value_loss`
//! a larger shared set grown while it lowers the priced cost ([`growth`]). The Python
//! backend takes the same steps (`siblings.py`), so both give the same answer.
//!
//! Children differ only in relevance, so they share the parent's units; a unit is named
//! across children by its first member (its anchor), which is also the order the growth
//! tries units in.

mod growth;
pub mod prefix_text;
pub mod pricing;

use crate::core::detach::Detach;
use crate::core::errors::Refusal;
use crate::core::interrupt::Checkpoint;
use crate::core::select::columns::Columns;
use crate::core::select::compress::{
    make_stale_tie_keys, policy_units, relevance_kept, PolicyInput,
};
use crate::core::select::duplicates::check::DuplicateCheck;
use crate::core::select::entry::{relevance_of_key, Entry};
use crate::core::select::ids::IdArena;
use crate::core::select::packing::Selection;
use crate::core::select::policy::units::{KeptUnits, SetUnits, Units};
use crate::core::select::request::Request;
use crate::core::select::share::Share;
use crate::core::select::unit_ranking::{one, UnitRanking};
use pricing::{estimate, Cost, Pricing};

/// One child: its relevance of each of the parent's fragments, in input order, and its
/// budget.
#[derive(Debug, Clone, Copy)]
pub struct ChildAsk<'a> {
    pub relevances: &'a [f64],
    pub budget: u128,
}

/// Children packed together.
#[derive(Debug, Clone, PartialEq)]
pub struct Siblings {
    pub original_tokens: u128,
    /// The fragments every child keeps, in input order; each child's output starts with them.
    pub shared: Vec<u32>,
    /// Per child, its selection (kept fragments in output order; the bound is its own
    /// call's, and it is exact when every solve of the packing finished) and the relevance
    /// it keeps, summed exactly.
    pub children: Vec<(Selection, f64)>,
    /// The children's outputs priced in order, and their own calls' outputs.
    pub cost: Cost,
    pub independent_cost: Cost,
    /// Every fragment's token count, in input order.
    pub token_counts: Vec<u64>,
}

/// Packs `children` of the parent `columns` together; `request` gives the strategy, the
/// policy and the tuning (its budgets are the children's). A duplicate id, a broken variant
/// rule or a budget the overflow policy refuses is the refusal a child's own call gives.
pub fn pack_siblings(
    columns: Columns,
    children: &[ChildAsk<'_>],
    max_value_loss: Share,
    pricing: &Pricing,
    request: Request<'_>,
    detach: &impl Detach,
) -> Result<Siblings, Refusal> {
    let run = || run(columns, children, max_value_loss, pricing, request);
    if request.detaches(children.len() * children.first().map_or(0, |c| c.relevances.len())) {
        detach.detach(run)
    } else {
        run()
    }
}

fn run(
    columns: Columns,
    children: &[ChildAsk<'_>],
    max_value_loss: Share,
    pricing: &Pricing,
    request: Request<'_>,
) -> Result<Siblings, Refusal> {
    let Columns {
        mut entries,
        ids: arena,
        shared_prefix,
        token_counts,
        id_hashes,
        original_tokens,
        required,
        groups,
        variants,
        ..
    } = columns;
    let ids: &IdArena = &arena;
    make_stale_tie_keys(&mut entries, ids, &shared_prefix);
    let mut checkpoint = Checkpoint::new(request.interrupt, request.tuning.interrupt_every);
    let duplicate = DuplicateCheck::new(entries.len()).run(&id_hashes, ids, request.interrupt)?;
    if let Some(duplicate) = duplicate {
        return Err(Refusal::Duplicate(duplicate));
    }
    let mut kids = Vec::with_capacity(children.len());
    for child in children {
        let rescored: Vec<Entry> = entries
            .iter()
            .zip(child.relevances)
            .map(|(entry, &relevance)| entry.rescored(relevance))
            .collect();
        let relevances = rescored.iter().map(|e| relevance_of_key(e.key)).collect();
        let input = PolicyInput {
            entries: rescored,
            token_counts: &token_counts,
            required: &required,
            groups: &groups,
            variants: &variants,
        };
        let units = policy_units(input, ids, request, &mut checkpoint)?;
        kids.push(Kid::new(
            units,
            relevances,
            child.budget,
            ids,
            request,
            &mut checkpoint,
        )?);
    }
    let mut house = House {
        ids,
        request,
        token_counts: &token_counts,
        pricing,
        checkpoint,
    };
    let solo: Vec<&Choice> = kids.iter().map(|kid| &kid.solo).collect();
    let outputs = house.arranged(&kids, &solo)?;
    let cost = house.price(&outputs);
    let independent: Vec<Vec<u32>> = kids.iter().map(|kid| kid.solo_order.clone()).collect();
    let independent_cost = house.price(&independent);
    let Growth { grown, all_exact } = if !max_value_loss.is_zero() && kids.len() > 1 {
        growth::grown(&mut house, &mut kids, max_value_loss, cost.billed)?
    } else {
        Growth {
            grown: None,
            all_exact: true,
        }
    };
    let Packing {
        choices,
        outputs,
        cost,
    } = match grown {
        Some(grown) => grown,
        None => Packing {
            choices: kids.iter().map(|kid| kid.solo.clone()).collect(),
            outputs,
            cost,
        },
    };
    let shared = match kids.first() {
        Some(kid) => {
            let chosen: Vec<&Choice> = choices.iter().collect();
            let mut shared = kid
                .units()
                .fragments_of(&kid.unit_list(&shared_anchors(&chosen)));
            shared.sort_unstable();
            shared
        }
        None => Vec::new(),
    };
    // What a child shares, and with `max_value_loss` what it keeps, the others decide too.
    let exact = all_exact && kids.iter().all(|kid| kid.solo_exact);
    let children = kids
        .iter()
        .zip(choices)
        .zip(outputs)
        .map(|((kid, choice), kept)| {
            let selection = Selection {
                compressed_tokens: choice.kept.compressed_tokens(),
                value_kept: choice.kept.value_kept(),
                value_bound: kid.solo_bound,
                reused_tokens: 0,
                exact,
                kept,
            };
            let relevance = relevance_kept(&selection.kept, &kid.relevances);
            (selection, relevance)
        })
        .collect();
    Ok(Siblings {
        original_tokens,
        shared,
        children,
        cost,
        independent_cost,
        token_counts,
    })
}

/// A larger shared set's packing, if one was found, and whether every re-solve of the
/// children that looked for it finished: one stopped short may have refused a set that
/// holds, so no child is exact without them.
struct Growth {
    grown: Option<Packing>,
    all_exact: bool,
}

/// Every child's choice, their outputs, and what the outputs cost.
struct Packing {
    choices: Vec<Choice>,
    outputs: Vec<Vec<u32>>,
    cost: Cost,
}

/// What every step of packing siblings reads.
struct House<'h, 'r> {
    ids: &'h IdArena,
    request: Request<'r>,
    token_counts: &'h [u64],
    pricing: &'h Pricing,
    checkpoint: Checkpoint<'r>,
}

impl House<'_, '_> {
    /// Each child's output: the units every one of `choices` keeps first, their fragments in
    /// input order, then the child's other kept units in the policy's order.
    fn arranged(&mut self, kids: &[Kid], choices: &[&Choice]) -> Result<Vec<Vec<u32>>, Refusal> {
        let shared = shared_anchors(choices);
        let mut outputs = Vec::with_capacity(kids.len());
        for (kid, choice) in kids.iter().zip(choices) {
            let first = kid.unit_list(&shared);
            let head: usize = first
                .iter()
                .map(|&unit| kid.units().members(unit).len())
                .sum();
            // Arranging reads the order and the tuning, not the budget.
            let selection = kid.ranking.selection(
                &choice.kept,
                &first,
                self.ids,
                self.request,
                &mut self.checkpoint,
            )?;
            let mut kept = selection.kept;
            kept[..head].sort_unstable();
            outputs.push(kept);
        }
        Ok(outputs)
    }

    fn price(&self, outputs: &[Vec<u32>]) -> Cost {
        estimate(outputs, self.token_counts, self.pricing)
    }
}

/// The anchors every one of `choices` keeps, ascending.
fn shared_anchors(choices: &[&Choice]) -> Vec<u32> {
    let Some((first, others)) = choices.split_first() else {
        return Vec::new();
    };
    let mut shared = first.anchors.clone();
    for other in others {
        // Both ascending: one walk through each.
        let mut theirs = other.anchors.iter().peekable();
        shared.retain(|&anchor| {
            while theirs.next_if(|&&their| their < anchor).is_some() {}
            theirs.peek() == Some(&&anchor)
        });
    }
    shared
}

/// One child as packed: its units ranked by its relevance, and its own call's selection.
struct Kid {
    ranking: UnitRanking,
    sets: SetUnits,
    budget: u128,
    /// Its relevance of each fragment, as the ranking reads it.
    relevances: Vec<f64>,
    /// The required units' tokens, before any unit is pinned.
    required_tokens: u128,
    solo: Choice,
    /// The solo selection's fragments as its own call orders them.
    solo_order: Vec<u32>,
    solo_bound: u128,
    solo_exact: bool,
}

impl Kid {
    fn new(
        units: Units,
        relevances: Vec<f64>,
        budget: u128,
        ids: &IdArena,
        request: Request<'_>,
        checkpoint: &mut Checkpoint,
    ) -> Result<Kid, Refusal> {
        let budgets = [budget];
        let request = Request {
            budgets: &budgets,
            explain: false,
            reuse: None,
            ..request
        };
        let sets = units.set_units();
        let required_tokens = units.required_tokens();
        let mut ranking = UnitRanking::new(units, request, ids, checkpoint)?;
        let [solo] = one(ranking.kept_units(ids, request, true, checkpoint)?);
        let order = ranking.selection(&solo, &[], ids, request, checkpoint)?;
        let solo = Choice::of(solo, ranking.units());
        Ok(Kid {
            ranking,
            sets,
            budget,
            relevances,
            required_tokens,
            solo,
            solo_order: order.kept,
            solo_bound: order.value_bound,
            solo_exact: order.exact,
        })
    }

    fn units(&self) -> &Units {
        self.ranking.units()
    }

    /// This child's units of `anchors`.
    fn unit_list(&self, anchors: &[u32]) -> Vec<u32> {
        let units = self.units();
        anchors
            .iter()
            .map(|&anchor| units.unit_of(anchor))
            .collect()
    }
}

/// One child's kept units, with their anchors ascending.
#[derive(Clone)]
struct Choice {
    kept: KeptUnits,
    anchors: Vec<u32>,
}

impl Choice {
    fn of(kept: KeptUnits, units: &Units) -> Choice {
        let mut anchors: Vec<u32> = kept
            .units()
            .iter()
            .map(|&unit| units.members(unit)[0])
            .collect();
        anchors.sort_unstable();
        Choice { kept, anchors }
    }
}

#[cfg(test)]
mod tests;
