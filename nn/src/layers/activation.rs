//! The element-wise activation layers, each PyTorch's module with its constructor arguments and `repr`,
//! generated from the one table of activations (`ops/activation/table.rs`); `GELU`, whose `approximate`
//! chooses between two formulas, is written here.
//!
//! Each layer holds its constants and runs one [`Activation`] formula; the `inplace` ones change their input
//! tensor in place (seen through every handle to it) and return it.

use crate::functional::Activation;
use crate::module::{ExtraRepr, py_float};
use crate::ops::activation::activation_table;
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

/// One constant as PyTorch's `extra_repr` prints it: `name=value`, or the value alone.
macro_rules! repr_part {
    (named, $c:ident, $v:expr) => {
        format!(concat!(stringify!($c), "={}"), py_float($v))
    };
    (bare, $c:ident, $v:expr) => {
        py_float($v)
    };
}

/// The layer's constructor: infallible, or refusing its arguments under a condition.
macro_rules! constructor {
    ($layer:ident [$($c:ident),*] [$($inplace:ident)?] []) => {
        /// The layer, with these constants.
        pub fn new($($c: f64,)* $($inplace: bool)?) -> $layer {
            $layer {
                $($c,)*
                $($inplace,)?
                training: true,
                hooks: crate::Hooks::new(),
            }
        }
    };
    ($layer:ident [$($c:ident),*] [$($inplace:ident)?] [($refused:expr, $why:literal)]) => {
        /// The layer, with these constants (refused where PyTorch refuses them).
        pub fn new($($c: f64,)* $($inplace: bool)?) -> Result<$layer> {
            if $refused {
                return Err(Error::invalid(stringify!($layer), format!($why)));
            }
            Ok($layer {
                $($c,)*
                $($inplace,)?
                training: true,
                hooks: crate::Hooks::new(),
            })
        }
    };
}

/// `Default` with PyTorch's default arguments, for a layer whose constants all have one.
macro_rules! default_layer {
    ($layer:ident [$($c:ident = $d:expr),*] [$($inplace:ident)?]) => {
        impl Default for $layer {
            fn default() -> Self {
                $layer {
                    $($c: $d,)*
                    $($inplace: false,)?
                    training: true,
                    hooks: crate::Hooks::new(),
                }
            }
        }
    };
    ($layer:ident [$($other:tt)*] [$($inplace:ident)?]) => {};
}

/// One layer of the table: its struct, constructor, `Default`, `repr` and forward.
macro_rules! activation_layer {
    (
        [$(#[$doc:meta])*] $layer:ident [$($c:ident $(= $d:expr)?),*] [$($inplace:ident)?] $show:literal
        $repr:ident [$($refuse:tt)*] [$($via:path)?] $variant:ident
    ) => {
        $(#[$doc])*
        #[derive(Module, Clone, Debug)]
        #[module(extra_repr)]
        pub struct $layer {
            $(
                #[doc = concat!("PyTorch's `", stringify!($c), "`.")]
                pub $c: f64,
            )*
            $(
                /// Whether to change the input in place.
                pub $inplace: bool,
            )?
            training: bool,
            hooks: crate::Hooks,
        }

        impl $layer {
            constructor!($layer [$($c),*] [$($inplace)?] [$($refuse)*]);

            /// The formula this layer runs (in evaluation, for a layer whose training draws at random:
            /// `RReLU`).
            pub fn activation(&self) -> Activation {
                Activation::$variant { $($c: self.$c),* }
            }
        }

        default_layer!($layer [$($c $(= $d)?),*] [$($inplace)?]);

        impl ExtraRepr for $layer {
            fn extra_repr(&self) -> String {
                #[allow(unused_mut)]
                let mut parts: Vec<String> = vec![$(repr_part!($repr, $c, self.$c)),*];
                $(
                    if $show && self.$inplace {
                        parts.push("inplace=True".into());
                    }
                )?
                parts.join(", ")
            }
        }

        impl Forward for $layer {
            type Input = Tensor;
            type Output = Tensor;
            fn forward(&self, x: Tensor) -> Result<Tensor> {
                layer_forward!(self, x, run, [$($via)?] [$($c),*], false $(|| self.$inplace)?)
            }
            fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
                layer_forward!(self, x, run_ref, [$($via)?] [$($c),*], false $(|| self.$inplace)?)
            }
        }
    };
}

/// A table layer's forward: its formula through `$run` ([`run`] or [`run_ref`]), or its `via` function of the
/// constants and the mode.
macro_rules! layer_forward {
    ($this:ident, $x:expr, $run:ident, [] [$($c:ident),*], $inplace:expr) => {
        $run($this.activation(), $x, $inplace)
    };
    ($this:ident, $x:expr, $run:ident, [$via:path] [$($c:ident),*], $inplace:expr) => {
        $via(&$x, $($this.$c,)* $this.training, $inplace)
    };
}

/// Every layer of the table, through [`activation_layer`] with its `inplace` mode spelled out.
macro_rules! activation_layers {
    (
        layers { $(
            $(#[$doc:meta])*
            $layer:ident $({ $($c:ident $(= $d:expr)?),+ })? $mode:ident $repr:ident
                $(refuse $refuse:tt)? $(via $via:path)?
                => $variant:ident $name:ident $name_:ident $formula:ident $([$($k:expr),+])?;
        )* }
        functions { $($functions:tt)* }
    ) => {
        $(
            activation_layers!(
                @mode $mode [$(#[$doc])*] $layer [$($($c $(= $d)?),+)?] $repr [$($refuse)?] [$($via)?] $variant
            );
        )*
    };
    (@mode inplace $doc:tt $layer:ident $c:tt $repr:ident $refuse:tt $via:tt $variant:ident) => {
        activation_layer!($doc $layer $c [inplace] true $repr $refuse $via $variant);
    };
    (@mode silent_inplace $doc:tt $layer:ident $c:tt $repr:ident $refuse:tt $via:tt $variant:ident) => {
        activation_layer!($doc $layer $c [inplace] false $repr $refuse $via $variant);
    };
    (@mode no_inplace $doc:tt $layer:ident $c:tt $repr:ident $refuse:tt $via:tt $variant:ident) => {
        activation_layer!($doc $layer $c [] false $repr $refuse $via $variant);
    };
}
activation_table!(activation_layers);

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
        run(self.activation(), x, false)
    }
    fn forward_ref(&self, x: &Tensor) -> Result<Tensor> {
        run_ref(self.activation(), x, false)
    }
}

/// PyTorch's `nn.GLU(dim=-1)`: the gated linear unit `a · sigmoid(b)`, `a` and `b` the halves of the input
/// along `dim` ([`glu`](crate::functional::glu)).
///
/// ```
/// use nn::prelude::*;
/// let glu = GLU::new(1);
/// assert_eq!(glu.to_string(), "GLU(dim=1)");
/// let y = glu.forward(Tensor::zeros([3, 4], DType::F32)).unwrap();
/// assert_eq!(y.shape(), &nn::Shape::from([3, 2]));
/// ```
#[derive(Module, Clone, Debug)]
#[module(extra_repr)]
pub struct GLU {
    /// The dimension halved.
    pub dim: isize,
    training: bool,
    hooks: crate::Hooks,
}

impl GLU {
    /// The unit halving `dim`.
    pub fn new(dim: isize) -> GLU {
        GLU {
            dim,
            training: true,
            hooks: crate::Hooks::new(),
        }
    }
}

default_is!(GLU => GLU::new(-1));

impl ExtraRepr for GLU {
    fn extra_repr(&self) -> String {
        format!("dim={}", self.dim)
    }
}

reads_input!(GLU, |glu, x| crate::functional::glu(x, glu.dim));
