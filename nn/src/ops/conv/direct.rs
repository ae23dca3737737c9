//! The host convolution's forward as a direct kernel (an implicit GEMM): no im2col matrix, no zero-filled
//! scratch per call. Each output position's `k = C/groups · kH · kW` input values are read where they lie in
//! the (padded) input, through one offset per kernel tap, and multiply a block of packed weights (`k` rows of
//! `OB` output channels) into `PB × OB` accumulators held in registers; the bias is their starting value. A
//! group's last block is as narrow as its remaining channels allow (4, 8 or 16: [`Blocks`]).
//!
//! Sized for the shapes the reference model runs (3×3 to 8×8 maps, 16 to 64 channels), where the im2col
//! matrix was larger than the work done on it; the forward uses it for every convolution: it measured 2×
//! faster than im2col + `matrixmultiply` on the model's shape and 1.5× on a ResNet stage and stem (one thread,
//! AVX2), and BENCHMARKS.md has it next to PyTorch's on the three.

use super::super::float::Float;
use super::super::map::{mul_add, multiversion};
use super::{Geometry, PaddedChunks};
use crate::threads;

/// Output positions per block of the kernel: `PB × 2` vector accumulators (12 of AVX2's 16 registers).
const PB: usize = 6;

/// Multiply-adds below which a convolution runs on the calling thread: splitting the reference model's
/// 6M-multiply-add convolutions over two threads pays; this keeps single small images on one.
const PARALLEL_WORK: usize = 1 << 18;

/// Input elements of the padded images one part works on at a time (a few images, kept in L1 / L2).
pub(super) const CHUNK_ELEMENTS: usize = 1 << 14;

/// The offsets, in a padded image, of the `k` values one output position reads, relative to the position's
/// first; with their maximum, which bounds every read.
pub(super) struct Taps {
    pub(super) offsets: Vec<usize>,
    pub(super) max: usize,
}

impl Taps {
    pub(super) fn new(geo: &Geometry, plane: usize, padded_w: usize) -> Taps {
        let (cg, kh, kw) = (geo.c / geo.g, geo.kh, geo.kw);
        let mut offsets = Vec::with_capacity(cg * kh * kw);
        for ci in 0..cg {
            for ki in 0..kh {
                for kj in 0..kw {
                    offsets.push(ci * plane + ki * geo.dilation[0] * padded_w + kj * geo.dilation[1]);
                }
            }
        }
        let max = offsets.iter().copied().max().unwrap_or(0);
        Taps { offsets, max }
    }
}

/// How a group's output channels fall into blocks: `full` blocks of `ob` channels, then, where `ob` does not
/// divide them, one block of `tail` channels (4, 8 or 16: the narrowest that holds the rest), so that 18
/// channels run a block of 16 and one of 4, not two of 16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Blocks {
    pub(super) ob: usize,
    pub(super) full: usize,
    pub(super) tail: usize,
}

impl Blocks {
    /// The blocks for `group_outputs` channels, `ob` wide ([`block_width`]).
    pub(super) fn new(group_outputs: usize, ob: usize) -> Blocks {
        let rest = group_outputs % ob;
        let tail = if rest == 0 {
            0
        } else {
            [4, 8, 16].into_iter().find(|&w| w >= rest).unwrap_or(ob).min(ob)
        };
        Blocks {
            ob,
            full: group_outputs / ob,
            tail,
        }
    }

    /// Blocks per group.
    pub(super) fn count(&self) -> usize {
        self.full + usize::from(self.tail > 0)
    }

    /// Channels per group the blocks hold (the group's, plus the zeros padding the last block).
    pub(super) fn width(&self) -> usize {
        self.full * self.ob + self.tail
    }

    /// Block `bi`'s width.
    pub(super) fn width_of(&self, bi: usize) -> usize {
        if bi < self.full { self.ob } else { self.tail }
    }
}

/// The weights of one group as [`Blocks`] of output channels: for each block of width `wb`, `k` rows of `wb`
/// values (row `r` holds tap `r` of each channel), zeros past the group's last channel; and the bias the same
/// way. Group `gi`'s blocks start at `gi · k · blocks.width()`, block `bi` `bi · k · ob` after.
fn pack<T: Float>(geo: &Geometry, weight: &[T], bias: Option<&[T]>, blocks: Blocks) -> (Vec<T>, Vec<T>) {
    let (og, k) = (geo.o / geo.g, (geo.c / geo.g) * geo.kh * geo.kw);
    let width = blocks.width();
    let mut packed = vec![T::ZERO; geo.g * k * width];
    let mut biases = vec![T::ZERO; geo.g * width];
    for channel in 0..geo.o {
        let (gi, oi) = (channel / og, channel % og);
        let (bi, j) = (oi / blocks.ob, oi % blocks.ob);
        let wb = blocks.width_of(bi);
        let start = (gi * width + bi * blocks.ob) * k;
        for (r, &w) in weight[channel * k..(channel + 1) * k].iter().enumerate() {
            packed[start + r * wb + j] = w;
        }
        biases[gi * width + bi * blocks.ob + j] = bias.map_or(T::ZERO, |b| b[channel]);
    }
    (packed, biases)
}

/// Everything a part of the batch needs, shared by all parts.
struct Plan<'a, T> {
    geo: &'a Geometry,
    x: &'a [T],
    packed: Vec<T>,
    biases: Vec<T>,
    taps: Taps,
    /// Output channels per block of `packed`: 4, 8 or 16 (see [`block_width`]), and the last block's.
    blocks: Blocks,
    /// Size of a padded plane, `(hp, wp)`; the input's own when it has no padding.
    padded: (usize, usize),
    /// Images per chunk of a part.
    chunk: usize,
}

/// `conv2d(x, weight, bias)` on the host into `out`, `(n, o, ho, wo)` (every element written).
pub(super) fn conv2d<T: Float>(geo: &Geometry, x: &[T], weight: &[T], bias: Option<&[T]>, out: &mut [T]) {
    let (n, c, o, p) = (geo.n, geo.c, geo.o, geo.ho * geo.wo);
    if out.is_empty() {
        return;
    }
    let (hp, wp) = super::padded_size(geo);
    let plane = hp * wp;
    let blocks = Blocks::new(geo.o / geo.g, block_width::<T>(geo.o / geo.g));
    let (packed, biases) = pack(geo, weight, bias, blocks);
    let plan = Plan {
        geo,
        x,
        packed,
        biases,
        taps: Taps::new(geo, plane, wp),
        blocks,
        padded: (hp, wp),
        chunk: (CHUNK_ELEMENTS / (c * plane).max(1)).max(1),
    };
    let work = n * o * p * (c / geo.g) * geo.kh * geo.kw;
    let parts = threads::parts_for(work, PARALLEL_WORK);
    threads::for_each_piece(out, o * p, parts, |at, piece| {
        run_part(&plan, at / (o * p), piece);
    });
}

/// For each output position of `images` images (image-major), the index in their padded input, `(images, c,
/// plane)` with padded rows `wp` long, of the first value it reads, in group 0.
pub(super) fn position_bases(geo: &Geometry, images: usize, wp: usize, plane: usize) -> Vec<usize> {
    let mut bases = Vec::with_capacity(images * geo.ho * geo.wo);
    for ni in 0..images {
        for oh in 0..geo.ho {
            for ow in 0..geo.wo {
                bases.push(ni * geo.c * plane + oh * geo.stride[0] * wp + ow * geo.stride[1]);
            }
        }
    }
    bases
}

/// Output channels per block: two AVX2 vectors of `T` (16 `f32`, 8 `f64`), or one where a group has no more
/// output channels than that.
pub(super) fn block_width<T>(group_outputs: usize) -> usize {
    let lanes = 32 / size_of::<T>();
    if group_outputs <= lanes { lanes } else { 2 * lanes }
}

/// The images `first..` whose outputs `out` holds (whole images), chunk by chunk.
fn run_part<T: Float>(plan: &Plan<'_, T>, first: usize, out: &mut [T]) {
    let per_image = plan.geo.o * plan.geo.ho * plan.geo.wo;
    let mut chunks = PaddedChunks::new(plan.geo, plan.chunk.min(out.len() / per_image));
    for (ci, out) in out.chunks_mut(plan.chunk * per_image).enumerate() {
        let xp = chunks.images(plan.geo, plan.x, first + ci * plan.chunk, out.len() / per_image);
        run_chunk(plan, xp, out);
    }
}

multiversion! {
    fn run_chunk<T: Float>(plan: &Plan<'_, T>, xp: &[T], out: &mut [T]) {
        // The tail block's width, at most the others' (0 without one: never run).
        match (plan.blocks.ob, plan.blocks.tail) {
            (4, _) => chunk_blocks::<T, 4, 4>(plan, xp, out, FUSED_MUL_ADD),
            (8, 4) => chunk_blocks::<T, 8, 4>(plan, xp, out, FUSED_MUL_ADD),
            (8, _) => chunk_blocks::<T, 8, 8>(plan, xp, out, FUSED_MUL_ADD),
            (_, 4) => chunk_blocks::<T, 16, 4>(plan, xp, out, FUSED_MUL_ADD),
            (_, 8) => chunk_blocks::<T, 16, 8>(plan, xp, out, FUSED_MUL_ADD),
            _ => chunk_blocks::<T, 16, 16>(plan, xp, out, FUSED_MUL_ADD),
        }
    }
}

/// Every output of the images of `xp` (padded, `(nb, c, hp, wp)`) into `out` (`(nb, o, ho, wo)`), with blocks
/// of `OB` output channels and a last block of `TB`; `fused`: whether multiply-adds round once (`FUSED_MUL_ADD`).
#[inline(always)]
fn chunk_blocks<T: Float, const OB: usize, const TB: usize>(plan: &Plan<'_, T>, xp: &[T], out: &mut [T], fused: bool) {
    let geo = plan.geo;
    let (c, o, g, ho, wo) = (geo.c, geo.o, geo.g, geo.ho, geo.wo);
    let (og, cg, p) = (o / g, c / g, ho * wo);
    let (hp, wp) = plan.padded;
    let plane = hp * wp;
    let k = plan.taps.offsets.len();
    let nb = out.len() / (o * p);
    let blocks = plan.blocks;
    debug_assert!(blocks.ob == OB && (blocks.tail == 0 || blocks.tail == TB));
    // The first value each output position reads, in group 0.
    let bases = position_bases(geo, nb, wp, plane);
    for gi in 0..g {
        for bi in 0..blocks.count() {
            let start = gi * blocks.width() + bi * OB;
            let block = Block {
                weights: &plan.packed[start * k..(start + blocks.width_of(bi)) * k],
                bias: &plan.biases[start..start + blocks.width_of(bi)],
                first_channel: gi * og + bi * OB,
                channels: OB.min(og - bi * OB),
                shift: gi * cg * plane,
            };
            if bi < blocks.full {
                block_outputs::<T, OB>(plan, xp, &bases, &block, out, fused);
            } else {
                block_outputs::<T, TB>(plan, xp, &bases, &block, out, fused);
            }
        }
    }
}

/// One block of output channels: its packed weights and biases, its first channel and how many of its
/// columns are real channels, and the offset of its group's input channels in a padded image.
struct Block<'a, T> {
    weights: &'a [T],
    bias: &'a [T],
    first_channel: usize,
    channels: usize,
    shift: usize,
}

/// Output positions whose results [`block_outputs`] gathers before writing them: eight kernel calls.
const TILE: usize = 8 * PB;

/// The outputs of one block of `W` channels at every position of the chunk (`bases`, image-major) into `out`.
///
/// A kernel call yields `PB` positions × `W` channels, while `out` holds each channel's positions in a row:
/// written straight, each result went to another channel's plane, `ho · wo` elements apart, and where that is
/// a multiple of 4 KiB (a 32 × 32 map) all `W` stores fall into one set of the L1 cache, evicting each other
/// between calls. The results are gathered in a tile of `TILE` positions on the stack (position-major, as the
/// kernel returns them) and written channel by channel as runs of consecutive positions.
#[inline(always)]
fn block_outputs<T: Float, const W: usize>(
    plan: &Plan<'_, T>,
    xp: &[T],
    bases: &[usize],
    block: &Block<'_, T>,
    out: &mut [T],
    fused: bool,
) {
    let (o, p) = (plan.geo.o, plan.geo.ho * plan.geo.wo);
    let bias: &[T; W] = block.bias.try_into().expect("a block of biases has W values");
    // Position-major, as the kernel returns them, with room for a whole last call.
    let mut tile = [[T::ZERO; W]; TILE + PB];
    for (t0, tile_bases) in bases.chunks(TILE).enumerate().map(|(i, b)| (i * TILE, b)) {
        for (q0, first) in tile_bases.chunks(PB).enumerate().map(|(i, b)| (i * PB, b)) {
            let mut at = [first[first.len() - 1] + block.shift; PB];
            for (a, &b) in at.iter_mut().zip(first) {
                *a = b + block.shift;
            }
            let acc = block_kernel::<T, W>(xp, &at, &plan.taps, block.weights, bias, fused);
            tile[q0..q0 + PB].copy_from_slice(&acc);
        }
        // The tile's positions, as runs within one image.
        let mut s = 0;
        while s < tile_bases.len() {
            let (ni, pi) = ((t0 + s) / p, (t0 + s) % p);
            let run = (p - pi).min(tile_bases.len() - s);
            let row = (ni * o + block.first_channel) * p + pi;
            for j in 0..block.channels {
                for (y, position) in out[row + j * p..row + j * p + run].iter_mut().zip(&tile[s..s + run]) {
                    *y = position[j];
                }
            }
            s += run;
        }
    }
}

/// The `PB × OB` outputs at positions `at` (the index in `xp` of each one's first value) of one block of
/// weights (`k` rows of `OB`), with fused multiply-adds where `fused`.
#[inline(always)]
fn block_kernel<T: Float, const OB: usize>(
    xp: &[T],
    at: &[usize; PB],
    taps: &Taps,
    weights: &[T],
    bias: &[T; OB],
    fused: bool,
) -> [[T; OB]; PB] {
    assert!(
        at.iter().all(|&a| a + taps.max < xp.len()),
        "conv2d: the padded input does not hold every patch"
    );
    let mut acc = [*bias; PB];
    let (rows, _) = weights.as_chunks::<OB>();
    let xp = xp.as_ptr();
    for (w, &offset) in rows.iter().zip(&taps.offsets) {
        for (acc, &a) in acc.iter_mut().zip(at) {
            // A volatile read is an ordinary load that the compiler keeps as it is: with AVX-512 it otherwise
            // merges the `PB` loads into one gather and vectorizes across positions instead of channels, which
            // measured 60 times slower than this.
            // SAFETY: `offset <= taps.max` (`Taps::new` made it the maximum of `taps.offsets`), and the
            // assertion above holds `a + taps.max < xp.len()` for every position, so `a + offset` is an index
            // in `xp`, whose element is initialized and aligned (it is a `&[T]`) and not written meanwhile.
            let x = unsafe { std::ptr::read_volatile(xp.add(a + offset)) };
            for (acc, &w) in acc.iter_mut().zip(w) {
                *acc = mul_add(fused, w, x, *acc);
            }
        }
    }
    acc
}
