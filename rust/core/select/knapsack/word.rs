//! The width of a dynamic program's sums of value and tokens: `u64` where every sum a call
//! can form fits (a state of 32 bytes where it was 48, in every pass over the states), `u128`
//! otherwise.

use std::ops::{Add, Sub};

pub trait Word:
    Copy + Ord + std::fmt::Debug + Add<Output = Self> + Sub<Output = Self> + Into<u128> + TryFrom<u128>
{
    /// `n`, within the sums the caller checked fit.
    fn of(n: u128) -> Self {
        Self::try_from(n)
            .ok()
            .expect("the caller checked that the sums fit")
    }
}

impl Word for u64 {}

impl Word for u128 {}

/// Whether sums up to `most` fit in 64 bits, and `narrow` (the tuning) allows them there.
pub fn narrow_fits(narrow: bool, most: u128) -> bool {
    narrow && most <= u128::from(u64::MAX)
}
