//! The host convolution's weight gradient as a direct kernel: `dw[o, tap] = Σ over images and output positions
//! of dy[o, position] · x[tap of position]`, with no im2col matrix. The batch is split into units of whole
//! images, each with its own partial sums; a unit walks its images a chunk at a time (the chunk's input padded
//! and its output gradient repacked as `OB` channels per position, both in a scratch that stays in cache), and
//! for each block of `KB` taps × `OB` channels streams the chunk's positions past accumulators held in
//! registers, reading the input through the same tap offsets as the forward's kernel (`direct.rs`). The units'
//! partial sums are added in unit order at the end, so the result does not depend on the thread count.

use super::super::float::Float;
use super::super::map::{mul_add, multiversion};
use super::direct::{CHUNK_ELEMENTS, Taps, block_width, position_bases};
use super::{Geometry, PaddedChunks};
use crate::threads;

/// Taps per item of work: `KB × 2` vector accumulators, as the forward's positions per block.
const KB: usize = 6;

/// Multiply-adds below which the gradient runs on the calling thread (the forward's threshold).
const PARALLEL_WORK: usize = 1 << 18;

/// The most units the batch is split into: enough pieces for the threads to share them out, few enough
/// that the partial sums (one gradient's worth each) stay small.
const MAX_UNITS: usize = 16;

/// Elements of partial sums above which a large gradient (DCGAN's `(512, 256, 4, 4)`: 2M values) is split into
/// fewer units, down to 2: summing 16 copies of it cost more than the multiply-adds. A constant, not the
/// thread count, so that the result does not depend on the threads.
const PARTIALS_BUDGET: usize = 1 << 21;

/// What every unit reads.
struct Plan<'a, T> {
    geo: &'a Geometry,
    /// The input, `(n, c, h, w)`.
    x: &'a [T],
    /// The output's gradient, `(n, o, ho, wo)`.
    dy: &'a [T],
    taps: Taps,
    /// Channels per block (see `direct::block_width`).
    ob: usize,
    /// Blocks of channels per group.
    blocks: usize,
    /// Size of a padded plane, `(hp, wp)`; the input's own when it has no padding.
    padded: (usize, usize),
    /// Images per chunk.
    chunk: usize,
    /// Units the batch is split into.
    units: usize,
    /// The index in a chunk's padded input of the first value each of its positions (image-major) reads, in
    /// group 0, for a whole chunk.
    bases: Vec<usize>,
}

impl<T> Plan<'_, T> {
    /// Items of work per unit and chunk: one per (group, block of channels, block of taps).
    fn items(&self) -> usize {
        self.geo.g * self.blocks * self.taps.offsets.len().div_ceil(KB)
    }
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
    let (hp, wp) = super::padded_size(geo);
    let plane = hp * wp;
    let ob = block_width::<T>(og);
    let chunk = (CHUNK_ELEMENTS / (geo.c * plane).max(1)).clamp(1, n);
    let plan = Plan {
        geo,
        x,
        dy,
        taps: Taps::new(geo, plane, wp),
        ob,
        blocks: og.div_ceil(ob),
        padded: (hp, wp),
        chunk,
        units: n.div_ceil(chunk).min(MAX_UNITS),
        bases: position_bases(geo, chunk, wp, plane),
    };
    let sums = plan.items() * KB * ob;
    let plan = Plan {
        units: plan.units.min((PARTIALS_BUDGET / sums).max(2)),
        ..plan
    };
    let mut partials = vec![T::ZERO; plan.units * sums];
    let parts = threads::parts_for(n * p * o * k, PARALLEL_WORK);
    threads::for_each_piece(&mut partials, sums, parts, |at, piece| {
        run_units(&plan, at / sums, piece)
    });
    let (total, rest) = partials.split_at_mut(sums);
    for partial in rest.chunks(sums) {
        for (t, &v) in total.iter_mut().zip(partial) {
            *t = *t + v;
        }
    }
    let tap_blocks = k.div_ceil(KB);
    for (item, values) in total.chunks(KB * ob).enumerate() {
        let (block, t0) = (item / tap_blocks, (item % tap_blocks) * KB);
        let (gi, bi) = (block / plan.blocks, block % plan.blocks);
        for (t, row) in values.chunks(ob).enumerate().take(k - t0) {
            for (j, &v) in row.iter().enumerate().take(og - bi * ob) {
                dw[(gi * og + bi * ob + j) * k + t0 + t] = v;
            }
        }
    }
}

/// The partial sums of units `first..` into `out`, one gradient's worth of items each.
fn run_units<T: Float>(plan: &Plan<'_, T>, first: usize, out: &mut [T]) {
    let geo = plan.geo;
    let (n, o, p) = (geo.n, geo.o, geo.ho * geo.wo);
    let og = o / geo.g;
    let (ob, blocks) = (plan.ob, plan.blocks);
    // A chunk's images, padded, and its output gradient as `[group][block of OB channels][position][OB]`, each
    // block `chunk · p` positions long; the lanes past a group's last channel stay zero.
    let mut chunks = PaddedChunks::new(geo, plan.chunk);
    let mut packed = vec![T::ZERO; geo.g * blocks * plan.chunk * p * ob];
    let sums = plan.items() * KB * ob;
    for (u, sums) in out.chunks_mut(sums).enumerate() {
        let unit = first + u;
        let images = unit * n / plan.units..(unit + 1) * n / plan.units;
        for n0 in images.clone().step_by(plan.chunk) {
            let nb = plan.chunk.min(images.end - n0);
            let xp = chunks.images(geo, plan.x, n0, nb);
            for ni in 0..nb {
                for channel in 0..o {
                    let (gi, oi) = (channel / og, channel % og);
                    let (block, j) = (gi * blocks + oi / ob, oi % ob);
                    let at = (n0 + ni) * o + channel;
                    let rows = &mut packed[(block * plan.chunk + ni) * p * ob..];
                    for (row, &v) in rows.chunks_mut(ob).zip(&plan.dy[at * p..(at + 1) * p]) {
                        row[j] = v;
                    }
                }
            }
            accumulate(plan, xp, &packed, nb * p, sums);
        }
    }
}

multiversion! {
    fn accumulate<T: Float>(plan: &Plan<'_, T>, xp: &[T], packed: &[T], positions: usize, sums: &mut [T]) {
        match plan.ob {
            4 => items::<T, 4>(plan, xp, packed, positions, sums, FUSED_MUL_ADD),
            8 => items::<T, 8>(plan, xp, packed, positions, sums, FUSED_MUL_ADD),
            _ => items::<T, 16>(plan, xp, packed, positions, sums, FUSED_MUL_ADD),
        }
    }
}

/// Adds every item's sums over the first `positions` positions of a chunk (`xp` its padded input, `packed`
/// its repacked output gradient) into `sums`, `KB × OB` values per item (tap-major); multiply-adds fused where
/// `fused` (`FUSED_MUL_ADD`).
#[inline(always)]
fn items<T: Float, const OB: usize>(
    plan: &Plan<'_, T>,
    xp: &[T],
    packed: &[T],
    positions: usize,
    sums: &mut [T],
    fused: bool,
) {
    let k = plan.taps.offsets.len();
    let tap_blocks = k.div_ceil(KB);
    let (hp, wp) = plan.padded;
    let group_shift = (plan.geo.c / plan.geo.g) * hp * wp;
    let block_len = plan.chunk * (plan.geo.ho * plan.geo.wo) * OB;
    let bases = &plan.bases[..positions];
    let last_base = bases.last().copied().unwrap_or(0);
    for (item, sums) in sums.chunks_mut(KB * OB).enumerate() {
        let (block, t0) = (item / tap_blocks, (item % tap_blocks) * KB);
        let shift = (block / plan.blocks) * group_shift;
        let taps = &plan.taps.offsets[t0..(t0 + KB).min(k)];
        // Past the last tap, repeat it: its sums are computed and dropped.
        let mut offsets = [taps[taps.len() - 1]; KB];
        offsets[..taps.len()].copy_from_slice(taps);
        let (dy, _) = packed[block * block_len..block * block_len + positions * OB].as_chunks::<OB>();
        assert!(
            last_base + shift + plan.taps.max < xp.len(),
            "conv2d: the padded input does not hold every patch"
        );
        let x = xp.as_ptr();
        let mut acc = [[T::ZERO; OB]; KB];
        for (dy, &base) in dy.iter().zip(bases) {
            let at = base + shift;
            for (acc, &offset) in acc.iter_mut().zip(&offsets) {
                // Volatile for the reason the forward's kernel gives (no AVX-512 gather).
                // SAFETY: `base <= last_base` (the bases grow with the position) and `offset <= taps.max`
                // (`Taps::new` made it the maximum), so `at + offset <= last_base + shift + taps.max`, which
                // the assertion above holds below `xp.len()`: an index of the initialized, aligned `xp`.
                let v = unsafe { std::ptr::read_volatile(x.add(at + offset)) };
                for (acc, &d) in acc.iter_mut().zip(dy) {
                    *acc = mul_add(fused, v, d, *acc);
                }
            }
        }
        for (s, &a) in sums.iter_mut().zip(acc.as_flattened()) {
            *s = *s + a;
        }
    }
}
