//! A layer norm's host loops over rows of `inner` elements: the forward, and the backward with the weight's and
//! bias' gradients, reading their inputs in place and split over nn's threads by whole rows (the weight's and
//! bias' gradients by columns, each summed down the rows in order, so no result depends on the thread count).
//!
//! Each row's mean and biased variance are two passes in `f64` lanes (the variance over `(x − mean)²`, not
//! `E[x²] − mean²`, which cancels when the mean is large); the element-wise steps compute in `f64` and round
//! once to the row's type.

use std::mem::MaybeUninit;

use crate::ops::float::Float;
use crate::ops::map::multiversion;
use crate::ops::reduce::host_sum::{lane_sum, lane_sum2};
use crate::threads;

/// The weight's and bias' gradients of a normalisation, in `f64`: `(Σ dy · x̂, Σ dy)`.
pub(super) type ParamSums = (Vec<f64>, Vec<f64>);

/// Elements below which a loop stays on one thread.
const MIN_ELEMENTS: usize = 1 << 15;

/// `(mean, 1 / √(variance + eps))` of `row` (its biased variance).
#[inline(always)]
pub(super) fn moments<T: Float>(row: &[T], eps: f64) -> (f64, f64) {
    let n = row.len() as f64;
    let mean = lane_sum(row, |v| v.f64()) / n;
    let var = lane_sum(row, |v| (v.f64() - mean) * (v.f64() - mean)) / n;
    (mean, 1.0 / (var + eps).sqrt())
}

/// `(x − mean) · rstd · w + b` per row of `inner` (`w`, `b` of `inner` elements, each optional), for `x` of whole
/// rows.
pub(super) fn forward<T: Float>(x: &[T], inner: usize, w: Option<&[T]>, b: Option<&[T]>, eps: f64) -> Vec<T> {
    // Written in place of a zero-filled buffer (the zeros cost a pass of their own).
    let mut out = Vec::with_capacity(x.len());
    if inner > 0 {
        let parts = threads::parts_for(x.len(), MIN_ELEMENTS);
        threads::for_each_piece(&mut out.spare_capacity_mut()[..x.len()], inner, parts, |at, out| {
            forward_rows(&x[at..at + out.len()], inner, w, b, eps, out)
        });
    }
    // SAFETY: the first `x.len()` elements (within the capacity) are initialised: `x` is whole rows (empty when
    // `inner` is 0), `for_each_piece` hands every piece of whole rows of them to `forward_rows` once before it
    // returns, and that writes every element of each row: each match arm zips the row with `x`'s row of the same
    // length (and `w`, `b` of `inner` elements), writing each element once.
    unsafe { out.set_len(x.len()) };
    out
}

multiversion! {
    fn forward_rows<T: Float>(
        x: &[T],
        inner: usize,
        w: Option<&[T]>,
        b: Option<&[T]>,
        eps: f64,
        out: &mut [MaybeUninit<T>]
    ) {
        for (row, dst) in x.chunks(inner).zip(out.chunks_mut(inner)) {
            let (mean, rstd) = moments(row, eps);
            match (w, b) {
                (Some(w), Some(b)) => {
                    for (((d, &v), &w), &b) in dst.iter_mut().zip(row).zip(w).zip(b) {
                        d.write(T::of((v.f64() - mean) * rstd * w.f64() + b.f64()));
                    }
                }
                (Some(w), None) => {
                    for ((d, &v), &w) in dst.iter_mut().zip(row).zip(w) {
                        d.write(T::of((v.f64() - mean) * rstd * w.f64()));
                    }
                }
                (None, Some(b)) => {
                    for ((d, &v), &b) in dst.iter_mut().zip(row).zip(b) {
                        d.write(T::of((v.f64() - mean) * rstd + b.f64()));
                    }
                }
                (None, None) => {
                    for (d, &v) in dst.iter_mut().zip(row) {
                        d.write(T::of((v.f64() - mean) * rstd));
                    }
                }
            }
        }
    }
}

/// The gradients of a layer norm over rows of `inner` from its input `x` and output gradient `dy`:
/// `dx = rstd · (ĝ − Σ ĝ / n − x̂ · Σ ĝ · x̂ / n)` with `ĝ = dy · w` and `x̂ = (x − mean) · rstd` per row, and
/// when `params`, `(Σ dy · x̂, Σ dy)` down the rows for the weight and bias (in `f64`, `inner` each).
pub(super) fn backward<T: Float>(
    x: &[T],
    dy: &[T],
    inner: usize,
    w: Option<&[T]>,
    eps: f64,
    params: bool,
) -> (Vec<T>, Option<ParamSums>) {
    if inner == 0 {
        return (Vec::new(), params.then(|| (Vec::new(), Vec::new())));
    }
    let parts = threads::parts_for(x.len(), MIN_ELEMENTS);
    // Each row's mean and rstd: read by the input's gradient and by the parameters' sums.
    let mut stats = vec![(0.0f64, 0.0f64); x.len() / inner];
    threads::for_each_piece(&mut stats, 1, parts, |row, stats| {
        row_moments(&x[row * inner..], inner, eps, stats)
    });
    let ones;
    let w = match w {
        Some(w) => w,
        None => {
            ones = vec![T::ONE; inner];
            &ones
        }
    };
    // Written in place of a zero-filled buffer, as the forward's output.
    let mut dx = Vec::with_capacity(x.len());
    threads::for_each_piece(&mut dx.spare_capacity_mut()[..x.len()], inner, parts, |at, dx| {
        let span = at..at + dx.len();
        input_gradient_rows(&x[span.clone()], &dy[span], inner, w, &stats[at / inner..], dx)
    });
    // SAFETY: the first `x.len()` elements (within the capacity) are initialised: `for_each_piece` hands every
    // piece of whole rows of them to `input_gradient_rows` once before it returns, and that writes every element
    // of each row (`stats` has one entry per row, so no row is cut off): its last loop zips the row with `g` and
    // `x`'s row, both `inner` long, writing each element once.
    unsafe { dx.set_len(x.len()) };
    if !params {
        return (dx, None);
    }
    let mut sums = vec![(0.0f64, 0.0f64); inner];
    threads::for_each_piece(&mut sums, 1, parts, |column, sums| {
        param_sums(x, dy, inner, &stats, column, sums)
    });
    (dx, Some(sums.into_iter().unzip()))
}

multiversion! {
    fn row_moments<T: Float>(x: &[T], inner: usize, eps: f64, stats: &mut [(f64, f64)]) {
        for (row, s) in x.chunks(inner).zip(stats.iter_mut()) {
            *s = moments(row, eps);
        }
    }
}

multiversion! {
    fn input_gradient_rows<T: Float>(
        x: &[T],
        dy: &[T],
        inner: usize,
        w: &[T],
        stats: &[(f64, f64)],
        dx: &mut [MaybeUninit<T>]
    ) {
        let n = inner as f64;
        let mut g = vec![0.0f64; inner];
        let rows = x.chunks(inner).zip(dy.chunks(inner)).zip(dx.chunks_mut(inner)).zip(stats);
        for (((x, dy), dx), &(mean, rstd)) in rows {
            // ĝ = dy · w; Σ ĝ and Σ ĝ · (x − mean); dx = rstd · (ĝ − Σ ĝ / n − (x − mean) · rstd² · Σ ĝ · (x − mean) / n).
            for ((g, &dy), &w) in g.iter_mut().zip(dy).zip(w) {
                *g = dy.f64() * w.f64();
            }
            let sum_g = lane_sum(&g, |g| g);
            let sum_gx = lane_sum2(&g, x, |g, x| g * (x.f64() - mean));
            let (shift, slope) = (sum_g / n, rstd * rstd * sum_gx / n);
            for ((d, &g), &x) in dx.iter_mut().zip(&g).zip(x) {
                d.write(T::of(rstd * (g - shift - (x.f64() - mean) * slope)));
            }
        }
    }
}

multiversion! {
    fn param_sums<T: Float>(
        x: &[T],
        dy: &[T],
        inner: usize,
        stats: &[(f64, f64)],
        column: usize,
        sums: &mut [(f64, f64)]
    ) {
        // Columns `column..column + sums.len()` of every row, added down the rows in order.
        let width = sums.len();
        for (row, &(mean, rstd)) in stats.iter().enumerate() {
            let at = row * inner + column;
            let (x, dy) = (&x[at..at + width], &dy[at..at + width]);
            for ((s, &x), &g) in sums.iter_mut().zip(x).zip(dy) {
                s.0 += g.f64() * ((x.f64() - mean) * rstd);
                s.1 += g.f64();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of 257 (past the lanes, with a remainder), 300 of them: past the split over two threads.
    const INNER: usize = 257;
    const ROWS: usize = 300;

    fn values(phase: f64, scale: f64, shift: f64) -> Vec<f64> {
        (0..ROWS * INNER)
            .map(|i| ((i as f64 + phase) * 0.37).sin() * scale + shift)
            .collect()
    }

    /// One row's output by the definition (statistics added in order), for the finite differences.
    fn naive_row(x: &[f64], w: &[f64], b: &[f64], eps: f64) -> Vec<f64> {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let rstd = 1.0 / (var + eps).sqrt();
        x.iter()
            .zip(w)
            .zip(b)
            .map(|((v, w), b)| (v - mean) * rstd * w + b)
            .collect()
    }

    fn inputs() -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        // A mean far from 0 next to the spread, where E[x²] − mean² would cancel.
        let x = values(0.0, 2.0, 300.0);
        let dy = values(11.0, 1.0, 0.1);
        let w: Vec<f64> = (0..INNER).map(|j| 0.5 + (j as f64 * 0.11).cos()).collect();
        let b: Vec<f64> = (0..INNER).map(|j| (j as f64 * 0.23).sin()).collect();
        (x, dy, w, b)
    }

    #[test]
    fn forward_and_gradients_match_the_definition() {
        let (x, dy, w, b) = inputs();
        let eps = 1e-5;
        let y = forward(&x, INNER, Some(&w), Some(&b), eps);
        let (dx, sums) = backward(&x, &dy, INNER, Some(&w), eps, true);
        let (dw, db) = sums.unwrap();
        let rows = || x.chunks(INNER).zip(dy.chunks(INNER));
        for (r, (row, _)) in rows().enumerate() {
            let want = naive_row(row, &w, &b, eps);
            for (j, (got, want)) in y[r * INNER..(r + 1) * INNER].iter().zip(&want).enumerate() {
                assert!(
                    (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                    "y[{r}, {j}]: {got}, {want}"
                );
            }
        }
        // The input's gradient against central differences of (y · dy).sum(), one row at a time (a row's
        // input moves only its own outputs), every 97th element.
        for i in (0..x.len()).step_by(97) {
            let (r, j) = (i / INNER, i % INNER);
            let loss = |d: f64| {
                let mut row = x[r * INNER..(r + 1) * INNER].to_vec();
                row[j] += d;
                naive_row(&row, &w, &b, eps)
                    .iter()
                    .zip(&dy[r * INNER..])
                    .map(|(y, g)| y * g)
                    .sum::<f64>()
            };
            let numeric = (loss(1e-4) - loss(-1e-4)) / 2e-4;
            assert!(
                (dx[i] - numeric).abs() <= 1e-6 * numeric.abs().max(1.0),
                "dx[{r}, {j}]: {}, {numeric}",
                dx[i]
            );
        }
        // The parameters' gradients: Σ dy · x̂ and Σ dy down the rows, by the definition.
        for j in 0..INNER {
            let (mut want_w, mut want_b) = (0.0, 0.0);
            for (row, g) in rows() {
                let normalised = naive_row(row, &vec![1.0; INNER], &vec![0.0; INNER], eps);
                want_w += g[j] * normalised[j];
                want_b += g[j];
            }
            assert!(
                (dw[j] - want_w).abs() <= 1e-9 * want_w.abs().max(1.0),
                "dw[{j}]: {}, {want_w}",
                dw[j]
            );
            assert!(
                (db[j] - want_b).abs() <= 1e-9 * want_b.abs().max(1.0),
                "db[{j}]: {}, {want_b}",
                db[j]
            );
        }
    }

    #[test]
    fn results_do_not_depend_on_the_number_of_threads() {
        let (x, dy, w, b) = inputs();
        let run = |threads| {
            crate::set_num_threads(threads);
            let y = forward(&x, INNER, Some(&w), Some(&b), 1e-5);
            (y, backward(&x, &dy, INNER, Some(&w), 1e-5, true))
        };
        let (one, all) = (run(1), run(0));
        assert!(one == all, "one thread and all differ");
    }
}
