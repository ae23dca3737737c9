//! Parameter initialisation, as `torch.nn.init`, drawing from the global generator ([`crate::manual_seed`]).

use crate::random;
use crate::{DType, Error, Result, Tensor};

/// `(fan_in, fan_out)` of a weight of shape `(out, in, *kernel)`, as PyTorch computes them.
///
/// ```
/// assert_eq!(nn::init::fans(&[16, 8, 3, 3]).unwrap(), (72, 144));
/// ```
pub fn fans(shape: &[usize]) -> Result<(usize, usize)> {
    if shape.len() < 2 {
        return Err(Error::invalid(
            "init",
            format!("fan in and fan out need a tensor of 2 or more dimensions; got shape {shape:?}"),
        ));
    }
    let receptive: usize = shape[2..].iter().product();
    Ok((shape[1] * receptive, shape[0] * receptive))
}

/// Fills `t` with samples uniform in `[low, high)`.
pub fn uniform_(t: &Tensor, low: f64, high: f64) -> Result<()> {
    t.uniform_(low, high)
}

/// Fills `t` with samples of `N(mean, std²)`.
pub fn normal_(t: &Tensor, mean: f64, std: f64) -> Result<()> {
    t.normal_(mean, std)
}

/// Fills `t` with `value`.
pub fn constant_(t: &Tensor, value: f64) -> Result<()> {
    t.fill_(value)
}

/// Fills `t` with zeros.
pub fn zeros_(t: &Tensor) -> Result<()> {
    t.fill_(0.0)
}

/// Fills `t` with ones.
pub fn ones_(t: &Tensor) -> Result<()> {
    t.fill_(1.0)
}

/// `kaiming_uniform_(t, a, mode='fan_in', nonlinearity='leaky_relu')`: uniform in `±√3·gain / √fan_in` with
/// `gain = √(2 / (1 + a²))`, computed as PyTorch computes it: PyTorch's default for `Linear` and `Conv2d`
/// weights (`a = √5`). A zero-element tensor is left as it is.
pub fn kaiming_uniform_(t: &Tensor, a: f64) -> Result<()> {
    kaiming_uniform_with(t, a, FanMode::FanIn, "leaky_relu")
}

/// `xavier_uniform_(t, gain)`: uniform in `±√3·gain·√(2 / (fan_in + fan_out))`.
pub fn xavier_uniform_(t: &Tensor, gain: f64) -> Result<()> {
    let std = xavier_std(t, gain, "xavier_uniform_")?;
    let bound = 3f64.sqrt() * std;
    uniform_(t, -bound, bound)
}

/// PyTorch's bias initialisation for `Linear` and `Conv2d`: uniform in `±1 / sqrt(fan_in)` (0 when empty).
pub fn bias_uniform_(bias: &Tensor, fan_in: usize) -> Result<()> {
    let bound = if fan_in > 0 { 1.0 / (fan_in as f64).sqrt() } else { 0.0 };
    uniform_(bias, -bound, bound)
}

/// Which fan the Kaiming initialisations scale by: PyTorch's `mode='fan_in'` (the default, preserving the
/// forward pass's variance) or `'fan_out'` (the backward pass's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FanMode {
    /// `'fan_in'`.
    #[default]
    FanIn,
    /// `'fan_out'`.
    FanOut,
}

/// PyTorch's `calculate_gain(nonlinearity, param)`: 1 for `linear`, the `conv*` and `sigmoid`, 5/3 for `tanh`,
/// √2 for `relu`, √(2 / (1 + slope²)) for `leaky_relu` (slope `param`, default 0.01), 3/4 for `selu`; any other
/// name is an error.
///
/// ```
/// assert_eq!(nn::init::calculate_gain("tanh", None).unwrap(), 5.0 / 3.0);
/// assert_eq!(nn::init::calculate_gain("relu", None).unwrap(), 2f64.sqrt());
/// ```
pub fn calculate_gain(nonlinearity: &str, param: Option<f64>) -> Result<f64> {
    match nonlinearity {
        "linear" | "conv1d" | "conv2d" | "conv3d" | "conv_transpose1d" | "conv_transpose2d" | "conv_transpose3d"
        | "sigmoid" => Ok(1.0),
        "tanh" => Ok(5.0 / 3.0),
        "relu" => Ok(2f64.sqrt()),
        "leaky_relu" => {
            let slope = param.unwrap_or(0.01);
            Ok((2.0 / (1.0 + slope * slope)).sqrt())
        }
        "selu" => Ok(0.75),
        other => Err(Error::invalid(
            "calculate_gain",
            format!("unsupported nonlinearity {other:?}"),
        )),
    }
}

/// The fan `mode` picks of `t`'s shape.
fn fan(t: &Tensor, mode: FanMode) -> Result<usize> {
    let (fan_in, fan_out) = fans(t.shape())?;
    Ok(match mode {
        FanMode::FanIn => fan_in,
        FanMode::FanOut => fan_out,
    })
}

/// `kaiming_normal_(t, a, mode, nonlinearity)`: `N(0, std²)` with `std = gain / √fan` (`gain` from
/// [`calculate_gain`] with `a` as the leaky slope); a zero-element tensor is left as it is, as in PyTorch.
pub fn kaiming_normal_(t: &Tensor, a: f64, mode: FanMode, nonlinearity: &str) -> Result<()> {
    let fan = fan(t, mode)?;
    if t.numel() == 0 || fan == 0 {
        // PyTorch: "Initializing zero-element tensors is a no-op".
        return Ok(());
    }
    let std = calculate_gain(nonlinearity, Some(a))? / (fan as f64).sqrt();
    normal_(t, 0.0, std)
}

/// `kaiming_uniform_` with PyTorch's other arguments: uniform in `±√3·gain / √fan`.
pub fn kaiming_uniform_with(t: &Tensor, a: f64, mode: FanMode, nonlinearity: &str) -> Result<()> {
    let fan = fan(t, mode)?;
    if t.numel() == 0 || fan == 0 {
        // PyTorch: "Initializing zero-element tensors is a no-op".
        return Ok(());
    }
    let std = calculate_gain(nonlinearity, Some(a))? / (fan as f64).sqrt();
    let bound = 3f64.sqrt() * std;
    uniform_(t, -bound, bound)
}

/// `xavier_normal_(t, gain)`: `N(0, std²)` with `std = gain·√(2 / (fan_in + fan_out))`.
pub fn xavier_normal_(t: &Tensor, gain: f64) -> Result<()> {
    normal_(t, 0.0, xavier_std(t, gain, "xavier_normal_")?)
}

/// `gain·√(2 / (fan_in + fan_out))`, or an error where both fans are 0 (PyTorch divides by zero).
fn xavier_std(t: &Tensor, gain: f64, op: &'static str) -> Result<f64> {
    let (fan_in, fan_out) = fans(t.shape())?;
    if fan_in + fan_out == 0 {
        return Err(Error::invalid(
            op,
            format!(
                "float division by zero: fan_in + fan_out is 0 for shape {:?}",
                t.shape().dims()
            ),
        ));
    }
    Ok(gain * (2.0 / (fan_in + fan_out) as f64).sqrt())
}

/// `trunc_normal_(t, mean, std, a, b)`: `N(mean, std²)` restricted to `[a, b]`, by PyTorch's inverse CDF: a
/// uniform draw in `t`'s dtype between the bounds' CDF values (mapped to `[-1, 1]`), then `erfinv`, scaled,
/// shifted and clamped in the dtype. The uniforms are PyTorch's bit for bit; PyTorch's `erfinv` is MKL's,
/// within a unit in the last place of nn's (nearly always equal), so the samples are PyTorch's to the dtype's
/// rounding. As PyTorch: bounds far in a tail give the bound, `a >= b` is `uniform_`'s error, `std == 0` a
/// division by zero.
///
/// ```
/// let t = nn::Tensor::zeros([1000], nn::DType::F32);
/// nn::manual_seed(0);
/// nn::init::trunc_normal_(&t, 0.0, 1.0, -2.0, 2.0)?;
/// assert!(t.to_vec::<f32>()?.iter().all(|v| (-2.0..=2.0).contains(v)));
/// # Ok::<(), nn::Error>(())
/// ```
pub fn trunc_normal_(t: &Tensor, mean: f64, std: f64, a: f64, b: f64) -> Result<()> {
    if std == 0.0 {
        return Err(Error::invalid("trunc_normal_", "float division by zero"));
    }
    let norm_cdf = |x: f64| (1.0 + libm::erf(x / std::f64::consts::SQRT_2)) / 2.0;
    let (low, high) = (norm_cdf((a - mean) / std), norm_cdf((b - mean) / std));
    let (from, to, dtype) = (2.0 * low - 1.0, 2.0 * high - 1.0, t.dtype());
    let u = random::with_global(|g| Tensor::try_uniform_with(t.shape().clone(), from, to, dtype, g))?;
    let scale = std * std::f64::consts::SQRT_2;
    let values: Vec<f64> = u
        .to_vec_f64()?
        .into_iter()
        .map(|y| {
            // As PyTorch's kernels take their scalars: `mul`'s in the computing type (`f32` for the half
            // types), `add`'s and `clamp`'s rounded to the dtype; each result rounded to the dtype.
            let scale = if dtype == DType::F64 {
                scale
            } else {
                f64::from(scale as f32)
            };
            let [mean, a, b] = [mean, a, b].map(|v| dtype.round_f64(v));
            let x = dtype.round_f64(erfinv(y));
            let shifted = dtype.round_f64(dtype.round_f64(x * scale) + mean);
            dtype.round_f64(shifted.clamp(a, b))
        })
        .collect();
    t.copy_(&Tensor::from_vec(values, t.shape().clone())?.to_dtype(dtype)?)
}

/// The inverse error function, to within a unit in the last place of `f64`: Giles' single-precision
/// approximation, then Newton steps on `erf` (on `erfc` for `|y| > 0.5`, where `1 - |y|` is exact).
fn erfinv(y: f64) -> f64 {
    if y.is_nan() || y.abs() > 1.0 {
        return f64::NAN;
    }
    if y.abs() == 1.0 {
        return f64::INFINITY.copysign(y);
    }
    let w = -((1.0 - y) * (1.0 + y)).ln();
    let mut x = if w < 5.0 {
        let w = w - 2.5;
        let p = [
            2.810_226_36e-08,
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ];
        p.iter().fold(0.0, |acc, c| acc * w + c) * y
    } else {
        let w = w.sqrt() - 3.0;
        let p = [
            -0.000_200_214_257,
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ];
        p.iter().fold(0.0, |acc, c| acc * w + c) * y
    };
    let slope = std::f64::consts::FRAC_2_SQRT_PI;
    let tail = 1.0 - y.abs();
    for _ in 0..3 {
        let step = if y.abs() > 0.5 {
            // erf(x) - y through erfc, exact in the tail: (1 - |y|) - erfc(|x|), with y's sign.
            let step = tail - libm::erfc(x.abs());
            if y < 0.0 { -step } else { step }
        } else {
            libm::erf(x) - y
        };
        x -= step / (slope * (-x * x).exp());
    }
    x
}

/// `orthogonal_(t, gain)`: a (semi-)orthogonal matrix of `t`'s shape flattened to `(rows, rest)`, times `gain`:
/// the Q of the QR decomposition of a standard normal matrix, with R's diagonal made positive (so Q is
/// uniformly distributed), as PyTorch does. The normal matrix is PyTorch's (`normal_` of `(rows, rest)` in
/// `t`'s dtype); the decomposition is Gram-Schmidt in `f64` where PyTorch's is LAPACK's in the dtype, so the
/// result agrees with PyTorch's to the dtype's rounding, not bit for bit. Needs 2 or more dimensions.
pub fn orthogonal_(t: &Tensor, gain: f64) -> Result<()> {
    let dims = t.shape().dims();
    if dims.len() < 2 {
        return Err(Error::invalid(
            "orthogonal_",
            "only tensors with 2 or more dimensions are supported",
        ));
    }
    if t.numel() == 0 {
        return Ok(());
    }
    let rows = dims[0];
    let cols = t.numel() / rows;
    let normal =
        random::with_global(|g| Tensor::try_normal_with([rows, cols], 0.0, 1.0, t.dtype(), g))?.to_vec_f64()?;
    // Orthonormalise the columns of the tall matrix (rows ≥ cols, else of its transpose) by modified
    // Gram-Schmidt in f64: its R has a positive diagonal, which is PyTorch's sign correction.
    let (m, n) = if rows < cols { (cols, rows) } else { (rows, cols) };
    let at = |i: usize, j: usize| {
        if rows < cols {
            normal[j * cols + i]
        } else {
            normal[i * cols + j]
        }
    };
    let mut q: Vec<Vec<f64>> = (0..n).map(|j| (0..m).map(|i| at(i, j)).collect()).collect();
    for j in 0..n {
        for k in 0..j {
            let (done, rest) = q.split_at_mut(j);
            let (basis, column) = (&done[k], &mut rest[0]);
            let dot: f64 = basis.iter().zip(column.iter()).map(|(a, b)| a * b).sum();
            for (c, b) in column.iter_mut().zip(basis) {
                *c -= dot * b;
            }
        }
        let norm = q[j].iter().map(|v| v * v).sum::<f64>().sqrt();
        for v in &mut q[j] {
            *v /= norm;
        }
    }
    let mut out = vec![0.0; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            out[r * cols + c] = gain * if rows < cols { q[r][c] } else { q[c][r] };
        }
    }
    t.copy_(&Tensor::from_vec(out, t.shape().clone())?.to_dtype(t.dtype())?)
}
