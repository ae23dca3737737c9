//! A group norm's host loops over `x` read as `(n, c, positions)` with its `c` channels in `groups` groups of
//! consecutive channels: each sample's group is a block of `c / groups · positions` consecutive elements,
//! normalised by its own mean and biased variance, then scaled and shifted per channel.
//!
//! Each block is one unit of work, split over nn's threads by whole blocks, and read while it is in cache: its
//! statistics (two passes in `f64` lanes, [`host_layer_norm::moments`]), then the output (the forward), or its
//! per-channel sums and the input's gradient (the backward). The weight's and bias' gradients add the blocks'
//! per-channel sums down the samples in order, so no result depends on the thread count. The element-wise
//! steps compute in `f64` and round once to the block's type.

use std::mem::MaybeUninit;

use super::host_layer_norm::{ParamSums, moments};
use crate::ops::float::Float;
use crate::ops::map::multiversion;
use crate::ops::reduce::host_sum::{lane_sum, lane_sum2};
use crate::threads;

/// Elements below which a loop stays on one thread.
const MIN_ELEMENTS: usize = 1 << 15;

/// The sizes a group norm's loops read `x` by.
#[derive(Clone, Copy, Debug)]
pub(super) struct Groups {
    /// Channels.
    pub channels: usize,
    /// Groups of consecutive channels (dividing `channels`).
    pub groups: usize,
    /// Positions per channel (the product of the dimensions after the channels).
    pub positions: usize,
}

impl Groups {
    /// Channels per group.
    fn per_group(self) -> usize {
        self.channels / self.groups
    }

    /// Elements per block (one sample's group).
    fn block(self) -> usize {
        self.per_group() * self.positions
    }

    /// The first channel of block `index` (blocks counted over the samples).
    fn first_channel(self, index: usize) -> usize {
        index % self.groups * self.per_group()
    }
}

/// `(x − mean) · rstd · w[channel] + b[channel]` per block (`w`, `b` of `channels` elements, each optional), for
/// `x` of a whole number of samples (`n · channels · positions` elements).
pub(super) fn forward<T: Float>(x: &[T], sizes: Groups, w: Option<&[T]>, b: Option<&[T]>, eps: f64) -> Vec<T> {
    let block = sizes.block();
    // Written in place of a zero-filled buffer: the zeros cost a third of the whole at a U-Net's sizes.
    let mut out = Vec::with_capacity(x.len());
    if block > 0 {
        let parts = threads::parts_for(x.len(), MIN_ELEMENTS);
        threads::for_each_piece(&mut out.spare_capacity_mut()[..x.len()], block, parts, |at, out| {
            forward_blocks(&x[at..at + out.len()], sizes, at / block, w, b, eps, out)
        });
    }
    // SAFETY: the first `x.len()` elements (within the capacity) are initialised. `x.len()` is
    // `n · groups · block` (`channels = groups · per_group`, `block = per_group · positions`), and `block` is 0
    // only when `x` is empty; otherwise `for_each_piece` hands every piece of whole blocks of those elements to
    // `forward_blocks` (disjoint pieces covering its slice, each taken once, all done before it returns), which
    // writes every element of its `out`: it walks `out` in blocks beside `x`'s piece of the same length, and each
    // block in `per_group` runs of `positions` beside `x`'s, writing each element once.
    unsafe { out.set_len(x.len()) };
    out
}

multiversion! {
    fn forward_blocks<T: Float>(
        x: &[T],
        sizes: Groups,
        first: usize,
        w: Option<&[T]>,
        b: Option<&[T]>,
        eps: f64,
        out: &mut [MaybeUninit<T>]
    ) {
        let (block, positions) = (sizes.block(), sizes.positions);
        for (index, (x, out)) in x.chunks(block).zip(out.chunks_mut(block)).enumerate() {
            let (mean, rstd) = moments(x, eps);
            let channel = sizes.first_channel(first + index);
            let channels = x.chunks(positions).zip(out.chunks_mut(positions));
            for (ch, (x, out)) in (channel..).zip(channels) {
                let scale = w.map_or(1.0, |w| w[ch].f64()) * rstd;
                let shift = b.map_or(0.0, |b| b[ch].f64());
                for (o, &v) in out.iter_mut().zip(x) {
                    o.write(T::of((v.f64() - mean) * scale + shift));
                }
            }
        }
    }
}

/// A block's pieces of the backward's outputs: its input gradient (written by the backward), and per channel of
/// the block `(Σ dy · x̂, Σ dy)` over its positions.
type BlockGradients<'a, T> = (&'a mut [MaybeUninit<T>], &'a mut [(f64, f64)]);

/// The gradients of a group norm from its input `x` and output gradient `dy` (a whole number of samples, of
/// `n · channels · positions` elements each): `dx = rstd · (ĝ − Σ ĝ / m − x̂ · Σ ĝ · x̂ / m)` per block of `m`
/// elements, with `ĝ = dy · w[channel]` and `x̂ = (x − mean) · rstd`; and when `params`, `(Σ dy · x̂, Σ dy)` per
/// channel over the samples and positions for the weight and bias (`f64`, `channels` each).
pub(super) fn backward<T: Float>(
    x: &[T],
    dy: &[T],
    sizes: Groups,
    w: Option<&[T]>,
    eps: f64,
    params: bool,
) -> (Vec<T>, Option<ParamSums>) {
    let (block, per_group) = (sizes.block(), sizes.per_group());
    let blocks = x.len().checked_div(block).unwrap_or(0);
    let mut sums = vec![(0.0f64, 0.0f64); blocks * per_group];
    // Written in place of a zero-filled buffer, as the forward's output.
    let mut dx = Vec::with_capacity(x.len());
    if block > 0 {
        let dx = dx.spare_capacity_mut()[..x.len()].chunks_mut(block);
        let mut pieces: Vec<BlockGradients<'_, T>> = dx.zip(sums.chunks_mut(per_group)).collect();
        let parts = threads::parts_for(x.len(), MIN_ELEMENTS);
        threads::for_each_piece(&mut pieces, 1, parts, |first, pieces| {
            let span = first * block..(first + pieces.len()) * block;
            backward_blocks(&x[span.clone()], &dy[span], sizes, first, w, eps, pieces)
        });
    }
    // SAFETY: the first `x.len()` elements (within the capacity) are initialised. `x.len()` is
    // `n · groups · block`, and `block` is 0 only when `x` is empty (as in `forward`); otherwise they are split
    // into `blocks` whole blocks, each paired with its `per_group` sums (`per_group > 0` as `block > 0`, so the
    // zip keeps every block), and `for_each_piece` hands every pair to `backward_blocks` once, before it returns.
    // That writes every element of each block's `dx`: it walks the block in `per_group` runs of `positions`
    // beside `x`'s and `dy`'s runs of the same length, writing each element once.
    unsafe { dx.set_len(x.len()) };
    if !params {
        return (dx, None);
    }
    // Blocks hold whole groups, so `sums` lists every sample's channels in order: (n, channels).
    let (mut dw, mut db) = (vec![0.0f64; sizes.channels], vec![0.0f64; sizes.channels]);
    for sample in sums.chunks(sizes.channels.max(1)) {
        for ((dw, db), &(s_w, s_b)) in dw.iter_mut().zip(db.iter_mut()).zip(sample) {
            *dw += s_w;
            *db += s_b;
        }
    }
    (dx, Some((dw, db)))
}

multiversion! {
    fn backward_blocks<T: Float>(
        x: &[T],
        dy: &[T],
        sizes: Groups,
        first: usize,
        w: Option<&[T]>,
        eps: f64,
        pieces: &mut [BlockGradients<'_, T>]
    ) {
        let (block, positions) = (sizes.block(), sizes.positions);
        let m = block as f64;
        let blocks = x.chunks(block).zip(dy.chunks(block)).zip(pieces.iter_mut());
        for (index, ((x, dy), (dx, sums))) in blocks.enumerate() {
            let (mean, rstd) = moments(x, eps);
            let channel = sizes.first_channel(first + index);
            let weight = |ch: usize| w.map_or(1.0, |w| w[ch].f64());
            // Per channel Σ dy and Σ dy · (x − mean); over the block Σ ĝ and Σ ĝ · (x − mean).
            let (mut sum_g, mut sum_gx) = (0.0, 0.0);
            let channels = x.chunks(positions).zip(dy.chunks(positions)).zip(sums.iter_mut());
            for (ch, ((x, dy), s)) in (channel..).zip(channels) {
                let s_dy = lane_sum(dy, |g| g.f64());
                let s_dyx = lane_sum2(dy, x, |g, x| g.f64() * (x.f64() - mean));
                sum_g += weight(ch) * s_dy;
                sum_gx += weight(ch) * s_dyx;
                *s = (s_dyx * rstd, s_dy);
            }
            // dx = k · dy + slope · (x − mean) + shift, with k = rstd · w per channel.
            let slope = -rstd * rstd * rstd * sum_gx / m;
            let shift = -rstd * sum_g / m;
            let channels = x.chunks(positions).zip(dy.chunks(positions)).zip(dx.chunks_mut(positions));
            for (ch, ((x, dy), dx)) in (channel..).zip(channels) {
                let k = rstd * weight(ch);
                for ((d, &x), &g) in dx.iter_mut().zip(x).zip(dy) {
                    d.write(T::of(k * g.f64() + slope * (x.f64() - mean) + shift));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 5 samples of 12 channels in 3 groups over 7 × 11 positions: blocks of 308 (past the lanes, with a
    /// remainder), 15 of them, 4,620 elements; the thread test uses more samples, past the split.
    const SIZES: Groups = Groups {
        channels: 12,
        groups: 3,
        positions: 77,
    };

    fn values(len: usize, phase: f64, scale: f64, shift: f64) -> Vec<f64> {
        (0..len)
            .map(|i| ((i as f64 + phase) * 0.37).sin() * scale + shift)
            .collect()
    }

    /// Sample `s`'s output by the definition: each group's statistics added in order, then the channel's
    /// scale and shift.
    fn naive_sample(x: &[f64], w: &[f64], b: &[f64], eps: f64) -> Vec<f64> {
        let (block, p) = (SIZES.block(), SIZES.positions);
        let mut out = Vec::new();
        for (g, group) in x.chunks(block).enumerate() {
            let n = group.len() as f64;
            let mean = group.iter().sum::<f64>() / n;
            let var = group.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
            let rstd = 1.0 / (var + eps).sqrt();
            for (i, v) in group.iter().enumerate() {
                let ch = g * SIZES.per_group() + i / p;
                out.push((v - mean) * rstd * w[ch] + b[ch]);
            }
        }
        out
    }

    fn inputs(samples: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        let len = samples * SIZES.channels * SIZES.positions;
        // A mean far from 0 next to the spread, where E[x²] − mean² would cancel.
        let x = values(len, 0.0, 2.0, 300.0);
        let dy = values(len, 11.0, 1.0, 0.1);
        let w: Vec<f64> = (0..SIZES.channels).map(|j| 0.5 + (j as f64 * 1.1).cos()).collect();
        let b: Vec<f64> = (0..SIZES.channels).map(|j| (j as f64 * 2.3).sin()).collect();
        (x, dy, w, b)
    }

    #[test]
    fn forward_and_gradients_match_the_definition() {
        let (x, dy, w, b) = inputs(5);
        let eps = 1e-5;
        let sample = SIZES.channels * SIZES.positions;
        let y = forward(&x, SIZES, Some(&w), Some(&b), eps);
        let (dx, sums) = backward(&x, &dy, SIZES, Some(&w), eps, true);
        let (dw, db) = sums.unwrap();
        for (s, xs) in x.chunks(sample).enumerate() {
            let want = naive_sample(xs, &w, &b, eps);
            for (j, (got, want)) in y[s * sample..(s + 1) * sample].iter().zip(&want).enumerate() {
                assert!(
                    (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                    "y[{s}, {j}]: {got}, {want}"
                );
            }
        }
        // The input's gradient against central differences of (y · dy).sum(), one sample at a time (a sample's
        // input moves only its own outputs), every 31st element.
        let loss = |s: usize, at: usize, d: f64| {
            let mut xs = x[s * sample..(s + 1) * sample].to_vec();
            xs[at] += d;
            naive_sample(&xs, &w, &b, eps)
                .iter()
                .zip(&dy[s * sample..])
                .map(|(y, g)| y * g)
                .sum::<f64>()
        };
        for i in (0..x.len()).step_by(31) {
            let (s, at) = (i / sample, i % sample);
            let numeric = (loss(s, at, 1e-4) - loss(s, at, -1e-4)) / 2e-4;
            assert!(
                (dx[i] - numeric).abs() <= 1e-6 * numeric.abs().max(1.0),
                "dx[{s}, {at}]: {}, {numeric}",
                dx[i]
            );
        }
        // The parameters' gradients: Σ dy · x̂ and Σ dy per channel, by the definition.
        let ones = vec![1.0; SIZES.channels];
        let zeros = vec![0.0; SIZES.channels];
        let (mut want_w, mut want_b) = (zeros.clone(), zeros.clone());
        for (xs, gs) in x.chunks(sample).zip(dy.chunks(sample)) {
            let normalised = naive_sample(xs, &ones, &zeros, eps);
            for (i, (v, g)) in normalised.iter().zip(gs).enumerate() {
                want_w[i / SIZES.positions] += g * v;
                want_b[i / SIZES.positions] += g;
            }
        }
        for ch in 0..SIZES.channels {
            let close = |got: f64, want: f64| (got - want).abs() <= 1e-9 * want.abs().max(1.0);
            assert!(close(dw[ch], want_w[ch]), "dw[{ch}]: {}, {}", dw[ch], want_w[ch]);
            assert!(close(db[ch], want_b[ch]), "db[{ch}]: {}, {}", db[ch], want_b[ch]);
        }
    }

    #[test]
    fn results_do_not_depend_on_the_number_of_threads() {
        // 81 samples: 74,844 elements, split over two threads or more, into pieces of 31 blocks on two (a
        // number of groups that is not a whole number of samples, so a piece starts mid-sample).
        let (x, dy, w, b) = inputs(81);
        let run = |threads| {
            crate::set_num_threads(threads);
            let y = forward(&x, SIZES, Some(&w), Some(&b), 1e-5);
            (y, backward(&x, &dy, SIZES, Some(&w), 1e-5, true))
        };
        let (one, all) = (run(1), run(0));
        assert!(one == all, "one thread and all differ");
    }

    #[test]
    fn empty_inputs_give_empty_results() {
        let none = Groups {
            channels: 4,
            groups: 2,
            positions: 0,
        };
        assert!(forward::<f64>(&[], none, None, None, 1e-5).is_empty());
        let (dx, sums) = backward::<f64>(&[], &[], none, None, 1e-5, true);
        assert!(dx.is_empty());
        assert_eq!(sums, Some((vec![0.0; 4], vec![0.0; 4])));
    }
}
