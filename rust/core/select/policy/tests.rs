//! The driver under a selection policy against a plain reading of the contract, over
//! generated inputs (pins, groups, floors, every overflow policy and order, explanations),
//! with tuning numbers small enough that every path runs.

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::core::test_support::{
    first_repeat, generated, multiple_choice_by_dual, relevance_of, tiny_tuning, weak_hash,
    Counting, Input, Lcg,
};
use crate::core::*;

/// A class's units as (value, tokens).
type Class = Vec<(u128, u128)>;

struct Marks {
    required: Vec<bool>,
    groups: Vec<Option<u8>>,
    variants: Vec<Option<u8>>,
}

impl Marks {
    fn plain(len: usize) -> Marks {
        Marks {
            required: vec![false; len],
            groups: vec![None; len],
            variants: vec![None; len],
        }
    }
}

struct Asked<'a> {
    budgets: &'a [u128],
    strategy: Strategy,
    policy: Policy,
    explain: bool,
}

fn run(
    input: &Input,
    marks: &Marks,
    asked: &Asked<'_>,
    tuning: &Tuning,
) -> Result<Compression, Refusal> {
    let request = Request {
        budgets: asked.budgets,
        strategy: asked.strategy,
        policy: &asked.policy,
        explain: asked.explain,
        tuning,
        max_work: None,
        interrupt: &Uninterrupted,
        reuse: None,
    };
    let mut columns = Columns::new(input.ids.len(), tuning).unwrap();
    for (i, id) in input.ids.iter().enumerate() {
        columns
            .push(
                id.as_bytes(),
                weak_hash(id),
                input.tokens[i],
                input.scores[i],
            )
            .unwrap();
        let name = marks.groups[i].map(group_name);
        let variant = marks.variants[i].map(variant_name);
        if marks.required[i] || name.is_some() || variant.is_some() {
            let group = name
                .as_ref()
                .map(|n| (n.as_bytes(), group_hash(marks.groups[i].unwrap())));
            let variant = variant
                .as_ref()
                .map(|n| (n.as_bytes(), group_hash(marks.variants[i].unwrap())));
            columns.mark_last(marks.required[i], group, variant);
        }
    }
    let detach = Counting(Cell::new(0));
    let result = compress(columns, request, &detach);
    assert_eq!(
        detach.0.get(),
        usize::from(request.detaches(input.ids.len()))
    );
    result
}

/// A hash that spreads groups over the top bits (which pick their bucket) while different
/// names share it (group 1 and group 4, say).
fn group_hash(group: u8) -> u64 {
    u64::from(group % 3) << 62
}

fn group_name(group: u8) -> String {
    format!("group-{group}")
}

fn variant_name(variant: u8) -> String {
    format!("variant-{variant}")
}

/// The variant rules, read plainly: a grouped fragment whose variant differs from its group's
/// first member's, the earliest; then a required fragment of a second unit in a set.
fn broken_rule(input: &Input, marks: &Marks, units: &[Vec<usize>]) -> Option<Refusal> {
    let name = |i: usize| marks.variants[i].map(|v| variant_name(v).into_bytes());
    let rule = |kind, index: usize, first: usize| VariantRule {
        kind,
        index: index as u32,
        first_index: first as u32,
        fragment_id: input.ids[index].as_bytes().to_vec(),
        variant: name(index),
        group: (kind == ErrorKind::VariantGroupMismatch)
            .then(|| group_name(marks.groups[index].unwrap()).into_bytes()),
        first_variant: if kind == ErrorKind::VariantGroupMismatch {
            name(first)
        } else {
            None
        },
    };
    for i in 0..input.ids.len() {
        if let Some(g) = marks.groups[i] {
            let first = (0..i).find(|&f| marks.groups[f] == Some(g)).unwrap_or(i);
            if marks.variants[i] != marks.variants[first] {
                let kind = ErrorKind::VariantGroupMismatch;
                return Some(Refusal::VariantRule(rule(kind, i, first)));
            }
        }
    }
    let unit_of = |i: usize| units.iter().position(|members| members.contains(&i));
    for i in (0..input.ids.len()).filter(|&i| marks.required[i]) {
        let Some(v) = marks.variants[i] else {
            continue;
        };
        let first = (0..i).find(|&f| {
            marks.required[f] && marks.variants[f] == Some(v) && unit_of(f) != unit_of(i)
        });
        if let Some(first) = first {
            let kind = ErrorKind::VariantRequiredTwice;
            return Some(Refusal::VariantRule(rule(kind, i, first)));
        }
    }
    None
}

fn rank_order(input: &Input, a: usize, b: usize) -> Ordering {
    let (x, y) = (input.scores[a] + 0.0, input.scores[b] + 0.0);
    y.partial_cmp(&x)
        .unwrap()
        .then_with(|| input.ids[a].cmp(&input.ids[b]))
}

/// The contract, read plainly: units by group, ranked by their best member, required ones
/// first, the rest walked in rank order, then the overflow policy and the order.
fn expected(input: &Input, marks: &Marks, asked: &Asked<'_>) -> Result<Compression, Refusal> {
    if let Some(duplicate) = first_repeat(input) {
        return Err(duplicate);
    }
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut by_group: BTreeMap<u8, usize> = BTreeMap::new();
    for i in 0..input.ids.len() {
        match marks.groups[i] {
            Some(g) if by_group.contains_key(&g) => units[by_group[&g]].push(i),
            group => {
                if let Some(g) = group {
                    by_group.insert(g, units.len());
                }
                units.push(vec![i]);
            }
        }
    }
    if let Some(broken) = broken_rule(input, marks, &units) {
        return Err(broken);
    }
    // A unit's variant set is its first member's (all members share it).
    let variant: Vec<Option<u8>> = units.iter().map(|m| marks.variants[m[0]]).collect();
    let lead: Vec<usize> = units
        .iter()
        .map(|m| *m.iter().min_by(|&&a, &&b| rank_order(input, a, b)).unwrap())
        .collect();
    let mut ranked: Vec<usize> = (0..units.len()).collect();
    ranked.sort_by(|&a, &b| rank_order(input, lead[a], lead[b]));
    let tokens: Vec<u128> = units
        .iter()
        .map(|m| m.iter().map(|&i| u128::from(input.tokens[i])).sum())
        .collect();
    let required: Vec<bool> = units
        .iter()
        .map(|m| m.iter().any(|&i| marks.required[i]))
        .collect();
    let values: Vec<u128> = units
        .iter()
        .map(|m| {
            m.iter()
                .map(|&i| (input.scores[i] * 2f64.powi(32)).round_ties_even() as u128)
                .sum()
        })
        .collect();
    let eligible: Vec<bool> = (0..units.len())
        .map(|u| required[u] || input.scores[lead[u]] + 0.0 >= asked.policy.min_relevance)
        .collect();
    let required_tokens: u128 = (0..units.len())
        .filter(|&u| required[u])
        .map(|u| tokens[u])
        .sum();
    // A required unit settles its variant set: the set's others are not walked.
    let settled: Vec<bool> = (0..units.len())
        .map(|u| {
            !required[u]
                && variant[u].is_some()
                && (0..units.len()).any(|r| required[r] && variant[r] == variant[u])
        })
        .collect();
    let walkable: Vec<usize> = ranked
        .iter()
        .copied()
        .filter(|&u| eligible[u] && !required[u] && !settled[u])
        .collect();
    let mut selections = Vec::new();
    let mut decisions = Vec::new();
    for (at, &budget) in asked.budgets.iter().enumerate() {
        let mut kept: Vec<usize> = (0..units.len()).filter(|&u| required[u]).collect();
        let mut decided: Vec<(bool, Reason, Option<u128>)> = (0..units.len())
            .map(|u| match (required[u], eligible[u], settled[u]) {
                (true, _, _) => (true, Reason::Required, None),
                (false, false, _) => (false, Reason::BelowMinRelevance, None),
                (false, true, true) => (false, Reason::VariantKept, None),
                _ => (false, Reason::ZeroBudget, None),
            })
            .collect();
        if required_tokens > budget {
            if asked.policy.on_overflow != OnOverflow::KeepTop {
                return Err(Refusal::BudgetExceeded(BudgetExceeded {
                    budget,
                    needed: required_tokens,
                    required: true,
                }));
            }
            if budget > 0 {
                for &u in &walkable {
                    decided[u] = (false, Reason::NoRoom, None);
                }
            }
        } else if budget > 0 {
            let mut left = budget - required_tokens;
            let mut stopped = false;
            let mut taken: Vec<u8> = Vec::new();
            for &u in &walkable {
                if stopped {
                    decided[u] = (false, Reason::AfterStop, None);
                } else if variant[u].is_some_and(|v| taken.contains(&v)) {
                    decided[u] = (false, Reason::VariantKept, Some(left));
                } else if tokens[u] <= left {
                    decided[u] = (true, Reason::Fits, Some(left));
                    kept.push(u);
                    left -= tokens[u];
                    taken.extend(variant[u]);
                } else {
                    decided[u] = (false, Reason::NoRoom, Some(left));
                    stopped = asked.strategy == Strategy::Prefix;
                }
            }
            if kept.is_empty() && !walkable.is_empty() {
                let top = walkable[0];
                match asked.policy.on_overflow {
                    OnOverflow::KeepTop => {
                        kept.push(top);
                        decided[top] = (true, Reason::TopOverBudget, Some(budget));
                    }
                    OnOverflow::Strict => {}
                    OnOverflow::Raise => {
                        let needed = match asked.strategy {
                            Strategy::Prefix => tokens[top],
                            _ => walkable.iter().map(|&u| tokens[u]).min().unwrap(),
                        };
                        return Err(Refusal::BudgetExceeded(BudgetExceeded {
                            budget,
                            needed,
                            required: false,
                        }));
                    }
                }
            }
        }
        let position = |u: usize| ranked.iter().position(|&r| r == u).unwrap();
        kept.sort_by_key(|&u| position(u));
        let fragments: Vec<u32> = match asked.policy.order {
            Order::Input => {
                let mut all: Vec<usize> = kept.iter().flat_map(|&u| units[u].clone()).collect();
                all.sort_unstable();
                all.into_iter().map(|i| i as u32).collect()
            }
            order => {
                if order == Order::Edges {
                    let front = kept.iter().step_by(2);
                    let back = kept.iter().skip(1).step_by(2).rev();
                    kept = front.chain(back).copied().collect();
                }
                kept.iter()
                    .flat_map(|&u| units[u].iter().map(|&i| i as u32))
                    .collect()
            }
        };
        let compressed_tokens = kept.iter().map(|&u| tokens[u]).sum();
        let value_kept = kept.iter().map(|&u| values[u]).sum();
        let required_value: u128 = (0..units.len())
            .filter(|&u| required[u])
            .map(|u| values[u])
            .sum();
        let value_bound = if budget == 0 || required_tokens > budget {
            required_value
        } else {
            let room = budget - required_tokens;
            // (value, tokens) per unit of one class: a variant set, or a unit of none.
            let mut classes: BTreeMap<(Option<u8>, usize), Class> = BTreeMap::new();
            for &u in &walkable {
                let alone = if variant[u].is_some() { 0 } else { u };
                let class = classes.entry((variant[u], alone)).or_default();
                class.push((values[u], tokens[u]));
            }
            let classes: Vec<Class> = classes.into_values().collect();
            let bound = if variant.iter().any(Option::is_some) {
                multiple_choice_by_dual(&classes, room)
            } else {
                fractional(&walkable, &values, &tokens, room)
            };
            required_value + bound
        };
        selections.push(Selection {
            kept: fragments,
            compressed_tokens,
            value_kept,
            value_bound,
            reused_tokens: 0,
            exact: true,
        });
        if asked.explain && at == 0 {
            let mut unit_of = vec![0; input.ids.len()];
            for (u, members) in units.iter().enumerate() {
                for &i in members {
                    unit_of[i] = u;
                }
            }
            decisions = unit_of
                .iter()
                .map(|&u| Decision {
                    kept: decided[u].0,
                    reason: decided[u].1,
                    rank: position(u) as u32,
                    budget_left: decided[u].2,
                })
                .collect();
        }
    }
    Ok(Compression {
        original_tokens: input.tokens.iter().map(|&t| u128::from(t)).sum(),
        relevance_kept: relevance_of(input, &selections),
        selections,
        decisions,
    })
}

/// The floor of the fractional knapsack's optimum: by value per token, the last unit in part.
fn fractional(units: &[usize], values: &[u128], tokens: &[u128], room: u128) -> u128 {
    let mut order = units.to_vec();
    order.sort_by(|&a, &b| {
        let by_tokens = (tokens[a] > 0).cmp(&(tokens[b] > 0));
        by_tokens.then((values[b] * tokens[a]).cmp(&(values[a] * tokens[b])))
    });
    let (mut left, mut sum) = (room, 0);
    for u in order {
        if tokens[u] <= left {
            left -= tokens[u];
            sum += values[u];
        } else {
            return sum + values[u] * left / tokens[u];
        }
    }
    sum
}

fn marks(rng: &mut Lcg, len: usize) -> Marks {
    let pins = rng.below(4);
    let grouping = rng.below(4);
    let varying = rng.below(4);
    let mut marks = Marks {
        required: (0..len).map(|_| pins > 0 && rng.below(8) < pins).collect(),
        groups: (0..len)
            .map(|_| (grouping > 0 && rng.below(4) < grouping).then(|| rng.below(6) as u8))
            .collect(),
        variants: vec![None; len],
    };
    if varying == 0 {
        return marks;
    }
    // A group renders one thing (now and then a member another: a broken rule), and other
    // fragments render one of four things; most inputs keep one pin per set.
    let per_group: Vec<Option<u8>> = (0..6)
        .map(|_| (rng.below(3) < varying).then(|| rng.below(4) as u8))
        .collect();
    for i in 0..len {
        marks.variants[i] = match marks.groups[i] {
            Some(_) if rng.below(40) == 0 => Some(rng.below(4) as u8),
            Some(g) => per_group[g as usize],
            None => (rng.below(3) < varying).then(|| rng.below(4) as u8),
        };
    }
    if rng.below(4) != 0 {
        let mut pinned: Vec<(u8, Option<u8>)> = Vec::new();
        for i in 0..len {
            if let (true, Some(v)) = (marks.required[i], marks.variants[i]) {
                let unit = (v, marks.groups[i]);
                if pinned
                    .iter()
                    .any(|&(w, g)| w == v && (g != unit.1 || g.is_none()))
                {
                    marks.required[i] = false;
                } else {
                    pinned.push(unit);
                }
            }
        }
    }
    marks
}

#[test]
fn generated_inputs_follow_the_policy() {
    let mut rng = Lcg(11);
    const FLOORS: [f64; 5] = [0.0, 0.2, 0.5, 0.75, 1.0];
    for case in 0..3000 {
        let mut input = generated(&mut rng);
        // Token counts small enough that required units can fit or not.
        for tokens in &mut input.tokens {
            *tokens %= 50;
        }
        let marks = marks(&mut rng, input.ids.len());
        let total: u128 = input.tokens.iter().map(|&t| u128::from(t)).sum();
        let budgets: Vec<u128> = (0..1 + rng.below(3))
            .map(|_| match rng.below(6) {
                0 => 0,
                1 => u128::MAX,
                _ => u128::from(rng.below(total as u64 + 3)),
            })
            .collect();
        let asked = Asked {
            budgets: &budgets,
            strategy: Strategy::ALL[case % 2],
            policy: Policy {
                min_relevance: FLOORS[rng.below(5) as usize],
                on_overflow: OnOverflow::ALL[rng.below(3) as usize],
                order: Order::ALL[rng.below(3) as usize],
            },
            explain: rng.below(2) == 0,
        };
        let tuning = if case % 3 == 0 {
            Tuning::default()
        } else {
            tiny_tuning(&mut rng)
        };
        assert_eq!(
            run(&input, &marks, &asked, &tuning),
            expected(&input, &marks, &asked),
            "case {case}: {:?} {budgets:?} explain {}",
            asked.policy,
            asked.explain
        );
    }
}

#[test]
fn reasons_are_named_in_their_order() {
    for (at, reason) in Reason::ALL.into_iter().enumerate() {
        assert_eq!(reason as usize, at);
    }
    let names: Vec<&str> = Reason::ALL.iter().map(|r| r.name()).collect();
    assert_eq!(
        names,
        [
            "required",
            "fits",
            "top_over_budget",
            "no_room",
            "after_stop",
            "below_min_relevance",
            "zero_budget",
            "chosen",
            "not_chosen",
            "variant_kept",
            "reused"
        ]
    );
}

#[test]
fn a_group_whose_best_member_is_above_the_floor_is_kept_whole() {
    let input = Input {
        ids: vec!["call".into(), "result".into(), "noise".into()],
        tokens: vec![5, 7, 1],
        scores: vec![0.9, 0.1, 0.15],
    };
    let marks = Marks {
        groups: vec![Some(1), Some(1), None],
        ..Marks::plain(3)
    };
    let asked = Asked {
        budgets: &[100],
        strategy: Strategy::Greedy,
        policy: Policy {
            min_relevance: 0.2,
            ..Policy::default()
        },
        explain: true,
    };
    let result = run(&input, &marks, &asked, &Tuning::default()).unwrap();
    assert_eq!(result.selections[0].kept, vec![0, 1]);
    assert_eq!(result.selections[0].compressed_tokens, 12);
    assert_eq!(result.decisions[2].reason, Reason::BelowMinRelevance);
    assert_eq!(result.decisions[1].rank, 0);
    assert_eq!(result.decisions[2].rank, 1);
}

#[test]
fn a_plain_input_explained_has_a_decision_per_fragment() {
    // No pins, no groups, the default policy: only the explanation keeps it off the plain
    // path, which decides nothing.
    let mut rng = Lcg(5);
    for _ in 0..50 {
        let input = generated(&mut rng);
        let len = input.ids.len();
        let marks = Marks::plain(len);
        let total: u128 = input.tokens.iter().map(|&t| u128::from(t)).sum();
        let asked = Asked {
            budgets: &[total / 2],
            strategy: Strategy::Greedy,
            policy: Policy::default(),
            explain: true,
        };
        let compressed = run(&input, &marks, &asked, &Tuning::default());
        assert_eq!(compressed, expected(&input, &marks, &asked));
        if let Ok(compression) = compressed {
            assert_eq!(compression.decisions.len(), len);
        }
    }
}

#[test]
fn a_zero_token_unit_after_the_budget_is_spent_is_still_kept() {
    // The budget is spent by the first unit while one unit with tokens and one without are
    // still to come: the walk may stop only once every zero-token unit is seen (prefix stops
    // at the group that does not fit).
    let input = Input {
        ids: vec![
            "spent".into(),
            "call".into(),
            "result".into(),
            "free".into(),
        ],
        tokens: vec![5, 3, 3, 0],
        scores: vec![0.9, 0.8, 0.8, 0.1],
    };
    let marks = Marks {
        groups: vec![None, Some(1), Some(1), None],
        ..Marks::plain(4)
    };
    for strategy in [Strategy::Greedy, Strategy::Density, Strategy::Optimal] {
        let asked = Asked {
            budgets: &[5],
            strategy,
            policy: Policy::default(),
            explain: false,
        };
        let result = run(&input, &marks, &asked, &Tuning::default()).unwrap();
        assert_eq!(result.selections[0].kept, vec![0, 3], "{strategy:?}");
    }
}

/// Renderings of three things and a pinned one. The value strategies keep the outline of
/// `a` with `b` and the summary of `c` (45 tokens), worth more than any set with a full text
/// within 60; the walks keep the full text of `a`, then pass over its outline.
#[test]
fn each_strategy_tells_which_renderings_lost_to_a_kept_one() {
    let input = Input {
        ids: [
            "a-full",
            "a-outline",
            "b",
            "c-full",
            "c-sum",
            "d-pin",
            "d-other",
        ]
        .map(String::from)
        .to_vec(),
        tokens: vec![50, 10, 30, 40, 5, 1, 2],
        scores: vec![0.9, 0.8, 0.7, 0.6, 0.5, 0.1, 0.95],
    };
    let marks = Marks {
        required: vec![false, false, false, false, false, true, false],
        variants: vec![Some(0), Some(0), None, Some(2), Some(2), Some(3), Some(3)],
        ..Marks::plain(7)
    };
    use Reason::*;
    let by_value = (
        vec![1, 2, 4, 5],
        [
            VariantKept,
            Chosen,
            Chosen,
            VariantKept,
            Chosen,
            Required,
            VariantKept,
        ],
        [None; 7],
    );
    let (ten, sixty) = (Some(10), Some(60));
    let greedy = (
        vec![0, 4, 5],
        [
            Fits,
            VariantKept,
            NoRoom,
            NoRoom,
            Fits,
            Required,
            VariantKept,
        ],
        [sixty, ten, ten, ten, ten, None, None],
    );
    // Passing over a rendering does not stop prefix; the first misfit does.
    let prefix = (
        vec![0, 5],
        [
            Fits,
            VariantKept,
            NoRoom,
            AfterStop,
            AfterStop,
            Required,
            VariantKept,
        ],
        [sixty, ten, ten, None, None, None, None],
    );
    for (strategy, (kept, reasons, left)) in [
        (Strategy::Greedy, greedy),
        (Strategy::Prefix, prefix),
        (Strategy::Density, by_value.clone()),
        (Strategy::Optimal, by_value),
    ] {
        let asked = Asked {
            budgets: &[61, 61],
            strategy,
            policy: Policy::default(),
            explain: true,
        };
        let result = run(&input, &marks, &asked, &Tuning::default()).unwrap();
        assert_eq!(result.selections[0].kept, kept, "{strategy:?}");
        assert_eq!(result.selections[1], result.selections[0]);
        let told: Vec<Reason> = result.decisions.iter().map(|d| d.reason).collect();
        assert_eq!(told, reasons, "{strategy:?}");
        let was_left: Vec<Option<u128>> = result.decisions.iter().map(|d| d.budget_left).collect();
        assert_eq!(was_left, left, "{strategy:?}");
        for (fragment, decision) in result.decisions.iter().enumerate() {
            assert_eq!(
                decision.kept,
                kept.contains(&(fragment as u32)),
                "{strategy:?}"
            );
        }
    }
}

/// A rendering kept alone over budget was not chosen over the others of its set: they are
/// told as not fitting, not as passed over.
#[test]
fn a_rendering_kept_alone_over_budget_leaves_its_set_told_as_not_fitting() {
    let input = Input {
        ids: vec!["a-full".into(), "a-outline".into()],
        tokens: vec![50, 10],
        scores: vec![0.9, 0.8],
    };
    let marks = Marks {
        variants: vec![Some(0), Some(0)],
        ..Marks::plain(2)
    };
    for strategy in Strategy::ALL {
        let asked = Asked {
            budgets: &[5],
            strategy,
            policy: Policy::default(),
            explain: true,
        };
        let result = run(&input, &marks, &asked, &Tuning::default()).unwrap();
        assert_eq!(result.selections[0].kept, vec![0], "{strategy:?}");
        let told: Vec<(bool, Reason)> = result
            .decisions
            .iter()
            .map(|d| (d.kept, d.reason))
            .collect();
        let after = match strategy {
            Strategy::Prefix => Reason::AfterStop,
            _ => Reason::NoRoom,
        };
        assert_eq!(
            told,
            [(true, Reason::TopOverBudget), (false, after)],
            "{strategy:?}"
        );
        assert_eq!(result.decisions[0].budget_left, Some(5), "{strategy:?}");
    }
}

#[test]
fn raise_names_the_smallest_unit_when_none_fits_not_the_first_walked() {
    // The walk passes the first unit and goes on to find the smallest: a walk that has kept
    // nothing does not end early.
    let input = Input {
        ids: vec!["big".into(), "small".into(), "mid".into()],
        tokens: vec![9, 6, 7],
        scores: vec![0.9, 0.5, 0.7],
    };
    let asked = Asked {
        budgets: &[5],
        strategy: Strategy::Greedy,
        policy: Policy {
            on_overflow: OnOverflow::Raise,
            ..Policy::default()
        },
        explain: false,
    };
    let refused = run(&input, &Marks::plain(3), &asked, &Tuning::default()).err();
    assert_eq!(
        refused,
        Some(Refusal::BudgetExceeded(BudgetExceeded {
            budget: 5,
            needed: 6,
            required: false,
        }))
    );
}

#[test]
fn a_worthless_unit_that_fits_exactly_is_not_chosen_and_raises_nothing() {
    // The only unit that fits fills the budget exactly and is worth nothing: `optimal` keeps
    // nothing, and since a unit fits, no overflow rule applies.
    let input = Input {
        ids: vec!["empty".into(), "large".into()],
        tokens: vec![4, 9],
        scores: vec![0.0, 0.0],
    };
    for on_overflow in [OnOverflow::Raise, OnOverflow::KeepTop] {
        let asked = Asked {
            budgets: &[4],
            strategy: Strategy::Optimal,
            policy: Policy {
                on_overflow,
                ..Policy::default()
            },
            explain: false,
        };
        let result = run(&input, &Marks::plain(2), &asked, &Tuning::default()).unwrap();
        assert_eq!(
            result.selections[0].kept,
            Vec::<u32>::new(),
            "{on_overflow:?}"
        );
    }
}
