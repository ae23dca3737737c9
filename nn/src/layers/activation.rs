//! The element-wise activation layers, each PyTorch's module with its constructor arguments and `repr`.
//!
//! Each layer holds its constants and runs one [`Activation`] formula; the `inplace` ones change their input
//! tensor in place (seen through every handle to it) and return it.

use crate::functional::Activation;
use crate::module::{ExtraRepr, py_float};
use crate::{Error, Forward, Module, Result, Tensor};

/// Runs `act` on `x`, in place when `inplace`.
fn run(act: Activation, x: Tensor, inplace: bool) -> Result<Tensor> {
    if inplace {
        act.forward_(&x)?;
        Ok(x)
    } else {
        act.forward(&x)
    }
}

/// [`run`] on a borrowed input: in place, the caller's tensor is changed and a handle to it returned.
fn run_ref(act: Activation, x: &Tensor, inplace: bool) -> Result<Tensor> {
    if inplace {
        act.forward_(x)?;
        Ok(x.clone())
    } else {
        act.forward(x)
    }
}

/// `inplace=True` alone, or nothing (PyTorch's `ReLU`, `SELU`, `SiLU`, `Mish`, `ReLU6`).
fn inplace_only(inplace: bool) -> String {
    if inplace { "inplace=True".into() } else { String::new() }
}

/// `, inplace=True` after other arguments, or nothing.
fn inplace_suffix(inplace: bool) -> &'static str {
    if inplace { ", inplace=True" } else { "" }
}

/// Layers with no constants (and possibly `inplace`), which print `Name()` or `Name(inplace=True)`.
macro_rules! simple_activation {
    ($(#[$doc:meta])* $name:ident, $printed:literal, $act:expr, inplace) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        #[module(name = $printed, extra_repr)]
        pub struct $name {
            /// Whether to change the input in place.
            pub inplace: bool,
            training: bool,
            hooks: crate::Hooks,
        }
        impl $name {
            /// The layer; `inplace` changes the input tensor and returns it.
            pub fn new(inplace: bool) -> $name {
                $name { inplace, training: true, hooks: crate::Hooks::new() }
            }
        }
        impl Default for $name {
            fn default() -> Self {
                $name::new(false)
            }
        }
        impl ExtraRepr for $name {
            fn extra_repr(&self) -> String {
                inplace_only(self.inplace)
            }
        }
        impl Forward for $name {
            type Input = Tensor;
            type Output = Tensor;
            fn forward(&self, x: Tensor) -> Result<Tensor> {
                run($act, x, self.inplace)
            }
            fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
                run_ref($act, x, self.inplace)
            }
        }
    };
    ($(#[$doc:meta])* $name:ident, $printed:literal, $act:expr) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        #[module(name = $printed)]
        pub struct $name {
            training: bool,
            hooks: crate::Hooks,
        }
        impl $name {
            /// The layer.
            pub fn new() -> $name {
                $name { training: true, hooks: crate::Hooks::new() }
            }
        }
        impl Default for $name {
            fn default() -> Self {
                $name::new()
            }
        }
        impl Forward for $name {
            type Input = Tensor;
            type Output = Tensor;
            fn forward(&self, x: Tensor) -> Result<Tensor> {
                self.forward_ref(&x)
            }
            fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
                $act.forward(x)
            }
        }
    };
}

simple_activation!(
    /// PyTorch's `nn.ReLU(inplace=False)`: `max(x, 0)`.
    ///
    /// ```
    /// use nn::prelude::*;
    /// assert_eq!(ReLU::new(true).to_string(), "ReLU(inplace=True)");
    /// let y = ReLU::new(false).forward(Tensor::from_vec(vec![-1.0f32, 2.0], [2]).unwrap()).unwrap();
    /// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 2.0]);
    /// ```
    ReLU, "ReLU", Activation::Relu, inplace
);
simple_activation!(
    /// PyTorch's `nn.ReLU6(inplace=False)`: `min(max(x, 0), 6)`.
    ReLU6, "ReLU6", Activation::Relu6, inplace
);
simple_activation!(
    /// PyTorch's `nn.SELU(inplace=False)`.
    SELU, "SELU", Activation::Selu, inplace
);
simple_activation!(
    /// PyTorch's `nn.SiLU(inplace=False)`: `x * sigmoid(x)`.
    SiLU, "SiLU", Activation::Silu, inplace
);
simple_activation!(
    /// PyTorch's `nn.Mish(inplace=False)`: `x * tanh(softplus(x))`.
    Mish, "Mish", Activation::Mish, inplace
);
simple_activation!(
    /// PyTorch's `nn.Sigmoid()`.
    Sigmoid, "Sigmoid", Activation::Sigmoid
);
simple_activation!(
    /// PyTorch's `nn.Tanh()`.
    Tanh, "Tanh", Activation::Tanh
);
simple_activation!(
    /// PyTorch's `nn.Softsign()`: `x / (1 + |x|)`.
    Softsign, "Softsign", Activation::Softsign
);
simple_activation!(
    /// PyTorch's `nn.Tanhshrink()`: `x - tanh(x)`.
    Tanhshrink, "Tanhshrink", Activation::Tanhshrink
);
simple_activation!(
    /// PyTorch's `nn.LogSigmoid()`: `log(sigmoid(x))`.
    LogSigmoid, "LogSigmoid", Activation::LogSigmoid
);

/// Layers whose `inplace` flag PyTorch does not print (`Hardswish`, `Hardsigmoid`).
macro_rules! silent_inplace_activation {
    ($(#[$doc:meta])* $name:ident, $printed:literal, $act:expr) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        #[module(name = $printed)]
        pub struct $name {
            /// Whether to change the input in place (PyTorch does not print it).
            pub inplace: bool,
            training: bool,
            hooks: crate::Hooks,
        }
        impl $name {
            /// The layer; `inplace` changes the input tensor and returns it.
            pub fn new(inplace: bool) -> $name {
                $name { inplace, training: true, hooks: crate::Hooks::new() }
            }
        }
        impl Default for $name {
            fn default() -> Self {
                $name::new(false)
            }
        }
        impl Forward for $name {
            type Input = Tensor;
            type Output = Tensor;
            fn forward(&self, x: Tensor) -> Result<Tensor> {
                run($act, x, self.inplace)
            }
            fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
                run_ref($act, x, self.inplace)
            }
        }
    };
}

silent_inplace_activation!(
    /// PyTorch's `nn.Hardswish(inplace=False)`: `x * clamp(x + 3, 0, 6) / 6`.
    Hardswish, "Hardswish", Activation::Hardswish
);
silent_inplace_activation!(
    /// PyTorch's `nn.Hardsigmoid(inplace=False)`: `clamp(x / 6 + 1/2, 0, 1)`.
    Hardsigmoid, "Hardsigmoid", Activation::Hardsigmoid
);

/// PyTorch's `nn.GELU(approximate='none')`: `x * Φ(x)`, or its `tanh` approximation.
///
/// ```
/// use nn::prelude::*;
/// assert_eq!(GELU::new("tanh").unwrap().to_string(), "GELU(approximate='tanh')");
/// assert!(GELU::new("fast").is_err());
/// ```
#[derive(Module, Clone, Debug)]
#[module(name = "GELU", extra_repr)]
pub struct GELU {
    /// `"none"` (erf) or `"tanh"`.
    pub approximate: String,
    training: bool,
    hooks: crate::Hooks,
}

impl GELU {
    /// `approximate` is `"none"` or `"tanh"`.
    pub fn new(approximate: &str) -> Result<GELU> {
        if approximate != "none" && approximate != "tanh" {
            return Err(Error::invalid(
                "GELU",
                format!("approximate must be 'none' or 'tanh', got {approximate:?}"),
            ));
        }
        Ok(GELU {
            approximate: approximate.to_owned(),
            training: true,
            hooks: crate::Hooks::new(),
        })
    }

    /// The formula this layer runs.
    pub fn activation(&self) -> Activation {
        if self.approximate == "tanh" {
            Activation::GeluTanh
        } else {
            Activation::Gelu
        }
    }
}

impl Default for GELU {
    fn default() -> Self {
        GELU {
            approximate: "none".into(),
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for GELU {
    fn extra_repr(&self) -> String {
        format!("approximate='{}'", self.approximate)
    }
}

impl Forward for GELU {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        self.forward_ref(&x)
    }
    fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
        self.activation().forward(x)
    }
}

/// PyTorch's `nn.LeakyReLU(negative_slope=0.01, inplace=False)`.
#[derive(Module, Clone, Debug)]
#[module(name = "LeakyReLU", extra_repr)]
pub struct LeakyReLU {
    /// Slope for negative inputs.
    pub negative_slope: f64,
    /// Whether to change the input in place.
    pub inplace: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl LeakyReLU {
    /// The layer.
    pub fn new(negative_slope: f64, inplace: bool) -> LeakyReLU {
        LeakyReLU {
            negative_slope,
            inplace,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl Default for LeakyReLU {
    fn default() -> Self {
        LeakyReLU::new(0.01, false)
    }
}

impl ExtraRepr for LeakyReLU {
    fn extra_repr(&self) -> String {
        format!(
            "negative_slope={}{}",
            py_float(self.negative_slope),
            inplace_suffix(self.inplace)
        )
    }
}

impl Forward for LeakyReLU {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        run(
            Activation::LeakyRelu {
                negative_slope: self.negative_slope,
            },
            x,
            self.inplace,
        )
    }
    fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
        run_ref(
            Activation::LeakyRelu {
                negative_slope: self.negative_slope,
            },
            x,
            self.inplace,
        )
    }
}

/// PyTorch's `nn.Threshold(threshold, value, inplace=False)`: `x` if `x > threshold` else `value`.
///
/// ```
/// use nn::prelude::*;
/// assert_eq!(Threshold::new(0.1, 20.0, false).to_string(), "Threshold(threshold=0.1, value=20.0)");
/// ```
#[derive(Module, Clone, Debug)]
#[module(name = "Threshold", extra_repr)]
pub struct Threshold {
    /// The threshold.
    pub threshold: f64,
    /// The value for inputs at or below it.
    pub value: f64,
    /// Whether to change the input in place.
    pub inplace: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl Threshold {
    /// The layer.
    pub fn new(threshold: f64, value: f64, inplace: bool) -> Threshold {
        Threshold {
            threshold,
            value,
            inplace,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for Threshold {
    fn extra_repr(&self) -> String {
        format!(
            "threshold={}, value={}{}",
            py_float(self.threshold),
            py_float(self.value),
            inplace_suffix(self.inplace)
        )
    }
}

impl Forward for Threshold {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        run(
            Activation::Threshold {
                threshold: self.threshold,
                value: self.value,
            },
            x,
            self.inplace,
        )
    }
    fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
        run_ref(
            Activation::Threshold {
                threshold: self.threshold,
                value: self.value,
            },
            x,
            self.inplace,
        )
    }
}

/// PyTorch's `nn.Hardtanh(min_val=-1.0, max_val=1.0, inplace=False)`.
#[derive(Module, Clone, Debug)]
#[module(name = "Hardtanh", extra_repr)]
pub struct Hardtanh {
    /// Lower bound.
    pub min_val: f64,
    /// Upper bound.
    pub max_val: f64,
    /// Whether to change the input in place.
    pub inplace: bool,
    training: bool,
    hooks: crate::Hooks,
}

impl Hardtanh {
    /// The layer; `min_val` must not exceed `max_val`.
    pub fn new(min_val: f64, max_val: f64, inplace: bool) -> Result<Hardtanh> {
        if min_val > max_val {
            return Err(Error::invalid(
                "Hardtanh",
                format!("min_val {min_val} exceeds max_val {max_val}"),
            ));
        }
        Ok(Hardtanh {
            min_val,
            max_val,
            inplace,
            training: true,
            hooks: crate::Hooks::new(),
        })
    }
}

impl Default for Hardtanh {
    fn default() -> Self {
        Hardtanh {
            min_val: -1.0,
            max_val: 1.0,
            inplace: false,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl ExtraRepr for Hardtanh {
    fn extra_repr(&self) -> String {
        format!(
            "min_val={}, max_val={}{}",
            py_float(self.min_val),
            py_float(self.max_val),
            inplace_suffix(self.inplace)
        )
    }
}

impl Forward for Hardtanh {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        run(
            Activation::Hardtanh {
                min_val: self.min_val,
                max_val: self.max_val,
            },
            x,
            self.inplace,
        )
    }
    fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
        run_ref(
            Activation::Hardtanh {
                min_val: self.min_val,
                max_val: self.max_val,
            },
            x,
            self.inplace,
        )
    }
}

/// `ELU` and `CELU`: an `alpha` and `inplace`, printed `alpha=1.0`.
macro_rules! alpha_activation {
    ($(#[$doc:meta])* $name:ident, $printed:literal, $variant:ident) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        #[module(name = $printed, extra_repr)]
        pub struct $name {
            /// Scale of the negative part.
            pub alpha: f64,
            /// Whether to change the input in place.
            pub inplace: bool,
            training: bool,
            hooks: crate::Hooks,
        }
        impl $name {
            /// The layer.
            pub fn new(alpha: f64, inplace: bool) -> $name {
                $name { alpha, inplace, training: true, hooks: crate::Hooks::new() }
            }
        }
        impl Default for $name {
            fn default() -> Self {
                $name::new(1.0, false)
            }
        }
        impl ExtraRepr for $name {
            fn extra_repr(&self) -> String {
                format!("alpha={}{}", py_float(self.alpha), inplace_suffix(self.inplace))
            }
        }
        impl Forward for $name {
            type Input = Tensor;
            type Output = Tensor;
            fn forward(&self, x: Tensor) -> Result<Tensor> {
                run(Activation::$variant { alpha: self.alpha }, x, self.inplace)
            }
            fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
                run_ref(Activation::$variant { alpha: self.alpha }, x, self.inplace)
            }
        }
    };
}

alpha_activation!(
    /// PyTorch's `nn.ELU(alpha=1.0, inplace=False)`.
    ELU, "ELU", Elu
);
alpha_activation!(
    /// PyTorch's `nn.CELU(alpha=1.0, inplace=False)`.
    CELU, "CELU", Celu
);

/// PyTorch's `nn.Softplus(beta=1.0, threshold=20.0)`.
#[derive(Module, Clone, Debug)]
#[module(name = "Softplus", extra_repr)]
pub struct Softplus {
    /// Sharpness.
    pub beta: f64,
    /// Above `beta * x > threshold` the layer is linear.
    pub threshold: f64,
    training: bool,
    hooks: crate::Hooks,
}

impl Softplus {
    /// The layer.
    pub fn new(beta: f64, threshold: f64) -> Softplus {
        Softplus {
            beta,
            threshold,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

impl Default for Softplus {
    fn default() -> Self {
        Softplus::new(1.0, 20.0)
    }
}

impl ExtraRepr for Softplus {
    fn extra_repr(&self) -> String {
        format!("beta={}, threshold={}", py_float(self.beta), py_float(self.threshold))
    }
}

impl Forward for Softplus {
    type Input = Tensor;
    type Output = Tensor;
    fn forward(&self, x: Tensor) -> Result<Tensor> {
        self.forward_ref(&x)
    }
    fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
        Activation::Softplus {
            beta: self.beta,
            threshold: self.threshold,
        }
        .forward(x)
    }
}

/// `Hardshrink` and `Softshrink`: a `lambd`, printed bare.
macro_rules! shrink_activation {
    ($(#[$doc:meta])* $name:ident, $printed:literal, $variant:ident) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        #[module(name = $printed, extra_repr)]
        pub struct $name {
            /// Half-width of the zero band.
            pub lambd: f64,
            training: bool,
            hooks: crate::Hooks,
        }
        impl $name {
            /// The layer.
            pub fn new(lambd: f64) -> $name {
                $name { lambd, training: true, hooks: crate::Hooks::new() }
            }
        }
        impl Default for $name {
            fn default() -> Self {
                $name::new(0.5)
            }
        }
        impl ExtraRepr for $name {
            fn extra_repr(&self) -> String {
                py_float(self.lambd)
            }
        }
        impl Forward for $name {
            type Input = Tensor;
            type Output = Tensor;
            fn forward(&self, x: Tensor) -> Result<Tensor> {
                self.forward_ref(&x)
            }
            fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
                Activation::$variant { lambd: self.lambd }.forward(x)
            }
        }
    };
}

shrink_activation!(
    /// PyTorch's `nn.Hardshrink(lambd=0.5)`.
    Hardshrink, "Hardshrink", Hardshrink
);
shrink_activation!(
    /// PyTorch's `nn.Softshrink(lambd=0.5)`.
    Softshrink, "Softshrink", Softshrink
);
