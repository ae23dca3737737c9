//! Reductions composed from the sums, maxima and element-wise math: `std_dims`, `logsumexp`, `norm`,
//! `amax` / `amin`, `argmax` / `argmin`, `all` / `any`. They run on every device the parts run on; the differentiable ones are
//! recorded as one node with PyTorch's gradient formula (`StdBackward0`, `LogsumexpBackward0`,
//! `LinalgVectorNormBackward0`, `AmaxBackward0`), its zero cases included (the gradient of a zero `std` or `norm` is 0, not NaN).
//!
//! ```
//! use nn::Tensor;
//! let x = Tensor::from_vec(vec![3.0f64, -4.0, 1.0, 1.0], [2, 2])?;
//! assert_eq!(x.norm(2.0, &[1], false)?.to_vec::<f64>()?[0], 5.0);
//! assert_eq!(x.std_dims(&[1], true, false)?.to_vec::<f64>()?[1], 0.0);
//! assert_eq!(x.argmax(Some(1), false)?.to_vec::<i64>()?, vec![0, 0]);
//! assert_eq!(x.argmin(None, false)?.to_vec::<i64>()?, vec![1]);
//! let lse = x.logsumexp(&[1], false)?.to_vec::<f64>()?;
//! assert!((lse[1] - (1.0 + 2f64.ln())).abs() < 1e-12);
//! # Ok::<(), nn::Error>(())
//! ```

use crate::ops::rearrange::{distinct_dims, finite_max};
use crate::tensor::autograd::{Saved, no_grad, record_function};
use crate::{DType, Error, Result, Shape, Tensor};

/// The reduced dimensions, ascending: `dims` (each once), or every dimension when empty.
fn reduced(op: &'static str, x: &Tensor, dims: &[isize]) -> Result<Vec<usize>> {
    let mut dims = distinct_dims(op, dims, x.rank())?;
    if dims.is_empty() {
        dims = (0..x.rank()).collect();
    }
    dims.sort_unstable();
    Ok(dims)
}

/// `t`, reduced over `dims` without `keepdim`, with those dimensions back as size 1.
fn kept(t: &Tensor, dims: &[usize], keepdim: bool) -> Result<Tensor> {
    if keepdim {
        return Ok(t.clone());
    }
    dims.iter().try_fold(t.clone(), |t, &d| t.unsqueeze(d as isize))
}

/// `t` (reduced with `keepdim`) without the dimensions `dims`.
fn dropped(t: Tensor, dims: &[usize], keepdim: bool) -> Result<Tensor> {
    if keepdim {
        return Ok(t);
    }
    dims.iter().rev().try_fold(t, |t, &d| t.squeeze(d as isize))
}

/// The element count a reduction over `dims` takes each result from.
fn count(x: &Tensor, dims: &[usize]) -> usize {
    dims.iter().map(|&d| x.shape()[d]).product()
}

impl Tensor {
    /// The largest element over `dims` (all when empty), NaN where one is (PyTorch's `amax`); the gradient is
    /// shared evenly by the elements equal to the result, as PyTorch's.
    pub fn amax(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.extreme("amax", dims, keepdim, true)
    }

    /// The smallest element over `dims` (all when empty), as [`amax`](Self::amax).
    pub fn amin(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.extreme("amin", dims, keepdim, false)
    }

    /// Whether every element over `dims` (all when empty) is true, a non-zero number being true (PyTorch's
    /// `torch.all(x, dim, keepdim)`): a bool tensor (`u8` for a `u8` input, as PyTorch's). Over no elements:
    /// true.
    ///
    /// ```
    /// use nn::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 0.0, 2.0, 3.0], [2, 2])?;
    /// assert_eq!(x.all_dims(&[1], false)?.to_vec::<bool>()?, vec![false, true]);
    /// assert_eq!(x.any_dims(&[0], false)?.to_vec::<bool>()?, vec![true, true]);
    /// assert_eq!(x.all()?.to_vec::<bool>()?, vec![false]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn all_dims(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.truth_over("all", dims, keepdim, true)
    }

    /// Whether any element over `dims` (all when empty) is true, as [`all_dims`](Self::all_dims). Over no
    /// elements: false.
    pub fn any_dims(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        self.truth_over("any", dims, keepdim, false)
    }

    /// Whether every element is true: a 0-d bool tensor (PyTorch's `torch.all(x)`).
    pub fn all(&self) -> Result<Tensor> {
        self.all_dims(&[], false)
    }

    /// Whether any element is true: a 0-d bool tensor (PyTorch's `torch.any(x)`).
    pub fn any(&self) -> Result<Tensor> {
        self.any_dims(&[], false)
    }

    /// `all` (the smallest truth) or `any` (the largest) over `dims`.
    fn truth_over(&self, op: &'static str, dims: &[isize], keepdim: bool, all: bool) -> Result<Tensor> {
        let reduce = reduced(op, self, dims)?;
        let _plain = no_grad();
        let out = if count(self, &reduce) == 0 {
            let shape: Shape = (0..self.rank())
                .filter_map(|d| match reduce.contains(&d) {
                    true => keepdim.then_some(1),
                    false => Some(self.shape()[d]),
                })
                .collect();
            Tensor::try_full(shape, if all { 1.0 } else { 0.0 }, DType::Bool)?.to_device(self.device())?
        } else {
            let truth = self.truth()?.to_dtype(DType::F32)?;
            let dims: Vec<isize> = reduce.iter().map(|&d| d as isize).collect();
            let extreme = if all {
                truth.amin(&dims, keepdim)?
            } else {
                truth.amax(&dims, keepdim)?
            };
            extreme.ne_scalar(0.0)?
        };
        if self.dtype() == DType::U8 {
            out.to_dtype(DType::U8)
        } else {
            Ok(out)
        }
    }

    fn extreme(&self, op: &'static str, dims: &[isize], keepdim: bool, largest: bool) -> Result<Tensor> {
        let reduce = reduced(op, self, dims)?;
        let mut out = {
            let _forward = no_grad();
            let mut out = self.clone();
            for &d in &reduce {
                out = if largest {
                    out.max_dim(d as isize, true)?.0
                } else {
                    out.min_dim(d as isize, true)?.0
                };
            }
            dropped(out, &reduce, keepdim)?
        };
        let (x, result) = (Saved::new(self), Saved::new(&out));
        record_function(op, &[self], &mut out, move |g, _| {
            let (x, result) = (x.get(op)?, kept(result.get(op)?, &reduce, keepdim)?);
            Ok(vec![Some(shared_among_extremes(
                x,
                &result,
                &kept(g, &reduce, keepdim)?,
                &reduce,
            )?)])
        });
        Ok(out)
    }

    /// The index of the largest element along `dim`, or in the flattened tensor for `None` (PyTorch's
    /// `argmax`): the first among equals, a NaN counting as the largest; `int64`.
    pub fn argmax(&self, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        self.arg_extreme(dim, keepdim, true)
    }

    /// The index of the smallest element along `dim`, or in the flattened tensor for `None` (PyTorch's
    /// `argmin`), as [`argmax`](Self::argmax).
    pub fn argmin(&self, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        self.arg_extreme(dim, keepdim, false)
    }

    fn arg_extreme(&self, dim: Option<isize>, keepdim: bool, largest: bool) -> Result<Tensor> {
        let _no_gradient = no_grad();
        let pick = |x: &Tensor, d: isize, keep: bool| {
            if largest {
                x.max_dim(d, keep)
            } else {
                x.min_dim(d, keep)
            }
            .map(|(_, i)| i)
        };
        match dim {
            Some(d) => pick(self, d, keepdim),
            None => {
                let index = pick(&self.reshape([self.numel()])?, 0, false)?;
                if keepdim {
                    index.reshape(vec![1; self.rank()])
                } else {
                    Ok(index)
                }
            }
        }
    }

    /// The standard deviation over `dims` (all when empty), with Bessel's correction when `unbiased`
    /// (PyTorch's `std(dim, unbiased, keepdim)`). Its gradient is PyTorch's: 0 where the deviation is 0.
    pub fn std_dims(&self, dims: &[isize], unbiased: bool, keepdim: bool) -> Result<Tensor> {
        let op = "std";
        Error::check_float(op, self.dtype())?;
        let reduce = reduced(op, self, dims)?;
        let mut out = {
            let _forward = no_grad();
            self.var_dims(dims, unbiased, keepdim)?.sqrt()?
        };
        let (x, result) = (Saved::new(self), Saved::new(&out));
        let divisor = count(self, &reduce) as f64 - if unbiased { 1.0 } else { 0.0 };
        record_function(op, &[self], &mut out, move |g, _| {
            let (x, result) = (x.get(op)?, result.get(op)?);
            // var's gradient of `g / (2·std)`, which is 0 where std is 0.
            let g_var = kept(&g.div_or_zero(&result.mul_scalar(2.0)?)?, &reduce, keepdim)?;
            let dims: Vec<isize> = reduce.iter().map(|&d| d as isize).collect();
            let centred = x.sub(&x.mean_dims(&dims, true)?)?;
            Ok(vec![Some(centred.mul(&g_var)?.mul_scalar(2.0 / divisor)?)])
        });
        Ok(out)
    }

    /// `log(Σ exp(x))` over `dims` (all when empty), computed without overflow (PyTorch's `logsumexp`): an
    /// all `-inf` reduction gives `-inf`. Its gradient is `g·exp(x - result)`.
    pub fn logsumexp(&self, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        let op = "logsumexp";
        Error::check_float(op, self.dtype())?;
        let reduce = reduced(op, self, dims)?;
        let listed: Vec<isize> = reduce.iter().map(|&d| d as isize).collect();
        let mut out = {
            let _forward = no_grad();
            // An infinite maximum is clamped to the dtype's largest finite value, so `x - max` has no `inf - inf`.
            let limit = finite_max(self.dtype());
            let max = self.amax(&listed, true)?.clamp(-limit, limit)?;
            let sum = self.sub(&max)?.exp()?.sum_dims(&listed, true)?;
            dropped(sum.log()?.add(&max)?, &reduce, keepdim)?
        };
        let (x, result) = (Saved::new(self), Saved::new(&out));
        record_function(op, &[self], &mut out, move |g, _| {
            let (x, result) = (x.get(op)?, result.get(op)?);
            let weights = x.sub(&kept(result, &reduce, keepdim)?)?.exp()?;
            Ok(vec![Some(weights.mul(&kept(g, &reduce, keepdim)?)?)])
        });
        Ok(out)
    }

    /// The `p`-norm over `dims` (all when empty): `(Σ |x|^p)^(1/p)`, the maximum of `|x|` for `p = inf`, the
    /// minimum for `-inf`, the count of nonzero elements for 0 (PyTorch's `norm(p, dim, keepdim)` and
    /// `linalg.vector_norm`). Its gradient is PyTorch's, 0 where the norm is 0 (for `p ≥ 1`); at `±inf` it is
    /// shared evenly by the elements that reach the extreme.
    pub fn norm(&self, p: f64, dims: &[isize], keepdim: bool) -> Result<Tensor> {
        let op = "linalg_vector_norm";
        Error::check_float(op, self.dtype())?;
        if p.is_nan() {
            return Err(Error::invalid(op, "the order p must not be NaN"));
        }
        let reduce = reduced(op, self, dims)?;
        let listed: Vec<isize> = reduce.iter().map(|&d| d as isize).collect();
        let mut out = {
            let _forward = no_grad();
            let magnitude = self.abs()?;
            match p {
                f64::INFINITY => magnitude.amax(&listed, keepdim)?,
                f64::NEG_INFINITY => magnitude.amin(&listed, keepdim)?,
                0.0 => magnitude.sign()?.sum_dims(&listed, keepdim)?,
                1.0 => magnitude.sum_dims(&listed, keepdim)?,
                2.0 => self.mul(self)?.sum_dims(&listed, keepdim)?.sqrt()?,
                _ => magnitude
                    .pow_scalar(p)?
                    .sum_dims(&listed, keepdim)?
                    .pow_scalar(1.0 / p)?,
            }
        };
        let (x, result) = (Saved::new(self), Saved::new(&out));
        record_function(op, &[self], &mut out, move |g, _| {
            let (x, norm) = (x.get(op)?, kept(result.get(op)?, &reduce, keepdim)?);
            let g = kept(g, &reduce, keepdim)?;
            let grad = match p {
                0.0 => x.zeros_like()?,
                1.0 => x.sign()?.mul(&g)?,
                2.0 => x.mul(&g.div_or_zero(&norm)?)?,
                _ if p.is_infinite() => x.sign()?.mul(&shared_among_extremes(&x.abs()?, &norm, &g, &reduce)?)?,
                _ if p < 1.0 => {
                    let scaled = x.sign()?.mul(&x.abs()?.pow_scalar(p - 1.0)?)?;
                    // `|x|^(p-1)` is infinite at 0, where PyTorch's gradient is 0.
                    let scaled = scaled.div_or_zero(&x.abs()?.sign()?)?;
                    scaled.mul(&g)?.mul(&norm.pow_scalar(1.0 - p)?)?
                }
                _ => {
                    let scaled = if p < 2.0 {
                        x.sign()?.mul(&x.abs()?.pow_scalar(p - 1.0)?)?
                    } else {
                        x.mul(&x.abs()?.pow_scalar(p - 2.0)?)?
                    };
                    scaled.mul(&g.div_or_zero(&norm.pow_scalar(p - 1.0)?)?)?
                }
            };
            Ok(vec![Some(grad)])
        });
        Ok(out)
    }
}

/// PyTorch's gradient of an extreme (`amax`, the `inf`-norm): `g` shared evenly by the elements of `x` equal to
/// `result` (both reduced with `keepdim`), 0 elsewhere.
fn shared_among_extremes(x: &Tensor, result: &Tensor, g: &Tensor, dims: &[usize]) -> Result<Tensor> {
    // `|sign(result - x)|` is 0 where `x` reaches the result and 1 elsewhere.
    let reached = result.sub(x)?.sign()?.abs()?.neg()?.add_scalar(1.0)?;
    let dims: Vec<isize> = dims.iter().map(|&d| d as isize).collect();
    reached.mul(&g.div(&reached.sum_dims(&dims, true)?)?)
}
