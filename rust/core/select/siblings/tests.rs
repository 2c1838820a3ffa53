//! Siblings against their children's own compressions, over generated inputs: with no loss
//! each child keeps exactly its own selection, what every child keeps first in input order,
//! priced as `estimate` prices the outputs; with some loss every promise holds (each child's
//! value and budget, a shared set that only grows, a cost never above the lossless one).

use std::cell::Cell;

use super::pricing::{estimate, Pricing};
use super::*;
use crate::core::test_support::{generated, tiny_tuning, weak_hash, Counting, Input, Lcg};
use crate::core::{
    compress, Compression, OnOverflow, Order, Policy, Strategy, Tuning, Uninterrupted,
};

const NAMES: [&str; 3] = ["x", "y", "z"];
const PRICES: Pricing = Pricing {
    write: 1.25,
    read: 0.1,
    min_prefix: 20,
};

struct Case {
    input: Input,
    required: Vec<bool>,
    groups: Vec<Option<usize>>,
    variants: Vec<Option<usize>>,
    /// Each child's scores and budget.
    children: Vec<(Vec<f64>, u128)>,
    strategy: Strategy,
    policy: Policy,
    tuning: Tuning,
}

impl Case {
    /// Up to four children; half the cases are kin (one budget, a few scores changed
    /// each), where a larger shared set pays.
    fn generated(rng: &mut Lcg) -> Case {
        let input = generated(rng);
        let len = input.ids.len();
        let marks = rng.below(3);
        let mut pick = |share: u64| (0..len).map(|_| rng.below(100) < share).collect::<Vec<_>>();
        let required = pick(if marks == 0 { 0 } else { 6 });
        let grouped = pick(if marks == 2 { 30 } else { 0 });
        let varied = pick(if marks == 2 { 30 } else { 0 });
        let mut name = |on: &Vec<bool>| -> Vec<Option<usize>> {
            on.iter()
                .map(|&on| on.then(|| rng.below(3) as usize))
                .collect()
        };
        let groups = name(&grouped);
        let variants = name(&varied);
        let total: u64 = input.tokens.iter().map(|&t| t.min(1000)).sum();
        let kin = rng.below(2) == 0;
        let common = u128::from(total / 3 + rng.below(total / 3 + 1));
        let children = (0..1 + rng.below(4))
            .map(|_| {
                let mut scores = input.scores.clone();
                for _ in 0..if kin { 3 } else { len } {
                    if len > 0 && rng.below(2) == 0 {
                        scores[rng.below(len as u64) as usize] = rng.below(6) as f64 / 5.0;
                    }
                }
                let budget = if kin {
                    common
                } else {
                    u128::from(rng.below(total + 20))
                };
                (scores, budget)
            })
            .collect();
        Case {
            input,
            required,
            groups,
            variants,
            children,
            strategy: Strategy::ALL[rng.below(4) as usize],
            policy: Policy {
                min_relevance: [0.0, 0.3][rng.below(2) as usize],
                on_overflow: OnOverflow::ALL[rng.below(3) as usize],
                order: Order::ALL[rng.below(3) as usize],
            },
            tuning: tiny_tuning(rng),
        }
    }

    fn columns(&self, scores: &[f64]) -> Columns {
        self.pinned_columns(scores, &vec![false; scores.len()])
    }

    /// The columns with the fragments `pinned` marked required too.
    fn pinned_columns(&self, scores: &[f64], pinned: &[bool]) -> Columns {
        let input = &self.input;
        let mut columns = Columns::new(input.ids.len(), &self.tuning).unwrap();
        let group_names: Vec<String> = NAMES.iter().map(|n| format!("group-{n}")).collect();
        let variant_names: Vec<String> = NAMES.iter().map(|n| format!("variant-{n}")).collect();
        for (i, id) in input.ids.iter().enumerate() {
            columns
                .push(id.as_bytes(), weak_hash(id), input.tokens[i], scores[i])
                .unwrap();
            let group = self.groups[i].map(|g| (group_names[g].as_bytes(), g as u64));
            let variant = self.variants[i].map(|v| (variant_names[v].as_bytes(), v as u64));
            let required = self.required[i] || pinned[i];
            if required || group.is_some() || variant.is_some() {
                columns.mark_last(required, group, variant);
            }
        }
        columns
    }

    fn request<'a>(&'a self, budgets: &'a [u128]) -> Request<'a> {
        Request {
            budgets,
            strategy: self.strategy,
            policy: &self.policy,
            explain: false,
            tuning: &self.tuning,
            max_work: None,
            interrupt: &Uninterrupted,
            reuse: None,
        }
    }

    /// Each child's own compression.
    fn solo(&self) -> Result<Vec<Compression>, Refusal> {
        self.children
            .iter()
            .map(|(scores, budget)| {
                let budgets = [*budget];
                compress(
                    self.columns(scores),
                    self.request(&budgets),
                    &Counting(Cell::new(0)),
                )
            })
            .collect()
    }

    fn siblings(&self, loss: f64) -> Result<Siblings, Refusal> {
        self.siblings_detached(loss).0
    }

    /// The siblings, and whether the work was detached.
    fn siblings_detached(&self, loss: f64) -> (Result<Siblings, Refusal>, bool) {
        let asks: Vec<ChildAsk<'_>> = self
            .children
            .iter()
            .map(|(scores, budget)| ChildAsk {
                relevances: scores,
                budget: *budget,
            })
            .collect();
        let columns = self.columns(&self.input.scores);
        let share = Share::of(loss).unwrap();
        let detach = Counting(Cell::new(0));
        let packed = pack_siblings(columns, &asks, share, &PRICES, self.request(&[]), &detach);
        (packed, detach.0.get() == 1)
    }
}

fn sorted(rows: &[u32]) -> Vec<u32> {
    let mut rows = rows.to_vec();
    rows.sort_unstable();
    rows
}

/// The fragments every one of `kept` holds, ascending.
fn common(kept: &[Vec<u32>]) -> Vec<u32> {
    let Some((first, others)) = kept.split_first() else {
        return Vec::new();
    };
    sorted(first)
        .into_iter()
        .filter(|row| others.iter().all(|other| other.contains(row)))
        .collect()
}

#[test]
fn with_no_loss_each_child_keeps_its_own_selection_shared_first() {
    let mut rng = Lcg(39);
    let mut shared_some = 0;
    for _ in 0..400 {
        let case = Case::generated(&mut rng);
        let (solo, siblings) = match (case.solo(), case.siblings(0.0)) {
            (Ok(solo), Ok(siblings)) => (solo, siblings),
            (solo, siblings) => {
                // The first child's refusal, as its own call gives it.
                assert_eq!(solo.err(), siblings.err());
                continue;
            }
        };
        let kept: Vec<Vec<u32>> = solo.iter().map(|c| c.selections[0].kept.clone()).collect();
        let shared = common(&kept);
        shared_some += usize::from(!shared.is_empty());
        assert_eq!(siblings.shared, shared);
        let mut outputs = Vec::new();
        for ((own, (got, relevance)), (scores, _)) in
            solo.iter().zip(&siblings.children).zip(&case.children)
        {
            let own_selection = &own.selections[0];
            assert_eq!(sorted(&got.kept), sorted(&own_selection.kept));
            assert_eq!(&got.kept[..shared.len()], &shared[..]);
            let rest: Vec<u32> = own_selection
                .kept
                .iter()
                .copied()
                .filter(|row| !shared.contains(row))
                .collect();
            match case.policy.order {
                Order::Input => assert_eq!(got.kept[shared.len()..], sorted(&rest)[..]),
                Order::Ranking => assert_eq!(got.kept[shared.len()..], rest[..]),
                Order::Edges => {}
            }
            assert_eq!(
                (
                    got.compressed_tokens,
                    got.value_kept,
                    got.value_bound,
                    got.exact
                ),
                (
                    own_selection.compressed_tokens,
                    own_selection.value_kept,
                    own_selection.value_bound,
                    own_selection.exact
                )
            );
            let sum = crate::core::select::exact_sum::exact_sum(
                got.kept.iter().map(|&row| scores[row as usize] + 0.0),
            );
            assert_eq!(relevance.to_bits(), sum.to_bits());
            assert_eq!(siblings.original_tokens, own.original_tokens);
            outputs.push(got.kept.clone());
        }
        let tokens = &case.input.tokens;
        assert_eq!(siblings.cost, estimate(&outputs, tokens, &PRICES));
        assert_eq!(siblings.independent_cost, estimate(&kept, tokens, &PRICES));
    }
    assert!(shared_some > 100, "{shared_some}");
}

#[test]
fn giving_up_value_keeps_every_promise() {
    let mut rng = Lcg(40);
    let mut grew = 0;
    for _ in 0..400 {
        let case = Case::generated(&mut rng);
        let loss = [0.01, 0.1, 0.3, 0.9][rng.below(4) as usize];
        let Ok(lossless) = case.siblings(0.0) else {
            continue;
        };
        let grown = case.siblings(loss).unwrap();
        assert_eq!(case.siblings(loss).unwrap(), grown, "deterministic");
        assert_eq!(grown.independent_cost, lossless.independent_cost);
        assert!(grown.cost.billed <= lossless.cost.billed);
        if grown.cost.billed == lossless.cost.billed {
            assert_eq!(grown, lossless);
            continue;
        }
        grew += 1;
        assert!(lossless.shared.iter().all(|row| grown.shared.contains(row)));
        assert!(grown.shared.len() > lossless.shared.len());
        let share = Share::of(loss).unwrap();
        for ((got, _), ((solo, _), (_, budget))) in grown
            .children
            .iter()
            .zip(lossless.children.iter().zip(&case.children))
        {
            assert_eq!(got.kept[..grown.shared.len()], grown.shared[..]);
            assert!(got.compressed_tokens <= *budget);
            let tokens: u128 = got
                .kept
                .iter()
                .map(|&row| u128::from(case.input.tokens[row as usize]))
                .sum();
            assert_eq!(tokens, got.compressed_tokens);
            assert!(share.keeps_enough(got.value_kept, solo.value_kept));
            assert_eq!((got.value_bound, got.exact), (solo.value_bound, solo.exact));
        }
        let outputs: Vec<Vec<u32>> = grown.children.iter().map(|(s, _)| s.kept.clone()).collect();
        assert_eq!(grown.cost, estimate(&outputs, &case.input.tokens, &PRICES));
    }
    assert!(grew > 30, "{grew}");
}

#[test]
fn a_zero_budget_shares_nothing_more() {
    let mut case = Case::generated(&mut Lcg(3));
    while case.input.ids.len() < 10 {
        case = Case::generated(&mut Lcg(case.input.ids.len() as u64 + 7));
    }
    case.required = vec![false; case.input.ids.len()];
    case.policy.on_overflow = OnOverflow::KeepTop;
    let scores = case.input.scores.clone();
    case.children = vec![(scores.clone(), 1_000), (scores, 0)];
    if let Ok(lossless) = case.siblings(0.0) {
        assert_eq!(case.siblings(0.9).unwrap(), lossless);
        assert!(lossless.shared.is_empty());
    }
}

#[test]
fn the_work_is_detached_from_as_many_rows_as_tuned() {
    let mut case = Case::generated(&mut Lcg(11));
    while case.input.ids.len() < 5 || case.children.len() < 2 {
        case = Case::generated(&mut Lcg(case.input.ids.len() as u64 * 31 + 1));
    }
    // The children's rows: each child's scores of every fragment.
    let rows = case.children.len() * case.input.ids.len();
    // `optimal` from as many rows as its own threshold says (not this test's).
    case.tuning.detach_optimal_from = usize::MAX;
    for (detach_from, detached) in [(rows, true), (rows + 1, false), (rows / 2, true)] {
        case.tuning.detach_from = detach_from;
        assert_eq!(
            case.siblings_detached(0.0).1,
            detached,
            "{detach_from} of {rows}"
        );
    }
}

/// A unit read plainly: a group's members in input order, every other fragment alone.
struct PlainUnit {
    members: Vec<usize>,
    tokens: u128,
    required: bool,
    variant: Option<usize>,
}

impl Case {
    /// The units, in order of first member.
    fn plain_units(&self) -> Vec<PlainUnit> {
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut of_group: [Option<usize>; 3] = [None; 3];
        for i in 0..self.input.ids.len() {
            match self.groups[i] {
                Some(g) => match of_group[g] {
                    Some(unit) => members[unit].push(i),
                    None => {
                        of_group[g] = Some(members.len());
                        members.push(vec![i]);
                    }
                },
                None => members.push(vec![i]),
            }
        }
        members
            .into_iter()
            .map(|members| PlainUnit {
                tokens: members
                    .iter()
                    .map(|&i| u128::from(self.input.tokens[i]))
                    .sum(),
                required: members.iter().any(|&i| self.required[i]),
                variant: self.variants[members[0]],
                members,
            })
            .collect()
    }

    /// Each child's compression with the fragments of `forced` units marked required.
    fn forced(&self, child: usize, forced: &[usize], units: &[PlainUnit]) -> Compression {
        let (scores, budget) = &self.children[child];
        let mut pinned = vec![false; scores.len()];
        for &unit in forced {
            for &i in &units[unit].members {
                pinned[i] = true;
            }
        }
        let budgets = [*budget];
        let columns = self.pinned_columns(scores, &pinned);
        compress(columns, self.request(&budgets), &Counting(Cell::new(0))).unwrap()
    }
}

/// The outputs of kept fragment lists (each as its compression orders it): the fragments
/// every list keeps first, ascending, then each list's others as the order arranges them.
/// `unit_of` names each fragment's unit, whose members a compression keeps side by side.
fn arranged_plainly(
    kept: &[Vec<u32>],
    order: Order,
    unit_of: impl Fn(u32) -> usize,
) -> Vec<Vec<u32>> {
    let shared = common(kept);
    kept.iter()
        .map(|own| {
            // The kept units as the compression ordered them, members together.
            let mut units: Vec<Vec<u32>> = Vec::new();
            for &row in own.iter().filter(|row| !shared.contains(row)) {
                match units.last_mut() {
                    Some(last) if unit_of(last[0]) == unit_of(row) => last.push(row),
                    _ => units.push(vec![row]),
                }
            }
            let rest: Vec<u32> = match order {
                Order::Input => sorted(&units.concat()),
                Order::Ranking => units.concat(),
                Order::Edges => {
                    // Read back into rank order over all kept units, then arranged again
                    // over the others alone.
                    let mut all: Vec<Vec<u32>> = Vec::new();
                    for &row in own {
                        match all.last_mut() {
                            Some(last) if unit_of(last[0]) == unit_of(row) => last.push(row),
                            _ => all.push(vec![row]),
                        }
                    }
                    let len = all.len();
                    let mut ranked = vec![Vec::new(); len];
                    for (at, unit) in all.into_iter().enumerate() {
                        let rank = if at < len.div_ceil(2) {
                            2 * at
                        } else {
                            2 * (len - at) - 1
                        };
                        ranked[rank] = unit;
                    }
                    ranked.retain(|unit| !shared.contains(&unit[0]));
                    let back: Vec<Vec<u32>> =
                        ranked.iter().skip(1).step_by(2).rev().cloned().collect();
                    ranked
                        .iter()
                        .step_by(2)
                        .cloned()
                        .chain(back)
                        .collect::<Vec<_>>()
                        .concat()
                }
            };
            shared.iter().copied().chain(rest).collect()
        })
        .collect()
}

/// The growth read plainly, as `siblings.py` takes its steps: each child's outputs, when a
/// larger shared set was found.
fn grown_plainly(case: &Case, loss: f64, lossless_billed: f64) -> Option<Vec<Vec<u32>>> {
    let n = case.children.len();
    if n < 2 || loss == 0.0 || case.children.iter().any(|(_, budget)| *budget == 0) {
        return None;
    }
    let units = case.plain_units();
    let unit_of = |row: u32| {
        units
            .iter()
            .position(|u| u.members.contains(&(row as usize)))
    };
    let solo = case.solo().unwrap();
    let kept_units = |compression: &Compression| -> Vec<usize> {
        let mut kept: Vec<usize> = compression.selections[0]
            .kept
            .iter()
            .filter_map(|&row| unit_of(row))
            .collect();
        kept.sort_unstable();
        kept.dedup();
        kept
    };
    let solo_units: Vec<Vec<usize>> = solo.iter().map(kept_units).collect();
    let keeping = |unit: usize| {
        solo_units
            .iter()
            .filter(|kept| kept.contains(&unit))
            .count()
    };
    let floor = case.policy.min_relevance;
    let eligible = |unit: usize| {
        units[unit].required
            || case.children.iter().all(|(scores, _)| {
                let best = units[unit].members.iter().map(|&i| scores[i] + 0.0);
                best.fold(0.0, f64::max) >= floor
            })
    };
    let mut queue: Vec<usize> = (0..units.len())
        .filter(|&u| keeping(u) > 0 && keeping(u) < n && eligible(u))
        .collect();
    queue.sort_by_key(|&u| (std::cmp::Reverse(keeping(u)), u));
    let mut forced: Vec<usize> = (0..units.len())
        .filter(|&u| keeping(u) == n && !units[u].required)
        .collect();
    let share = Share::of(loss).unwrap();
    let required_tokens: u128 = units.iter().filter(|u| u.required).map(|u| u.tokens).sum();
    let (mut best, mut best_billed) = (None, lossless_billed);
    let mut asked: Vec<usize> = (0..n).collect();
    let (mut size, mut trials) = (queue.len(), 0);
    while !queue.is_empty() && trials < 24 {
        let shared_sets: Vec<usize> = forced.iter().filter_map(|&u| units[u].variant).collect();
        let mut sets = shared_sets.clone();
        let mut batch = Vec::new();
        for unit in queue.clone() {
            if batch.len() == size {
                break;
            }
            match units[unit].variant {
                Some(set) if sets.contains(&set) => {
                    if shared_sets.contains(&set) {
                        queue.retain(|&u| u != unit);
                    }
                }
                set => {
                    batch.push(unit);
                    sets.extend(set);
                }
            }
        }
        if batch.is_empty() {
            break;
        }
        trials += 1;
        let trying: Vec<usize> = forced.iter().chain(&batch).copied().collect();
        let forced_tokens: u128 = trying
            .iter()
            .filter(|&&u| !units[u].required)
            .map(|&u| units[u].tokens)
            .sum();
        let mut found = vec![None; n];
        let mut failed = None;
        for (position, &child) in asked.iter().enumerate() {
            let budget = case.children[child].1;
            let fits = required_tokens + forced_tokens <= budget;
            let made = fits.then(|| case.forced(child, &trying, &units));
            match made {
                Some(made)
                    if made.selections[0].compressed_tokens <= budget
                        && share.keeps_enough(
                            made.selections[0].value_kept,
                            solo[child].selections[0].value_kept,
                        ) =>
                {
                    found[child] = Some(made.selections[0].kept.clone());
                }
                _ => {
                    failed = Some(position);
                    break;
                }
            }
        }
        if let Some(position) = failed {
            let child = asked.remove(position);
            asked.insert(0, child);
        } else {
            let kept: Vec<Vec<u32>> = found.into_iter().map(Option::unwrap).collect();
            let outputs = arranged_plainly(&kept, case.policy.order, |row| {
                unit_of(row).expect("a kept fragment is in a unit")
            });
            let billed = estimate(&outputs, &case.input.tokens, &PRICES).billed;
            if billed < best_billed {
                best_billed = billed;
                best = Some(outputs);
                forced.extend(&batch);
                queue.retain(|u| !batch.contains(u));
                size *= 2;
                continue;
            }
        }
        if size > 1 {
            size /= 2;
        } else {
            queue.retain(|&u| u != batch[0]);
        }
    }
    best
}

#[test]
fn the_shared_set_grows_as_the_steps_read_plainly_grow_it() {
    let mut rng = Lcg(42);
    let mut grew = 0;
    for _ in 0..600 {
        let case = Case::generated(&mut rng);
        let loss = [0.01, 0.1, 0.3, 0.9][rng.below(4) as usize];
        let Ok(lossless) = case.siblings(0.0) else {
            continue;
        };
        let got = case.siblings(loss).unwrap();
        let outputs: Vec<Vec<u32>> = got.children.iter().map(|(s, _)| s.kept.clone()).collect();
        match grown_plainly(&case, loss, lossless.cost.billed) {
            Some(expected) => {
                grew += 1;
                assert_eq!(outputs, expected);
            }
            None => assert_eq!(got, lossless),
        }
    }
    assert!(grew > 60, "{grew}");
}

/// Two children whose candidates fail one by one but one, tried at trial `5 + bad + 1`:
/// `bad` units child 0 keeps and child 1 values at 0, then one unit child 1 values a hair
/// below its own (sharing it costs child 1 0.05% of its value and the cost falls), then
/// child 1's own units, which child 0 values at little.
fn scores_with(bad: usize) -> (Vec<f64>, Vec<f64>) {
    let mut first = vec![1.0; 3];
    let mut second = vec![1.0; 3];
    first.extend(std::iter::repeat_n(0.9, bad));
    second.extend(std::iter::repeat_n(0.0, bad));
    first.push(0.8);
    second.push(0.89);
    first.extend(std::iter::repeat_n(0.05, 20));
    second.extend(std::iter::repeat_n(0.9, 20));
    (first, second)
}

#[test]
fn at_most_twenty_four_trials_are_made() {
    // Halved from the whole queue down to one (five failures), then one trial per unit: the
    // unit worth sharing is tried 24th with 18 units before it, 25th with 19.
    for (bad, grows) in [(0, true), (18, true), (19, false)] {
        let (first, second) = scores_with(bad);
        let len = first.len();
        let mut columns = Columns::new(len, &Tuning::default()).unwrap();
        for at in 0..len {
            let id = format!("u{at:03}");
            columns.push(id.as_bytes(), at as u64, 1, 0.5).unwrap();
        }
        let children = [
            ChildAsk {
                relevances: &first,
                budget: 3 + bad as u128 + 1,
            },
            ChildAsk {
                relevances: &second,
                budget: 3 + 20,
            },
        ];
        let policy = Policy::default();
        let request = optimal_within(&policy, None);
        let pricing = Pricing {
            min_prefix: 0,
            ..PRICES
        };
        let loss = Share::of(0.01).unwrap();
        let detach = Counting(Cell::new(0));
        let got = pack_siblings(columns, &children, loss, &pricing, request, &detach).unwrap();
        let worth_sharing = (3 + bad) as u32;
        assert_eq!(
            got.shared.contains(&worth_sharing),
            grows,
            "{bad}: {:?}",
            got.shared
        );
    }
}

/// A packing by `optimal` under `policy` within `max_work` (the budgets are the children's).
fn optimal_within(policy: &Policy, max_work: Option<u64>) -> Request<'_> {
    Request {
        budgets: &[],
        strategy: Strategy::Optimal,
        policy,
        explain: false,
        tuning: &Tuning::DEFAULT,
        max_work,
        interrupt: &Uninterrupted,
        reuse: None,
    }
}

/// Siblings of `tokens` scored (tokens + `spread`) over the largest plus `spread` by the
/// first child and by `second` by the other, packed by `optimal` within `max_work`: each
/// child's selection and whether it is exact.
fn limited(
    (tokens, spread): (&[u64], u64),
    second: &[f64],
    budgets: [u128; 2],
    loss: f64,
    max_work: Option<u64>,
) -> Vec<(Vec<u32>, bool)> {
    let top = (tokens.iter().max().unwrap() + spread) as f64;
    let first: Vec<f64> = tokens.iter().map(|&t| (t + spread) as f64 / top).collect();
    let mut columns = Columns::new(tokens.len(), &Tuning::default()).unwrap();
    for (at, (&count, &score)) in tokens.iter().zip(&first).enumerate() {
        let id = format!("f{at}");
        columns
            .push(id.as_bytes(), at as u64, count, score)
            .unwrap();
    }
    let children = [
        ChildAsk {
            relevances: &first,
            budget: budgets[0],
        },
        ChildAsk {
            relevances: second,
            budget: budgets[1],
        },
    ];
    let policy = Policy::default();
    let request = optimal_within(&policy, max_work);
    let loss = Share::of(loss).unwrap();
    let detach = Counting(Cell::new(0));
    let packed = pack_siblings(columns, &children, loss, &PRICES, request, &detach).unwrap();
    packed
        .children
        .into_iter()
        .map(|(selection, _)| (selection.kept, selection.exact))
        .collect()
}

/// Each child's own call finishes within 200 steps; the re-solves that look for a larger
/// shared set do not, and may refuse one that holds: no child is exact.
#[test]
fn siblings_whose_growth_stopped_short_are_not_exact() {
    let second = [0.822, 0.013, 0.001, 0.215, 0.222, 0.439];
    let pack = |max_work| {
        limited(
            ([96, 22, 66, 73, 18, 85].as_slice(), 10),
            &second,
            [180, 120],
            0.2,
            max_work,
        )
    };
    let exact = |children: &[(Vec<u32>, bool)]| children.iter().map(|c| c.1).collect::<Vec<_>>();
    let (whole, short) = (pack(None), pack(Some(200)));
    assert_eq!(exact(&whole), [true, true]);
    assert_eq!(exact(&short), [false, false]);
    assert_ne!(whole, short);
}

/// What a child shares the other decides too: with no loss, the second child's own call
/// finishes within 200 steps, the first's does not, and neither child is exact.
#[test]
fn a_child_is_exact_only_when_every_childs_call_finished() {
    let second = [0.714, 0.921, 0.395, 0.801, 0.445];
    let pack = |max_work| {
        limited(
            ([35, 61, 77, 93, 50].as_slice(), 10),
            &second,
            [158, 105],
            0.0,
            max_work,
        )
    };
    let exact = |children: &[(Vec<u32>, bool)]| children.iter().map(|c| c.1).collect::<Vec<_>>();
    assert_eq!(exact(&pack(None)), [true, true]);
    assert_eq!(exact(&pack(Some(200))), [false, false]);
}
