//! The host convolution's weight gradient as a direct kernel: `dw[o, tap] = Σ over images and output positions
//! of dy[o, position] · x[tap of position]`, with no im2col matrix. The output's gradient is repacked once as
//! `OB` channels per position; each item of work is a block of `KB` taps × `OB` channels held in registers
//! while every position of the batch streams past, reading the input through the same tap offsets as the
//! forward's kernel (`direct.rs`).

use super::super::float::Float;
use super::super::map::multiversion;
use super::direct::{Taps, block_width};
use super::{Geometry, Padded};
use crate::threads;

/// Taps per item of work: `KB × 2` vector accumulators, as the forward's positions per block.
const KB: usize = 6;

/// Multiply-adds below which the gradient runs on the calling thread (the forward's threshold).
const PARALLEL_WORK: usize = 1 << 18;

/// What every item of work reads.
struct Plan<'a, T> {
    /// The padded input, `(n, c, hp, wp)`.
    x: &'a [T],
    /// The output's gradient as `[group][block of OB channels][position][OB]`, zeros past a group's channels.
    dy: Vec<T>,
    /// The index in `x` of the first value each position (image-major) reads, in group 0.
    bases: Vec<usize>,
    taps: Taps,
    /// Channels per block (see `direct::block_width`).
    ob: usize,
    /// Blocks of channels per group.
    blocks: usize,
    /// Offset in `x` between the first channels of consecutive groups.
    group_shift: usize,
}

/// The weight's gradient `(o, c / groups, kh, kw)` of a convolution of `x` from the output's gradient `dy`
/// (`(n, o, ho, wo)`), into `dw` (every element written).
pub(super) fn weight_grad<T: Float>(geo: &Geometry, x: &[T], dy: &[T], dw: &mut [T]) {
    let (n, o, g, p) = (geo.n, geo.o, geo.g, geo.ho * geo.wo);
    let (cg, og) = (geo.c / g, o / g);
    let k = cg * geo.kh * geo.kw;
    if dw.is_empty() {
        return;
    }
    if n * p == 0 {
        dw.fill(T::ZERO);
        return;
    }
    let padded = Padded::new(geo, x);
    let plane = padded.h * padded.w;
    let ob = block_width::<T>(og);
    let blocks = og.div_ceil(ob);
    let positions = n * p;
    let mut packed = vec![T::ZERO; g * blocks * positions * ob];
    for ni in 0..n {
        for channel in 0..o {
            let (gi, oi) = (channel / og, channel % og);
            let (block, j) = (gi * blocks + oi / ob, oi % ob);
            let src = &dy[(ni * o + channel) * p..(ni * o + channel + 1) * p];
            for (pi, &v) in src.iter().enumerate() {
                packed[(block * positions + ni * p + pi) * ob + j] = v;
            }
        }
    }
    let mut bases = Vec::with_capacity(positions);
    for ni in 0..n {
        for oh in 0..geo.ho {
            for ow in 0..geo.wo {
                bases.push(ni * geo.c * plane + oh * geo.stride[0] * padded.w + ow * geo.stride[1]);
            }
        }
    }
    let plan = Plan {
        x: &padded.data,
        dy: packed,
        bases,
        taps: Taps::new(geo, plane, padded.w),
        ob,
        blocks,
        group_shift: cg * plane,
    };
    // One item per (group, block of channels, block of taps), each `KB × OB` values.
    let items = g * blocks * k.div_ceil(KB);
    let mut results = vec![T::ZERO; items * KB * ob];
    let parts = threads::parts_for(positions * o * k, PARALLEL_WORK);
    threads::for_each_piece(&mut results, KB * ob, parts, |at, piece| {
        run_items(&plan, at / (KB * ob), piece);
    });
    for (item, values) in results.chunks(KB * ob).enumerate() {
        let (block, t0) = (item / k.div_ceil(KB), (item % k.div_ceil(KB)) * KB);
        let (gi, bi) = (block / blocks, block % blocks);
        for (t, row) in values.chunks(ob).enumerate().take(k - t0) {
            for (j, &v) in row.iter().enumerate().take(og - bi * ob) {
                dw[(gi * og + bi * ob + j) * k + t0 + t] = v;
            }
        }
    }
}

multiversion! {
    fn run_items<T: Float>(plan: &Plan<'_, T>, first: usize, out: &mut [T]) {
        match plan.ob {
            4 => items::<T, 4>(plan, first, out),
            8 => items::<T, 8>(plan, first, out),
            _ => items::<T, 16>(plan, first, out),
        }
    }
}

/// Items `first..` of the gradient into `out`, `KB × OB` values each (tap-major).
#[inline(always)]
fn items<T: Float, const OB: usize>(plan: &Plan<'_, T>, first: usize, out: &mut [T]) {
    let k = plan.taps.offsets.len();
    let tap_blocks = k.div_ceil(KB);
    let positions = plan.bases.len();
    let last_base = plan.bases.last().copied().unwrap_or(0);
    for (i, out) in out.chunks_mut(KB * OB).enumerate() {
        let item = first + i;
        let (block, t0) = (item / tap_blocks, (item % tap_blocks) * KB);
        let shift = (block / plan.blocks) * plan.group_shift;
        let taps = &plan.taps.offsets[t0..(t0 + KB).min(k)];
        // Past the last tap, repeat it: its sums are computed and dropped.
        let mut offsets = [taps[taps.len() - 1]; KB];
        offsets[..taps.len()].copy_from_slice(taps);
        let (dy, _) = plan.dy[block * positions * OB..(block + 1) * positions * OB].as_chunks::<OB>();
        assert!(
            last_base + shift + plan.taps.max < plan.x.len(),
            "conv2d: the padded input does not hold every patch"
        );
        let x = plan.x.as_ptr();
        let mut acc = [[T::ZERO; OB]; KB];
        for (dy, &base) in dy.iter().zip(&plan.bases) {
            let at = base + shift;
            for (acc, &offset) in acc.iter_mut().zip(&offsets) {
                // Volatile for the reason the forward's kernel gives (no AVX-512 gather).
                // SAFETY: `base <= last_base` (the bases grow with the position) and `offset <= taps.max`
                // (`Taps::new` made it the maximum), so `at + offset <= last_base + shift + taps.max`, which
                // the assertion above holds below `x.len()`: an index of the initialized, aligned `x`.
                let v = unsafe { std::ptr::read_volatile(x.add(at + offset)) };
                for (acc, &d) in acc.iter_mut().zip(dy) {
                    *acc = *acc + v * d;
                }
            }
        }
        out.copy_from_slice(acc.as_flattened());
    }
}
