//! The exact sum of non-negative floats, rounded once to the nearest `f64` (ties to even):
//! the float Python's `math.fsum` gives for the same values, so that both backends report the
//! relevance a selection kept as the same float, the sum its caller would write.
//!
//! Every finite `f64` is an integer number of `2**-1074`; the sum is kept as that integer,
//! wide enough for `2**32` of the largest floats, and rounded once at the end.

/// Bits 0 to 2,175 of the sum in units of `2**-1074`: a finite float is below `2**2098` of
/// them, and `2**32` floats below `2**2130`.
const LIMBS: usize = 34;

/// An exact running sum of non-negative finite floats.
#[derive(Debug, Clone)]
pub struct ExactSum {
    limbs: [u64; LIMBS],
    /// One past the highest limb written.
    top: usize,
}

impl Default for ExactSum {
    fn default() -> Self {
        ExactSum {
            limbs: [0; LIMBS],
            top: 0,
        }
    }
}

impl ExactSum {
    /// Adds `value`, a non-negative finite float (`-0.0` adds nothing; the sign bit is not
    /// read, and an infinity or NaN is the caller's error: it adds as the largest float).
    // Inlined into the walks that keep fragments, one call a kept fragment.
    #[inline]
    pub fn add(&mut self, value: f64) {
        let bits = value.to_bits() & !(1 << 63);
        let exponent = ((bits >> 52) as usize).min(2046);
        let fraction = bits & ((1 << 52) - 1);
        // value = mantissa * 2**(shift - 1074)
        let (mantissa, shift) = if exponent == 0 {
            (fraction, 0)
        } else {
            (fraction | (1 << 52), exponent - 1)
        };
        if mantissa == 0 {
            return;
        }
        let (limb, bit) = (shift / 64, shift % 64);
        let wide = u128::from(mantissa) << bit;
        let mut carry = self.add_at(limb, wide as u64, false);
        carry = self.add_at(limb + 1, (wide >> 64) as u64, carry);
        let mut at = limb + 2;
        while carry {
            carry = self.add_at(at, 0, true);
            at += 1;
        }
        self.top = self.top.max(at);
    }

    #[inline]
    fn add_at(&mut self, at: usize, value: u64, carry: bool) -> bool {
        let (sum, over) = self.limbs[at].overflowing_add(value);
        let (sum, over_again) = sum.overflowing_add(u64::from(carry));
        self.limbs[at] = sum;
        over || over_again
    }

    /// The sum, rounded to the nearest float, ties to even (an infinity past the largest).
    pub fn value(&self) -> f64 {
        let Some(high) = (0..self.top).rev().find(|&at| self.limbs[at] != 0) else {
            return 0.0;
        };
        let highest_bit = high * 64 + 63 - self.limbs[high].leading_zeros() as usize;
        if highest_bit < 53 {
            // Below 2**53 units: exactly a float, whose bits are that number.
            return f64::from_bits(self.limbs[0]);
        }
        let mut low = highest_bit - 52;
        let mut mantissa = self.bits(low, 53);
        let round = self.bits(low - 1, 1) == 1;
        let sticky = low >= 2 && self.any_below(low - 1);
        if round && (sticky || mantissa & 1 == 1) {
            mantissa += 1;
            if mantissa == 1 << 53 {
                mantissa >>= 1;
                low += 1;
            }
        }
        // mantissa * 2**(low - 1074), the mantissa in [2**52, 2**53): biased exponent low + 1.
        let biased = low as u64 + 1;
        if biased >= 2047 {
            return f64::INFINITY;
        }
        f64::from_bits((biased << 52) | (mantissa & ((1 << 52) - 1)))
    }

    /// `count` (at most 64) bits from bit `from` up.
    fn bits(&self, from: usize, count: usize) -> u64 {
        let (limb, offset) = (from / 64, from % 64);
        let mut value = self.limbs[limb] >> offset;
        if offset != 0 && limb + 1 < LIMBS {
            value |= self.limbs[limb + 1] << (64 - offset);
        }
        if count < 64 {
            value &= (1 << count) - 1;
        }
        value
    }

    /// Whether any bit below bit `below` is set.
    fn any_below(&self, below: usize) -> bool {
        let (limb, offset) = (below / 64, below % 64);
        self.limbs[..limb].iter().any(|&word| word != 0)
            || (offset != 0 && self.limbs[limb] & ((1 << offset) - 1) != 0)
    }
}

/// The exact sum of `values`, rounded once (see [`ExactSum`]).
pub fn exact_sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut sum = ExactSum::default();
    for value in values {
        sum.add(value);
    }
    sum.value()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: f64 = f64::from_bits(1); // 2**-1074, the smallest float

    #[test]
    fn sums_read_as_the_values_written() {
        assert_eq!(exact_sum([0.9]), 0.9);
        assert_eq!(exact_sum([0.1; 10]), 1.0);
        // As Python adds them: 0.9 + 0.8 is 1.7000000000000002 there too.
        assert_eq!(exact_sum([0.9, 0.8]), 0.9 + 0.8);
        assert_eq!(exact_sum([0.9, 0.7, 0.6]), 2.2);
        assert_eq!(exact_sum([0.1, 0.2]), 0.30000000000000004);
        assert_eq!(exact_sum([]), 0.0);
        assert_eq!(exact_sum([-0.0]).to_bits(), 0.0f64.to_bits());
        assert_eq!(exact_sum([1.0; 3]), 3.0);
    }

    #[test]
    fn one_rounding_ties_to_even() {
        let half_ulp = 2f64.powi(-53);
        // 1 + 2**-53 is halfway between 1 and the next float: to even, 1.
        assert_eq!(exact_sum([1.0, half_ulp]), 1.0);
        // Anything beyond the half breaks the tie upward.
        assert_eq!(exact_sum([1.0, half_ulp, TINY]), 1.0 + 2f64.powi(-52));
        // 1 + 3 * 2**-53 is halfway between two floats, the upper one even.
        assert_eq!(
            exact_sum([1.0, half_ulp, half_ulp, half_ulp]),
            1.0 + 2f64.powi(-51)
        );
        // Rounding up carries into the exponent.
        let below_two = 2.0 - 2f64.powi(-52);
        assert_eq!(exact_sum([below_two, half_ulp, half_ulp]), 2.0);
    }

    #[test]
    fn subnormals_and_the_smallest_normal() {
        assert_eq!(exact_sum([TINY, TINY]), 2.0 * TINY);
        let smallest_normal = f64::MIN_POSITIVE;
        let largest_subnormal = smallest_normal - TINY;
        assert_eq!(exact_sum([largest_subnormal, TINY]), smallest_normal);
        assert_eq!(
            exact_sum([smallest_normal, smallest_normal]),
            2.0 * smallest_normal
        );
        assert_eq!(exact_sum([1.0, TINY]), 1.0);
    }

    #[test]
    fn many_values_agree_with_exact_integer_arithmetic() {
        // Multiples of 2**-40 in [0, 1]: their sum is exact in a u128 of 2**-40 units.
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for count in [1, 2, 3, 10, 1000, 100_000] {
            let mut exact: u128 = 0;
            let mut sum = ExactSum::default();
            for _ in 0..count {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let units = state % ((1 << 40) + 1);
                exact += u128::from(units);
                sum.add(units as f64 / 2f64.powi(40));
            }
            // `as f64` rounds to the nearest, ties to even, as the sum must.
            assert_eq!(sum.value(), exact as f64 / 2f64.powi(40), "{count}");
        }
    }

    #[test]
    fn the_largest_floats_and_past_them() {
        assert_eq!(exact_sum([f64::MAX]), f64::MAX);
        assert_eq!(exact_sum([f64::MAX, f64::MAX]), f64::INFINITY);
    }
}
