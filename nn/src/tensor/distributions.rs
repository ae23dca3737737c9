//! The in-place draws of PyTorch's other distributions: `exponential_`, `cauchy_`, `log_normal_` and
//! `geometric_`, drawn as PyTorch 2.5.1's CPU kernels draw them ([`crate::random`]).

use super::Tensor;
use super::cast::cast_data;
use super::random::{filled, not_implemented};
use super::storage::CpuData;
use crate::error::cpp_double;
use crate::random::{self, Generator, fill, mcg31};
use crate::{DType, Error, Result, Shape};

impl Tensor {
    /// `x.exponential_(lambd)`: fills this tensor with samples of the exponential distribution of rate
    /// `lambd` from the default generator. The stream is PyTorch's (MKL's MCG31, seeded by one draw); MKL's
    /// vector logarithm rounds some samples differently from the one nn uses, so a sample is PyTorch's within
    /// 2 units in the last place in `f32` (4·10⁻¹⁰ relative in `f64`), inside `assert_close`'s defaults. An
    /// infinite rate gives zeros, as PyTorch's.
    ///
    /// ```
    /// let x = nn::Tensor::zeros([3], nn::DType::F32);
    /// nn::manual_seed(0);
    /// x.exponential_(1.0)?;
    /// // torch.manual_seed(0); torch.empty(3).exponential_(1.0)
    /// let want = [2.3266010, 0.51507884, 0.013304430];
    /// for (g, w) in x.to_vec::<f32>()?.iter().zip(want) {
    ///     assert!((g - w).abs() <= 1e-5 + 1.3e-6 * w);
    /// }
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn exponential_(&self, lambd: f64) -> Result<()> {
        random::with_global(|g| self.exponential_with_(lambd, g))
    }

    /// `x.exponential_(lambd, generator=generator)`: [`exponential_`](Self::exponential_) from `generator`.
    pub fn exponential_with_(&self, lambd: f64, generator: &mut Generator) -> Result<()> {
        let (shape, dtype, op) = (self.shape(), self.dtype(), "exponential_");
        positive(op, "lambda", lambd)?;
        if !dtype.is_floating_point() {
            return Err(continuous("Exponential", op, dtype.scalar_type_name()));
        }
        let n = shape.numel();
        if lambd.is_infinite() {
            // PyTorch's scalar kernel: one 53-bit uniform per element, times a rate of zero.
            return self.fill_f64(op, |v, n| v.extend((0..n).map(|_| generator.unit() * 0.0)));
        }
        let values = if dtype == DType::F64 {
            CpuData::F64(filled(op, shape, dtype, |v| {
                mcg31::exponential_f64(generator, v, n, lambd)
            })?)
        } else {
            CpuData::F32(filled(op, shape, DType::F32, |v| {
                mcg31::exponential_f32(generator, v, n, lambd)
            })?)
        };
        self.fill_drawn(values)
    }

    /// `x.cauchy_(median, sigma)`: fills this tensor with samples of the Cauchy distribution from the default
    /// generator, PyTorch's bit for bit.
    ///
    /// ```
    /// let x = nn::Tensor::zeros([2], nn::DType::F64);
    /// nn::manual_seed(0);
    /// x.cauchy_(0.0, 1.0)?;
    /// // torch.manual_seed(0); torch.empty(2, dtype=torch.float64).cauchy_()
    /// assert_eq!(x.to_vec::<f64>()?, vec![10.597729326682297, 0.7647672596059]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn cauchy_(&self, median: f64, sigma: f64) -> Result<()> {
        random::with_global(|g| self.cauchy_with_(median, sigma, g))
    }

    /// `x.cauchy_(median, sigma, generator=generator)`.
    pub fn cauchy_with_(&self, median: f64, sigma: f64, generator: &mut Generator) -> Result<()> {
        let op = "cauchy_";
        positive(op, "sigma", sigma)?;
        if !self.dtype().is_floating_point() {
            return Err(continuous("Cauchy", op, self.dtype().cpp_name()));
        }
        self.fill_f64(op, |v, n| fill::cauchy(generator, v, n, median, sigma))
    }

    /// `x.log_normal_(mean, std)`: fills this tensor with `exp` of samples of `N(mean, std²)` from the default
    /// generator, PyTorch's bit for bit (its scalar normal sampler, whose second sample is cached).
    pub fn log_normal_(&self, mean: f64, std: f64) -> Result<()> {
        random::with_global(|g| self.log_normal_with_(mean, std, g))
    }

    /// `x.log_normal_(mean, std, generator=generator)`.
    pub fn log_normal_with_(&self, mean: f64, std: f64, generator: &mut Generator) -> Result<()> {
        let op = "log_normal_";
        positive(op, "std", std)?;
        if !self.dtype().is_floating_point() {
            return Err(not_implemented(op, "log_normal_cpu", self.dtype()));
        }
        self.fill_f64(op, |v, n| fill::log_normal(generator, v, n, mean, std))
    }

    /// `x.geometric_(p)`: fills this tensor (of any dtype but bool) with the number of Bernoulli trials of
    /// probability `p` up to the first success, from the default generator, PyTorch's bit for bit.
    ///
    /// ```
    /// let x = nn::Tensor::zeros([3], nn::DType::I64);
    /// nn::manual_seed(0);
    /// x.geometric_(0.5)?;
    /// // torch.manual_seed(0); torch.empty(3, dtype=torch.int64).geometric_(0.5)
    /// assert_eq!(x.to_vec::<i64>()?, vec![1, 1, 2]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn geometric_(&self, p: f64) -> Result<()> {
        random::with_global(|g| self.geometric_with_(p, g))
    }

    /// `x.geometric_(p, generator=generator)`.
    pub fn geometric_with_(&self, p: f64, generator: &mut Generator) -> Result<()> {
        let op = "geometric_";
        if !(p > 0.0 && p < 1.0) {
            return Err(Error::invalid(
                op,
                format!("geometric_ expects p to be in (0, 1), but got p={}", cpp_double(p)),
            ));
        }
        if self.dtype() == DType::Bool {
            return Err(not_implemented(op, "geometric_cpu", DType::Bool));
        }
        self.fill_f64(op, |v, n| fill::geometric(generator, v, n, p))
    }

    /// Writes the `f64` samples `draw` appends (given their count) into this tensor, cast to its dtype.
    fn fill_f64(&self, op: &'static str, draw: impl FnOnce(&mut Vec<f64>, usize)) -> Result<()> {
        let n = self.numel();
        let drawn = filled(op, self.shape(), DType::F64, |v| draw(v, n))?;
        self.fill_drawn(CpuData::F64(drawn))
    }

    /// Writes samples drawn on the host into this tensor, cast to its dtype as PyTorch's kernels cast theirs.
    fn fill_drawn(&self, values: CpuData) -> Result<()> {
        let shape = Shape::from(self.shape().dims());
        self.copy_(&Tensor::from_cpu(cast_data(&values, self.dtype()), shape))
    }
}

/// PyTorch's refusal of a parameter `name` of `op` that is not positive (NaN included).
fn positive(op: &'static str, name: &str, v: f64) -> Result<()> {
    if v > 0.0 {
        return Ok(());
    }
    Err(Error::invalid(
        op,
        format!("{op} expects {name} > 0.0, but found {name}={}", cpp_double(v)),
    ))
}

/// PyTorch's refusal of a continuous distribution for a dtype that is not a float one, the dtype named as its
/// check prints it.
fn continuous(distribution: &str, op: &'static str, dtype: &str) -> Error {
    Error::invalid(
        op,
        format!(
            "{distribution} distribution is a continuous probability distribution. dtype must be a floating point \
             but you specified {dtype}"
        ),
    )
}
