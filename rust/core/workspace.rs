//! Working buffers reused between calls.
//!
//! A large call needs tens of megabytes of fresh memory, and the kernel hands out each new
//! page through a page fault that costs more than the work done on it. A caller that keeps a
//! workspace between calls skips that cost; how much it keeps is the caller's choice.

use std::any::Any;
use std::mem::size_of;

use crate::core::select::entry::Entry;

fn keep_larger<T>(kept: &mut Vec<T>, buffer: Vec<T>) {
    let larger = std::cmp::max_by_key(std::mem::take(kept), buffer, Vec::capacity);
    *kept = larger;
    kept.clear();
}

/// Word buffers kept at most: one compression borrows this many at once.
const KEEP_WORD_BUFFERS: usize = 6;
/// Buffers of one other element type kept at most.
const KEEP_BUFFERS_PER_TYPE: usize = 4;

#[derive(Debug, Default)]
pub struct Workspace {
    entries: Vec<Entry>,
    bytes: Vec<u8>,
    /// Buffers of any other element type (words, a selection policy's), each a `Vec` of
    /// some type.
    others: Vec<Kept>,
}

#[derive(Debug)]
struct Kept {
    buffer: Box<dyn Any + Send>,
    capacity: usize,
    bytes: usize,
}

impl Kept {
    fn holds<T: 'static>(&self) -> bool {
        self.buffer.is::<Vec<T>>()
    }
}

impl Workspace {
    /// An empty buffer with room for `capacity` entries.
    pub fn entries(&mut self, capacity: usize) -> Vec<Entry> {
        let mut buffer = std::mem::take(&mut self.entries);
        buffer.reserve(capacity);
        buffer
    }

    /// An empty buffer with room for `capacity` words (see [`Workspace::buffer`]).
    pub fn words(&mut self, capacity: usize) -> Vec<u64> {
        self.buffer(capacity)
    }

    /// An empty buffer with room for `capacity` bytes.
    pub fn bytes(&mut self, capacity: usize) -> Vec<u8> {
        let mut buffer = std::mem::take(&mut self.bytes);
        buffer.reserve(capacity);
        buffer
    }

    /// Keeps the larger of `buffer` and the one kept.
    pub fn give_bytes(&mut self, buffer: Vec<u8>) {
        keep_larger(&mut self.bytes, buffer);
    }

    /// Keeps the larger of `buffer` and the one kept.
    pub fn give_entries(&mut self, buffer: Vec<Entry>) {
        keep_larger(&mut self.entries, buffer);
    }

    pub fn give_words(&mut self, buffer: Vec<u64>) {
        self.keep(buffer, KEEP_WORD_BUFFERS);
    }

    /// An empty buffer of `T` with room for `capacity`: the smallest kept one that is large
    /// enough, or else the largest, grown.
    pub fn buffer<T: Send + 'static>(&mut self, capacity: usize) -> Vec<T> {
        let kept = || {
            self.others
                .iter()
                .enumerate()
                .filter(|(_, kept)| kept.holds::<T>())
        };
        let chosen = kept()
            .filter(|(_, kept)| kept.capacity >= capacity)
            .min_by_key(|(_, kept)| kept.capacity)
            .or_else(|| kept().max_by_key(|(_, kept)| kept.capacity))
            .map(|(at, _)| at);
        let mut buffer = chosen
            .and_then(|at| self.others.swap_remove(at).buffer.downcast::<Vec<T>>().ok())
            .map(|buffer| *buffer)
            .unwrap_or_default();
        buffer.reserve(capacity);
        buffer
    }

    /// Keeps `buffer`, emptied, unless as many of its type are kept already.
    pub fn give<T: Send + 'static>(&mut self, buffer: Vec<T>) {
        self.keep(buffer, KEEP_BUFFERS_PER_TYPE);
    }

    /// Keeps `buffer`, emptied, unless `limit` buffers of its type are kept already.
    fn keep<T: Send + 'static>(&mut self, mut buffer: Vec<T>, limit: usize) {
        if buffer.capacity() == 0 || self.kept::<T>() >= limit {
            return;
        }
        buffer.clear();
        self.others.push(Kept {
            capacity: buffer.capacity(),
            bytes: buffer.capacity() * size_of::<T>(),
            buffer: Box::new(buffer),
        });
    }

    /// Bytes held by the kept buffers.
    pub fn retained_bytes(&self) -> usize {
        self.entries.capacity() * size_of::<Entry>()
            + self.bytes.capacity()
            + self.others.iter().map(|kept| kept.bytes).sum::<usize>()
    }

    /// How many buffers of `T` are kept (besides the entries and bytes kept on their own).
    pub fn kept<T: 'static>(&self) -> usize {
        self.others.iter().filter(|kept| kept.holds::<T>()).count()
    }

    /// Frees the largest buffers until at most `limit` bytes are kept.
    pub fn trim_to(&mut self, limit: usize) {
        while self.retained_bytes() > limit {
            let entries = self.entries.capacity() * size_of::<Entry>();
            let others = (0..self.others.len())
                .max_by_key(|&at| self.others[at].bytes)
                .map_or((0, 0), |at| (self.others[at].bytes, at));
            let largest = entries.max(self.bytes.capacity()).max(others.0);
            if largest == entries {
                self.entries = Vec::new();
            } else if largest == self.bytes.capacity() {
                self.bytes = Vec::new();
            } else {
                self.others.swap_remove(others.1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_back_empty_and_large_enough() {
        let mut workspace = Workspace::default();
        assert_eq!(workspace.retained_bytes(), 0);
        let mut words = workspace.words(100);
        words.extend([1, 2, 3]);
        let kept = words.capacity();
        workspace.give_words(words);
        assert_eq!(workspace.retained_bytes(), kept * 8);
        let again = workspace.words(10);
        assert!(again.is_empty() && again.capacity() == kept);
        assert_eq!(workspace.retained_bytes(), 0);

        let mut entries = workspace.entries(50);
        entries.push(Entry::new(0.5, 0, 0, 1));
        let kept = entries.capacity();
        workspace.give_entries(entries);
        assert_eq!(workspace.retained_bytes(), kept * size_of::<Entry>());
        assert!(workspace.entries(1).is_empty());
    }

    #[test]
    fn the_smallest_buffer_large_enough_is_lent_and_few_are_kept() {
        let mut workspace = Workspace::default();
        workspace.give_words(Vec::new());
        assert_eq!(
            workspace.kept::<u64>(),
            0,
            "a buffer without room is not kept"
        );
        for capacity in [10, 1000, 100, 50] {
            workspace.give_words(Vec::with_capacity(capacity));
        }
        assert_eq!(workspace.words(60).capacity(), 100);
        assert_eq!(workspace.words(5000).capacity(), 5000);
        assert_eq!(workspace.words(10).capacity(), 10);
        assert_eq!(workspace.words(1).capacity(), 50);
        for _ in 0..10 {
            workspace.give_words(Vec::with_capacity(8));
        }
        assert_eq!(workspace.kept::<u64>(), KEEP_WORD_BUFFERS);
        workspace.give_words(Vec::new());
        assert_eq!(workspace.kept::<u64>(), KEEP_WORD_BUFFERS);
    }

    #[test]
    fn buffers_of_any_type_are_kept_by_type() {
        let mut workspace = Workspace::default();
        let mut small: Vec<u32> = workspace.buffer(10);
        small.extend([1, 2, 3]);
        let small_capacity = small.capacity();
        workspace.give(small);
        workspace.give(Vec::<u32>::with_capacity(1000));
        workspace.give(Vec::<u128>::with_capacity(7));
        workspace.give(Vec::<u16>::new());
        assert_eq!(
            workspace.retained_bytes(),
            small_capacity * 4 + 1000 * 4 + 7 * 16
        );
        let lent: Vec<u32> = workspace.buffer(5);
        assert!(lent.is_empty() && lent.capacity() == small_capacity);
        assert_eq!(workspace.buffer::<u32>(2000).capacity(), 2000);
        assert!(workspace.buffer::<u32>(0).capacity() == 0);
        assert_eq!(workspace.buffer::<u128>(1).capacity(), 7);
        assert_eq!(workspace.retained_bytes(), 0);
        for _ in 0..10 {
            workspace.give(Vec::<u8>::with_capacity(8));
        }
        assert_eq!(workspace.retained_bytes(), KEEP_BUFFERS_PER_TYPE * 8);
    }

    #[test]
    fn trimming_frees_the_largest_buffers_first() {
        let mut workspace = Workspace::default();
        workspace.give_entries(Vec::with_capacity(100));
        workspace.give_bytes(Vec::with_capacity(500));
        workspace.give_words(Vec::with_capacity(50));
        workspace.give_words(Vec::with_capacity(20));
        workspace.give(Vec::<u32>::with_capacity(300));
        workspace.give(Vec::<u32>::with_capacity(10));
        let entries = 100 * size_of::<Entry>();
        let all = entries + 500 + 50 * 8 + 20 * 8 + 300 * 4 + 10 * 4;
        assert_eq!(workspace.retained_bytes(), all);
        workspace.trim_to(all);
        assert_eq!(workspace.retained_bytes(), all);
        workspace.trim_to(all - 1);
        assert_eq!(workspace.retained_bytes(), all - entries);
        workspace.trim_to(all - entries - 1);
        assert_eq!(workspace.retained_bytes(), all - entries - 1200);
        workspace.trim_to(200);
        assert_eq!(workspace.retained_bytes(), 20 * 8 + 10 * 4);
        workspace.trim_to(0);
        assert_eq!(workspace.retained_bytes(), 0);
    }

    #[test]
    fn a_smaller_buffer_does_not_replace_a_larger_one() {
        let mut workspace = Workspace::default();
        workspace.give_entries(Vec::with_capacity(100));
        workspace.give_entries(Vec::with_capacity(10));
        workspace.give_bytes(vec![1, 2, 3]);
        assert_eq!(workspace.retained_bytes(), 100 * size_of::<Entry>() + 3);
        assert!(workspace.entries(0).capacity() >= 100);
        workspace.give_bytes(Vec::with_capacity(2));
        let bytes = workspace.bytes(1);
        assert!(bytes.is_empty() && bytes.capacity() == 3);
    }
}
