//! Enums whose values go by names at the boundary (error kinds, strategies, modes, reasons).
//! One list gives `ALL`, `name` and `from_name`, so a value left out of the list does not
//! compile: `name` must match every value.

macro_rules! named {
    ($kind:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $kind {
            /// Every value, in the order listed.
            pub const ALL: [$kind; named!(@count $($variant)+)] = [$($kind::$variant),+];

            pub fn name(self) -> &'static str {
                match self {
                    $($kind::$variant => $name),+
                }
            }

            pub fn from_name(name: &str) -> Option<$kind> {
                $kind::ALL.into_iter().find(|value| value.name() == name)
            }
        }
    };
    (@count) => { 0 };
    (@count $head:ident $($tail:ident)*) => { 1 + named!(@count $($tail)*) };
}

#[cfg(test)]
mod tests {
    use super::super::{ErrorKind, Reason, Strategy};

    fn check<T: Copy + PartialEq + std::fmt::Debug>(
        all: &[T],
        name: fn(T) -> &'static str,
        from_name: fn(&str) -> Option<T>,
    ) {
        for (at, &value) in all.iter().enumerate() {
            assert_eq!(from_name(name(value)), Some(value));
            assert!(!all[..at].contains(&value));
        }
        assert_eq!(from_name(""), None);
    }

    #[test]
    fn every_value_is_listed_once_and_found_by_its_name() {
        check(&ErrorKind::ALL, ErrorKind::name, ErrorKind::from_name);
        check(&Reason::ALL, Reason::name, Reason::from_name);
        check(&Strategy::ALL, Strategy::name, Strategy::from_name);
        assert_eq!(
            (ErrorKind::ALL.len(), Reason::ALL.len(), Strategy::ALL.len()),
            (17, 11, 4)
        );
        assert_eq!(Reason::from_name("no_room"), Some(Reason::NoRoom));
    }
}
