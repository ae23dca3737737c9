//! The one table of element-wise activations.
//!
//! Each entry is a layer (PyTorch's class name, its constants with their defaults, how it treats `inplace`
//! and how it prints them) and the formula it runs (the [`Activation`](super::Activation) variant, PyTorch's
//! function name, and the formula type in `kernels`, which holds its host and device code side by side). The
//! op layer generates the `Activation` enum and its dispatch from it; the layers generate the modules. Adding
//! an activation is its formula in `kernels/src/activation/` plus one entry here.
//!
//! An entry reads
//! `Layer { constant = default, … } inplace-mode repr-style [refuse (condition, "message")] [via function]
//! => Variant name name_ Formula [[a, b]];`
//! - the constants (absent: no braces) are the constructor's arguments and the variant's fields, and the
//!   formula's `a` and `b` in order unless the entry computes those from them (`Formula[a, b]`, expressions of
//!   the constants); a constant without a default makes the layer have no `Default`;
//! - inplace-mode: `inplace` (a constructor argument, printed as `inplace=True`), `silent_inplace` (an argument
//!   PyTorch does not print), or `no_inplace`;
//! - repr-style: `named` (`beta=1.0, threshold=20.0`) or `bare` (`0.5`);
//! - `refuse`: a condition on the constants under which the constructor refuses them (it then returns a
//!   `Result`), with the message, formatted with the constants;
//! - `via`: a layer whose forward depends on the mode calls `function(x, constants…, training, inplace)` (a
//!   `Result<Tensor>`, `x`'s handle when in place) instead of running the formula; the formula is then what
//!   the `Activation` variant runs.
//!
//! Formulas no layer of its own runs (GELU's two, chosen by `GELU`'s `approximate`) are listed under
//! `functions`.

/// Calls `$generate!` with every entry of the table (see the module's documentation for the grammar).
macro_rules! activation_table {
    ($generate:ident) => {
        $generate! {
            layers {
                /// PyTorch's `nn.ReLU(inplace=False)`: `max(x, 0)`.
                ///
                /// ```
                /// use nn::prelude::*;
                /// assert_eq!(ReLU::new(true).to_string(), "ReLU(inplace=True)");
                /// let y = ReLU::new(false).forward(Tensor::from_vec(vec![-1.0f32, 2.0], [2]).unwrap()).unwrap();
                /// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 2.0]);
                /// ```
                ReLU inplace named => Relu relu relu_ Relu;
                /// PyTorch's `nn.ReLU6(inplace=False)`: `min(max(x, 0), 6)`.
                ReLU6 inplace named => Relu6 relu6 relu6_ Relu6;
                /// PyTorch's `nn.LeakyReLU(negative_slope=0.01, inplace=False)`: `x` if `x > 0` else
                /// `negative_slope * x`.
                LeakyReLU { negative_slope = 0.01 } inplace named => LeakyRelu leaky_relu leaky_relu_ LeakyRelu;
                /// PyTorch's `nn.Threshold(threshold, value, inplace=False)`: `x` if `x > threshold` else `value`.
                ///
                /// ```
                /// use nn::prelude::*;
                /// assert_eq!(Threshold::new(0.1, 20.0, false).to_string(), "Threshold(threshold=0.1, value=20.0)");
                /// ```
                Threshold { threshold, value } inplace named => Threshold threshold threshold_ Threshold;
                /// PyTorch's `nn.Hardtanh(min_val=-1.0, max_val=1.0, inplace=False)`: `x` clamped to
                /// `[min_val, max_val]`.
                Hardtanh { min_val = -1.0, max_val = 1.0 } inplace named
                    refuse (min_val.partial_cmp(&max_val) != Some(std::cmp::Ordering::Less),
                        "min_val {min_val} exceeds max_val {max_val}, equals it, or one is NaN (max_val must be greater)")
                    => Hardtanh hardtanh hardtanh_ Hardtanh;
                /// PyTorch's `nn.ELU(alpha=1.0, inplace=False)`: `x` if `x > 0` else `alpha * (e^x - 1)`.
                ELU { alpha = 1.0 } inplace named => Elu elu elu_ Elu;
                /// PyTorch's `nn.SELU(inplace=False)`: `scale * elu(x, alpha)` with SELU's constants.
                SELU inplace named => Selu selu selu_ Selu;
                /// PyTorch's `nn.CELU(alpha=1.0, inplace=False)`: `max(0, x) + min(0, alpha * (e^(x / alpha) - 1))`.
                CELU { alpha = 1.0 } inplace named => Celu celu celu_ Celu;
                /// PyTorch's `nn.SiLU(inplace=False)`: `x * sigmoid(x)`.
                SiLU inplace named => Silu silu silu_ Silu;
                /// PyTorch's `nn.Mish(inplace=False)`: `x * tanh(softplus(x))`.
                Mish inplace named => Mish mish mish_ Mish;
                /// PyTorch's `nn.Softplus(beta=1.0, threshold=20.0)`: `log(1 + e^(beta x)) / beta`, linear above
                /// `beta * x > threshold`.
                Softplus { beta = 1.0, threshold = 20.0 } no_inplace named => Softplus softplus softplus_ Softplus;
                /// PyTorch's `nn.Softsign()`: `x / (1 + |x|)`.
                Softsign no_inplace named => Softsign softsign softsign_ Softsign;
                /// PyTorch's `nn.Sigmoid()`: `1 / (1 + e^-x)`.
                Sigmoid no_inplace named => Sigmoid sigmoid sigmoid_ Sigmoid;
                /// PyTorch's `nn.Tanh()`.
                Tanh no_inplace named => Tanh tanh tanh_ Tanh;
                /// PyTorch's `nn.Hardsigmoid(inplace=False)`: `clamp(x / 6 + 1/2, 0, 1)`.
                Hardsigmoid silent_inplace named => Hardsigmoid hardsigmoid hardsigmoid_ Hardsigmoid;
                /// PyTorch's `nn.Hardswish(inplace=False)`: `x * clamp(x + 3, 0, 6) / 6`.
                Hardswish silent_inplace named => Hardswish hardswish hardswish_ Hardswish;
                /// PyTorch's `nn.Tanhshrink()`: `x - tanh(x)`.
                Tanhshrink no_inplace named => Tanhshrink tanhshrink tanhshrink_ Tanhshrink;
                /// PyTorch's `nn.Hardshrink(lambd=0.5)`: `0` on `[-lambd, lambd]`, else `x`.
                Hardshrink { lambd = 0.5 } no_inplace bare => Hardshrink hardshrink hardshrink_ Hardshrink;
                /// PyTorch's `nn.Softshrink(lambd=0.5)`: `x ∓ lambd` outside `[-lambd, lambd]`, else `0`.
                Softshrink { lambd = 0.5 } no_inplace bare => Softshrink softshrink softshrink_ Softshrink;
                /// PyTorch's `nn.LogSigmoid()`: `log(sigmoid(x))`.
                LogSigmoid no_inplace named => LogSigmoid logsigmoid logsigmoid_ LogSigmoid;
                /// PyTorch's `nn.RReLU(lower=1/8, upper=1/3, inplace=False)`: `x` where `x > 0`, `a · x` elsewhere,
                /// with a slope `a` drawn from `U(lower, upper)` for each element in training and
                /// `a = (lower + upper) / 2` in evaluation ([`rrelu`](crate::functional::rrelu)). Training runs in
                /// `f16` too, which PyTorch 2.5.1's CPU refuses.
                ///
                /// ```
                /// use nn::prelude::*;
                /// let mut m = RReLU::default();
                /// assert_eq!(m.to_string(), "RReLU(lower=0.125, upper=0.3333333333333333)");
                /// m.eval();
                /// let y = m.forward(Tensor::from_vec(vec![-1.0f64, 2.0], [2]).unwrap()).unwrap();
                /// assert_eq!(y.to_vec::<f64>().unwrap(), vec![-(0.125 + 1.0 / 3.0) / 2.0, 2.0]);
                /// ```
                RReLU { lower = 1.0 / 8.0, upper = 1.0 / 3.0 } inplace named via crate::ops::prelu::rrelu
                    => Rrelu rrelu rrelu_ LeakyRelu[(lower + upper) / 2.0];
            }
            functions {
                /// `x * Φ(x)` with the exact normal CDF (`erf`): [`GELU`](crate::layers::GELU)`("none")`.
                Gelu "gelu" Gelu;
                /// GELU's `tanh` approximation: [`GELU`](crate::layers::GELU)`("tanh")`.
                GeluTanh "gelu_tanh" GeluTanh;
            }
        }
    };
}
pub(crate) use activation_table;

/// The constants of a formula as its `[a, b]`: those the entry computes (`[…]` first), else the layer's own;
/// the first two, zeros where there are fewer.
macro_rules! formula_constants {
    ([$($computed:expr),+] [$($constant:expr),*]) => {
        formula_constants!($($computed),+)
    };
    ([] [$($constant:expr),*]) => {
        formula_constants!($($constant),*)
    };
    () => {
        [0.0, 0.0]
    };
    ($a:expr) => {
        [$a, 0.0]
    };
    ($a:expr, $b:expr) => {
        [$a, $b]
    };
}
pub(crate) use formula_constants;
