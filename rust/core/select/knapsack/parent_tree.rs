//! `ParentTree`: the sets an exact solver builds, kept as chains of nodes, each pointing to the
//! parent it grew from, with each state pointing to the node its set ends at. Most sets are
//! soon dominated or cut, so the nodes no state reaches are dropped now and then; otherwise
//! they would pile up for as long as the work runs.

use std::ops::Index;

/// No node: the end of a chain, or a state whose set holds nothing yet.
pub(crate) const NO_NODE: u32 = u32::MAX;

/// A node of a `ParentTree`: what it holds is the solver's, its parent link the tree's.
pub(crate) trait Child: Copy {
    fn parent(&self) -> u32;
    fn set_parent(&mut self, parent: u32);
}

/// Nodes in the order they were made: a parent always comes before its children.
pub(crate) struct ParentTree<N> {
    nodes: Vec<N>,
    /// How many nodes the states reached at the last collection.
    reached: usize,
    /// See `Tuning::collect_slack`.
    slack: usize,
    /// Each node's new place at a collection; kept, so that its pages are not made anew.
    moved: Vec<u32>,
}

impl<N: Child> ParentTree<N> {
    pub(crate) fn new(slack: usize) -> Self {
        ParentTree {
            nodes: Vec::new(),
            reached: 0,
            slack,
            moved: Vec::new(),
        }
    }

    /// Adds `node` and returns its place.
    pub(crate) fn push(&mut self, node: N) -> u32 {
        self.nodes.push(node);
        (self.nodes.len() - 1) as u32
    }

    /// The nodes from `node` up to its chain's first.
    pub(crate) fn chain(&self, node: u32) -> impl Iterator<Item = &N> {
        let first = (node != NO_NODE).then(|| &self.nodes[node as usize]);
        std::iter::successors(first, |node| {
            let parent = node.parent();
            (parent != NO_NODE).then(|| &self.nodes[parent as usize])
        })
    }

    /// Drops the nodes no state reaches (`node_of` is a state's link into the tree), once
    /// they may be half of all and `slack` more have piled up; the states then point to
    /// their nodes' new places.
    pub(crate) fn collect<S>(&mut self, states: &mut [S], node_of: impl Fn(&mut S) -> &mut u32) {
        let wanted = 2 * (self.reached + states.len());
        if self.nodes.len() < wanted.saturating_add(self.slack) {
            return;
        }
        let moved = &mut self.moved;
        moved.clear();
        moved.resize(self.nodes.len(), NO_NODE);
        for state in states.iter_mut() {
            let node = *node_of(state);
            if node != NO_NODE {
                moved[node as usize] = 0;
            }
        }
        // Children come after their parents: one pass back marks every chain, in the order
        // of the nodes, where following each chain would jump about.
        for at in (0..self.nodes.len()).rev() {
            if moved[at] != NO_NODE {
                let parent = self.nodes[at].parent();
                if parent != NO_NODE {
                    moved[parent as usize] = 0;
                }
            }
        }
        // A parent comes before its children, so its new place is known first.
        let mut kept = 0;
        for at in 0..self.nodes.len() {
            if moved[at] != NO_NODE {
                let mut node = self.nodes[at];
                if node.parent() != NO_NODE {
                    node.set_parent(moved[node.parent() as usize]);
                }
                self.nodes[kept] = node;
                moved[at] = kept as u32;
                kept += 1;
            }
        }
        self.nodes.truncate(kept);
        self.reached = kept;
        for state in states.iter_mut() {
            let node = node_of(state);
            if *node != NO_NODE {
                *node = moved[*node as usize];
            }
        }
    }
}

impl<N> Index<u32> for ParentTree<N> {
    type Output = N;

    fn index(&self, at: u32) -> &N {
        &self.nodes[at as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node that holds a name, so that chains can be told apart after nodes move.
    #[derive(Debug, Clone, Copy)]
    struct Named {
        parent: u32,
        name: char,
    }

    impl Child for Named {
        fn parent(&self) -> u32 {
            self.parent
        }

        fn set_parent(&mut self, parent: u32) {
            self.parent = parent;
        }
    }

    /// Adds a chain of nodes named by `names`, the first under `parent`; returns the last.
    fn grow(tree: &mut ParentTree<Named>, parent: u32, names: &str) -> u32 {
        names
            .chars()
            .fold(parent, |parent, name| tree.push(Named { parent, name }))
    }

    fn names(tree: &ParentTree<Named>, node: u32) -> String {
        tree.chain(node).map(|node| node.name).collect()
    }

    fn collect(tree: &mut ParentTree<Named>, states: &mut [u32]) {
        tree.collect(states, |state| state);
    }

    #[test]
    fn collection_keeps_exactly_the_chains_states_reach() {
        let mut tree = ParentTree::new(0);
        let dropped = grow(&mut tree, NO_NODE, "xyz");
        let root = grow(&mut tree, NO_NODE, "a");
        let left = grow(&mut tree, root, "bc");
        grow(&mut tree, dropped, "w");
        let right = grow(&mut tree, root, "d");
        grow(&mut tree, left, "v");
        let mut states = [right, NO_NODE, left, right];
        // Nine nodes, 2 * (0 + 4) wanted: collected.
        collect(&mut tree, &mut states);
        assert_eq!(tree.nodes.len(), 4);
        assert_eq!(tree.reached, 4);
        assert_eq!(states[1], NO_NODE);
        let chains: Vec<String> = states.iter().map(|&state| names(&tree, state)).collect();
        assert_eq!(chains, ["da", "", "cba", "da"]);
        // Each node moved down by the unreached before it, its parent still before it.
        let order: String = tree.nodes.iter().map(|node| node.name).collect();
        assert_eq!(order, "abcd");
        let parents: Vec<u32> = tree.nodes.iter().map(|node| node.parent).collect();
        assert_eq!(parents, [NO_NODE, 0, 1, 0]);
    }

    #[test]
    fn collection_waits_until_the_unreached_may_be_half_and_the_slack_has_piled_up() {
        // Wanted: 2 * (reached + states) + slack nodes.
        let mut tree = ParentTree::new(5);
        let mut states = [NO_NODE; 3];
        grow(&mut tree, NO_NODE, "abcdefghij");
        collect(&mut tree, &mut states);
        assert_eq!(tree.nodes.len(), 10, "2 * (0 + 3) + 5 = 11 wanted");
        let kept = grow(&mut tree, NO_NODE, "k");
        states[0] = kept;
        collect(&mut tree, &mut states);
        assert_eq!((tree.nodes.len(), tree.reached), (1, 1));
        assert_eq!(names(&tree, states[0]), "k");
        // Now 2 * (1 + 3) + 5 = 13.
        grow(&mut tree, NO_NODE, "lmnopqrstuv");
        collect(&mut tree, &mut states);
        assert_eq!(tree.nodes.len(), 12);
        grow(&mut tree, NO_NODE, "w");
        collect(&mut tree, &mut states);
        assert_eq!((tree.nodes.len(), tree.reached), (1, 1));
        assert_eq!(names(&tree, states[0]), "k");
    }

    #[test]
    fn a_slack_of_the_largest_size_never_collects() {
        let mut tree = ParentTree::new(usize::MAX);
        grow(&mut tree, NO_NODE, "abc");
        // 2 * (0 + 1) plus the slack would overflow.
        collect(&mut tree, &mut [NO_NODE]);
        assert_eq!(tree.nodes.len(), 3);
    }
}
