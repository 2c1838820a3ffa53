//! A share in [0, 1) (`max_value_loss`, `headroom`) as the exact value of its float, and the
//! two things a turn asks of it, computed exactly: whether a value keeps enough of the best,
//! and the share of a budget, floored.

/// `numerator / 2**shift`, the float's exact value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    numerator: u64,
    shift: u32,
}

impl Share {
    pub const ZERO: Share = Share {
        numerator: 0,
        shift: 0,
    };

    /// The share `value` is, or `None` unless 0 <= `value` < 1.
    pub fn of(value: f64) -> Option<Share> {
        if !(0.0..1.0).contains(&value) {
            return None;
        }
        if value == 0.0 {
            return Some(Share::ZERO);
        }
        let bits = value.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as u32;
        let fraction = bits & ((1 << 52) - 1);
        // value = mantissa * 2**-shift, subnormals included; below 1, so shift >= 1.
        let (mantissa, shift) = if biased == 0 {
            (fraction, 1074)
        } else {
            (fraction | (1 << 52), 1075 - biased)
        };
        let zeros = mantissa.trailing_zeros();
        Some(Share {
            numerator: mantissa >> zeros,
            shift: shift - zeros,
        })
    }

    pub fn is_zero(self) -> bool {
        self.numerator == 0
    }

    /// The share exactly: `numerator / 2**shift`.
    pub fn ratio(self) -> (u64, u32) {
        (self.numerator, self.shift)
    }

    /// Whether `kept` is at least (1 - share) x `best`: (best - kept) x 2**shift <=
    /// numerator x best, in 256 bits.
    pub fn keeps_enough(self, kept: u128, best: u128) -> bool {
        if kept >= best {
            return true;
        }
        match Wide::shifted(best - kept, self.shift) {
            Some(short) => short <= Wide::product(best, self.numerator),
            None => false,
        }
    }

    /// floor(share x `amount`).
    pub fn of_amount(self, amount: u128) -> u128 {
        Wide::product(amount, self.numerator).shifted_down(self.shift)
    }
}

/// An unsigned 256-bit number, high half first, so that the derived order is the numbers'.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Wide {
    high: u128,
    low: u128,
}

impl Wide {
    fn product(a: u128, b: u64) -> Wide {
        let b = u128::from(b);
        let (a_high, a_low) = (a >> 64, a & u128::from(u64::MAX));
        let (upper, lower) = (a_high * b, a_low * b);
        let (low, carry) = lower.overflowing_add(upper << 64);
        Wide {
            high: (upper >> 64) + u128::from(carry),
            low,
        }
    }

    /// `value x 2**shift`, or `None` when that passes 256 bits.
    fn shifted(value: u128, shift: u32) -> Option<Wide> {
        if value == 0 {
            return Some(Wide { high: 0, low: 0 });
        }
        let bits = 128 - value.leading_zeros();
        if bits + shift > 256 {
            return None;
        }
        Some(match shift {
            0 => Wide {
                high: 0,
                low: value,
            },
            1..=127 => Wide {
                high: value >> (128 - shift),
                low: value << shift,
            },
            _ => Wide {
                high: value << (shift - 128),
                low: 0,
            },
        })
    }

    /// floor(self / 2**shift), which fits 128 bits wherever a turn asks it.
    fn shifted_down(self, shift: u32) -> u128 {
        match shift {
            0 => self.low,
            1..=127 => (self.low >> shift) | (self.high << (128 - shift)),
            128..=255 => self.high >> (shift - 128),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::test_support::Lcg;

    fn exact(value: f64) -> (u128, u32) {
        let (numerator, shift) = Share::of(value).unwrap().ratio();
        (u128::from(numerator), shift)
    }

    #[test]
    fn shares_are_the_floats_exact_values() {
        assert_eq!(exact(0.5), (1, 1));
        assert_eq!(exact(0.75), (3, 2));
        assert_eq!(exact(0.0), (0, 0));
        assert_eq!(exact(f64::MIN_POSITIVE / 4.0), (1, 1024));
        assert_eq!(exact(0.1), (3602879701896397, 55));
        assert_eq!(Share::of(1.0), None);
        assert_eq!(Share::of(-0.25), None);
        assert_eq!(Share::of(f64::NAN), None);
        assert_eq!(Share::of(-0.0), Some(Share::ZERO));
    }

    #[test]
    fn keeps_enough_compares_exactly_at_the_edge() {
        let half = Share::of(0.5).unwrap();
        assert!(half.keeps_enough(50, 100));
        assert!(!half.keeps_enough(49, 100));
        assert!(half.keeps_enough(101, 100));
        assert!(Share::ZERO.keeps_enough(100, 100));
        assert!(!Share::ZERO.keeps_enough(99, 100));
        // 0.1 is a little above a tenth: 90 of 100 keeps enough, 89 does not.
        let tenth = Share::of(0.1).unwrap();
        assert!(tenth.keeps_enough(90, 100));
        assert!(!tenth.keeps_enough(89, 100));
        // A tiny share forgives nothing of a small value, and one unit of a huge one.
        let tiny = Share::of(f64::MIN_POSITIVE).unwrap();
        assert!(!tiny.keeps_enough(99, 100));
        let big = u128::MAX;
        let third = Share::of(0.25).unwrap();
        assert!(third.keeps_enough(big - big / 4, big));
        assert!(!third.keeps_enough(big - big / 4 - 1, big));
    }

    #[test]
    fn the_share_of_an_amount_is_floored_exactly() {
        assert_eq!(Share::of(0.5).unwrap().of_amount(7), 3);
        assert_eq!(Share::of(0.3).unwrap().of_amount(10), 2); // 0.3 is below three tenths
        assert_eq!(
            Share::of(0.75).unwrap().of_amount(u128::MAX),
            u128::MAX / 4 * 3 + 2
        );
        assert_eq!(Share::ZERO.of_amount(u128::MAX), 0);
        assert_eq!(
            Share::of(f64::MIN_POSITIVE).unwrap().of_amount(u128::MAX),
            0
        );
        // Amounts whose product carries from the low half into the high one (floors
        // worked out exactly with Python's fractions).
        assert_eq!(
            Share::of(0.1)
                .unwrap()
                .of_amount(219_578_230_959_242_499_332_316_047_694_492_485_471),
            21_957_823_095_924_251_152_135_643_356_506_226_431
        );
        assert_eq!(
            Share::of(0.999)
                .unwrap()
                .of_amount(103_777_873_510_548_641_817_100_610_730_229_439_951),
            103_674_095_637_038_093_083_110_242_425_060_630_196
        );
    }

    #[test]
    fn wide_products_and_shifts_match_u128_where_it_reaches() {
        let mut random = Lcg(7);
        let mut word = || (random.below(1 << 31) << 33) ^ (random.below(1 << 31) << 2);
        for _ in 0..10_000 {
            let a = u128::from(word());
            let b = word();
            let shift = (word() % 70) as u32;
            let product = Wide::product(a, b);
            assert_eq!(product, Wide::shifted(a * u128::from(b), 0).unwrap());
            assert_eq!(product.shifted_down(shift), (a * u128::from(b)) >> shift);
            let c = a >> 10;
            assert_eq!(Wide::shifted(c, shift).unwrap().shifted_down(shift), c);
        }
        assert_eq!(Wide::shifted(1, 255).unwrap().shifted_down(255), 1);
        assert_eq!(Wide::shifted(2, 255), None);
        assert_eq!(Wide::shifted(0, 1000), Some(Wide { high: 0, low: 0 }));
    }
}
