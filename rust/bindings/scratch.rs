//! Working buffers kept per thread between calls.
//!
//! A large call needs tens of megabytes of fresh memory, and the kernel hands out each new page
//! through a page fault that costs more than the work done on it. Keeping the last call's
//! buffers lets a planner that compresses again and again, at any size, skip that cost.
//! Buffers beyond `KEEP_UP_TO` elements are released instead, so a one-off giant input does
//! not stay resident.

use std::cell::RefCell;

use crate::core::Entry;

const KEEP_UP_TO: usize = 1 << 21;
const KEEP_WORD_BUFFERS: usize = 4;

#[derive(Default)]
struct Spare {
    entries: Vec<Entry>,
    words: Vec<Vec<u64>>,
}

thread_local! {
    static SPARE: RefCell<Spare> = RefCell::new(Spare::default());
}

pub fn entries(capacity: usize) -> Vec<Entry> {
    let mut buffer = SPARE.with(|spare| std::mem::take(&mut spare.borrow_mut().entries));
    buffer.reserve(capacity);
    buffer
}

pub fn words(capacity: usize) -> Vec<u64> {
    let mut buffer = SPARE
        .with(|spare| {
            let mut spare = spare.borrow_mut();
            let largest = (0..spare.words.len()).max_by_key(|&i| spare.words[i].capacity())?;
            Some(spare.words.swap_remove(largest))
        })
        .unwrap_or_default();
    buffer.reserve(capacity);
    buffer
}

pub fn give_entries(mut buffer: Vec<Entry>) {
    if buffer.capacity() <= KEEP_UP_TO {
        buffer.clear();
        SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            if buffer.capacity() > spare.entries.capacity() {
                spare.entries = buffer;
            }
        });
    }
}

pub fn give_words(mut buffer: Vec<u64>) {
    if buffer.capacity() <= KEEP_UP_TO && buffer.capacity() > 0 {
        buffer.clear();
        SPARE.with(|spare| {
            let mut spare = spare.borrow_mut();
            if spare.words.len() < KEEP_WORD_BUFFERS {
                spare.words.push(buffer);
            }
        });
    }
}
