//! `torch.multinomial`: indices drawn from rows of probabilities, as PyTorch 2.5.1's CPU draws them.
//!
//! With replacement (and more than one sample) each sample is a 53-bit uniform placed by binary search in the
//! row's normalised cumulative sums, PyTorch's bit for bit. Without replacement, or for one sample, PyTorch
//! takes the `n` largest `p / q` with `q` drawn by `exponential_` (the Gumbel trick): nn draws the same `q`
//! within `exponential_`'s rounding, so it picks PyTorch's categories but where two ratios lie within that
//! rounding of each other, and orders exactly equal ratios (zero-probability categories, once every other
//! one is drawn) by index where PyTorch's order is its sort's.

use std::cmp::Ordering;

use super::Tensor;
use super::storage::CpuData;
use crate::random::{self, Generator, mcg31};
use crate::{DType, Device, Error, Result, Shape};

const OP: &str = "multinomial";

impl Tensor {
    /// `torch.multinomial(probs, num_samples, replacement)`: for a 1-d tensor of non-negative weights (or
    /// each row of a 2-d one), `num_samples` indices drawn with these weights from the default generator;
    /// `int64`, on this tensor's device. PyTorch's refusals, with its messages.
    ///
    /// ```
    /// let p = nn::Tensor::from_vec(vec![0.1f64, 0.0, 0.6, 0.3], [4])?;
    /// nn::manual_seed(0);
    /// let i = p.multinomial(6, true)?;
    /// // torch.manual_seed(0); torch.multinomial(p, 6, replacement=True)
    /// assert_eq!(i.to_vec::<i64>()?, vec![3, 3, 2, 3, 2, 3]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn multinomial(&self, num_samples: usize, replacement: bool) -> Result<Tensor> {
        random::with_global(|g| self.multinomial_with(num_samples, replacement, g))
    }

    /// `torch.multinomial(probs, num_samples, replacement, generator=generator)`.
    pub fn multinomial_with(&self, num_samples: usize, replacement: bool, generator: &mut Generator) -> Result<Tensor> {
        let dims = self.shape().dims().to_vec();
        if dims.is_empty() || dims.len() > 2 {
            return Err(Error::invalid(OP, "prob_dist must be 1 or 2 dim"));
        }
        if !self.dtype().is_floating_point() {
            return Err(Error::invalid(
                OP,
                format!(
                    "multinomial only supports floating-point dtypes for input, got: {}",
                    self.dtype().scalar_type_name()
                ),
            ));
        }
        if num_samples == 0 {
            return Err(Error::invalid(OP, "cannot sample n_sample <= 0 samples"));
        }
        let categories = dims[dims.len() - 1];
        if !replacement && num_samples > categories {
            return Err(Error::invalid(
                OP,
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
            ));
        }
        if categories > 1 << 24 {
            return Err(Error::invalid(OP, "number of categories cannot exceed 2^24"));
        }
        let rows = if dims.len() == 2 { dims[0] } else { 1 };
        let out_shape = if dims.len() == 2 {
            Shape::from([rows, num_samples])
        } else {
            Shape::from([num_samples])
        };
        let p = self.to_device(Device::Cpu)?.to_dtype(DType::F64)?.to_vec::<f64>()?;
        let drawn = if rows * num_samples == 0 {
            Vec::new()
        } else if !replacement || num_samples == 1 {
            by_exponential_ratio(&p, rows, num_samples, self.dtype(), generator)?
        } else {
            with_replacement(&p, rows, num_samples, self.dtype(), generator)?
        };
        Tensor::from_cpu(CpuData::I64(drawn), out_shape).to_device(self.device())
    }
}

/// The samples of PyTorch's fast path: the `n` largest `p / q` of each row, `q` one `exponential_(1)` draw of
/// the whole tensor in its dtype, the ratio rounded to it; ties to the lower index.
fn by_exponential_ratio(p: &[f64], rows: usize, n: usize, dtype: DType, g: &mut Generator) -> Result<Vec<i64>> {
    let categories = p.len() / rows;
    if p.iter().any(|v| v.is_nan() || *v < 0.0 || *v == f64::INFINITY) {
        return Err(Error::invalid(
            OP,
            "probability tensor contains either `inf`, `nan` or element < 0",
        ));
    }
    if categories == 0 || p.chunks(categories).any(|row| row.iter().all(|v| *v == 0.0)) {
        return Err(Error::invalid(
            OP,
            "invalid multinomial distribution (sum of probabilities <= 0)",
        ));
    }
    let q = exponential_draws(g, p.len(), dtype);
    let ratios: Vec<f64> = p.iter().zip(&q).map(|(p, q)| ratio(*p, *q, dtype)).collect();
    let mut out = Vec::with_capacity(ratios.len() / categories * n);
    for row in ratios.chunks(categories) {
        let mut order: Vec<usize> = (0..categories).collect();
        // Largest first (NaN first, as PyTorch's comparator puts it), ties by index.
        order.sort_by(|&a, &b| descending(row[a], row[b]).then(a.cmp(&b)));
        out.extend(order[..n].iter().map(|&i| i as i64));
    }
    Ok(out)
}

/// `exponential_(1)` of `n` elements in `dtype` (a half type drawn in `f32`), widened to `f64`.
fn exponential_draws(g: &mut Generator, n: usize, dtype: DType) -> Vec<f64> {
    if dtype == DType::F64 {
        let mut q = Vec::with_capacity(n);
        mcg31::exponential_f64(g, &mut q, n, 1.0);
        return q;
    }
    let mut q = Vec::with_capacity(n);
    mcg31::exponential_f32(g, &mut q, n, 1.0);
    q.into_iter().map(|v| dtype.round_f64(f64::from(v))).collect()
}

/// `p / q` as PyTorch's `div` computes it in `dtype`: in `f64`, in `f32`, or for a half type in `f32` rounded.
fn ratio(p: f64, q: f64, dtype: DType) -> f64 {
    if dtype == DType::F64 {
        return p / q;
    }
    dtype.round_f64(f64::from(p as f32 / q as f32))
}

/// The order of PyTorch's `topk(largest=True)` comparator: NaN above every number, then larger first.
fn descending(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => b.partial_cmp(&a).expect("neither is NaN"),
    }
}

/// `multinomial_with_replacement_apply`: per row the cumulative sums in the accumulating type (`f64` for
/// `f64`, else `f32`), normalised, the last set to 1, then per sample one 53-bit uniform and a binary search
/// for the first sum not below it. Every row is checked before any is drawn.
fn with_replacement(p: &[f64], rows: usize, n: usize, dtype: DType, g: &mut Generator) -> Result<Vec<i64>> {
    let categories = p.len() / rows;
    let wide = dtype == DType::F64;
    let mut sums: Vec<Vec<f64>> = Vec::with_capacity(rows);
    for r in 0..rows {
        let row = &p[r * categories..(r + 1) * categories];
        let mut sum = 0.0f64;
        let mut cumulative = Vec::with_capacity(categories);
        for &v in row {
            if v.is_nan() || v < 0.0 {
                return Err(Error::invalid(
                    OP,
                    "invalid multinomial distribution (encountering probability entry < 0)",
                ));
            }
            if v.is_infinite() {
                return Err(Error::invalid(
                    OP,
                    "invalid multinomial distribution (encountering probability entry = infinity or NaN)",
                ));
            }
            sum = if wide {
                sum + v
            } else {
                f64::from(sum as f32 + v as f32)
            };
            cumulative.push(sum);
        }
        if sum.is_nan() || sum <= 0.0 {
            return Err(Error::invalid(
                OP,
                "invalid multinomial distribution (sum of probabilities <= 0)",
            ));
        }
        for c in cumulative.iter_mut() {
            *c = if wide {
                *c / sum
            } else {
                f64::from(*c as f32 / sum as f32)
            };
        }
        sums.push(cumulative);
    }
    let mut out = Vec::with_capacity(rows * n);
    for mut cumulative in sums {
        if let Some(last) = cumulative.last_mut() {
            *last = 1.0;
        }
        for _ in 0..n {
            let u = g.unit();
            out.push(cumulative.partition_point(|&c| c < u) as i64);
        }
    }
    Ok(out)
}
