//! Sums over any set of dimensions on the host, in `f64`, read in place and split over nn's threads.
//!
//! The dimensions merge into runs of the same role (reduced or kept; dimensions of size 1 drop out). Each output
//! slot then sums, for every index of the outer reduced runs, either a contiguous block of the input (when the
//! innermost run is reduced) or one element of a contiguous row it shares with its neighbours (when it is
//! kept). Which terms a slot adds, and in which order, does not depend on the number of threads.

use crate::ops::map::multiversion;
use crate::threads;

/// Elements a thread's part of a sum should read at least (as the pooling loops split).
const MIN_ELEMENTS: usize = 1 << 15;

/// Elements each partial sum of a reduction over every element adds, in a fixed order whatever the threads.
const CHUNK: usize = 1 << 14;

/// How a reduction walks its input.
#[derive(Debug, PartialEq)]
struct Walk {
    /// The outer kept runs' (size, input stride), outermost first: the output slots' (or rows') order.
    kept: Vec<(usize, usize)>,
    /// The outer reduced runs' (size, input stride), outermost first.
    reduced: Vec<(usize, usize)>,
    /// The innermost run's size.
    inner: usize,
    /// Whether the innermost run is reduced (summed in blocks) or kept (added row by row).
    inner_reduced: bool,
}

impl Walk {
    fn new(shape: &[usize], reduce: &[bool]) -> Walk {
        let mut runs: Vec<(usize, bool)> = Vec::new();
        for (&size, &reduced) in shape.iter().zip(reduce) {
            match runs.last_mut() {
                _ if size == 1 => {}
                Some((s, r)) if *r == reduced => *s *= size,
                _ => runs.push((size, reduced)),
            }
        }
        let (inner, inner_reduced) = runs.pop().unwrap_or((1, true));
        let (mut kept, mut reduced) = (Vec::new(), Vec::new());
        let mut stride = inner;
        for &(size, is_reduced) in runs.iter().rev() {
            if is_reduced { &mut reduced } else { &mut kept }.push((size, stride));
            stride *= size;
        }
        kept.reverse();
        reduced.reverse();
        Walk {
            kept,
            reduced,
            inner,
            inner_reduced,
        }
    }

    /// Where the `unit`-th index of the kept outer runs starts in the input.
    #[inline(always)]
    fn base(&self, mut unit: usize) -> usize {
        let mut base = 0;
        for &(size, stride) in self.kept.iter().rev() {
            base += unit % size * stride;
            unit /= size;
        }
        base
    }

    /// Calls `f` with the input offset of every index of the reduced outer runs, in row-major order.
    #[inline(always)]
    fn each_reduced_offset(&self, mut f: impl FnMut(usize)) {
        let mut index = vec![0usize; self.reduced.len()];
        let mut offset = 0;
        loop {
            f(offset);
            let mut d = self.reduced.len();
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                let (size, stride) = self.reduced[d];
                index[d] += 1;
                offset += stride;
                if index[d] < size {
                    break;
                }
                offset -= stride * size;
                index[d] = 0;
            }
        }
    }
}

/// An element type the host sums read in place, widened to `f64`.
pub(crate) trait Summand: Copy + Send + Sync + 'static {
    fn wide(self) -> f64;
}

impl Summand for f32 {
    #[inline(always)]
    fn wide(self) -> f64 {
        f64::from(self)
    }
}

impl Summand for f64 {
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
}

/// Sums of `x` (of `x²` when `square`) over the dimensions of `shape` marked in `reduce`, in `f64`: `x` holds
/// `shape`'s elements row-major, and `out` gets one slot per element of the kept shape, in its order.
pub(crate) fn sum_dims_into<T: Summand>(x: &[T], shape: &[usize], reduce: &[bool], square: bool, out: &mut [f64]) {
    out.fill(0.0);
    if x.is_empty() {
        return;
    }
    let walk = Walk::new(shape, reduce);
    let parts = threads::parts_for(x.len(), MIN_ELEMENTS);
    if walk.inner_reduced && out.len() == 1 {
        // Every element into one slot: partial sums of fixed chunks, added in order.
        let mut partials = vec![0.0f64; x.len().div_ceil(CHUNK)];
        threads::for_each_piece(&mut partials, 1, parts, |at, piece| {
            sum_chunks(&x[at * CHUNK..], square, piece)
        });
        out[0] = partials.iter().sum();
    } else if walk.inner_reduced {
        threads::for_each_piece(out, 1, parts, |at, piece| sum_blocks(x, &walk, square, at, piece));
    } else {
        threads::for_each_piece(out, 1, parts, |at, piece| add_rows(x, &walk, square, at, piece));
    }
}

multiversion! {
    fn sum_chunks<T: Summand>(x: &[T], square: bool, partials: &mut [f64]) {
        for (p, chunk) in partials.iter_mut().zip(x.chunks(CHUNK)) {
            *p = block_sum(chunk, square);
        }
    }
}

multiversion! {
    fn sum_blocks<T: Summand>(x: &[T], walk: &Walk, square: bool, at: usize, piece: &mut [f64]) {
        let inner = walk.inner;
        for (slot, total) in piece.iter_mut().enumerate() {
            let base = walk.base(at + slot);
            walk.each_reduced_offset(|offset| {
                *total += block_sum(&x[base + offset..base + offset + inner], square);
            });
        }
    }
}

multiversion! {
    fn add_rows<T: Summand>(x: &[T], walk: &Walk, square: bool, at: usize, piece: &mut [f64]) {
        // Output slots come in rows of `inner`; a piece may start or end inside a row.
        let inner = walk.inner;
        let mut done = 0;
        while done < piece.len() {
            let (row, first) = ((at + done) / inner, (at + done) % inner);
            let len = (inner - first).min(piece.len() - done);
            let sums = &mut piece[done..done + len];
            let start = walk.base(row) + first;
            walk.each_reduced_offset(|offset| {
                let terms = &x[start + offset..start + offset + len];
                if square {
                    sums.iter_mut().zip(terms).for_each(|(s, &v)| *s += v.wide() * v.wide());
                } else {
                    sums.iter_mut().zip(terms).for_each(|(s, &v)| *s += v.wide());
                }
            });
            done += len;
        }
    }
}

/// Partial sums of [`block_sum`]: sixteen, so that the adds of several vectors overlap.
const LANES: usize = 16;

/// The sum of `block` (of its squares when `square`), in [`LANES`] interleaved partial sums.
#[inline(always)]
fn block_sum<T: Summand>(block: &[T], square: bool) -> f64 {
    if square {
        lane_sum(block, |v| v.wide() * v.wide())
    } else {
        lane_sum(block, |v| v.wide())
    }
}

/// `Σ term(v)` over `block`, in [`LANES`] interleaved `f64` partial sums (then the rest in order): the adds of
/// several vectors overlap, and the order does not depend on where the block sits.
#[inline(always)]
pub(in crate::ops) fn lane_sum<T: Copy>(block: &[T], term: impl Fn(T) -> f64) -> f64 {
    let mut lanes = [0.0f64; LANES];
    let mut chunks = block.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (lane, &v) in lanes.iter_mut().zip(chunk) {
            *lane += term(v);
        }
    }
    let rest: f64 = chunks.remainder().iter().map(|&v| term(v)).sum();
    lanes.iter().sum::<f64>() + rest
}

/// [`lane_sum`] over two blocks of one length, element by element: `Σ term(a, b)`.
#[inline(always)]
pub(in crate::ops) fn lane_sum2<A: Copy, B: Copy>(a: &[A], b: &[B], term: impl Fn(A, B) -> f64) -> f64 {
    let mut lanes = [0.0f64; LANES];
    let (mut xs, mut ys) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    for (x, y) in (&mut xs).zip(&mut ys) {
        for ((lane, &x), &y) in lanes.iter_mut().zip(x).zip(y) {
            *lane += term(x, y);
        }
    }
    let rest: f64 = xs
        .remainder()
        .iter()
        .zip(ys.remainder())
        .map(|(&x, &y)| term(x, y))
        .sum();
    lanes.iter().sum::<f64>() + rest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sums by definition: every element added to the slot its kept indices name.
    fn naive(x: &[f64], shape: &[usize], reduce: &[bool]) -> Vec<f64> {
        let kept: Vec<usize> = shape.iter().zip(reduce).map(|(&s, &r)| if r { 1 } else { s }).collect();
        let mut out = vec![0.0; kept.iter().product()];
        for (i, &v) in x.iter().enumerate() {
            let (mut rest, mut slot, mut stride) = (i, 0, 1);
            for d in (0..shape.len()).rev() {
                let index = rest % shape[d];
                rest /= shape[d];
                if !reduce[d] {
                    slot += index * stride;
                    stride *= shape[d];
                }
            }
            out[slot] += v;
        }
        out
    }

    #[test]
    fn runs_merge_and_skip_size_one() {
        let walk = Walk::new(&[2, 3, 1, 4, 5], &[true, false, true, false, true]);
        assert_eq!(
            walk,
            Walk {
                kept: vec![(12, 5)],
                reduced: vec![(2, 60)],
                inner: 5,
                inner_reduced: true,
            }
        );
    }

    #[test]
    fn every_pattern_of_reduced_dimensions_matches_the_definition() {
        // Integer-valued terms: every order of adding gives the same f64 sums, so equality is exact.
        let shape = [3usize, 1, 4, 2, 5];
        let x: Vec<f64> = (0..120).map(|i| ((i * 37) % 23) as f64 - 11.0).collect();
        for mask in 0..32u32 {
            let reduce: Vec<bool> = (0..5).map(|d| mask & (1 << d) != 0).collect();
            let expected = naive(&x, &shape, &reduce);
            let mut out = vec![f64::NAN; expected.len()];
            sum_dims_into(&x, &shape, &reduce, false, &mut out);
            assert_eq!(out, expected, "reduce {reduce:?}");
        }
    }

    #[test]
    fn sums_do_not_depend_on_the_number_of_threads() {
        // f64 terms of full precision, whose sums round differently in different orders (f32 terms would add
        // exactly in f64, in any order): one thread and all must add them alike.
        let shape = [3usize, 70_001];
        let x: Vec<f64> = (0..3 * 70_001).map(|i| (i as f64 * 0.37).sin() * 1e3).collect();
        for reduce in [[true, true], [false, true], [true, false]] {
            let slots: usize = shape
                .iter()
                .zip(&reduce)
                .map(|(&s, &r)| if r { 1 } else { s })
                .product();
            let sums = |threads| {
                crate::set_num_threads(threads);
                let mut out = vec![0.0; slots];
                sum_dims_into(&x, &shape, &reduce, false, &mut out);
                out
            };
            let (one, all) = (sums(1), sums(0));
            assert_eq!(one, all, "reduce {reduce:?}");
        }
    }

    #[test]
    fn large_sums_split_over_threads_match_the_definition() {
        // Past the split threshold, and past a chunk, in each of the three walks.
        let shape = [3usize, 70_001];
        let x: Vec<f64> = (0..3 * 70_001).map(|i| ((i * 7) % 101) as f64).collect();
        for reduce in [[true, true], [false, true], [true, false]] {
            let expected = naive(&x, &shape, &reduce);
            let mut out = vec![0.0; expected.len()];
            sum_dims_into(&x, &shape, &reduce, false, &mut out);
            assert_eq!(out, expected, "reduce {reduce:?}");
        }
    }
}
