//! The value types a CSR matrix can hold.

use std::fmt::{Debug, Display, LowerExp};
use std::ops::{Add, AddAssign, Mul, Neg, Sub};

/// A value type of CSR matrices: `f64` or `f32` (IEEE floating point), or
/// `i64` or `i32` (integers: counts, weights, GraphBLAS's `INT64` and
/// `INT32`).
///
/// The trait is sealed in spirit (only these four types implement it): the
/// GPU kernels are specialised per type through [`Scalar::C_TYPE`].
/// Integer arithmetic wraps on overflow in release builds, as C's unsigned
/// arithmetic and GraphBLAS's integer operators do.
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
    /// Machine epsilon of the type (0 for integers, whose sums are exact).
    const EPSILON: Self;
    /// Whether the type is an integer (`i64`, `i32`).
    const INTEGER: bool;
    /// The C type name used when kernels are specialised (`"float"`,
    /// `"double"`, `"int"`, `"long long"`).
    const C_TYPE: &'static str;
    /// A C expression of type `value_t` for the largest value (`+∞` for
    /// floats), the identity of `min`.
    const C_MAX: &'static str;
    /// A C expression of type `value_t` for the smallest value (`−∞` for
    /// floats), the identity of `max`.
    const C_MIN: &'static str;
    /// The Rust type name (`"f32"`, `"f64"`, `"i32"`, `"i64"`), used in
    /// reports and command lines.
    const NAME: &'static str;
    /// NumPy's type string of the type (`"<f8"`, `"<f4"`, `"<i8"`, `"<i4"`).
    const NPY_DESCR: &'static str;
    /// Converts from `f64`: rounding to nearest for floats; for integers
    /// towards zero, saturating at the type's bounds (`±∞` to the largest
    /// and smallest values, NaN to 0), as Rust's `as` does.
    fn from_f64(v: f64) -> Self;
    /// Converts from `f64` when the value is one of this type: always for
    /// floats (rounded); for integers only integral values within range.
    fn try_from_f64(v: f64) -> Option<Self>;
    /// Converts from `i64` when the value fits: always for floats (rounded
    /// past 2⁵³ for `f64`, 2²⁴ for `f32`), within range for integers.
    fn try_from_i64(v: i64) -> Option<Self>;
    /// Converts to `f64`: exactly for floats and `i32`, rounded past 2⁵³
    /// in magnitude for `i64`.
    fn to_f64(self) -> f64;
    /// Absolute value (the largest value for an integer type's smallest).
    fn abs(self) -> Self;
    /// Appends the shortest decimal text that reads back as exactly this
    /// value of this type (ryu, itoa), e.g. `1.0`, `2.5e-8`, `NaN`, `-inf`,
    /// `-42`.
    fn write_shortest(self, out: &mut Vec<u8>);
}

macro_rules! impl_float {
    ($t:ty, $c:literal, $npy:literal) => {
        impl Scalar for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const EPSILON: Self = <$t>::EPSILON;
            const INTEGER: bool = false;
            const C_TYPE: &'static str = $c;
            const C_MAX: &'static str = "((value_t)__longlong_as_double(0x7ff0000000000000ll))";
            const C_MIN: &'static str =
                "((value_t)__longlong_as_double((long long)0xfff0000000000000ull))";
            const NAME: &'static str = stringify!($t);
            const NPY_DESCR: &'static str = $npy;
            #[inline]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn try_from_f64(v: f64) -> Option<Self> {
                Some(v as $t)
            }
            #[inline]
            fn try_from_i64(v: i64) -> Option<Self> {
                Some(v as $t)
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

impl_float!(f32, "float", "<f4");
impl_float!(f64, "double", "<f8");

macro_rules! impl_integer {
    ($t:ty, $c:literal, $npy:literal, $max:literal, $min:literal) => {
        impl Scalar for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const EPSILON: Self = 0;
            const INTEGER: bool = true;
            const C_TYPE: &'static str = $c;
            const C_MAX: &'static str = $max;
            const C_MIN: &'static str = $min;
            const NAME: &'static str = stringify!($t);
            const NPY_DESCR: &'static str = $npy;
            #[inline]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn try_from_f64(v: f64) -> Option<Self> {
                // Both bounds as f64 are exact powers of two: MIN exactly,
                // MAX + 1 exactly.
                let fits = v >= <$t>::MIN as f64 && v < -(<$t>::MIN as f64);
                (v.fract() == 0.0 && fits).then_some(v as $t)
            }
            #[inline]
            fn try_from_i64(v: i64) -> Option<Self> {
                <$t>::try_from(v).ok()
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::saturating_abs(self)
            }
            #[inline]
            fn write_shortest(self, out: &mut Vec<u8>) {
                out.extend_from_slice(itoa::Buffer::new().format(self).as_bytes());
            }
        }
    };
}

impl_integer!(
    i32,
    "int",
    "<i4",
    "((value_t)0x7fffffff)",
    "((value_t)(-0x7fffffff - 1))"
);
impl_integer!(
    i64,
    "long long",
    "<i8",
    "((value_t)0x7fffffffffffffffll)",
    "((value_t)(-0x7fffffffffffffffll - 1))"
);
