//! Random tensors, drawn as PyTorch's CPU kernels draw them ([`crate::random`]): the same seed gives the same
//! tensor as PyTorch, bit for bit, in every float dtype.

use half::{bf16, f16};

use super::Tensor;
use super::cast::cast_data;
use super::create::{allocatable, refused};
use super::storage::CpuData;
use crate::error::cpp_double;
use crate::random::{self, Generator, STATE_BYTES, fill};
use crate::{DType, Error, Result, Shape};

/// The default generator's state (`torch.get_rng_state()`): a `uint8` tensor in PyTorch's layout.
pub fn get_rng_state() -> Tensor {
    random::with_global(|g| g.get_state())
}

/// Restores the default generator's state (`torch.set_rng_state(state)`); a state that is not one is
/// PyTorch's error and leaves it as it was.
///
/// ```
/// let state = nn::get_rng_state();
/// let a = nn::Tensor::rand([4], nn::DType::F64);
/// nn::set_rng_state(&state)?;
/// assert_eq!(nn::Tensor::rand([4], nn::DType::F64).to_vec::<f64>()?, a.to_vec::<f64>()?);
/// # Ok::<(), nn::Error>(())
/// ```
pub fn set_rng_state(state: &Tensor) -> Result<()> {
    random::with_global(|g| g.set_state(state))
}

impl Generator {
    /// The state as PyTorch's `Generator.get_state()`: a `uint8` tensor of [`STATE_BYTES`] laid out as its
    /// `CPUGeneratorImplState` ([`state_bytes`](Self::state_bytes)).
    pub fn get_state(&self) -> Tensor {
        Tensor::from_cpu(CpuData::U8(self.state_bytes()), Shape::from([STATE_BYTES]))
    }

    /// Restores a state [`get_state`](Self::get_state) (or PyTorch's `get_state`) returned
    /// (`Generator.set_state`): a `uint8` CPU tensor, else PyTorch's error; the generator is left as it was
    /// on any error.
    pub fn set_state(&mut self, state: &Tensor) -> Result<()> {
        if state.dtype() != DType::U8 || !state.device().is_cpu() {
            return Err(Error::invalid(
                "set_state",
                format!(
                    "RNG state must be a torch.ByteTensor; got a tensor of dtype {} on {}",
                    state.dtype().name(),
                    state.device()
                ),
            ));
        }
        self.set_state_bytes(&state.to_vec::<u8>()?)
    }
}

impl Tensor {
    /// `torch.rand(shape, dtype=dtype)`: samples uniform in `[0, 1)` from the default generator. Panics where
    /// [`try_rand_with`](Self::try_rand_with) returns an error (an integer dtype, a tensor too large to
    /// allocate).
    ///
    /// ```
    /// nn::manual_seed(0);
    /// let x = nn::Tensor::rand([2], nn::DType::F64);
    /// // torch.manual_seed(0); torch.rand(2, dtype=torch.float64)
    /// assert_eq!(x.to_vec::<f64>()?, vec![0.9700530018065531, 0.707819864399788]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn rand(shape: impl Into<Shape>, dtype: DType) -> Tensor {
        random::with_global(|g| Tensor::try_rand_with(shape, dtype, g)).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `torch.rand(shape, dtype=dtype, generator=generator)`, or the error.
    pub fn try_rand_with(shape: impl Into<Shape>, dtype: DType, generator: &mut Generator) -> Result<Tensor> {
        Tensor::try_uniform_with(shape, 0.0, 1.0, dtype, generator)
    }

    /// `torch.randn(shape, dtype=dtype)`: samples of the standard normal distribution from the default
    /// generator. Panics where [`try_randn_with`](Self::try_randn_with) returns an error.
    pub fn randn(shape: impl Into<Shape>, dtype: DType) -> Tensor {
        random::with_global(|g| Tensor::randn_with(shape, dtype, g))
    }

    /// `torch.randn(shape, dtype=dtype, generator=generator)`. Panics where
    /// [`try_randn_with`](Self::try_randn_with) returns an error.
    ///
    /// ```
    /// use nn::{Tensor, DType, random::Generator};
    /// let a = Tensor::randn_with([4], DType::F64, &mut Generator::new(3));
    /// let b = Tensor::randn_with([4], DType::F64, &mut Generator::new(3));
    /// assert_eq!(a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
    /// ```
    pub fn randn_with(shape: impl Into<Shape>, dtype: DType, generator: &mut Generator) -> Tensor {
        Tensor::try_randn_with(shape, dtype, generator).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `torch.randn(shape, dtype=dtype, generator=generator)`, or the error: an integer dtype, or
    /// [`Error::Allocation`].
    pub fn try_randn_with(shape: impl Into<Shape>, dtype: DType, generator: &mut Generator) -> Result<Tensor> {
        drawn(shape.into(), |shape| normal(generator, shape, dtype, 0.0, 1.0))
    }

    /// `torch.normal(mean, std, shape, dtype=dtype)`: samples of `N(mean, std²)` from the default generator.
    /// Panics where [`try_normal_with`](Self::try_normal_with) returns an error.
    pub fn normal(shape: impl Into<Shape>, mean: f64, std: f64, dtype: DType) -> Tensor {
        random::with_global(|g| Tensor::try_normal_with(shape, mean, std, dtype, g)).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `torch.normal(mean, std, shape, dtype=dtype, generator=generator)`, or the error: `std < 0`, an integer
    /// dtype, or [`Error::Allocation`].
    pub fn try_normal_with(
        shape: impl Into<Shape>,
        mean: f64,
        std: f64,
        dtype: DType,
        generator: &mut Generator,
    ) -> Result<Tensor> {
        drawn(shape.into(), |shape| normal(generator, shape, dtype, mean, std))
    }

    /// `torch.empty(shape, dtype=dtype).uniform_(low, high)` from the default generator. Panics where
    /// [`try_uniform_with`](Self::try_uniform_with) returns an error.
    pub fn uniform(shape: impl Into<Shape>, low: f64, high: f64, dtype: DType) -> Tensor {
        random::with_global(|g| Tensor::uniform_with(shape, low, high, dtype, g))
    }

    /// `torch.empty(shape, dtype=dtype).uniform_(low, high, generator=generator)`. Panics where
    /// [`try_uniform_with`](Self::try_uniform_with) returns an error.
    pub fn uniform_with(
        shape: impl Into<Shape>,
        low: f64,
        high: f64,
        dtype: DType,
        generator: &mut Generator,
    ) -> Tensor {
        Tensor::try_uniform_with(shape, low, high, dtype, generator).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `torch.empty(shape, dtype=dtype).uniform_(low, high, generator=generator)`, or the error: `low > high`,
    /// an integer dtype, or [`Error::Allocation`].
    pub fn try_uniform_with(
        shape: impl Into<Shape>,
        low: f64,
        high: f64,
        dtype: DType,
        generator: &mut Generator,
    ) -> Result<Tensor> {
        drawn(shape.into(), |shape| uniform(generator, shape, dtype, low, high))
    }

    /// `torch.randint(low, high, shape, dtype=dtype)`: integers uniform in `[low, high)` from the default
    /// generator, in any dtype.
    ///
    /// ```
    /// nn::manual_seed(0);
    /// let x = nn::Tensor::randint(0, 10, [5], nn::DType::I64)?;
    /// // torch.manual_seed(0); torch.randint(0, 10, (5,))
    /// assert_eq!(x.to_vec::<i64>()?, vec![4, 9, 3, 0, 3]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn randint(low: i64, high: i64, shape: impl Into<Shape>, dtype: DType) -> Result<Tensor> {
        random::with_global(|g| Tensor::randint_with(low, high, shape, dtype, g))
    }

    /// `torch.rand_like(x)`: uniform in `[0, 1)` with this tensor's shape, dtype and device, from the default
    /// generator (drawn as for a CPU tensor, then moved).
    ///
    /// ```
    /// let x = nn::Tensor::zeros([2, 3], nn::DType::F64);
    /// nn::manual_seed(7);
    /// let a = x.rand_like()?;
    /// nn::manual_seed(7);
    /// assert_eq!(a.to_vec::<f64>()?, nn::Tensor::rand([2, 3], nn::DType::F64).to_vec::<f64>()?);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn rand_like(&self) -> Result<Tensor> {
        let shape = self.shape().clone();
        random::with_global(|g| Tensor::try_rand_with(shape, self.dtype(), g))?.to_device(self.device())
    }

    /// `torch.randn_like(x)`: standard normal samples with this tensor's shape, dtype and device, from the
    /// default generator (drawn as for a CPU tensor, then moved).
    pub fn randn_like(&self) -> Result<Tensor> {
        let shape = self.shape().clone();
        random::with_global(|g| Tensor::try_randn_with(shape, self.dtype(), g))?.to_device(self.device())
    }

    /// `torch.randint_like(x, low, high)`: integers uniform in `[low, high)` with this tensor's shape, dtype
    /// and device, from the default generator.
    pub fn randint_like(&self, low: i64, high: i64) -> Result<Tensor> {
        Tensor::randint(low, high, self.shape().clone(), self.dtype())?.to_device(self.device())
    }

    /// `torch.randint(low, high, shape, dtype=dtype, generator=generator)`.
    pub fn randint_with(
        low: i64,
        high: i64,
        shape: impl Into<Shape>,
        dtype: DType,
        generator: &mut Generator,
    ) -> Result<Tensor> {
        drawn(shape.into(), |shape| random_from_to(generator, shape, dtype, low, high))
    }

    /// `torch.randperm(n, dtype=dtype)`: a random permutation of `0..n` from the default generator.
    ///
    /// ```
    /// nn::manual_seed(0);
    /// let p = nn::Tensor::randperm(5, nn::DType::I64)?;
    /// // torch.manual_seed(0); torch.randperm(5)
    /// assert_eq!(p.to_vec::<i64>()?, vec![4, 0, 1, 3, 2]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn randperm(n: usize, dtype: DType) -> Result<Tensor> {
        random::with_global(|g| Tensor::randperm_with(n, dtype, g))
    }

    /// `torch.randperm(n, dtype=dtype, generator=generator)`: an error where `dtype` cannot hold `n - 1`
    /// exactly (PyTorch's check), else the permutation.
    pub fn randperm_with(n: usize, dtype: DType, generator: &mut Generator) -> Result<Tensor> {
        let most: u64 = match dtype {
            DType::F16 => (1 << 11) + 1,
            DType::BF16 => (1 << 8) + 1,
            DType::F32 => (1 << 24) + 1,
            DType::F64 => (1 << 53) + 1,
            DType::U8 => 256,
            DType::Bool => 2,
            DType::I32 => 1 << 31,
            DType::I64 => u64::MAX,
        };
        if n as u64 > most {
            return Err(Error::invalid(
                "randperm",
                format!(
                    "n is too large for result tensor type: n = {n}, the most a {} holds is {most}",
                    dtype.name()
                ),
            ));
        }
        let shape = Shape::from([n]);
        let mut values = room("randperm", &shape, DType::I64)?;
        fill::randperm(generator, &mut values, n);
        let values = CpuData::I64(values);
        Ok(Tensor::from_cpu(cast_data(&values, dtype), shape))
    }

    /// `x.uniform_(low, high)`: fills this tensor, wherever it is, with samples uniform in `[low, high)` from
    /// the default generator, drawn in its dtype as PyTorch's CPU draws them.
    pub fn uniform_(&self, low: f64, high: f64) -> Result<()> {
        random::with_global(|g| self.uniform_with_(low, high, g))
    }

    /// `x.uniform_(low, high, generator=generator)`.
    pub fn uniform_with_(&self, low: f64, high: f64, generator: &mut Generator) -> Result<()> {
        self.copy_(&Tensor::try_uniform_with(
            self.shape().clone(),
            low,
            high,
            self.dtype(),
            generator,
        )?)
    }

    /// `x.normal_(mean, std)`: fills this tensor with samples of `N(mean, std²)` from the default generator.
    ///
    /// ```
    /// let x = nn::Tensor::zeros([20], nn::DType::F32);
    /// nn::manual_seed(1);
    /// x.normal_(2.0, 0.5)?;
    /// nn::manual_seed(1);
    /// let y = nn::Tensor::randn([20], nn::DType::F32);
    /// assert!((x.to_vec::<f32>()?[0] - (2.0 + 0.5 * y.to_vec::<f32>()?[0])).abs() < 1e-6);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn normal_(&self, mean: f64, std: f64) -> Result<()> {
        random::with_global(|g| self.normal_with_(mean, std, g))
    }

    /// `x.normal_(mean, std, generator=generator)`.
    pub fn normal_with_(&self, mean: f64, std: f64, generator: &mut Generator) -> Result<()> {
        self.copy_(&Tensor::try_normal_with(
            self.shape().clone(),
            mean,
            std,
            self.dtype(),
            generator,
        )?)
    }

    /// `x.random_(from, to)`: fills this tensor with integers uniform in `[from, to)` from the default
    /// generator.
    pub fn random_(&self, from: i64, to: i64) -> Result<()> {
        random::with_global(|g| self.random_with_(from, to, g))
    }

    /// `x.random_(from, to, generator=generator)`.
    pub fn random_with_(&self, from: i64, to: i64, generator: &mut Generator) -> Result<()> {
        self.copy_(&Tensor::randint_with(
            from,
            to,
            self.shape().clone(),
            self.dtype(),
            generator,
        )?)
    }
}

/// A CPU tensor of `shape` holding what `draw` gives for it.
fn drawn(shape: Shape, draw: impl FnOnce(&Shape) -> Result<CpuData>) -> Result<Tensor> {
    let data = draw(&shape)?;
    Ok(Tensor::from_cpu(data, shape))
}

/// An empty `Vec` with room for the elements of `shape`, or [`Error::Allocation`] (which `dtype` names).
fn room<T>(op: &'static str, shape: &Shape, dtype: DType) -> Result<Vec<T>> {
    let n = allocatable(op, shape, dtype, std::mem::size_of::<T>())?;
    let mut values = Vec::new();
    values.try_reserve_exact(n).map_err(|_| refused(op, shape, dtype))?;
    Ok(values)
}

/// Samples uniform in `[from, to)`, as `torch.empty(shape, dtype=dtype).uniform_(from, to)`: 53 random bits
/// per `f64`, 24 per `f32`, 11 per `f16` and 8 per `bf16`, scaled in the dtype's own arithmetic.
fn uniform(g: &mut Generator, shape: &Shape, dtype: DType, from: f64, to: f64) -> Result<CpuData> {
    let (op, n) = ("uniform_", shape.numel());
    if from > to {
        return Err(Error::invalid(
            "uniform_",
            format!(
                "uniform_ expects to return a [from, to) range, but found from={} > to={}",
                cpp_double(from),
                cpp_double(to)
            ),
        ));
    }
    Ok(match dtype {
        DType::F64 => CpuData::F64(filled(op, shape, dtype, |v| fill::uniform_f64(g, v, n, from, to))?),
        DType::F32 => CpuData::F32(filled(op, shape, dtype, |v| {
            fill::uniform_f32(g, v, n, from as f32, to as f32)
        })?),
        DType::F16 => CpuData::F16(filled(op, shape, dtype, |v| fill::uniform_reduced(g, v, n, from, to))?),
        DType::BF16 => CpuData::BF16(filled(op, shape, dtype, |v| fill::uniform_reduced(g, v, n, from, to))?),
        other => return Err(not_implemented(op, "uniform_kernel_cpu", other)),
    })
}

/// Samples of `N(mean, std²)`, as `torch.empty(shape, dtype=dtype).normal_(mean, std)`: for 16 or more
/// elements PyTorch's fill (uniforms in the dtype, then Box-Muller on blocks of 16, the last block redrawn
/// when 16 does not divide the count), for fewer the scalar sampler ([`Generator::normal`]) cast.
fn normal(g: &mut Generator, shape: &Shape, dtype: DType, mean: f64, std: f64) -> Result<CpuData> {
    let (op, n) = ("normal_", shape.numel());
    if std.is_nan() || std < 0.0 {
        return Err(Error::invalid(
            "normal_",
            format!("normal expects std >= 0.0, but found std {std}"),
        ));
    }
    if !dtype.is_floating_point() {
        return Err(not_implemented(op, "normal_kernel_cpu", dtype));
    }
    if n < 16 {
        let values = filled(op, shape, dtype, |v| {
            v.extend((0..n).map(|_| g.normal().mul_add(std, mean)))
        })?;
        return Ok(cast_data(&CpuData::F64(values), dtype));
    }
    // PyTorch casts the mean and deviation to the dtype (a half type through `float`).
    let reduced = |v: f64| v as f32;
    Ok(match dtype {
        DType::F64 => CpuData::F64(filled(op, shape, dtype, |v| fill::normal_f64(g, v, n, mean, std))?),
        DType::F32 => CpuData::F32(filled(op, shape, dtype, |v| {
            fill::normal_f32(g, v, n, mean as f32, std as f32)
        })?),
        DType::F16 => {
            let (mean, std) = (f16::from_f32(reduced(mean)), f16::from_f32(reduced(std)));
            CpuData::F16(filled(op, shape, dtype, |v| fill::normal_reduced(g, v, n, mean, std))?)
        }
        _ => {
            let (mean, std) = (bf16::from_f32(reduced(mean)), bf16::from_f32(reduced(std)));
            CpuData::BF16(filled(op, shape, dtype, |v| fill::normal_reduced(g, v, n, mean, std))?)
        }
    })
}

/// Integers uniform in `[from, to)`, as `torch.empty(shape, dtype=dtype).random_(from, to)` (and
/// `torch.randint`), the bounds checked against what `dtype` holds.
fn random_from_to(g: &mut Generator, shape: &Shape, dtype: DType, from: i64, to: i64) -> Result<CpuData> {
    let n = shape.numel();
    if from >= to {
        return Err(Error::invalid(
            "random_",
            format!("random_ expects 'from' to be less than 'to', but got from={from} >= to={to}"),
        ));
    }
    if let Some((low, high)) = integer_range(dtype)
        && (from < low || to - 1 > high)
    {
        return Err(Error::invalid(
            "random_",
            format!(
                "random_ expects 'from' and 'to' - 1 to be within [{low}, {high}] for dtype {}, but got from={from} \
                 and to={to}",
                dtype.name()
            ),
        ));
    }
    let range = to.wrapping_sub(from) as u64;
    let wide = range >= 1 << 32 && matches!(dtype, DType::I64 | DType::F64 | DType::F32 | DType::BF16);
    let values = filled("random_", shape, dtype, |v| fill::integers(g, v, n, from, range, wide))?;
    Ok(cast_data(&CpuData::I64(values), dtype))
}

/// What `fill` appends to a `Vec` with room for the elements of `shape` ([`room`]).
pub(crate) fn filled<T>(
    op: &'static str,
    shape: &Shape,
    dtype: DType,
    fill: impl FnOnce(&mut Vec<T>),
) -> Result<Vec<T>> {
    let mut values = room(op, shape, dtype)?;
    fill(&mut values);
    Ok(values)
}

/// The values an integer (or bool) dtype holds; `None` for a float dtype.
fn integer_range(dtype: DType) -> Option<(i64, i64)> {
    match dtype {
        DType::I64 => Some((i64::MIN, i64::MAX)),
        DType::I32 => Some((i32::MIN.into(), i32::MAX.into())),
        DType::U8 => Some((0, 255)),
        DType::Bool => Some((0, 1)),
        _ => None,
    }
}

/// PyTorch's error for a draw its `kernel` does not define for `dtype` (named as its C++ scalar type).
pub(crate) fn not_implemented(op: &'static str, kernel: &str, dtype: DType) -> Error {
    Error::invalid(
        op,
        format!("\"{kernel}\" not implemented for '{}'", dtype.scalar_type_name()),
    )
}

impl Tensor {
    /// `x.bernoulli_(p)`: fills this tensor with ones where a draw of probability `p` succeeds and zeros
    /// elsewhere, from the default generator, as PyTorch's x86-64 wheels draw it (MKL's MCG31 stream seeded
    /// by one 32-bit draw).
    ///
    /// ```
    /// let x = nn::Tensor::zeros([6], nn::DType::F32);
    /// nn::manual_seed(4);
    /// x.bernoulli_(0.3)?;
    /// // torch.manual_seed(4); torch.empty(6).bernoulli_(0.3)
    /// assert_eq!(x.to_vec::<f32>()?, vec![0.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
    /// # Ok::<(), nn::Error>(())
    /// ```
    pub fn bernoulli_(&self, p: f64) -> Result<()> {
        random::with_global(|g| self.bernoulli_with_(p, g))
    }

    /// `x.bernoulli_(p, generator=generator)`.
    pub fn bernoulli_with_(&self, p: f64, generator: &mut Generator) -> Result<()> {
        let values = bernoulli_scalar(generator, self.shape(), self.dtype(), p)?;
        self.copy_(&Tensor::from_cpu(values, self.shape().clone()))
    }

    /// `torch.bernoulli(p)`: where this tensor holds probabilities, a tensor of its shape and dtype with ones
    /// where a draw of that element's probability succeeds, from the default generator (one uniform per
    /// element, in the probabilities' precision: 53 bits for `f64`, 24 otherwise).
    pub fn bernoulli(&self) -> Result<Tensor> {
        random::with_global(|g| self.bernoulli_with(g))
    }

    /// `torch.bernoulli(p, generator=generator)`.
    pub fn bernoulli_with(&self, generator: &mut Generator) -> Result<Tensor> {
        let op = "bernoulli";
        if !self.dtype().is_floating_point() {
            return Err(Error::invalid(
                op,
                format!(
                    "bernoulli expects a floating-point tensor of probabilities, got {}",
                    self.dtype().name()
                ),
            ));
        }
        let p = self
            .to_device(crate::Device::Cpu)?
            .to_dtype(DType::F64)?
            .to_vec::<f64>()?;
        if let Some(bad) = p.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return Err(Error::invalid(
                op,
                format!("Expected p_in >= 0 && p_in <= 1 to be true, but got {bad}"),
            ));
        }
        let wide = self.dtype() == DType::F64;
        let drawn: Vec<bool> = p
            .iter()
            .map(|&p| {
                if wide {
                    generator.unit() < p
                } else {
                    fill::unit_f32(generator.random()) < p as f32
                }
            })
            .collect();
        let values = cast_data(&CpuData::Bool(drawn), self.dtype());
        Tensor::from_cpu(values, self.shape().clone()).to_device(self.device())
    }
}

/// Bernoulli draws of probability `p` for each element of `shape`, in `dtype` (ones and zeros), as
/// `bernoulli_(p)` draws them.
pub(crate) fn bernoulli_scalar(g: &mut Generator, shape: &Shape, dtype: DType, p: f64) -> Result<CpuData> {
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::invalid(
            "bernoulli_",
            format!("bernoulli_ expects p to be in [0, 1], but got p={p}"),
        ));
    }
    let drawn = filled("bernoulli_", shape, dtype, |v| {
        random::mcg31::bernoulli(g, v, shape.numel(), p)
    })?;
    Ok(cast_data(&CpuData::Bool(drawn), dtype))
}
