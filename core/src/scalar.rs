//! The value types a CSR matrix can hold.

use std::fmt::{Debug, Display, LowerExp};
use std::ops::{Add, AddAssign, Mul, Neg, Sub};

/// A value type of CSR matrices: `f64` or `f32` (IEEE floating point),
/// `i64` or `i32` (integers: counts, weights, GraphBLAS's `INT64` and
/// `INT32`), or [`Bool`] (GraphBLAS's `BOOL`: `+` is OR, `·` is AND).
///
/// The trait is sealed in spirit (only these five types implement it): the
/// GPU kernels are specialised per type through [`Scalar::C_TYPE`], for
/// the types with [`Scalar::DEVICE`].
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
    /// Whether the type is an integer (`i64`, `i32`, [`Bool`]).
    const INTEGER: bool;
    /// Whether the GPU kernels take values of the type (all but [`Bool`],
    /// which GPU backends take as `i32` 0 and 1).
    const DEVICE: bool;
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
            const DEVICE: bool = true;
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
            const DEVICE: bool = true;
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

/// A boolean value (GraphBLAS's `BOOL`, NumPy's `bool`): one byte, 0 or 1
/// as stored (any other byte reads as true). Its arithmetic is Boolean:
/// `+` is OR, `·` is AND, `−` is XOR (0 exactly where two values agree)
/// and negation leaves a value as it is, so that `plus_times` on booleans
/// is `lor_land`, `min_plus` is `land_lor` and `max_plus` `lor_lor`, as
/// GraphBLAS renames its operators on `BOOL`. Ordered `false < true`.
/// From numbers as a one-bit unsigned integer: towards zero, saturating
/// (`0.5` and `−3` are false, `2` and `+∞` true, NaN false).
///
/// The CPU backend computes on it directly; GPU backends take booleans as
/// `i32` 0 and 1 and return them as booleans (see `Backend::multiply` in
/// the `spgemm` crate); the GPU engines refuse them.
#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub struct Bool(u8);

// SAFETY: one byte, every value valid (nonzero reads as true).
unsafe impl bytemuck::Zeroable for Bool {}
// SAFETY: as above; no padding, `Copy`, `repr(transparent)` over `u8`.
unsafe impl bytemuck::Pod for Bool {}

impl Bool {
    /// False (0).
    pub const FALSE: Bool = Bool(0);
    /// True (1).
    pub const TRUE: Bool = Bool(1);

    /// The value of `b`.
    pub const fn new(b: bool) -> Self {
        Bool(b as u8)
    }

    /// The value as a `bool`.
    pub const fn get(self) -> bool {
        self.0 != 0
    }
}

impl From<bool> for Bool {
    fn from(b: bool) -> Self {
        Bool::new(b)
    }
}

impl From<Bool> for bool {
    fn from(b: Bool) -> Self {
        b.get()
    }
}

impl PartialEq for Bool {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Bool {}

impl PartialOrd for Bool {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.get().cmp(&other.get()))
    }
}

impl Debug for Bool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Debug::fmt(&self.get(), f)
    }
}

impl Display for Bool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Display::fmt(&self.get(), f)
    }
}

impl LowerExp for Bool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        LowerExp::fmt(&u8::from(self.get()), f)
    }
}

impl Add for Bool {
    type Output = Bool;
    fn add(self, y: Bool) -> Bool {
        Bool::new(self.get() || y.get())
    }
}

impl AddAssign for Bool {
    fn add_assign(&mut self, y: Bool) {
        *self = *self + y;
    }
}

impl Sub for Bool {
    type Output = Bool;
    fn sub(self, y: Bool) -> Bool {
        Bool::new(self.get() != y.get())
    }
}

impl Mul for Bool {
    type Output = Bool;
    fn mul(self, y: Bool) -> Bool {
        Bool::new(self.get() && y.get())
    }
}

impl Neg for Bool {
    type Output = Bool;
    fn neg(self) -> Bool {
        self
    }
}

impl Scalar for Bool {
    const ZERO: Self = Bool::FALSE;
    const ONE: Self = Bool::TRUE;
    const EPSILON: Self = Bool::FALSE;
    const INTEGER: bool = true;
    const DEVICE: bool = false;
    const C_TYPE: &'static str = "unsigned char";
    const C_MAX: &'static str = "((value_t)1)";
    const C_MIN: &'static str = "((value_t)0)";
    const NAME: &'static str = "bool";
    const NPY_DESCR: &'static str = "|b1";
    #[inline]
    fn from_f64(v: f64) -> Self {
        Bool::new(v >= 1.0)
    }
    #[inline]
    fn try_from_f64(v: f64) -> Option<Self> {
        (v == 0.0 || v == 1.0).then_some(Bool::new(v == 1.0))
    }
    #[inline]
    fn try_from_i64(v: i64) -> Option<Self> {
        (v == 0 || v == 1).then_some(Bool::new(v == 1))
    }
    #[inline]
    fn to_f64(self) -> f64 {
        f64::from(u8::from(self.get()))
    }
    #[inline]
    fn abs(self) -> Self {
        self
    }
    #[inline]
    fn write_shortest(self, out: &mut Vec<u8>) {
        out.push(if self.get() { b'1' } else { b'0' });
    }
}

#[cfg(test)]
mod tests {
    use super::{Bool, Scalar};

    #[test]
    fn bool_arithmetic_is_or_and_and_conversions_saturate() {
        let (f, t) = (Bool::FALSE, Bool::TRUE);
        assert_eq!([f + f, f + t, t + t], [f, t, t]);
        assert_eq!([f * t, t * t], [f, t]);
        assert_eq!([t - t, t - f, f - f], [f, t, f]);
        assert_eq!(-t, t);
        assert!(f < t);
        // Any nonzero byte reads as true.
        let odd: Bool = bytemuck::cast(2u8);
        assert_eq!(odd, t);
        assert_eq!(odd * t, t);
        for (v, want) in [(0.0, f), (0.5, f), (-3.0, f), (1.0, t), (2.0, t)] {
            assert_eq!(Bool::from_f64(v), want, "{v}");
        }
        assert_eq!(Bool::from_f64(f64::INFINITY), t);
        assert_eq!(Bool::from_f64(f64::NEG_INFINITY), f);
        assert_eq!(Bool::from_f64(f64::NAN), f);
        assert_eq!(Bool::try_from_f64(1.0), Some(t));
        assert_eq!(Bool::try_from_f64(2.0), None);
        assert_eq!(Bool::try_from_i64(0), Some(f));
        assert_eq!(Bool::try_from_i64(-1), None);
        assert_eq!((t.to_f64(), f.to_f64()), (1.0, 0.0));
        let mut out = Vec::new();
        t.write_shortest(&mut out);
        f.write_shortest(&mut out);
        assert_eq!(out, b"10");
        assert_eq!(format!("{t} {f:?} {t:e}"), "true false 1e0");
        assert!(bool::from(Bool::from(true)));
    }
}
