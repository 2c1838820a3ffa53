//! A large sort cut into pieces of a few milliseconds each, so that it answers an interrupt
//! and shares out over two threads: the items are dealt into buckets by splitters drawn from
//! a sample of their keys (a pass to classify, a pass to move), then each bucket is sorted
//! alone. Buckets hold ranges of keys in order, so the sorted buckets are the sorted whole.

use std::cmp::Ordering;
use std::thread;

use crate::core::interrupt::{Checkpoint, Interrupt, Interrupted, Stop};
use crate::core::work_queue::WorkQueue;

/// Buckets at most, so that a bucket's number fits a byte; past `256 * piece` items the
/// pieces grow.
const MOST_BUCKETS: usize = 256;
/// Sample keys drawn per bucket: enough that buckets come out near their planned size.
const SAMPLE_PER_BUCKET: usize = 16;

/// How a sort was cut, which its answer does not show: the pieces, and how many of them a
/// second thread sorted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PieceWork {
    pub pieces: usize,
    pub on_second_thread: usize,
}

/// Sorts `items` by `order` (not stably), in pieces of about `piece` items, asking
/// `checkpoint` as it goes; a second thread sorts pieces too when `two_threads` and one can
/// be had. An interrupted sort leaves the items in some order.
pub fn sort_in_pieces<T: Copy + Send>(
    items: &mut [T],
    order: impl Fn(&T, &T) -> Ordering + Sync,
    piece: usize,
    two_threads: bool,
    checkpoint: &mut Checkpoint,
) -> Result<PieceWork, Interrupted> {
    let wanted = items.len().div_ceil(piece.max(1));
    if wanted <= 1 {
        items.sort_unstable_by(order);
        return Ok(PieceWork {
            pieces: 1,
            on_second_thread: 0,
        });
    }
    let buckets = wanted.next_power_of_two().min(MOST_BUCKETS);
    let splitters = Splitters::drawn(items, &order, buckets);
    let ends = deal(items, &splitters, &order, checkpoint)?;
    let mut pieces = Vec::with_capacity(buckets);
    let mut rest = items;
    let mut start = 0;
    for end in ends {
        let (piece, after) = std::mem::take(&mut rest).split_at_mut(end - start);
        pieces.push(piece);
        (rest, start) = (after, end);
    }
    sort_pieces(pieces, &order, two_threads, checkpoint)
}

/// How one call sorts: in pieces of about `piece` items, asking `checkpoint`, and on two
/// threads from `parallel_from` items.
pub struct Sorting<'a, 'c> {
    pub piece: usize,
    pub parallel_from: usize,
    pub checkpoint: &'a mut Checkpoint<'c>,
}

impl Sorting<'_, '_> {
    pub fn sort<T: Copy + Send>(
        &mut self,
        items: &mut [T],
        order: impl Fn(&T, &T) -> Ordering + Sync,
    ) -> Result<(), Interrupted> {
        let two_threads = items.len() >= self.parallel_from;
        sort_in_pieces(items, order, self.piece, two_threads, self.checkpoint).map(|_| ())
    }
}

/// `buckets - 1` items drawn from the items at evenly spread places, in order; an item goes
/// to the bucket numbered by how many of them are before it.
struct Splitters<T> {
    /// The splitters as a search tree laid out by levels from index 1 (node `i` has children
    /// `2i` and `2i + 1`): a search is a fixed number of steps with no branch to mispredict.
    tree: Vec<T>,
    levels: u32,
}

impl<T: Copy> Splitters<T> {
    fn drawn(items: &[T], order: &impl Fn(&T, &T) -> Ordering, buckets: usize) -> Self {
        let drawn = buckets * SAMPLE_PER_BUCKET;
        let step = items.len() / drawn;
        let mut sample: Vec<T> = (0..drawn).map(|at| items[at * step]).collect();
        sample.sort_unstable_by(order);
        let ascending: Vec<T> = (1..buckets)
            .map(|bucket| sample[bucket * SAMPLE_PER_BUCKET - 1])
            .collect();
        Splitters::of(&ascending)
    }

    /// From `ascending`, one short of a power of two.
    fn of(ascending: &[T]) -> Self {
        let buckets = ascending.len() + 1;
        let mut tree = vec![ascending[0]; buckets];
        let mut next = ascending.iter();
        let mut stack = Vec::new();
        let mut node = 1;
        // In order through the tree: the ascending splitters fill it left to right.
        while node < buckets || !stack.is_empty() {
            if node < buckets {
                stack.push(node);
                node *= 2;
            } else if let Some(parent) = stack.pop() {
                tree[parent] = *next.next().unwrap_or(&ascending[0]);
                node = 2 * parent + 1;
            }
        }
        Splitters {
            tree,
            levels: buckets.trailing_zeros(),
        }
    }

    /// How many splitters come before `item`.
    #[cfg(test)]
    fn below(&self, item: &T, order: &impl Fn(&T, &T) -> Ordering) -> usize {
        let mut bucket = [0];
        self.classify(std::slice::from_ref(item), &mut bucket, order);
        usize::from(bucket[0])
    }

    /// The bucket of each of `items` (at most [`CLASSIFIED_AT_ONCE`]) into `buckets`: the
    /// searches go down the tree side by side, so that the CPU overlaps them.
    #[inline]
    fn classify(&self, items: &[T], buckets: &mut [u8], order: &impl Fn(&T, &T) -> Ordering) {
        let mut nodes = [1usize; CLASSIFIED_AT_ONCE];
        for _ in 0..self.levels {
            for (node, item) in nodes.iter_mut().zip(items) {
                *node = 2 * *node + usize::from(order(&self.tree[*node], item) == Ordering::Less);
            }
        }
        for (bucket, node) in buckets.iter_mut().zip(nodes) {
            *bucket = (node - self.tree.len()) as u8;
        }
    }
}

/// Items classified side by side.
const CLASSIFIED_AT_ONCE: usize = 8;

/// Moves each item into its bucket's part of `items`, in place; returns where each part
/// ends.
fn deal<T: Copy>(
    items: &mut [T],
    splitters: &Splitters<T>,
    order: &impl Fn(&T, &T) -> Ordering,
    checkpoint: &mut Checkpoint,
) -> Result<Vec<usize>, Interrupted> {
    let buckets = splitters.tree.len();
    let mut of_item = vec![0u8; items.len()];
    let mut sizes = vec![0usize; buckets];
    let at_once = items.chunks(CLASSIFIED_AT_ONCE);
    for (items, of_item) in at_once.zip(of_item.chunks_mut(CLASSIFIED_AT_ONCE)) {
        checkpoint.tick()?;
        splitters.classify(items, of_item, order);
        for &bucket in of_item.iter() {
            sizes[usize::from(bucket)] += 1;
        }
    }
    let ends: Vec<usize> = sizes
        .iter()
        .scan(0, |end, size| {
            *end += size;
            Some(*end)
        })
        .collect();
    // Each part's first place not yet holding one of its own.
    let mut next: Vec<usize> = ends
        .iter()
        .zip(&sizes)
        .map(|(end, size)| end - size)
        .collect();
    for bucket in 0..buckets {
        while next[bucket] < ends[bucket] {
            checkpoint.tick()?;
            let at = next[bucket];
            let mut belongs = usize::from(of_item[at]);
            if belongs != bucket {
                // Carries the item along its cycle, each step placing one for good, until
                // one of this bucket's comes back to fill `at`.
                let mut carried = items[at];
                while belongs != bucket {
                    let to = next[belongs];
                    next[belongs] += 1;
                    belongs = usize::from(of_item[to]);
                    carried = std::mem::replace(&mut items[to], carried);
                }
                items[at] = carried;
            }
            next[bucket] += 1;
        }
    }
    Ok(ends)
}

/// Sorts each piece, asking `checkpoint` before each that this thread takes; a second
/// thread takes pieces from the same queue, and stops when told to.
fn sort_pieces<T: Send>(
    pieces: Vec<&mut [T]>,
    order: &(impl Fn(&T, &T) -> Ordering + Sync),
    two_threads: bool,
    checkpoint: &mut Checkpoint,
) -> Result<PieceWork, Interrupted> {
    let count = pieces.len();
    let queue = WorkQueue::new(pieces.into_iter());
    let take = || queue.take();
    let stop = Stop::default();
    let work_here = |checkpoint: &mut Checkpoint| {
        while let Some(piece) = take() {
            if let Err(interrupted) = checkpoint.check() {
                stop.stop();
                return Err(interrupted);
            }
            piece.sort_unstable_by(order);
        }
        Ok(())
    };
    let work_there = || {
        let mut sorted = 0;
        while !stop.interrupted() {
            let Some(piece) = take() else { break };
            piece.sort_unstable_by(order);
            sorted += 1;
        }
        sorted
    };
    let (here, on_second_thread) = thread::scope(|scope| {
        let there = two_threads
            .then(|| thread::Builder::new().spawn_scoped(scope, work_there).ok())
            .flatten();
        let here = work_here(checkpoint);
        let sorted = there.map_or(0, |there| {
            there
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
        (here, sorted)
    });
    here.map(|()| PieceWork {
        pieces: count,
        on_second_thread,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::core::test_support::InterruptAt;
    use crate::core::test_support::Lcg;
    use crate::core::Uninterrupted;

    fn sorted_in_pieces(items: &[u64], piece: usize, two_threads: bool) -> (Vec<u64>, PieceWork) {
        let mut items = items.to_vec();
        let mut checkpoint = Checkpoint::new(&Uninterrupted, Duration::ZERO);
        let work = sort_in_pieces(&mut items, u64::cmp, piece, two_threads, &mut checkpoint);
        (items, work.unwrap())
    }

    #[test]
    fn splitters_count_how_many_are_below_a_key() {
        let splitters = Splitters::of(&[10u32, 20, 20, 30, 40, 50, 60]);
        let expected = [
            (0, 0),
            (10, 0),
            (11, 1),
            (20, 1),
            (21, 3),
            (45, 5),
            (60, 6),
            (61, 7),
        ];
        for (key, below) in expected {
            assert_eq!(splitters.below(&key, &u32::cmp), below, "key {key}");
        }
        let one = Splitters::of(&[5]);
        assert_eq!((one.below(&5, &i32::cmp), one.below(&6, &i32::cmp)), (0, 1));
        let many: Vec<u32> = (0..255).map(|at| at * 2).collect();
        let splitters = Splitters::of(&many);
        for key in 0..520 {
            let below = splitters.below(&key, &u32::cmp);
            assert_eq!(below, many.partition_point(|&s| s < key));
        }
    }

    #[test]
    fn pieces_sort_like_one_sort() {
        let mut random = Lcg(7);
        let spread: Vec<u64> = (0..20_000).map(|_| random.below(u64::MAX)).collect();
        let few_keys: Vec<u64> = (0..20_000).map(|_| random.below(5)).collect();
        let one_key = vec![3u64; 5_000];
        let ascending: Vec<u64> = (0..10_000).collect();
        let descending: Vec<u64> = (0..10_000).rev().collect();
        for items in [spread, few_keys, one_key, ascending, descending] {
            let mut expected = items.clone();
            expected.sort_unstable();
            for piece in [1, 7, 100, 1_000, 100_000] {
                for two_threads in [false, true] {
                    let (sorted, work) = sorted_in_pieces(&items, piece, two_threads);
                    assert_eq!(sorted, expected, "pieces of {piece}");
                    let planned = items.len().div_ceil(piece);
                    let buckets = planned.next_power_of_two().min(MOST_BUCKETS);
                    assert_eq!(work.pieces, if planned <= 1 { 1 } else { buckets });
                    if !two_threads {
                        assert_eq!(work.on_second_thread, 0);
                    }
                }
            }
        }
    }

    #[test]
    fn spread_keys_make_pieces_near_their_planned_size() {
        let mut random = Lcg(11);
        let mut items: Vec<u64> = (0..64_000).map(|_| random.below(u64::MAX)).collect();
        let splitters = Splitters::drawn(&items, &u64::cmp, 64);
        let mut checkpoint = Checkpoint::new(&Uninterrupted, Duration::ZERO);
        let ends = deal(&mut items, &splitters, &u64::cmp, &mut checkpoint);
        let mut start = 0;
        for (bucket, end) in ends.unwrap().into_iter().enumerate() {
            assert!(
                (250..4_000).contains(&(end - start)),
                "a piece of {}",
                end - start
            );
            assert!(items[start..end]
                .iter()
                .all(|item| splitters.below(item, &u64::cmp) == bucket));
            start = end;
        }
    }

    #[test]
    fn an_interrupted_sort_stops() {
        let mut random = Lcg(3);
        let items: Vec<u64> = (0..50_000).map(|_| random.below(u64::MAX)).collect();
        for (from, two_threads) in [(1, false), (2, true), (40, false)] {
            let interrupt = InterruptAt::new(from);
            let mut checkpoint = Checkpoint::new(&interrupt, Duration::ZERO);
            let mut copy = items.clone();
            let work = sort_in_pieces(&mut copy, u64::cmp, 500, two_threads, &mut checkpoint);
            assert_eq!(work, Err(Interrupted), "asked {from}");
        }
    }
}
