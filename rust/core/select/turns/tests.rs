//! A turn against a plain reading of its rule (docs/turns.md), over generated inputs: the
//! run read off the matched rows, each fill a compression with the run's first units marked
//! required, headroom as a strict compression of the smaller budget, the output arranged
//! from a fill in rank order. Tuning numbers are small enough that every path runs.

use std::cell::Cell;

use crate::core::test_support::{
    generated, relevance_of, tiny_tuning, weak_hash, Counting, Input, Lcg,
};
use crate::core::*;

const NAMES: [&str; 3] = ["x", "y", "z"];

struct Case {
    input: Input,
    required: Vec<bool>,
    groups: Vec<Option<usize>>,
    variants: Vec<Option<usize>>,
    strategy: Strategy,
    policy: Policy,
    budget: u128,
    explain: bool,
    tuning: Tuning,
    max_work: Option<u64>,
}

impl Case {
    fn generated(rng: &mut Lcg) -> Case {
        let input = generated(rng);
        let len = input.ids.len();
        let marks = rng.below(3);
        let mut pick = |share: u64| (0..len).map(|_| rng.below(100) < share).collect::<Vec<_>>();
        let required = pick(if marks == 0 { 0 } else { 8 });
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
        // A third of the tokens and less, half the time: where the budget bites.
        let ceiling = [total + 20, total / 3 + 10][rng.below(2) as usize];
        Case {
            required,
            groups,
            variants,
            strategy: Strategy::ALL[rng.below(4) as usize],
            policy: Policy {
                min_relevance: [0.0, 0.3, 0.6][rng.below(3) as usize],
                on_overflow: OnOverflow::ALL[rng.below(3) as usize],
                order: Order::ALL[rng.below(3) as usize],
            },
            budget: u128::from(rng.below(ceiling)),
            explain: rng.below(2) == 0,
            tuning: tiny_tuning(rng),
            max_work: None,
            input,
        }
    }

    /// The compression of this case with the fragments `pinned` marked required too.
    fn compress(
        &self,
        pinned: &[bool],
        budget: u128,
        policy: &Policy,
        reuse: Option<&Reuse>,
    ) -> Result<Compression, Refusal> {
        let input = &self.input;
        let mut columns = Columns::new(input.ids.len(), &self.tuning).unwrap();
        let group_names: Vec<String> = NAMES.iter().map(|n| format!("group-{n}")).collect();
        let variant_names: Vec<String> = NAMES.iter().map(|n| format!("variant-{n}")).collect();
        for (i, id) in input.ids.iter().enumerate() {
            let (tokens, score) = (input.tokens[i], input.scores[i]);
            columns
                .push(id.as_bytes(), weak_hash(id), tokens, score)
                .unwrap();
            let required = self.required[i] || pinned[i];
            let group = self.groups[i].map(|g| (group_names[g].as_bytes(), g as u64));
            let variant = self.variants[i].map(|v| (variant_names[v].as_bytes(), v as u64));
            if required || group.is_some() || variant.is_some() {
                columns.mark_last(required, group, variant);
            }
        }
        let budgets = [budget];
        let request = Request {
            budgets: &budgets,
            strategy: self.strategy,
            policy,
            explain: self.explain,
            tuning: &self.tuning,
            max_work: self.max_work,
            interrupt: &Uninterrupted,
            reuse,
        };
        compress(columns, request, &Counting(Cell::new(0)))
    }

    /// Units as the rule reads them: a group's members in input order, every other
    /// fragment alone; in order of first member.
    fn units(&self) -> Vec<Vec<usize>> {
        let mut units: Vec<Vec<usize>> = Vec::new();
        let mut of_group: [Option<usize>; 3] = [None; 3];
        for i in 0..self.input.ids.len() {
            match self.groups[i] {
                Some(g) => match of_group[g] {
                    Some(unit) => units[unit].push(i),
                    None => {
                        of_group[g] = Some(units.len());
                        units.push(vec![i]);
                    }
                },
                None => units.push(vec![i]),
            }
        }
        units
    }
}

/// The reusable run, read plainly from docs/turns.md, as indices into `units`.
fn run_of(case: &Case, units: &[Vec<usize>], matched: &[u32]) -> Vec<usize> {
    let input = &case.input;
    let tokens =
        |unit: &Vec<usize>| -> u128 { unit.iter().map(|&i| u128::from(input.tokens[i])).sum() };
    let required = |unit: &Vec<usize>| unit.iter().any(|&i| case.required[i]);
    let best = |unit: &Vec<usize>| {
        unit.iter()
            .map(|&i| input.scores[i] + 0.0)
            .fold(0.0, f64::max)
    };
    let required_tokens: u128 = units.iter().filter(|u| required(u)).map(tokens).sum();
    let mut run = Vec::new();
    if case.budget == 0 || required_tokens > case.budget {
        return run;
    }
    let mut taken = required_tokens;
    let mut at = 0;
    while at < matched.len() {
        let Some(unit) = units
            .iter()
            .position(|u| u.contains(&(matched[at] as usize)))
        else {
            break;
        };
        let members = &units[unit];
        let whole = matched[at..]
            .iter()
            .take(members.len())
            .map(|&row| row as usize)
            .eq(members.iter().copied());
        if !whole || run.contains(&unit) {
            break;
        }
        if !required(members) && best(members) < case.policy.min_relevance {
            break;
        }
        if let Some(set) = case.variants[members[0]] {
            let in_set = |u: &usize| case.variants[units[*u][0]] == Some(set);
            let other_required =
                (0..units.len()).any(|u| u != unit && in_set(&u) && required(&units[u]));
            if run.iter().any(in_set) || other_required {
                break;
            }
        }
        if !required(members) {
            taken += tokens(members);
            if taken > case.budget {
                break;
            }
        }
        run.push(unit);
        at += members.len();
    }
    run
}

/// What the turn should answer, from compressions without reuse.
fn expected(case: &Case, reuse: &Reuse) -> Result<Compression, Refusal> {
    let len = case.input.ids.len();
    let policy = case.policy;
    let ordinary = case.compress(&vec![false; len], case.budget, &policy, None)?;
    let units = case.units();
    let run = run_of(case, &units, &reuse.matched);
    let best = ordinary.selections[0].value_kept;
    let pins = |length: usize| {
        let mut pinned = vec![false; len];
        for &unit in &run[..length] {
            for &i in &units[unit] {
                pinned[i] = true;
            }
        }
        pinned
    };
    let mut reused = 0;
    let mut fill = ordinary.clone();
    for length in (1..=run.len()).rev() {
        let pinned = case
            .compress(&pins(length), case.budget, &policy, None)
            .unwrap();
        if reuse
            .max_value_loss
            .keeps_enough(pinned.selections[0].value_kept, best)
        {
            (reused, fill) = (length, pinned);
            break;
        }
    }
    let mut budget = case.budget;
    let mut fill_policy = policy;
    if reused < run.len() && !reuse.headroom.is_zero() {
        let smaller = reuse
            .headroom_room
            .unwrap_or_else(|| budget - reuse.headroom.of_amount(budget));
        let strict = Policy {
            on_overflow: OnOverflow::Strict,
            ..policy
        };
        if let Ok(left_room) = case.compress(&pins(reused), smaller, &strict, None) {
            if !left_room.selections[0].kept.is_empty() {
                (fill, budget, fill_policy) = (left_room, smaller, strict);
            }
        }
    }
    let first: Vec<u32> = run[..reused]
        .iter()
        .flat_map(|&unit| units[unit].iter().map(|&i| i as u32))
        .collect();
    // The fill's units in rank order, less the run's, then arranged by the order.
    let by_rank = Policy {
        order: Order::Ranking,
        ..fill_policy
    };
    let ranked = case
        .compress(&pins(reused), budget, &by_rank, None)
        .unwrap();
    let unit_of = |i: u32| {
        units
            .iter()
            .position(|u| u.contains(&(i as usize)))
            .unwrap()
    };
    let mut rest: Vec<usize> = Vec::new();
    for &i in &ranked.selections[0].kept {
        let unit = unit_of(i);
        if !run[..reused].contains(&unit) && rest.last() != Some(&unit) {
            rest.push(unit);
        }
    }
    let arranged: Vec<u32> = match policy.order {
        Order::Input => {
            let mut kept: Vec<u32> = rest
                .iter()
                .flat_map(|&u| units[u].iter().map(|&i| i as u32))
                .collect();
            kept.sort_unstable();
            kept
        }
        order => {
            if order == Order::Edges {
                let front = rest.iter().step_by(2);
                let back = rest.iter().skip(1).step_by(2).rev();
                rest = front.chain(back).copied().collect();
            }
            rest.iter()
                .flat_map(|&u| units[u].iter().map(|&i| i as u32))
                .collect()
        }
    };
    let mut selection = fill.selections[0].clone();
    selection.kept = first.iter().copied().chain(arranged).collect();
    selection.value_bound = ordinary.selections[0].value_bound;
    selection.reused_tokens = first
        .iter()
        .map(|&i| u128::from(case.input.tokens[i as usize]))
        .sum();
    let mut decisions = fill.decisions;
    for &i in first.iter().filter(|_| case.explain) {
        let decision = &mut decisions[i as usize];
        decision.reason = Reason::Reused;
        decision.budget_left = None;
    }
    let selections = vec![selection];
    Ok(Compression {
        original_tokens: ordinary.original_tokens,
        relevance_kept: relevance_of(&case.input, &selections),
        selections,
        decisions,
    })
}

/// Rows an earlier output sent: another budget's output of this input with its scores
/// shuffled (as a turn before rescored them) or as they are, cut or reordered now and then;
/// or rows at random (some past the end).
fn matched_rows(case: &Case, rng: &mut Lcg) -> Vec<u32> {
    let len = case.input.ids.len() as u64;
    let mut rows: Vec<u32> = match rng.below(6) {
        0 => (0..rng.below(len + 3))
            .map(|_| rng.below(len + 2) as u32)
            .collect(),
        shuffled => {
            let mut scores = case.input.scores.clone();
            match shuffled {
                1 => {}
                // The least relevant first, as a turn long ago ranked them.
                2 | 3 => scores.iter_mut().for_each(|score| *score = 1.0 - *score),
                _ => {
                    for at in (1..scores.len()).rev() {
                        scores.swap(at, rng.below(at as u64 + 1) as usize);
                    }
                }
            }
            let earlier = Case {
                input: Input {
                    ids: case.input.ids.clone(),
                    tokens: case.input.tokens.clone(),
                    scores,
                },
                required: case.required.clone(),
                groups: case.groups.clone(),
                variants: case.variants.clone(),
                policy: Policy {
                    on_overflow: OnOverflow::KeepTop,
                    ..case.policy
                },
                tuning: case.tuning,
                ..*case
            };
            let other = match rng.below(2) {
                0 => case.budget,
                _ => u128::from(rng.below(case.budget as u64 + 40)),
            };
            match earlier.compress(&vec![false; len as usize], other, &earlier.policy, None) {
                Ok(earlier) => earlier.selections[0].kept.clone(),
                Err(_) => Vec::new(),
            }
        }
    };
    if rng.below(4) == 0 && rows.len() > 1 {
        let at = rng.below(rows.len() as u64) as usize;
        rows.swap(0, at);
    }
    if rng.below(6) == 0 {
        rows.truncate(rng.below(rows.len() as u64 + 1) as usize);
    }
    rows
}

#[test]
fn a_turn_is_its_rule_read_plainly() {
    let mut rng = Lcg(41);
    let (mut cut, mut whole, mut headroom_used) = (0, 0, 0);
    for case_number in 0..1500 {
        let case = Case::generated(&mut rng);
        let reuse = Reuse {
            matched: matched_rows(&case, &mut rng),
            max_value_loss: Share::of([0.0, 0.01, 0.3][rng.below(3) as usize]).unwrap(),
            headroom: Share::of([0.0, 0.1, 0.5][rng.below(3) as usize]).unwrap(),
            headroom_room: None,
        };
        let got = case.compress(
            &vec![false; case.input.ids.len()],
            case.budget,
            &case.policy,
            Some(&reuse),
        );
        let want = expected(&case, &reuse);
        assert_eq!(
            got, want,
            "case {case_number}: {:?} {:?}",
            case.strategy, case.policy
        );
        if let Ok(got) = got {
            let units = case.units();
            let run = run_of(&case, &units, &reuse.matched);
            let reused = got.selections[0].reused_tokens;
            let run_tokens: u128 = run
                .iter()
                .flat_map(|&u| units[u].iter())
                .map(|&i| u128::from(case.input.tokens[i]))
                .sum();
            if !run.is_empty() && reused == run_tokens {
                whole += 1;
            } else if !run.is_empty() {
                cut += 1;
            }
            headroom_used += usize::from(
                got.selections[0].compressed_tokens + reuse.headroom.of_amount(case.budget)
                    <= case.budget
                    && !reuse.headroom.is_zero(),
            );
        }
    }
    // The cases reach both outcomes often enough to mean something.
    assert!(
        whole > 200 && cut > 45 && headroom_used > 150,
        "{whole} {cut} {headroom_used}"
    );
}

/// Headroom's smaller fill keeps nothing where nothing fits, whatever the overflow policy:
/// under `raise` the call does not raise, and the fill of the whole budget stands.
#[test]
fn headroom_never_raises_and_keeps_nothing_alone_over_its_room() {
    let mut case = Case {
        input: Input {
            ids: vec!["a".into(), "b".into()],
            tokens: vec![70, 60],
            scores: vec![0.9, 0.1],
        },
        required: vec![false; 2],
        groups: vec![None; 2],
        variants: vec![None; 2],
        strategy: Strategy::Greedy,
        policy: Policy {
            on_overflow: OnOverflow::Raise,
            ..Policy::default()
        },
        budget: 100,
        explain: true,
        tuning: Tuning::DEFAULT,
        max_work: None,
    };
    // `b` alone fits, but reusing it leaves no room for `a`: nothing is reused, and half
    // the budget (50) fits neither.
    let reuse = Reuse {
        matched: vec![1],
        max_value_loss: Share::ZERO,
        headroom: Share::of(0.5).unwrap(),
        headroom_room: None,
    };
    for on_overflow in OnOverflow::ALL {
        case.policy.on_overflow = on_overflow;
        let turn = case
            .compress(&[false; 2], 100, &case.policy, Some(&reuse))
            .unwrap();
        assert_eq!(turn.selections[0].kept, [0], "{on_overflow:?}");
        assert_eq!(turn.selections[0].reused_tokens, 0);
        assert_eq!(turn.decisions[0].reason, Reason::Fits);
        assert_eq!(turn.decisions[1].reason, Reason::NoRoom);
        assert_eq!(turn.decisions[1].budget_left, Some(30));
    }
}

/// When the reused run breaks, headroom leaves its share of the budget free: the fill is of
/// the smaller budget, not of the whole one; with no headroom, of the whole one.
#[test]
fn headroom_leaves_room_once_the_run_breaks() {
    let case = Case {
        input: Input {
            ids: vec!["a".into(), "b".into(), "c".into()],
            tokens: vec![40, 40, 40],
            scores: vec![0.9, 0.8, 0.1],
        },
        required: vec![false; 3],
        groups: vec![None; 3],
        variants: vec![None; 3],
        strategy: Strategy::Greedy,
        policy: Policy::default(),
        budget: 100,
        explain: false,
        tuning: Tuning::DEFAULT,
        max_work: None,
    };
    // Reusing `c` costs `b`'s value, which no loss is allowed: the run breaks at once.
    let kept = |headroom: f64, headroom_room: Option<u128>| {
        let reuse = Reuse {
            matched: vec![2],
            max_value_loss: Share::ZERO,
            headroom: Share::of(headroom).unwrap(),
            headroom_room,
        };
        let turn = case
            .compress(&[false; 3], 100, &case.policy, Some(&reuse))
            .unwrap();
        assert_eq!(turn.selections[0].reused_tokens, 0);
        turn.selections[0].kept.clone()
    };
    assert_eq!(kept(0.5, None), [0]);
    assert_eq!(kept(0.0, None), [0, 1]);
    // The room the caller measured (from a budget past u128) is the one the fill has.
    assert_eq!(kept(0.5, Some(80)), [0, 1]);
    assert_eq!(
        kept(0.5, Some(39)),
        [0, 1],
        "nothing fits: the whole budget's fill stands"
    );
    assert_eq!(kept(0.5, Some(40)), [0]);
}

fn case_of(tokens: Vec<u64>, scores: Vec<f64>, required: Vec<bool>, budget: u128) -> Case {
    let len = tokens.len();
    Case {
        input: Input {
            ids: (0..len).map(|i| format!("f{i}")).collect(),
            tokens,
            scores,
        },
        required,
        groups: vec![None; len],
        variants: vec![None; len],
        strategy: Strategy::Greedy,
        policy: Policy::default(),
        budget,
        explain: false,
        tuning: Tuning::DEFAULT,
        max_work: None,
    }
}

fn reusing(matched: Vec<u32>) -> Reuse {
    Reuse {
        matched,
        max_value_loss: Share::ZERO,
        headroom: Share::ZERO,
        headroom_room: None,
    }
}

/// Required units that fill the budget exactly still lead in the previous output's order.
#[test]
fn required_units_filling_the_budget_are_reused_in_the_order_sent() {
    let case = case_of(vec![30, 70], vec![0.2, 0.9], vec![true, true], 100);
    let turn = case
        .compress(&[false; 2], 100, &case.policy, Some(&reusing(vec![0, 1])))
        .unwrap();
    assert_eq!(turn.selections[0].kept, [0, 1]);
    assert_eq!(turn.selections[0].reused_tokens, 100);
}

/// A unit whose variant set holds another, required unit cannot be reused: the required
/// rendering is the one kept.
#[test]
fn a_rendering_whose_set_has_a_required_one_is_not_reused() {
    let mut case = case_of(vec![10, 10], vec![0.9, 0.5], vec![false, true], 100);
    case.variants = vec![Some(0), Some(0)];
    let turn = case
        .compress(&[false; 2], 100, &case.policy, Some(&reusing(vec![0])))
        .unwrap();
    assert_eq!(turn.selections[0].kept, [1]);
    assert_eq!(turn.selections[0].reused_tokens, 0);
}

/// A fill stopped short by the work limit may keep too little and be refused where the
/// finished one holds: the turn that follows is not exact, though the call without reuse
/// and the fill it settles on finished.
#[test]
fn a_turn_whose_fill_stopped_short_is_not_exact() {
    let within = |max_work: Option<u64>| {
        let tokens = vec![276, 651, 308, 182, 450, 607];
        let scores = tokens.iter().map(|&t| (t + 100) as f64 / 751.0).collect();
        Case {
            strategy: Strategy::Optimal,
            max_work,
            ..case_of(tokens, scores, vec![false; 6], 1237)
        }
    };
    let reuse = Reuse {
        max_value_loss: Share::of(0.1).unwrap(),
        ..reusing(vec![1, 3])
    };
    let turn = |max_work: Option<u64>| {
        let case = within(max_work);
        let turn = case.compress(&[false; 6], 1237, &case.policy, Some(&reuse));
        let [selection] = &turn.unwrap().selections[..] else {
            panic!("one budget, one selection")
        };
        (selection.reused_tokens, selection.exact)
    };
    let alone = within(Some(300));
    let ordinary = alone
        .compress(&[false; 6], 1237, &alone.policy, None)
        .unwrap();
    assert!(ordinary.selections[0].exact);
    assert_eq!(turn(None), (651, true));
    assert_eq!(turn(Some(300)), (0, false));
}
