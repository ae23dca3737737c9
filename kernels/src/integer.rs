//! Integer arithmetic on devices, as PyTorch's on integer tensors: `+ - *`, `maximum`, `minimum`, the two
//! remainders and the floor and truncating divisions of `u8`, `i32` and `i64`, broadcast, wrapping in two's
//! complement. Every element is computed as a 64-bit integer held in two 32-bit words (shaders have no
//! 64-bit integers everywhere), then cut to its type: the low 32 or 8 bits of a wrapping result are the
//! type's own wrapping result, and the divisions of sign- or zero-extended values are the type's. `i64`
//! elements are word pairs, low word first; `u8` elements are bytes packed four to a word, a unit writing a
//! whole word. A zero divisor gives an unspecified value (PyTorch's CUDA kernels do not raise either; the
//! caller refuses it where it must).

use cubecl::prelude::*;

use crate::binary::{Operand, offset_in};
use crate::boolean::{Integer, byte_at, output_of_two, words_of};
use crate::launch::{arg, launch};
use crate::{GpuBuffer, Result};

/// An arithmetic operation of two integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntegerOp {
    /// `a + b`, wrapping.
    Add,
    /// `a - b`, wrapping.
    Sub,
    /// `a · b`, wrapping.
    Mul,
    /// The larger.
    Maximum,
    /// The smaller.
    Minimum,
    /// The remainder with the divisor's sign (Python's `%`).
    Remainder,
    /// The remainder with the dividend's sign (C's `%`).
    Fmod,
    /// The quotient rounded down.
    FloorDivide,
    /// The quotient rounded toward zero.
    TruncDivide,
}

impl IntegerOp {
    fn code(self) -> u32 {
        self as u32
    }
}

/// `a + b` modulo 2^64, on `(low, high)` words.
#[cube]
fn add64(a: (u32, u32), b: (u32, u32)) -> (u32, u32) {
    let low = a.0 + b.0;
    let carry = select(low < a.0, 1u32, 0u32);
    (low, a.1 + b.1 + carry)
}

/// `-a` modulo 2^64: the complement plus one.
#[cube]
fn neg64(a: (u32, u32)) -> (u32, u32) {
    let low = (a.0 ^ 0xffff_ffffu32) + 1u32;
    let carry = select(low == 0u32, 1u32, 0u32);
    (low, (a.1 ^ 0xffff_ffffu32) + carry)
}

/// `a - 1` modulo 2^64.
#[cube]
fn decrement64(a: (u32, u32)) -> (u32, u32) {
    let borrow = select(a.0 == 0u32, 1u32, 0u32);
    (a.0 - 1u32, a.1 - borrow)
}

/// The full 64-bit product of two 32-bit words, through their 16-bit halves.
#[cube]
fn wide_mul(a: u32, b: u32) -> (u32, u32) {
    let (a0, a1) = (a & 0xffffu32, a >> 16u32);
    let (b0, b1) = (b & 0xffffu32, b >> 16u32);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    let middle = (p00 >> 16u32) + (p01 & 0xffffu32) + (p10 & 0xffffu32);
    let low = (p00 & 0xffffu32) | (middle << 16u32);
    let high = p11 + (p01 >> 16u32) + (p10 >> 16u32) + (middle >> 16u32);
    (low, high)
}

/// `a · b` modulo 2^64.
#[cube]
fn mul64(a: (u32, u32), b: (u32, u32)) -> (u32, u32) {
    let (low, high) = wide_mul(a.0, b.0);
    (low, high + a.0 * b.1 + a.1 * b.0)
}

/// Whether `a < b` as unsigned 64-bit integers.
#[cube]
fn below64(a: (u32, u32), b: (u32, u32)) -> bool {
    a.1 < b.1 || (a.1 == b.1 && a.0 < b.0)
}

/// Whether `a` is negative as a signed 64-bit integer.
#[cube]
fn negative64(a: (u32, u32)) -> bool {
    (a.1 >> 31u32) == 1u32
}

/// `c ? a : b` of pairs.
#[cube]
fn choose(c: bool, a: (u32, u32), b: (u32, u32)) -> (u32, u32) {
    (select(c, a.0, b.0), select(c, a.1, b.1))
}

/// `(n / d, n % d)` of unsigned 64-bit integers, by long division one bit at a time (`d = 0` gives all ones
/// and `n`).
#[cube]
fn divmod64(n: (u32, u32), d: (u32, u32)) -> ((u32, u32), (u32, u32)) {
    let mut q_low = 0u32;
    let mut q_high = 0u32;
    let mut r_low = 0u32;
    let mut r_high = 0u32;
    // The high word's bits first, then the low word's.
    for word in 0..2u32 {
        let source = select(word == 0u32, n.1, n.0);
        for step in 0..32u32 {
            let shift = 31u32 - step;
            r_high = (r_high << 1u32) | (r_low >> 31u32);
            r_low = (r_low << 1u32) | ((source >> shift) & 1u32);
            if !below64((r_low, r_high), d) {
                let rest = add64((r_low, r_high), neg64(d));
                r_low = rest.0;
                r_high = rest.1;
                if word == 0u32 {
                    q_high |= 1u32 << shift;
                } else {
                    q_low |= 1u32 << shift;
                }
            }
        }
    }
    ((q_low, q_high), (r_low, r_high))
}

/// `a op b` of signed 64-bit integers, `op` an [`IntegerOp`]'s code.
#[cube]
fn apply64(a: (u32, u32), b: (u32, u32), #[comptime] op: u32) -> (u32, u32) {
    // Signed order: the unsigned order with the sign bits flipped.
    let a_less = below64((a.0, a.1 ^ 0x8000_0000u32), (b.0, b.1 ^ 0x8000_0000u32));
    if comptime!(op == IntegerOp::Add as u32) {
        add64(a, b)
    } else if comptime!(op == IntegerOp::Sub as u32) {
        add64(a, neg64(b))
    } else if comptime!(op == IntegerOp::Mul as u32) {
        mul64(a, b)
    } else if comptime!(op == IntegerOp::Maximum as u32) {
        choose(a_less, b, a)
    } else if comptime!(op == IntegerOp::Minimum as u32) {
        choose(a_less, a, b)
    } else {
        let (a_negative, b_negative) = (negative64(a), negative64(b));
        let (q, r) = divmod64(choose(a_negative, neg64(a), a), choose(b_negative, neg64(b), b));
        let signs_differ = a_negative != b_negative;
        // The truncated quotient, and C's remainder (the dividend's sign).
        let quotient = choose(signs_differ, neg64(q), q);
        let rest = choose(a_negative, neg64(r), r);
        let inexact = r.0 != 0u32 || r.1 != 0u32;
        if comptime!(op == IntegerOp::TruncDivide as u32) {
            quotient
        } else if comptime!(op == IntegerOp::Fmod as u32) {
            rest
        } else if comptime!(op == IntegerOp::FloorDivide as u32) {
            choose(signs_differ && inexact, decrement64(quotient), quotient)
        } else {
            // Python's remainder: the divisor's sign.
            choose(inexact && negative64(rest) != b_negative, add64(rest, b), rest)
        }
    }
}

/// Element `i` of integers of `kind` (0: `u8`, 1: `i32`, 2: `i64`), widened to 64 bits (`u8` by zeros, `i32`
/// by its sign).
#[cube]
fn widened(x: &[u32], i: usize, #[comptime] kind: u32) -> (u32, u32) {
    if comptime!(kind == 0) {
        (byte_at(x, i), 0u32)
    } else if comptime!(kind == 1) {
        let v = x[i];
        (v, select((v >> 31u32) == 1u32, 0xffff_ffffu32, 0u32))
    } else {
        (x[2 * i], x[2 * i + 1])
    }
}

/// Output word `w` of `a op b`: four `u8` elements, one `i32`, or one half of an `i64` pair (unit `w`
/// computes element `w / 2` and writes its word `w % 2`).
#[cube(launch_unchecked)]
fn integer_kernel(
    a: &[u32],
    b: &[u32],
    out: &mut [u32],
    meta: &[u32],
    rank: usize,
    n: usize,
    #[comptime] op: u32,
    #[comptime] kind: u32,
) {
    let w = ABSOLUTE_POS;
    if w < out.len() {
        if comptime!(kind == 0) {
            let mut packed = 0u32;
            for k in 0..4usize {
                let i = w * 4 + k;
                if i < n {
                    let p = widened(a, offset_in(i, meta, rank, 0), kind);
                    let q = widened(b, offset_in(i, meta, rank, 1), kind);
                    let r = apply64(p, q, op);
                    packed |= (r.0 & 0xffu32) << (u32::cast_from(k) * 8);
                }
            }
            out[w] = packed;
        } else if comptime!(kind == 1) {
            let p = widened(a, offset_in(w, meta, rank, 0), kind);
            let q = widened(b, offset_in(w, meta, rank, 1), kind);
            out[w] = apply64(p, q, op).0;
        } else {
            let i = w / 2;
            let p = widened(a, offset_in(i, meta, rank, 0), kind);
            let q = widened(b, offset_in(i, meta, rank, 1), kind);
            let r = apply64(p, q, op);
            out[w] = select(w % 2 == 1, r.1, r.0);
        }
    }
}

/// `a op b` over `out_shape` for integers of one kind (`u8`, `i32` or `i64`; not bool), broadcast: a new
/// buffer of that kind. Exact: computed on the integers' words, never converted to floats.
pub fn integer_binary(
    op: IntegerOp,
    kind: Integer,
    a: Operand<'_>,
    b: Operand<'_>,
    out_shape: &[usize],
) -> Result<GpuBuffer> {
    let name = "integer_binary";
    let size = kind.size_in_bytes();
    let (out, n, Some((meta, rank))) = output_of_two(name, a, b, size, size, out_shape)? else {
        return Ok(GpuBuffer::uninit(a.buffer.device(), 0));
    };
    let code = match kind {
        Integer::Byte => 0u32,
        Integer::I32 => 1,
        Integer::I64 => 2,
    };
    let words = words_of(n * size);
    // SAFETY: `a` and `b` hold `size` bytes per element of their shapes (checked); a broadcast offset of an
    // index below `n` is below those counts, so its words (or its byte, in word `i / 4`) lie in the words
    // their buffers are padded to; `out` is bound as the `⌈n·size/4⌉` words it is padded to, and the kernel
    // guards its word; `meta` holds `3 · rank` u32s.
    unsafe {
        launch!(
            integer_kernel,
            a.buffer,
            words,
            arg(a.buffer, words_of(a.buffer.len())),
            arg(b.buffer, words_of(b.buffer.len())),
            arg(&out, words),
            arg(&meta, (3 * rank).max(1)),
            rank,
            n,
            op.code(),
            code,
        )
    }
    Ok(out)
}
