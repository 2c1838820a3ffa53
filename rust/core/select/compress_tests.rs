//! The driver against the obvious way (sort everything, pack in one loop), over generated
//! inputs and with tuning numbers small enough that every path runs.

use std::cell::Cell;
use std::cmp::Ordering;

use super::*;
use crate::core::interrupt::Stop;
use crate::core::test_support::{
    first_repeat, generated, relevance_of, tiny_tuning, weak_hash, Counting, Input, InterruptAt,
    Lcg,
};
use crate::core::*;

fn columns(input: &Input, request: &Request<'_>) -> Columns {
    let mut columns = Columns::new(input.ids.len(), request.tuning).unwrap();
    for ((id, &tokens), &score) in input.ids.iter().zip(&input.tokens).zip(&input.scores) {
        columns
            .push(id.as_bytes(), weak_hash(id), tokens, score)
            .unwrap();
    }
    columns
}

fn run(input: &Input, budgets: &[u128], strategy: Strategy, tuning: &Tuning) -> Outcome {
    let detach = Counting(Cell::new(0));
    let request = Request {
        budgets,
        strategy,
        policy: &Policy::default(),
        explain: false,
        tuning,
        max_work: None,
        interrupt: &Uninterrupted,
        reuse: None,
    };
    let result = compress(columns(input, &request), request, &detach);
    (result, detach.0.get())
}

type Outcome = (Result<Compression, Refusal>, usize);

fn rank_order(input: &Input, a: usize, b: usize) -> Ordering {
    // -0.0 and 0.0 tie, as in Python.
    let (x, y) = (input.scores[a] + 0.0, input.scores[b] + 0.0);
    y.partial_cmp(&x)
        .unwrap()
        .then_with(|| input.ids[a].cmp(&input.ids[b]))
}

fn expected(input: &Input, budgets: &[u128], strategy: Strategy) -> Result<Compression, Refusal> {
    if let Some(duplicate) = first_repeat(input) {
        return Err(duplicate);
    }
    let mut order: Vec<usize> = (0..input.ids.len()).collect();
    order.sort_by(|&a, &b| rank_order(input, a, b));
    let selections: Vec<Selection> = budgets
        .iter()
        .map(|&budget| {
            let mut selection = Selection {
                exact: true,
                ..Selection::default()
            };
            if budget == 0 {
                return selection;
            }
            for &i in &order {
                let tokens = u128::from(input.tokens[i]);
                if selection.compressed_tokens + tokens <= budget {
                    selection.compressed_tokens += tokens;
                    selection.kept.push(i as u32);
                } else if strategy == Strategy::Prefix {
                    break;
                }
            }
            if selection.kept.is_empty() && !order.is_empty() {
                selection.kept.push(order[0] as u32);
                selection.compressed_tokens = u128::from(input.tokens[order[0]]);
            }
            let value = |i: usize| (input.scores[i] * 2f64.powi(32)).round_ties_even() as u128;
            selection.value_kept = selection.kept.iter().map(|&i| value(i as usize)).sum();
            // The fractional optimum, by value per token (values < 2**33, tokens < 2**63: the
            // products fit).
            let mut by_density = order.clone();
            let denser = |a: usize, b: usize| {
                let tokens = |i: usize| u128::from(input.tokens[i]);
                // Zero-token fragments first, whatever their value.
                let by_tokens = (tokens(a) > 0).cmp(&(tokens(b) > 0));
                by_tokens.then((value(b) * tokens(a)).cmp(&(value(a) * tokens(b))))
            };
            by_density.sort_by(|&a, &b| denser(a, b));
            let mut left = budget;
            for &i in &by_density {
                let tokens = u128::from(input.tokens[i]);
                if tokens <= left {
                    left -= tokens;
                    selection.value_bound += value(i);
                } else {
                    selection.value_bound += value(i) * left / tokens;
                    break;
                }
            }
            selection
        })
        .collect();
    Ok(Compression {
        original_tokens: input.tokens.iter().map(|&t| u128::from(t)).sum(),
        relevance_kept: relevance_of(input, &selections),
        selections,
        decisions: Vec::new(),
    })
}

#[test]
fn generated_inputs_match_the_obvious_way() {
    let mut rng = Lcg(7);
    for case in 0..3000 {
        let input = generated(&mut rng);
        let total: u64 = input
            .tokens
            .iter()
            .fold(0u64, |sum, &t| sum.saturating_add(t));
        let budgets: Vec<u128> = (0..rng.below(4))
            .map(|_| match rng.below(5) {
                0 => 0,
                1 => u128::MAX,
                _ => u128::from(rng.below(total.min(1 << 40) + 2)),
            })
            .collect();
        let strategy = Strategy::ALL[case % 2];
        let tuning = if case % 3 == 0 {
            Tuning::default()
        } else {
            tiny_tuning(&mut rng)
        };
        let (result, detached) = run(&input, &budgets, strategy, &tuning);
        assert_eq!(
            result,
            expected(&input, &budgets, strategy),
            "case {case}: {tuning:?} {budgets:?}"
        );
        assert_eq!(detached, usize::from(input.ids.len() >= tuning.detach_from));
    }
}

fn input_of(ids: &[&str], tokens: &[u64], scores: &[f64]) -> Input {
    Input {
        ids: ids.iter().map(|id| id.to_string()).collect(),
        tokens: tokens.to_vec(),
        scores: scores.to_vec(),
    }
}

#[test]
fn a_budget_beyond_the_first_sort_ranks_the_rest() {
    // Ten large fragments rank above a hundred one-token ones; a budget of 50 skips the large
    // ones, which fill the whole first sort, and must rank further to keep fifty small ones.
    let ids: Vec<String> = (0..110).map(|i| format!("id{i:03}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let tokens: Vec<u64> = (0..110).map(|i| if i < 10 { 1000 } else { 1 }).collect();
    let scores: Vec<f64> = (0..110).map(|i| if i < 10 { 0.9 } else { 0.5 }).collect();
    let input = input_of(&ids, &tokens, &scores);
    let tuning = Tuning {
        first_sort_extra: 0,
        ..Tuning::default()
    };
    let (result, _) = run(&input, &[50], Strategy::Greedy, &tuning);
    let selection = &result.unwrap().selections[0];
    assert_eq!(selection.kept, (10..60).collect::<Vec<u32>>());
    assert_eq!(selection.compressed_tokens, 50);
}

#[test]
fn a_late_duplicate_is_found_on_the_second_thread() {
    let mut ids: Vec<String> = (0..300).map(|i| format!("id{i}")).collect();
    ids[299] = "id17".to_string();
    let input = Input {
        tokens: vec![1; ids.len()],
        scores: vec![0.5; ids.len()],
        ids,
    };
    for parallel_from in [0, 300, 301] {
        let tuning = Tuning {
            parallel_from,
            ..Tuning::default()
        };
        let (result, _) = run(&input, &[10], Strategy::Greedy, &tuning);
        assert_eq!(
            result,
            Err(Refusal::Duplicate(Duplicate {
                first: 17,
                second: 299,
                id: b"id17".to_vec(),
            }))
        );
    }
}

#[test]
fn large_inputs_run_detached_once() {
    let input = input_of(&["b", "a", "c"], &[1, 2, 3], &[0.5, 0.5, 0.1]);
    for (detach_from, times) in [(0, 1), (3, 1), (4, 0)] {
        let tuning = Tuning {
            detach_from,
            ..Tuning::default()
        };
        let (result, detached) = run(&input, &[3, 0, 100], Strategy::Greedy, &tuning);
        assert_eq!(detached, times);
        let kept: Vec<Vec<u32>> = result
            .unwrap()
            .selections
            .into_iter()
            .map(|s| s.kept)
            .collect();
        assert_eq!(kept, vec![vec![1, 0], vec![], vec![1, 0, 2]]);
    }
}

#[test]
fn optimal_runs_detached_from_fewer_fragments() {
    let input = input_of(&["b", "a", "c"], &[1, 2, 3], &[0.5, 0.5, 0.1]);
    for (strategy, detach_optimal_from, times) in [
        (Strategy::Optimal, 3, 1),
        (Strategy::Optimal, 4, 0),
        (Strategy::Greedy, 3, 0),
        (Strategy::Density, 0, 0),
    ] {
        let tuning = Tuning {
            detach_optimal_from,
            ..Tuning::default()
        };
        let (result, detached) = run(&input, &[3], strategy, &tuning);
        assert_eq!(detached, times, "{strategy:?} from {detach_optimal_from}");
        assert!(result.is_ok());
    }
}

#[test]
fn more_fragments_than_indices_are_refused() {
    let tuning = Tuning::default();
    assert!(Columns::new(0, &tuning).unwrap().is_empty());
    assert_eq!(
        Columns::new(MAX_FRAGMENTS + 1, &tuning).unwrap_err(),
        TooMany {
            limit: MAX_FRAGMENTS
        }
    );
}

#[test]
fn zero_token_fragments_after_a_spent_budget_are_kept() {
    let ids = ["a", "b", "c", "d", "e"];
    let input = input_of(&ids, &[5, 0, 9, 0, 0], &[0.9, 0.8, 0.7, 0.6, 0.5]);
    for strategy in Strategy::ALL {
        let (result, _) = run(&input, &[5], strategy, &Tuning::default());
        let expected = if strategy == Strategy::Prefix {
            vec![0, 1]
        } else {
            vec![0, 1, 3, 4]
        };
        assert_eq!(result.unwrap().selections[0].kept, expected);
    }
}

#[test]
fn checks_only_when_no_budget_is_asked() {
    let input = input_of(&["b", "a"], &[4, 5], &[0.5, 0.7]);
    let (result, _) = run(&input, &[], Strategy::Prefix, &Tuning::default());
    assert_eq!(
        result,
        Ok(Compression {
            original_tokens: 9,
            selections: vec![],
            relevance_kept: vec![],
            decisions: vec![]
        })
    );
}

#[test]
fn ids_whose_shared_prefix_shrinks_late_still_rank_by_id() {
    // The first ids share a long prefix that a later id does not: their tie keys are remade.
    let ids = ["pre-b", "pre-a", "pre-c", "other"];
    let input = input_of(&ids, &[1; 4], &[0.5; 4]);
    let (result, _) = run(&input, &[10], Strategy::Greedy, &Tuning::default());
    assert_eq!(result.unwrap().selections[0].kept, vec![3, 1, 0, 2]);
}

#[test]
fn an_interrupted_optimal_says_so_over_anything_else_it_found() {
    // "a" twice: a duplicate, which the check finds whether or not the packing stops. Enough
    // fragments that the solver's steps come to a check.
    let mut ids = vec!["a".to_string(), "b".to_string(), "a".to_string()];
    ids.extend((0..300).map(|i| format!("x{i:03}")));
    let input = Input {
        tokens: (0..ids.len() as u64).map(|i| 3 + i % 7).collect(),
        scores: (0..ids.len()).map(|i| (i % 10) as f64 / 10.0).collect(),
        ids,
    };
    let tuning = Tuning {
        interrupt_every: std::time::Duration::ZERO,
        ..Tuning::default()
    };
    for (interrupt, expected) in [
        (InterruptAt::new(1), Err(Refusal::Interrupted)),
        (
            InterruptAt::new(usize::MAX),
            Err(Refusal::Duplicate(Duplicate {
                first: 0,
                second: 2,
                id: b"a".to_vec(),
            })),
        ),
    ] {
        let request = Request {
            budgets: &[90],
            strategy: Strategy::Optimal,
            policy: &Policy::default(),
            explain: false,
            tuning: &tuning,
            max_work: None,
            interrupt: &interrupt,
            reuse: None,
        };
        let result = compress(columns(&input, &request), request, &InPlace);
        assert_eq!(result.map(|_| ()), expected);
        assert!(interrupt.asked.load(std::sync::atomic::Ordering::Relaxed) > 0);
    }
}

#[test]
fn the_ranking_strategies_answer_an_interruption_while_they_rank() {
    // Four thousand fragments, sorted in pieces of a hundred: asked once, the checkpoint
    // stops the first sort, with or without a policy, explaining or not.
    let ids: Vec<String> = (0..4000).map(|i| format!("f{i}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let mut rng = Lcg(5);
    let tokens: Vec<u64> = (0..4000).map(|_| 1 + rng.below(50)).collect();
    let scores: Vec<f64> = (0..4000).map(|_| rng.below(1000) as f64 / 1000.0).collect();
    let input = input_of(&ids, &tokens, &scores);
    let tuning = Tuning {
        interrupt_every: std::time::Duration::ZERO,
        sort_piece: 100,
        ..Tuning::default()
    };
    let grouped = Policy {
        min_relevance: 0.2,
        ..Policy::default()
    };
    for strategy in [Strategy::Greedy, Strategy::Prefix] {
        for (policy, explain) in [(Policy::default(), false), (grouped, true)] {
            let interrupt = InterruptAt::new(1);
            let request = Request {
                budgets: &[20_000],
                strategy,
                policy: &policy,
                explain,
                tuning: &tuning,
                max_work: None,
                interrupt: &interrupt,
                reuse: None,
            };
            let result = compress(columns(&input, &request), request, &InPlace);
            assert_eq!(
                result.map(|_| ()),
                Err(Refusal::Interrupted),
                "{strategy:?}"
            );
        }
    }
}

#[test]
fn the_columns_of_an_input_can_be_read_again() {
    let input = input_of(&["a", "b"], &[1, 1], &[0.5, 0.4]);
    let request = Request {
        budgets: &[1],
        strategy: Strategy::Greedy,
        policy: &Policy::default(),
        explain: false,
        tuning: &Tuning::default(),
        max_work: None,
        interrupt: &Uninterrupted,
        reuse: None,
    };
    let result = compress(columns(&input, &request), request, &InPlace);
    assert_eq!(result.unwrap().selections[0].kept, vec![0]);
    assert!(!columns(&input, &request).is_empty());
}

#[test]
fn a_policy_keeps_a_required_group_whole() {
    let input = input_of(&["a", "b", "c", "d"], &[1, 2, 3, 4], &[0.5, 0.4, 0.3, 0.2]);
    let policy = Policy::default();
    // Relevance keys counted too, though a policy's ranking does not use them.
    let tuning = Tuning {
        count_keys_from: 0,
        ..Tuning::default()
    };
    let request = Request {
        budgets: &[5],
        strategy: Strategy::Greedy,
        policy: &policy,
        explain: false,
        tuning: &tuning,
        max_work: None,
        interrupt: &Uninterrupted,
        reuse: None,
    };
    let marks = [
        (true, Some("x")),
        (false, Some("y")),
        (false, Some("x")),
        (false, None),
    ];
    let mut columns = Columns::new(input.ids.len(), request.tuning).unwrap();
    for (at, &(required, group)) in marks.iter().enumerate() {
        let id = input.ids[at].as_bytes();
        columns
            .push(
                id,
                weak_hash(&input.ids[at]),
                input.tokens[at],
                input.scores[at],
            )
            .unwrap();
        columns.mark_last(required, group.map(|name| (name.as_bytes(), 7)), None);
    }
    let compression = compress(columns, request, &InPlace).unwrap();
    // The required group {a, c} (4 tokens), then b (2) does not fit; d (4) neither.
    assert_eq!(compression.selections[0].kept, vec![0, 2]);
}

#[test]
fn tie_keys_made_before_the_shared_prefix_shrank_are_made_again() {
    // The ids share a longer prefix until fragment 100's; the tied best twenty rank by id:
    // those after it first, although their tie keys (made for no shared prefix) are above
    // those made before it (for the longer prefix).
    let ids: Vec<String> = (0..200)
        .map(|i| match i {
            0..100 => format!("m-prefix-9{i:03}"),
            100 => "a-shrink".to_string(),
            _ => format!("m-prefix-1{i:03}"),
        })
        .collect();
    let scores: Vec<f64> = (0..200)
        .map(|i| if i % 10 == 0 && i != 100 { 0.9 } else { 0.1 })
        .collect();
    let input = Input {
        ids,
        tokens: vec![1; 200],
        scores,
    };
    let tuning = Tuning {
        count_keys_from: 0,
        first_sort_extra: 0,
        ..Tuning::default()
    };
    let (result, _) = run(&input, &[5], Strategy::Greedy, &tuning);
    let kept = &result.unwrap().selections[0].kept;
    assert_eq!(kept, &vec![110, 120, 130, 140, 150]);
}

#[test]
fn duplicates_are_looked_for_beside_the_ranking() {
    for parallel_from in [0, 4] {
        let tuning = Tuning {
            parallel_from,
            ..Tuning::default()
        };
        let request = Request {
            budgets: &[2],
            strategy: Strategy::Greedy,
            policy: &Policy::default(),
            explain: false,
            tuning: &tuning,
            max_work: None,
            interrupt: &Uninterrupted,
            reuse: None,
        };
        for (ids, expected) in [
            (["a", "b", "c"], Ok(vec![0, 1])),
            (
                ["a", "b", "a"],
                Err(Refusal::Duplicate(Duplicate {
                    first: 0,
                    second: 2,
                    id: b"a".to_vec(),
                })),
            ),
        ] {
            let input = input_of(&ids, &[1, 1, 1], &[0.9, 0.5, 0.1]);
            let result = compress(columns(&input, &request), request, &InPlace)
                .map(|compression| compression.selections[0].kept.clone());
            assert_eq!(result, expected);
        }
    }
}

#[test]
fn plain_inputs_are_chosen_by_value_under_the_value_strategies() {
    // One large relevant fragment against three smaller ones worth more together.
    let input = input_of(
        &["webhooks", "retry", "refund-test", "refund"],
        &[600, 200, 200, 200],
        &[0.95, 0.9, 0.85, 0.8],
    );
    let value = |r: f64| (r * 2f64.powi(32)).round_ties_even() as u128;
    for strategy in Strategy::ALL {
        let (result, _) = run(&input, &[600, 0], strategy, &Tuning::default());
        let selections = result.unwrap().selections;
        let (kept, value_kept) = match strategy {
            Strategy::Density | Strategy::Optimal => {
                (vec![1, 2, 3], value(0.9) + value(0.85) + value(0.8))
            }
            Strategy::Greedy | Strategy::Prefix => (vec![0], value(0.95)),
        };
        assert_eq!(selections[0].kept, kept, "{strategy:?}");
        assert_eq!(selections[0].value_kept, value_kept);
        assert_eq!(
            selections[0].value_bound,
            value(0.9) + value(0.85) + value(0.8)
        );
        assert_eq!(
            (selections[1].value_kept, selections[1].value_bound),
            (0, 0)
        );
    }
}

#[test]
fn a_stopped_duplicate_check_says_so() {
    let (hashes, ids) = ([1u64, 2, 1], ["a", "b", "a"]);
    let stop = Stop::default();
    stop.stop();
    let found = DuplicateCheck::new(3).run(&hashes, &ids, &stop);
    assert_eq!(found, Err(Interrupted));
    let found = DuplicateCheck::new(3).run(&hashes, &ids, &Uninterrupted);
    let pair = found.map(|duplicate| duplicate.map(|d| (d.first, d.second)));
    assert_eq!(pair, Ok(Some((0, 2))));
}
