//! `Work`: how much the exact solvers may still do. 0-1 knapsack is NP-hard, and some inputs
//! (Todd's, Avis's, subset sums at scale) make every exact dynamic program grow without end:
//! the solvers count their steps (a state visited once) against the request's `max_work`, and
//! hold at most `max_work / Tuning::work_per_state` states at once, so that a call ends within
//! a bounded time and memory on any input. A solver that would pass either stops and returns
//! the best set it has found, or `density`'s when that is worth more, and says so.

use crate::core::select::tuning::Tuning;

/// The states the exact solvers' loops over them (growing, merging) walk between two
/// checkpoints: a check per state cost a hard call 5% to 10% of its time (docs/changelog.md).
pub const STATES_PER_CHECK: usize = 4096;

/// The steps left and the states that may be held at once; whether a solver stopped short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Work {
    /// The steps left; `None` for no limit.
    left: Option<u64>,
    hold: usize,
    stopped: bool,
}

impl Work {
    /// No limit: the solvers run to the end.
    pub fn unlimited() -> Work {
        Work {
            left: None,
            hold: usize::MAX,
            stopped: false,
        }
    }

    /// At most `max_work` steps (`None`: no limit).
    pub fn new(max_work: Option<u64>, tuning: &Tuning) -> Work {
        match max_work {
            None => Work::unlimited(),
            Some(most) => Work {
                left: Some(most),
                hold: usize::try_from(most / tuning.work_per_state.max(1))
                    .unwrap_or(usize::MAX)
                    .max(1),
                stopped: false,
            },
        }
    }

    /// Takes `steps` that will leave `holding` states, if both are allowed; otherwise the
    /// solver stops here, and this returns false.
    pub(crate) fn take(&mut self, steps: u64, holding: usize) -> bool {
        let within = self.left.is_none_or(|left| steps <= left);
        if self.stopped || !within || holding > self.hold {
            self.stopped = true;
            return false;
        }
        self.spend(steps);
        true
    }

    /// Counts `steps` already made (a tie settled by walking two sets back): the next `take`
    /// finds them gone.
    pub(crate) fn spend(&mut self, steps: u64) {
        if let Some(left) = &mut self.left {
            *left = left.saturating_sub(steps);
        }
    }

    /// Whether every solver that used this work ran to its end (its set is exact).
    pub fn finished(&self) -> bool {
        !self.stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_stops_at_its_steps_or_at_the_states_it_may_hold() {
        let tuning = Tuning {
            work_per_state: 10,
            ..Tuning::DEFAULT
        };
        let mut work = Work::new(Some(100), &tuning);
        assert!(work.take(60, 10));
        assert!(work.finished());
        work.spend(30);
        assert!(work.take(10, 10));
        // One step more than is left.
        assert!(!work.take(1, 1));
        assert!(!work.finished());
        // Once stopped, stopped.
        assert!(!work.take(0, 0));

        let mut work = Work::new(Some(100), &tuning);
        assert!(!work.take(1, 11), "ten states at most");
        assert!(!work.finished());

        let mut unlimited = Work::new(None, &tuning);
        assert!(unlimited.take(u64::MAX, usize::MAX));
        unlimited.spend(u64::MAX);
        assert!(unlimited.take(u64::MAX, usize::MAX));
        assert!(unlimited.finished());

        // A limit below one state's worth still holds one state.
        let mut small = Work::new(Some(3), &tuning);
        assert!(small.take(3, 1));
    }
}
