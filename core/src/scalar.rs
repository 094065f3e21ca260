//! The value types a CSR matrix can hold.

use std::fmt::{Debug, Display, LowerExp};
use std::ops::{Add, AddAssign, Mul, Neg, Sub};

/// A floating-point value type of CSR matrices: `f32` or `f64`.
///
/// The trait is sealed in spirit (only the two IEEE types implement it): the
/// GPU kernels are specialised per type through [`Scalar::C_TYPE`].
pub trait Scalar:
    bytemuck::Pod
    + Copy
    + Default
    + PartialEq
    + PartialOrd
    + Debug
    + Display
    + LowerExp
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + AddAssign
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
{
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity (the value of a `pattern` entry).
    const ONE: Self;
    /// Machine epsilon of the type.
    const EPSILON: Self;
    /// The C type name used when kernels are specialised (`"float"`, `"double"`).
    const C_TYPE: &'static str;
    /// The Rust type name (`"f32"`, `"f64"`), used in reports.
    const NAME: &'static str;
    /// Converts from `f64`, rounding to nearest.
    fn from_f64(v: f64) -> Self;
    /// Converts to `f64` exactly.
    fn to_f64(self) -> f64;
    /// Absolute value.
    fn abs(self) -> Self;
    /// Appends the shortest decimal text that reads back as exactly this
    /// value of this type (ryu), e.g. `1.0`, `2.5e-8`, `NaN`, `-inf`.
    fn write_shortest(self, out: &mut Vec<u8>);
}

macro_rules! impl_scalar {
    ($t:ty, $c:literal) => {
        impl Scalar for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const EPSILON: Self = <$t>::EPSILON;
            const C_TYPE: &'static str = $c;
            const NAME: &'static str = stringify!($t);
            #[inline]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline]
            fn write_shortest(self, out: &mut Vec<u8>) {
                out.extend_from_slice(ryu::Buffer::new().format(self).as_bytes());
            }
        }
    };
}

impl_scalar!(f32, "float");
impl_scalar!(f64, "double");
