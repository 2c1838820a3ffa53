//! Variant sets alone, on the plain path: the sets are numbered, and their hulls made, on the
//! second thread while this one ranks; whichever thread gets to each first makes it.

use std::sync::OnceLock;
use std::time::Duration;

use crate::core::interrupt::{Checkpoint, Interrupt, Interrupted};
use crate::core::made_once::MadeOnce;
use crate::core::select::entry::Entry;
use crate::core::select::knapsack::multiple_choice::relaxation::{
    set_hull_steps, FragmentSteps, Step,
};
use crate::core::select::names::marks::NameMarks;
use crate::core::select::names::sets::VariantSets;

pub struct PlainVariants<'a> {
    marks: &'a NameMarks,
    fragments: usize,
    sets: MadeOnce<VariantSets>,
    /// The fragments in a set as steps, once they are split off.
    marked_steps: OnceLock<Vec<Step>>,
    hulls: MadeOnce<Vec<Step>>,
}

/// The steps of the fragments in no set, from [`PlainVariants::split`]: the others are split
/// off by then.
pub struct LooseSteps(Vec<Step>);

impl<'a> PlainVariants<'a> {
    /// The sets `marks` name among `fragments` fragments.
    pub fn new(marks: &'a NameMarks, fragments: usize) -> Self {
        PlainVariants {
            marks,
            fragments,
            sets: MadeOnce::default(),
            marked_steps: OnceLock::new(),
            hulls: MadeOnce::default(),
        }
    }

    /// On the second thread, what can be made without waiting: the sets, then their hulls if
    /// the fragments in them are split off. `stop` is asked as it works.
    pub fn work_ahead(&self, stop: &dyn Interrupt) {
        self.sets.make(|| Ok(self.numbered()));
        if let (Some(sets), Some(marked_steps)) = (self.sets.value(), self.marked_steps.get()) {
            let mut checkpoint = Checkpoint::new(stop, Duration::ZERO);
            let marked = || self.marked();
            self.hulls
                .make(|| set_hull_steps(marked, marked_steps, sets, &mut checkpoint));
        }
    }

    /// Each fragment as a step, those in a set kept apart for their hulls. `entries` are in
    /// input order.
    pub fn split(
        &self,
        entries: &[Entry],
        token_counts: &[u64],
        checkpoint: &mut Checkpoint,
    ) -> Result<LooseSteps, Interrupted> {
        let split = FragmentSteps::split(entries, token_counts, self.marked(), checkpoint)?;
        let _ = self.marked_steps.set(split.marked);
        Ok(LooseSteps(split.loose))
    }

    /// The sets, and all the steps of the relaxation: `loose` and each set's hull.
    pub fn finish(
        &self,
        loose: LooseSteps,
        checkpoint: &mut Checkpoint,
    ) -> Result<(&VariantSets, Vec<Step>), Interrupted> {
        let sets = self.sets.get(|_| Ok(self.numbered()), checkpoint)?;
        let marked_steps = self
            .marked_steps
            .get()
            .expect("loose steps are made once the others are split off");
        let marked = || self.marked();
        let hulls = self.hulls.get(
            |checkpoint| set_hull_steps(marked, marked_steps, sets, checkpoint),
            checkpoint,
        )?;
        let mut steps = loose.0;
        steps.extend_from_slice(hulls);
        Ok((sets, steps))
    }

    fn numbered(&self) -> VariantSets {
        VariantSets::new(self.marks, self.fragments)
    }

    fn marked(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.marks.marks().map(|(fragment, _)| fragment)
    }
}
