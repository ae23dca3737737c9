//! The loops under every element-wise operation: split across threads, and compiled three times on x86-64 —
//! for the baseline (SSE2), for AVX2 with FMA and for AVX-512, chosen at run time — so that a formula inlined
//! into them vectorises at the machine's width.

use half::{bf16, f16};

use kernels::Real;

use super::elementwise::{BinaryFn, UnaryFn};
use crate::Element;
use crate::tensor::{buffer_cache, storage::CpuData};
use crate::threads;

/// Elements per thread at least when a loop splits (so a loop of fewer than twice as many runs on the calling
/// thread).
pub(crate) const CHUNK: usize = 1 << 14;
/// Elements converted to `f32` at a time for `f16` / `bf16` (a stack block).
const BLOCK: usize = 256;

/// A half-precision type that computes in `f32`.
pub(crate) trait Half: Copy + Send + Sync + 'static {
    fn widen(self) -> f32;
    fn narrow(x: f32) -> Self;
}

macro_rules! half {
    ($($t:ty),*) => {$(
        impl Half for $t {
            #[inline(always)]
            fn widen(self) -> f32 {
                self.to_f32()
            }
            #[inline(always)]
            fn narrow(x: f32) -> Self {
                <$t>::from_f32(x)
            }
        }
    )*};
}
half!(f16, bf16);

/// Runs `$body` (an expression using the generic items in scope) compiled for the widest vector instructions
/// nn runs with ([`cpu_capability`](crate::cpu::cpu_capability): AVX-512, AVX2 with FMA, or the baseline).
///
/// In each version the body sees `FUSED_MUL_ADD`, whether that version has a fused multiply-add instruction
/// (true for AVX2 and AVX-512, and for the baseline of targets that always have one, such as AArch64): pass it
/// to [`mul_add`], which then compiles to that instruction, or to a product and a sum where there is none.
macro_rules! multiversion {
    (fn $name:ident<$($g:ident: $b:path),*>($($arg:ident: $ty:ty),*) $body:block) => {
        #[inline(always)]
        fn $name<$($g: $b),*>($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")]
                fn widest<$($g: $b),*>($($arg: $ty),*) {
                    #[allow(dead_code)]
                    const FUSED_MUL_ADD: bool = true;
                    $body
                }
                #[target_feature(enable = "avx2,fma")]
                fn wide<$($g: $b),*>($($arg: $ty),*) {
                    #[allow(dead_code)]
                    const FUSED_MUL_ADD: bool = true;
                    $body
                }
                match $crate::cpu::cpu_capability() {
                    $crate::cpu::CpuCapability::Avx512 => {
                        // SAFETY: `widest` needs AVX-512 (F, VL, BW, DQ), AVX2 and FMA; `cpu_capability` is never
                        // above `CpuCapability::detected`, which returns `Avx512` only when all six were detected.
                        unsafe { widest($($arg),*) };
                        return;
                    }
                    $crate::cpu::CpuCapability::Avx2 => {
                        // SAFETY: `wide` needs AVX2 and FMA; `cpu_capability` is `Avx2` or above only when both
                        // were detected (`CpuCapability::detected` checks them for either).
                        unsafe { wide($($arg),*) };
                        return;
                    }
                    $crate::cpu::CpuCapability::Default => {}
                }
            }
            #[allow(dead_code)]
            const FUSED_MUL_ADD: bool = cfg!(any(target_arch = "aarch64", target_feature = "fma"));
            $body
        }
    };
}
pub(crate) use multiversion;

/// `a · b + c`: rounded once, in one instruction, where `fused` (pass `FUSED_MUL_ADD`, see [`multiversion!`]);
/// else a product then a sum (a fused multiply-add without the instruction is a slow library call).
#[inline(always)]
pub(crate) fn mul_add<T: Real>(fused: bool, a: T, b: T, c: T) -> T {
    if fused { a.mul_add(b, c) } else { a * b + c }
}

/// Elements per block of the vector loops: a fixed trip count the compiler unrolls into several independent
/// vectors, whose long dependency chains (polynomials, divisions) then overlap.
const UNROLL: usize = 64;

multiversion! {
    fn unary_chunk<R: Real, F: UnaryFn>(src: &[R], dst: &mut [R], f: F) {
        let mut d = dst.chunks_exact_mut(UNROLL);
        let mut s = src.chunks_exact(UNROLL);
        for (d, s) in (&mut d).zip(&mut s) {
            for (d, &s) in d.iter_mut().zip(s) {
                *d = f.apply(s);
            }
        }
        for (d, &s) in d.into_remainder().iter_mut().zip(s.remainder()) {
            *d = f.apply(s);
        }
    }
}

multiversion! {
    fn unary_chunk_in_place<R: Real, F: UnaryFn>(data: &mut [R], f: F) {
        if F::ARITHMETIC_BOUND {
            let mut blocks = data.chunks_exact_mut(UNROLL);
            for block in &mut blocks {
                for x in block.iter_mut() {
                    *x = f.apply(*x);
                }
            }
            for x in blocks.into_remainder() {
                *x = f.apply(*x);
            }
            return;
        }
        // Each block is read whole, computed, and written whole through a pointer the compiler cannot see is
        // the one it was read through. Written as `*x = f(*x)`, a formula that keeps `x` in some lanes (ReLU's
        // `x < 0 ? 0 : x`, a clamp, a threshold) compiles to a masked store of the other lanes, which on
        // AVX-512 ran ReLU in place ~10 % slower than whole-vector stores (BENCHMARKS.md, issue 19).
        let blocks = data.len() / UNROLL;
        let read = data.as_mut_ptr().cast::<[R; UNROLL]>();
        let write = std::hint::black_box(read);
        for b in 0..blocks {
            // SAFETY: `b < data.len() / UNROLL`, so the `UNROLL` elements from `b * UNROLL` are inside `data`,
            // which this function borrows mutably (no other reference reads or writes them meanwhile); an array
            // of `R` has `R`'s alignment, which `data`'s pointer has; `write` is `read` returned unchanged by
            // `black_box` (an identity function), so both pointers carry `data`'s provenance, and the block is
            // read completely before it is written.
            unsafe {
                let mut block = read.add(b).read();
                for x in block.iter_mut() {
                    *x = f.apply(*x);
                }
                write.add(b).write(block);
            }
        }
        for x in &mut data[blocks * UNROLL..] {
            *x = f.apply(*x);
        }
    }
}

multiversion! {
    fn unary_half_chunk<H: Half, F: UnaryFn>(src: &[H], dst: &mut [H], f: F) {
        let mut block = [0.0f32; BLOCK];
        for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
            let b = &mut block[..s.len()];
            for (b, &x) in b.iter_mut().zip(s) {
                *b = x.widen();
            }
            for b in b.iter_mut() {
                *b = f.apply(*b);
            }
            for (d, &b) in d.iter_mut().zip(b.iter()) {
                *d = H::narrow(b);
            }
        }
    }
}

multiversion! {
    fn binary_chunk<R: Real, F: BinaryFn>(a: &[R], b: &[R], dst: &mut [R], f: F) {
        for ((d, &x), &y) in dst.iter_mut().zip(a).zip(b) {
            *d = f.apply(x, y);
        }
    }
}

multiversion! {
    fn binary_scalar_chunk<R: Real, F: BinaryFn>(a: &[R], y: R, dst: &mut [R], f: F) {
        for (d, &x) in dst.iter_mut().zip(a) {
            *d = f.apply(x, y);
        }
    }
}

/// Runs `chunk` on `src` and `dst` (of one length): at once on this thread below twice [`CHUNK`], else on
/// matching pieces over the threads ([`threads::for_each_piece`]).
#[inline(always)]
fn split<S: Sync, D: Send>(src: &[S], dst: &mut [D], chunk: impl Fn(&[S], &mut [D]) + Sync + Send) {
    let parts = threads::parts_for(src.len(), CHUNK);
    threads::for_each_piece(dst, 1, parts, |at, d| chunk(&src[at..at + d.len()], d));
}

/// [`split`] for data changed in place.
#[inline(always)]
fn split_in_place<D: Send>(data: &mut [D], chunk: impl Fn(&mut [D]) + Sync + Send) {
    let parts = threads::parts_for(data.len(), CHUNK);
    threads::for_each_piece(data, 1, parts, |_, d| chunk(d));
}

/// `dst[i] = f(src[i])`.
pub(crate) fn unary<R: Real, F: UnaryFn>(src: &[R], dst: &mut [R], f: F) {
    split(src, dst, move |s, d| unary_chunk(s, d, f));
}

/// `x = f(x)`.
pub(crate) fn unary_in_place<R: Real, F: UnaryFn>(data: &mut [R], f: F) {
    split_in_place(data, move |c| unary_chunk_in_place(c, f));
}

/// `dst[i] = f(src[i])` for a half type, computed in `f32`.
pub(crate) fn unary_half<H: Half, F: UnaryFn>(src: &[H], dst: &mut [H], f: F) {
    split(src, dst, move |s, d| unary_half_chunk(s, d, f));
}

/// `x = f(x)` for a half type, computed in `f32`.
pub(crate) fn unary_half_in_place<H: Half, F: UnaryFn>(data: &mut [H], f: F) {
    split_in_place(data, move |c| {
        let mut block = [H::narrow(0.0); BLOCK];
        for chunk in c.chunks_mut(BLOCK) {
            let b = &mut block[..chunk.len()];
            b.copy_from_slice(chunk);
            unary_half_chunk(b, chunk, f);
        }
    });
}

/// `dst[i] = f(a[i], b[i])`, or `f(a[i], b[0])` when `b` has one element.
pub(crate) fn binary<R: Real, F: BinaryFn>(a: &[R], b: &[R], dst: &mut [R], f: F) {
    let scalar = b.len() == 1 && a.len() != 1;
    let run = move |(d, (a, b)): (&mut [R], (&[R], &[R]))| {
        if scalar {
            binary_scalar_chunk(a, b[0], d, f)
        } else {
            binary_chunk(a, b, d, f)
        }
    };
    let parts = threads::parts_for(a.len(), CHUNK);
    threads::for_each_piece(dst, 1, parts, |at, d| {
        let len = d.len();
        let b = if scalar { b } else { &b[at..at + len] };
        run((d, (&a[at..at + len], b)))
    });
}

/// A vector of `n` elements, all written by `fill` (which must write every one): a kept buffer when there
/// is one (its stale values are overwritten), else a new zeroed one.
pub(crate) fn filled<T: Element>(n: usize, fill: impl FnOnce(&mut [T])) -> CpuData {
    let mut data = buffer_cache::take(T::DTYPE, n).unwrap_or_else(|| CpuData::zeros(T::DTYPE, n));
    let slice = data
        .as_mut_slice::<T>()
        .expect("the buffer was taken or made with T's dtype");
    fill(slice);
    data
}

/// Runs `run(first block, first element, piece)` on pieces of `dst` of whole `block`-element blocks: all of it
/// on this thread below twice [`CHUNK`], else in pieces over the threads ([`threads::for_each_piece`]).
#[inline(always)]
fn split_blocks<T: Send>(dst: &mut [T], block: usize, run: impl Fn(usize, usize, &mut [T]) + Sync + Send) {
    if block == 0 {
        return;
    }
    let parts = threads::parts_for(dst.len(), CHUNK);
    threads::for_each_piece(dst, block, parts, |at, piece| run(at / block, at, piece));
}

/// `dst[i] = f(src[i])` block by block, block `b` (`block` elements) with `formulas[b % formulas.len()]`.
pub(crate) fn unary_blocks<R: Real, F: UnaryFn>(src: &[R], dst: &mut [R], block: usize, formulas: &[F]) {
    if formulas.is_empty() {
        return;
    }
    split_blocks(dst, block, |first, at, piece| {
        let src = &src[at..at + piece.len()];
        let first = first % formulas.len();
        if block >= UNROLL {
            let cycle = formulas.iter().cycle().skip(first);
            for ((s, d), f) in src.chunks(block).zip(piece.chunks_mut(block)).zip(cycle) {
                unary_chunk(s, d, *f);
            }
        } else {
            // Short blocks (a batch norm's 3×3 planes): one dispatch for the piece, not one per block.
            unary_short_blocks(src, piece, block, first, formulas);
        }
    });
}

multiversion! {
    fn unary_short_blocks<R: Real, F: UnaryFn>(src: &[R], dst: &mut [R], block: usize, first: usize, formulas: &[F]) {
        let mut k = first;
        for (s, d) in src.chunks(block).zip(dst.chunks_mut(block)) {
            let f = formulas[k];
            k = if k + 1 == formulas.len() { 0 } else { k + 1 };
            for (d, &s) in d.iter_mut().zip(s) {
                *d = f.apply(s);
            }
        }
    }
}

/// `dst[i] = f_b(a[i], b[i])` block by block, the formula of block `k` (`block` elements each) being `make(k)`.
pub(crate) fn binary_blocks<R: Real, F: BinaryFn>(
    a: &[R],
    b: &[R],
    dst: &mut [R],
    block: usize,
    make: impl Fn(usize) -> F + Sync,
) {
    split_blocks(dst, block, |first, at, piece| {
        let pairs = a[at..].chunks(block).zip(b[at..].chunks(block));
        for (i, ((a, b), d)) in pairs.zip(piece.chunks_mut(block)).enumerate() {
            binary_chunk(a, b, d, make(first + i));
        }
    });
}
