//! Element casts between every pair of dtypes, with PyTorch's `copy_` / `to` semantics: floats to integers
//! truncate toward zero (saturating where C++ leaves it undefined), anything to bool tests `!= 0`, and the
//! half types convert through `f32` as `c10::Half` and `c10::BFloat16` do.

use half::{bf16, f16};

use super::storage::CpuData;
use crate::DType;

/// One element cast from `S`.
pub(crate) trait CastFrom<S>: Sized {
    fn cast_from(s: S) -> Self;
}

macro_rules! cast_as {
    ($($s:ty),* => $d:ty) => {$(
        impl CastFrom<$s> for $d {
            #[inline(always)]
            fn cast_from(s: $s) -> $d { s as $d }
        }
    )*};
}
cast_as!(f32, f64, i64, i32, u8 => f32);
cast_as!(f32, f64, i64, i32, u8 => f64);
cast_as!(f32, f64, i64, i32, u8 => i64);
cast_as!(f32, f64, i64, i32, u8 => i32);
cast_as!(f32, f64, i64, i32, u8 => u8);

macro_rules! cast_from_half {
    ($h:ty => $($d:ty),*) => {$(
        impl CastFrom<$h> for $d {
            #[inline(always)]
            fn cast_from(s: $h) -> $d { s.to_f32() as $d }
        }
    )*};
}
cast_from_half!(f16 => f32, f64, i64, i32, u8);
cast_from_half!(bf16 => f32, f64, i64, i32, u8);

macro_rules! cast_to_half {
    ($h:ty, from $($s:ty),*) => {$(
        impl CastFrom<$s> for $h {
            #[inline(always)]
            fn cast_from(s: $s) -> $h { <$h>::from_f32(s as f32) }
        }
    )*};
}
cast_to_half!(f16, from f32, f64, i64, i32, u8);
cast_to_half!(bf16, from f32, f64, i64, i32, u8);

impl CastFrom<f16> for f16 {
    #[inline(always)]
    fn cast_from(s: f16) -> f16 {
        s
    }
}
impl CastFrom<bf16> for bf16 {
    #[inline(always)]
    fn cast_from(s: bf16) -> bf16 {
        s
    }
}
impl CastFrom<bf16> for f16 {
    #[inline(always)]
    fn cast_from(s: bf16) -> f16 {
        f16::from_f32(s.to_f32())
    }
}
impl CastFrom<f16> for bf16 {
    #[inline(always)]
    fn cast_from(s: f16) -> bf16 {
        bf16::from_f32(s.to_f32())
    }
}

macro_rules! cast_bool {
    ($($t:ty),*) => {$(
        impl CastFrom<bool> for $t {
            #[inline(always)]
            fn cast_from(s: bool) -> $t { <$t as CastFrom<u8>>::cast_from(s as u8) }
        }
    )*};
}
cast_bool!(f16, bf16, f32, f64, i64, i32, u8);

macro_rules! cast_to_bool {
    ($($t:ty),*) => {$(
        impl CastFrom<$t> for bool {
            #[inline(always)]
            fn cast_from(s: $t) -> bool { <f64 as CastFrom<$t>>::cast_from(s) != 0.0 }
        }
    )*};
}
cast_to_bool!(f16, bf16, f32, f64, u8);
impl CastFrom<i64> for bool {
    #[inline(always)]
    fn cast_from(s: i64) -> bool {
        s != 0
    }
}
impl CastFrom<i32> for bool {
    #[inline(always)]
    fn cast_from(s: i32) -> bool {
        s != 0
    }
}
impl CastFrom<bool> for bool {
    #[inline(always)]
    fn cast_from(s: bool) -> bool {
        s
    }
}

fn convert<S: Copy, D: CastFrom<S>>(src: &[S]) -> Vec<D> {
    src.iter().map(|&s| D::cast_from(s)).collect()
}

/// `src` converted to `dtype` (a copy even when the dtype is unchanged).
pub(crate) fn cast_data(src: &CpuData, dtype: DType) -> CpuData {
    macro_rules! to {
        ($v:expr) => {
            match dtype {
                DType::F16 => CpuData::F16(convert($v)),
                DType::BF16 => CpuData::BF16(convert($v)),
                DType::F32 => CpuData::F32(convert($v)),
                DType::F64 => CpuData::F64(convert($v)),
                DType::I64 => CpuData::I64(convert($v)),
                DType::I32 => CpuData::I32(convert($v)),
                DType::U8 => CpuData::U8(convert($v)),
                DType::Bool => CpuData::Bool(convert($v)),
            }
        };
    }
    super::storage::with_cpu_data!(src, v => to!(v))
}

/// Casts `src` into `dst` element by element (same length), as an in-place `copy_` does.
pub(crate) fn cast_into(src: &CpuData, dst: &mut CpuData) {
    fn into<S: Copy, D: CastFrom<S>>(src: &[S], dst: &mut [D]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = D::cast_from(s);
        }
    }
    macro_rules! to {
        ($v:expr) => {
            match dst {
                CpuData::F16(d) => into($v, d),
                CpuData::BF16(d) => into($v, d),
                CpuData::F32(d) => into($v, d),
                CpuData::F64(d) => into($v, d),
                CpuData::I64(d) => into($v, d),
                CpuData::I32(d) => into($v, d),
                CpuData::U8(d) => into($v, d),
                CpuData::Bool(d) => into($v, d),
            }
        };
    }
    super::storage::with_cpu_data!(src, v => to!(v))
}
