//! The selection policy beyond the strategy: a relevance floor, what to do when the budget
//! cannot be met, and the order of what is kept. The default is the plain compression.

/// What happens when the budget cannot be met: the required fragments alone exceed it, or a
/// positive budget fits nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnOverflow {
    /// Keep the required fragments (or the top-ranked unit) anyway, over budget.
    KeepTop,
    /// Never go over budget: refuse only when the required fragments alone do not fit.
    Strict,
    /// Refuse whenever `KeepTop` would go over budget.
    Raise,
}

/// The order of the kept fragments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Kept units in rank order.
    Ranking,
    /// Kept fragments in input order.
    Input,
    /// Best units at both ends, the least relevant in the middle: ranks 0, 2, 4, ... from the
    /// front, then ..., 5, 3, 1 to the end.
    Edges,
}

named!(OnOverflow { KeepTop => "keep_top", Strict => "strict", Raise => "raise" });
named!(Order { Ranking => "ranking", Input => "input", Edges => "edges" });

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    /// Units whose relevance is below this are not kept unless required.
    pub min_relevance: f64,
    pub on_overflow: OnOverflow,
    pub order: Order,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            min_relevance: 0.0,
            on_overflow: OnOverflow::KeepTop,
            order: Order::Ranking,
        }
    }
}

impl Policy {
    /// Whether the policy changes nothing the plain compression does.
    pub fn is_plain(&self) -> bool {
        self.min_relevance <= 0.0
            && self.on_overflow == OnOverflow::KeepTop
            && self.order == Order::Ranking
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for on_overflow in OnOverflow::ALL {
            assert_eq!(OnOverflow::from_name(on_overflow.name()), Some(on_overflow));
        }
        for order in Order::ALL {
            assert_eq!(Order::from_name(order.name()), Some(order));
        }
        assert_eq!(OnOverflow::from_name("keep-top"), None);
        assert_eq!(Order::from_name("Edges"), None);
        assert_eq!(OnOverflow::ALL.len(), 3);
        assert_eq!(Order::ALL.len(), 3);
    }

    #[test]
    fn only_the_default_is_plain() {
        assert!(Policy::default().is_plain());
        let floor = Policy {
            min_relevance: 0.2,
            ..Policy::default()
        };
        assert!(!floor.is_plain());
        for &on_overflow in &OnOverflow::ALL[1..] {
            assert!(!Policy {
                on_overflow,
                ..Policy::default()
            }
            .is_plain());
        }
        for &order in &Order::ALL[1..] {
            assert!(!Policy {
                order,
                ..Policy::default()
            }
            .is_plain());
        }
    }
}
