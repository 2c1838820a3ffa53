//! `Binned`: items dealt into numbered bins by a counting sort, each bin keeping the items'
//! order: two passes over the items, where a comparison sort would take `n log n`. The
//! groups (`names/groups.rs`) deal their members into buckets the same way but size each
//! bucket's names in the same pass, so they keep their own loop.

/// Items by bin: bin `b` is `items[starts[b]..starts[b + 1]]`.
#[derive(Debug, Default)]
pub struct Binned<T> {
    pub starts: Vec<usize>,
    pub items: Vec<T>,
}

impl<T: Copy> Binned<T> {
    /// The `(bin, item)` pairs of `pairs` (each bin below `bins`), items by bin; `pairs` is
    /// walked twice, to count and to place.
    pub fn new(pairs: impl Iterator<Item = (usize, T)> + Clone, bins: usize) -> Binned<T> {
        let mut starts = vec![0usize; bins + 1];
        for (bin, _) in pairs.clone() {
            starts[bin + 1] += 1;
        }
        for bin in 0..bins {
            starts[bin + 1] += starts[bin];
        }
        // Any item fills the places until each is placed.
        let mut items = match pairs.clone().next() {
            Some((_, first)) => vec![first; starts[bins]],
            None => Vec::new(),
        };
        let mut next = starts.clone();
        for (bin, item) in pairs {
            items[next[bin]] = item;
            next[bin] += 1;
        }
        Binned { starts, items }
    }

    /// The items of `bin`, in the order they came.
    pub fn bin(&self, bin: usize) -> &[T] {
        &self.items[self.starts[bin]..self.starts[bin + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::Binned;

    #[test]
    fn items_are_dealt_into_their_bins_in_the_order_they_came() {
        let pairs = [(2, 'a'), (0, 'b'), (2, 'c'), (3, 'd'), (0, 'e')];
        let binned = Binned::new(pairs.iter().copied(), 5);
        assert_eq!(binned.starts, [0, 2, 2, 4, 5, 5]);
        assert_eq!(binned.items, ['b', 'e', 'a', 'c', 'd']);
        assert_eq!(binned.bin(0), ['b', 'e']);
        assert!(binned.bin(1).is_empty());
        assert_eq!(binned.bin(2), ['a', 'c']);
        assert_eq!(binned.bin(3), ['d']);
        assert!(binned.bin(4).is_empty());
    }

    #[test]
    fn no_items_make_empty_bins() {
        let binned = Binned::<u32>::new(std::iter::empty(), 3);
        assert_eq!(binned.starts, [0, 0, 0, 0]);
        assert!(binned.items.is_empty() && binned.bin(2).is_empty());
    }
}
