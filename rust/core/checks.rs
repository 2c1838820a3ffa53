//! Value checks that do not depend on how a value was read.

use crate::core::errors::ErrorKind;

/// Token counts are stored as `u64` but must fit a signed 64-bit integer, as the contract says.
pub const MAX_TOKEN_COUNT: u64 = i64::MAX as u64;

/// `overflow` is the sign of a value that did not fit an `i64` (-1, 0 or 1).
pub fn check_token_count(value: i64, overflow: i32) -> Result<u64, ErrorKind> {
    if overflow > 0 {
        Err(ErrorKind::TokenTooLarge)
    } else if overflow < 0 || value < 0 {
        Err(ErrorKind::TokenNegative)
    } else {
        Ok(value as u64)
    }
}

/// An unsigned token count, as read from an unsigned column.
pub fn check_unsigned_token_count(value: u64) -> Result<u64, ErrorKind> {
    if value > MAX_TOKEN_COUNT {
        Err(ErrorKind::TokenTooLarge)
    } else {
        Ok(value)
    }
}

/// NaN fails both comparisons, so it is rejected with the out-of-range values.
pub fn check_relevance(score: f64) -> bool {
    (0.0..=1.0).contains(&score)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts() {
        assert_eq!(check_token_count(0, 0), Ok(0));
        assert_eq!(check_token_count(i64::MAX, 0), Ok(MAX_TOKEN_COUNT));
        assert_eq!(check_token_count(-1, 0), Err(ErrorKind::TokenNegative));
        assert_eq!(check_token_count(-1, -1), Err(ErrorKind::TokenNegative));
        assert_eq!(check_token_count(5, -1), Err(ErrorKind::TokenNegative));
        assert_eq!(check_token_count(-1, 1), Err(ErrorKind::TokenTooLarge));
        assert_eq!(
            check_unsigned_token_count(MAX_TOKEN_COUNT),
            Ok(MAX_TOKEN_COUNT)
        );
        assert_eq!(
            check_unsigned_token_count(MAX_TOKEN_COUNT + 1),
            Err(ErrorKind::TokenTooLarge)
        );
    }

    #[test]
    fn relevance_bounds() {
        for ok in [0.0, -0.0, 0.5, 1.0, f64::MIN_POSITIVE] {
            assert!(check_relevance(ok), "{ok}");
        }
        for bad in [
            f64::NAN,
            -1e-300,
            1.0 + f64::EPSILON,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert!(!check_relevance(bad), "{bad}");
        }
    }
}
